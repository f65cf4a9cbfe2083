package syslog

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
	"github.com/weirnet/weir/telemetry"
)

// TestLogger sends with util-linux logger, a sender none of us wrote, in
// both formats over UDP, TCP and TCP with octet counting, and over UDP with
// octet counting, which logger puts in the datagram too.
func TestLogger(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger (util-linux) not installed")
	}
	h := startCollector(t, listener("udp"), listener("tcp"))
	type send struct {
		proto, format string
		octet         bool
	}
	var sends []send
	for _, f := range []string{"rfc3164", "rfc5424"} {
		sends = append(sends, send{"udp", f, false}, send{"udp", f, true}, send{"tcp", f, false}, send{"tcp", f, true})
	}
	for i, s := range sends {
		_, port, _ := net.SplitHostPort(h.addrs[s.proto])
		args := []string{"-n", "127.0.0.1", "-P", port, "--" + s.format, "-t", "weirtest", "-p", "local0.warning"}
		if s.proto == "udp" {
			args = append(args, "-d")
		} else {
			args = append(args, "-T")
		}
		if s.octet {
			args = append(args, "--octet-count")
		}
		args = append(args, fmt.Sprintf("logger message %d via %s %s octet=%v", i, s.proto, s.format, s.octet))
		if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v %s", args, err, out)
		}
	}
	logs := h.waitLogs(len(sends))
	if len(logs) != len(sends) {
		t.Fatalf("%d messages, want %d", len(logs), len(sends))
	}
	for i, s := range sends {
		want := fmt.Sprintf("logger message %d via %s %s octet=%v", i, s.proto, s.format, s.octet)
		found := 0
		for _, l := range logs {
			if l.Message == want {
				found++
				if l.Format != s.format || l.AppName != "weirtest" || l.Severity != 4 || l.Facility != 16 || l.Hostname == "" {
					t.Errorf("%s: %+v", want, l)
				}
			}
		}
		if found != 1 {
			t.Errorf("%q arrived %d times", want, found)
		}
	}
}

// testPKI writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all signed by the CA, plus a client certificate signed by a
// different CA.
type testPKI struct {
	caFile, serverCert, serverKey   string
	clientCert, clientKey           string
	rogueClientCert, rogueClientKey string
	caPool                          *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	ca := tlstest.NewCA(t, "weir test CA")
	p := &testPKI{caFile: ca.File, caPool: ca.Pool()}
	p.serverCert, p.serverKey = ca.LeafFiles(t, "127.0.0.1")
	p.clientCert, p.clientKey = ca.LeafFiles(t, "router1")
	p.rogueClientCert, p.rogueClientKey = tlstest.NewCA(t, "rogue CA").LeafFiles(t, "intruder")
	return p
}

// TestTLSClientCertificates: a client with a certificate from the
// configured CA is served; one from another CA, or none, is refused with a
// counted handshake failure, and the good client keeps flowing.
func TestTLSClientCertificates(t *testing.T) {
	pki := newTestPKI(t)
	l := listener("tls")
	l.CertFile, l.KeyFile, l.ClientCAFile = pki.serverCert, pki.serverKey, pki.caFile
	h := startCollector(t, l)
	addr := h.addrs["tls"]
	dial := func(certFile, keyFile string) (*tls.Conn, error) {
		cfg := &tls.Config{RootCAs: pki.caPool, ServerName: "127.0.0.1"}
		if certFile != "" {
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		c, err := tls.Dial("tcp", addr, cfg)
		if err != nil {
			return nil, err
		}
		// TLS 1.3 reports a rejected client certificate on first read.
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		c.SetReadDeadline(time.Time{})
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return c, nil
		}
		c.Close()
		return nil, err
	}
	if _, err := dial(pki.rogueClientCert, pki.rogueClientKey); err == nil {
		t.Error("client certificate from another CA accepted")
	}
	if _, err := dial("", ""); err == nil {
		t.Error("client without certificate accepted")
	}
	good, err := dial(pki.clientCert, pki.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	msg := "<14>1 2026-11-29T14:08:00Z router1 app - - - over mutual TLS"
	fmt.Fprintf(good, "%d %s", len(msg), msg)
	good.Close()
	logs := h.waitLogs(1)
	if logs[0].Raw != msg || logs[0].Listener != "tls://"+addr {
		t.Fatalf("%+v", logs[0])
	}
	if n := testutil.ToFloat64(h.c.metrics.connsRejected.WithLabelValues("tls://"+addr, "tls_handshake")); n != 2 {
		t.Errorf("%v handshake refusals counted, want 2", n)
	}
}

// TestRsyslogForwarding runs Debian's rsyslogd, which receives test
// messages on its own UDP input and forwards them to weir over TCP with
// octet counting and over TLS (gtls, a client certificate from our CA):
// every message arrives once.
func TestRsyslogForwarding(t *testing.T) {
	if _, err := exec.LookPath("rsyslogd"); err != nil {
		t.Skip("rsyslogd not installed (apt-get install rsyslog rsyslog-gnutls); .ci/run installs it")
	}
	// Without its TLS driver rsyslogd starts, and sends only the TCP half.
	if m, _ := filepath.Glob("/usr/lib/*/rsyslog/lmnsd_gtls.so"); len(m) == 0 {
		t.Fatal("rsyslogd is installed without its TLS driver (apt-get install rsyslog-gnutls; .ci/run installs it)")
	}
	pki := newTestPKI(t)
	tl := listener("tls")
	tl.CertFile, tl.KeyFile, tl.ClientCAFile = pki.serverCert, pki.serverKey, pki.caFile
	h := startCollector(t, listener("tcp"), tl)
	_, tcpPort, _ := net.SplitHostPort(h.addrs["tcp"])
	_, tlsPort, _ := net.SplitHostPort(h.addrs["tls"])

	inPort := peers.FreePort(t, "udp") // rsyslog's own input

	work := t.TempDir()
	conf := fmt.Sprintf(`
global(workDirectory="%[1]s"
       defaultNetstreamDriverCAFile="%[2]s"
       defaultNetstreamDriverCertFile="%[3]s"
       defaultNetstreamDriverKeyFile="%[4]s")
module(load="imudp")
input(type="imudp" address="127.0.0.1" port="%[5]d" ruleset="forward")
ruleset(name="forward") {
  action(type="omfwd" target="127.0.0.1" port="%[6]s" protocol="tcp"
         TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format")
  action(type="omfwd" target="127.0.0.1" port="%[7]s" protocol="tcp"
         StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="x509/certvalid"
         TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format")
}
`, work, pki.caFile, pki.clientCert, pki.clientKey, inPort, tcpPort, tlsPort)
	stderr := startRsyslog(t, work, conf)

	const n = 200
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", inPort))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(conn, "<13>Nov 29 14:08:10 dev%d app: via rsyslog %d", i%5, i)
		time.Sleep(time.Millisecond)
	}
	conn.Close()
	logs := h.waitLogs(2 * n)
	seen := map[string]int{}
	for _, l := range logs {
		if l.Format != FormatRFC5424 {
			t.Errorf("rsyslog sent %s: %.100q (%s)", l.Format, l.Raw, l.ParseError)
		}
		proto, _, _ := strings.Cut(l.Listener, "://")
		// rsyslog keeps the space that followed the tag in its msg property.
		seen[proto+" "+strings.TrimSpace(l.Message)]++
	}
	for i := 0; i < n; i++ {
		for _, proto := range []string{"tcp", "tls"} {
			if k := fmt.Sprintf("%s via rsyslog %d", proto, i); seen[k] != 1 {
				t.Errorf("%q arrived %d times (e.g. %.150q)\nrsyslogd: %s", k, seen[k], logs[0].Raw, stderr.String())
				return
			}
		}
	}
	_ = configs.Syslog{}
}

// TestRsyslogRelaysCiscoLines runs Debian's rsyslogd as the relay many
// networks put between their routers and a collector: Cisco lines (IOS
// with an origin host name, IOS without a sequence number, NX-OS, IOS-XR)
// arrive on its UDP input, and it forwards them over TCP in its default
// forward format, its own BSD header in front. weir reads the Cisco
// header behind rsyslog's: the device's host name and time, and the
// message from its '%'.
func TestRsyslogRelaysCiscoLines(t *testing.T) {
	if _, err := exec.LookPath("rsyslogd"); err != nil {
		t.Skip("rsyslogd not installed (apt-get install rsyslog); .ci/run installs it")
	}
	h := startCollector(t, listener("tcp"))
	_, tcpPort, _ := net.SplitHostPort(h.addrs["tcp"])
	inPort := peers.FreePort(t, "udp") // rsyslog's own input
	work := t.TempDir()
	conf := fmt.Sprintf(`
global(workDirectory="%s")
module(load="imudp")
input(type="imudp" address="127.0.0.1" port="%d" ruleset="relay")
ruleset(name="relay") {
  action(type="omfwd" target="127.0.0.1" port="%[3]s" protocol="tcp")
  action(type="omfwd" target="127.0.0.1" port="%[3]s" protocol="tcp"
         TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format")
}
`, work, inPort, tcpPort)
	stderr := startRsyslog(t, work, conf)

	lines := []struct{ raw, host, time, msg string }{
		{"<187>45: edge1: Nov 29 14:02:11.123 UTC: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "edge1", "2026-11-29T14:02:11.123Z", "%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"},
		{"<189>46: *Nov 29 14:02:12.456: %LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/2, changed state to up", "", "2026-11-29T14:02:12.456Z", "%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/2, changed state to up"},
		{"<189>: 2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up in mode trunk", "", "2026-11-29T14:03:01Z", "%ETHPORT-5-IF_UP: Interface Ethernet1/1 is up in mode trunk"},
		{"<187>2001: pe1 RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 192.0.2.1 Down", "pe1", "2026-11-29T14:05:00.123Z", "%ROUTING-BGP-5-ADJCHANGE : neighbor 192.0.2.1 Down"},
	}
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", inPort))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		fmt.Fprint(conn, l.raw)
		time.Sleep(time.Millisecond)
	}
	conn.Close()
	// Each line twice: in the forward format and as RFC 5424 ("1 " after
	// the PRI), where rsyslog makes the sequence field the APP-NAME.
	got := map[string]telemetry.Log{}
	for _, l := range h.waitLogs(2 * len(lines)) {
		_, r, _ := strings.Cut(l.Raw, ">")
		got[strconv.FormatBool(strings.HasPrefix(r, "1 "))+l.Message] = l
	}
	for i, want := range append(lines, lines...) {
		l, ok := got[strconv.FormatBool(i >= len(lines))+want.msg]
		if !ok {
			t.Errorf("%.60q: not received with its message whole; received %d: %+v\nrsyslogd: %s", want.raw, len(got), got, stderr.String())
			continue
		}
		wt, _ := time.Parse(time.RFC3339Nano, want.time)
		if l.Format != FormatCisco || want.host != "" && l.Hostname != want.host || l.Time == nil || !l.Time.Equal(wt) {
			t.Errorf("relayed as %.120q: format %s, host %q, time %v; want cisco, %q, %s", l.Raw, l.Format, l.Hostname, l.Time, want.host, want.time)
		}
	}
}

// startRsyslog checks conf and runs Debian's rsyslogd on it in work until
// the test ends; its output is returned for failure messages.
func startRsyslog(t *testing.T, work, conf string) *syncbuf.Buffer {
	t.Helper()
	confFile := filepath.Join(work, "rsyslog.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("rsyslogd", "-N1", "-f", confFile).CombinedOutput(); err != nil {
		t.Fatalf("rsyslog config check: %v\n%s", err, out)
	}
	cmd := exec.Command("rsyslogd", "-n", "-f", confFile, "-i", filepath.Join(work, "rsyslog.pid"))
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	time.Sleep(500 * time.Millisecond) // rsyslogd binds its input
	return &out
}

// TestTLSCertificateRenewed: a server certificate renewed on disk (new
// files renamed over the old) is served to the next connection without a
// restart, and the connection open before keeps flowing.
func TestTLSCertificateRenewed(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")
	install := func(name string) {
		t.Helper()
		cert, key := ca.Leaf(t, name)
		for path, data := range map[string][]byte{certFile: cert, keyFile: key} {
			if err := os.WriteFile(path+".new", data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}
	}
	install("before renewal")
	l := listener("tls")
	l.CertFile, l.KeyFile = certFile, keyFile
	h := startCollector(t, l)
	send := func(msg string) string {
		t.Helper()
		c, err := tls.Dial("tcp", h.addrs["tls"], &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "%d %s", len(msg), msg)
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	old, err := tls.Dial("tcp", h.addrs["tls"], &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if cn := send("<14>1 2026-12-02T10:00:00Z r1 app - - - first"); cn != "before renewal" {
		t.Fatalf("served %q", cn)
	}
	install("after renewal")
	if cn := send("<14>1 2026-12-02T10:00:01Z r1 app - - - second"); cn != "after renewal" {
		t.Fatalf("served %q after the renewal, want the renewed certificate", cn)
	}
	msg := "<14>1 2026-12-02T10:00:02Z r1 app - - - on the connection from before"
	fmt.Fprintf(old, "%d %s", len(msg), msg)
	if logs := h.waitLogs(3); len(logs) != 3 {
		t.Fatalf("%d messages, want 3", len(logs))
	}
}

// TestTLSSendAndCloseIsNotLost: a TLS 1.3 sender that writes its line and
// closes at once, reading nothing (a one-shot script, a forwarder
// stopping), loses none. Session tickets sent after the handshake would
// sit unread at the client, whose close then resets the connection and
// drops the line its kernel still held (Nagle's algorithm).
func TestTLSSendAndCloseIsNotLost(t *testing.T) {
	pki := newTestPKI(t)
	l := listener("tls")
	l.CertFile, l.KeyFile = pki.serverCert, pki.serverKey
	h := startCollector(t, l)
	const n = 20
	for i := range n {
		raw, err := net.Dial("tcp", h.addrs["tls"])
		if err != nil {
			t.Fatal(err)
		}
		// Nagle's algorithm on, as in most senders not written in Go: a
		// write that follows another not yet acknowledged waits.
		raw.(*net.TCPConn).SetNoDelay(false)
		// A session cache makes the client ask for tickets, and reading
		// records byte by byte leaves what follows the handshake in the
		// socket, as OpenSSL's and GnuTLS's clients do.
		c := tls.Client(byteReader{raw}, &tls.Config{RootCAs: pki.caPool, ServerName: "127.0.0.1",
			MinVersion: tls.VersionTLS13, ClientSessionCache: tls.NewLRUClientSessionCache(1)})
		if err := c.Handshake(); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "<13>Dec  3 12:00:00 host1 app: send and close %d\n", i)
		raw.Close() // no close_notify, as Python's ssl and many scripts
	}
	logs := h.waitLogs(n)
	if len(logs) != n {
		t.Fatalf("%d of %d messages arrived; closed with error: %v", len(logs), n,
			testutil.ToFloat64(h.c.metrics.connsRejected.WithLabelValues("tls://"+h.addrs["tls"], "error")))
	}
}

// byteReader reads its connection a byte at a time.
type byteReader struct{ net.Conn }

func (b byteReader) Read(p []byte) (int, error) { return b.Conn.Read(p[:min(len(p), 1)]) }
