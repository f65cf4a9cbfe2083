package syslog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/syncbuf"
)

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestIdleConnectionKeepsNoLargeBuffers: a TCP connection does not keep
// the buffers its largest message needed (the publisher's arena: a line of
// control bytes is escaped six-fold in JSON; the frame reader's buffer).
// A host that sends one max_message_size line on each of its connections
// and then one short message every few minutes (to stay clear of the idle
// timeout) would otherwise pin about 0.9 MiB per connection: several GiB
// at the default max_connections.
func TestIdleConnectionKeepsNoLargeBuffers(t *testing.T) {
	h := startCollector(t, listener("tcp"))
	const conns = 100
	line := append([]byte("<13>"), bytes.Repeat([]byte{payloadByte()}, DefaultMaxMessageSize-4)...)
	line = append(line, '\n')

	before := heapInuse()
	var open []net.Conn
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", h.addrs["tcp"])
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		if _, err := c.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	if got := h.waitFor(conns, 30*time.Second); got < conns {
		t.Fatalf("%d of %d published", got, conns)
	}
	time.Sleep(trimAfter + 300*time.Millisecond) // quiet: the readers let their buffers go
	withOpen := heapInuse()
	// The same, with the connections closed: what remains is the broker's
	// and the test's, not the connections'.
	for _, c := range open {
		c.Close()
	}
	open = nil
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if testutil.ToFloat64(h.c.metrics.connections.WithLabelValues("tcp://"+h.addrs["tcp"])) == 0 {
			break
		}
	}
	closed := heapInuse()
	per := (int64(withOpen) - int64(closed)) / conns
	t.Logf("heap in use: %d MiB before, %d MiB with %d connections open, %d MiB once closed: %d KiB per open connection",
		before>>20, withOpen>>20, conns, closed>>20, per>>10)
	// What a connection needs between messages: its 16 KiB read buffer
	// and small change. Allow 64 KiB.
	if per > 64<<10 {
		t.Errorf("each idle connection retains %d KiB after one %d-byte message; "+
			"at max_connections=%d that is %d MiB held by idle senders",
			per>>10, len(line), DefaultMaxConnections, per*DefaultMaxConnections>>20)
	}
}

// payloadByte is the byte the big line is made of: a control byte (escaped
// six-fold in JSON), or WEIR_TEST_PAYLOAD's first byte to try plain text.
func payloadByte() byte {
	if s := os.Getenv("WEIR_TEST_PAYLOAD"); s != "" {
		return s[0]
	}
	return 0x01
}

// TestUDPBuffersSizedToTheLargestDatagram: a UDP reader's receive buffers
// are no larger than a datagram can be, whatever max_message_size allows:
// 1 MiB buffers would be 64 MiB a reader.
func TestUDPBuffersSizedToTheLargestDatagram(t *testing.T) {
	before := heapInuse()
	l := listener("udp")
	l.MaxMessageSize = 1 << 20
	h := startCollector(t, l)
	// Wait for the readers to have allocated their buffers.
	conn, err := net.Dial("udp", h.addrs["udp"])
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: hello")
	conn.Close()
	h.waitLogs(1)
	after := heapInuse()
	grown := int64(after) - int64(before)
	t.Logf("heap in use %d MiB -> %d MiB with one UDP listener (max_message_size 1MiB, %d readers)", before>>20, after>>20, DefaultUDPReaders)
	if grown > 16<<20 {
		t.Errorf("one UDP listener holds %d MiB of receive buffers; a datagram is at most 64 KiB, so %d readers x %d buffers need at most %d MiB",
			grown>>20, DefaultUDPReaders, udpBatch, DefaultUDPReaders*udpBatch*(64<<10)>>20)
	}
}

// TestUDPSourceAddrOfIPv4SenderOnDualStackSocket: on a dual-stack socket
// (":514", "[::]:514") an IPv4 sender's address comes as IPv4-mapped IPv6;
// source_addr says "127.0.0.1:port", as over TCP, not
// "[::ffff:127.0.0.1]:port". The socket here is bound to ::ffff:127.0.0.1
// (loopback only) with IPV6_V6ONLY off, which is what the kernel gives a
// wildcard dual-stack bind for an IPv4 sender.
func TestUDPSourceAddrOfIPv4SenderOnDualStackSocket(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET6, syscall.SOCK_DGRAM, 0)
	if err != nil {
		t.Skip(err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 0); err != nil {
		t.Skip(err)
	}
	sa := &syscall.SockaddrInet6{Addr: [16]byte{10: 0xff, 11: 0xff, 12: 127, 15: 1}}
	if err := syscall.Bind(fd, sa); err != nil {
		t.Skip(err)
	}
	f := os.NewFile(uintptr(fd), "dualstack")
	pc, err := net.FilePacketConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := New(configs.Syslog{}, b)
	if err != nil {
		t.Fatal(err)
	}
	l := listener("udp")
	l.MaxMessageSize = DefaultMaxMessageSize
	conn := pc.(*net.UDPConn)
	u := &udpListener{c: c, cfg: l, conns: []*net.UDPConn{conn}, name: "udp://" + conn.LocalAddr().String()}
	u.stats = c.metrics.forListener(u.name)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { u.run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	port := conn.LocalAddr().(*net.UDPAddr).Port
	out, err := net.Dial("udp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	fmt.Fprintf(out, "<13>1 2026-11-29T14:03:01Z - app - - - no host name")
	h := &harness{t: t, b: b}
	l0 := h.waitLogs(1)[0]
	want := out.LocalAddr().String() // 127.0.0.1:port, as TCP reports it
	t.Logf("device %q, source_addr %q", l0.Device, l0.SourceAddr)
	if l0.SourceAddr != want {
		t.Errorf("source_addr %q for IPv4 sender %s (device %q)", l0.SourceAddr, want, l0.Device)
	}
}

// TestUDPDatagramOfExactlyMaxSizeWithNewlineIsWhole: a message of exactly
// max_message_size bytes followed by LF or CRLF is whole over UDP, as over
// TCP (TestLineOfExactlyMaxSizeIsWhole): not marked truncated, not counted
// in weir_syslog_truncated_total.
func TestUDPDatagramOfExactlyMaxSizeWithNewlineIsWhole(t *testing.T) {
	const max = 200
	l := listener("udp")
	l.MaxMessageSize = max
	h := startCollector(t, l)
	conn, err := net.Dial("udp", h.addrs["udp"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var sent []string
	for i, end := range []string{"\n", "\r\n"} {
		head := fmt.Sprintf("<13>Nov 29 14:08:10 host%d app: ", i)
		msg := head + strings.Repeat("x", max-len(head))
		sent = append(sent, msg)
		conn.Write([]byte(msg + end))
	}
	logs := h.waitLogs(len(sent))
	for _, lg := range logs {
		if lg.ParseError != "" {
			t.Errorf("%d-byte message (+ line end) over UDP: parse_error %q, raw %d bytes", max, lg.ParseError, len(lg.Raw))
		}
	}
	if got := testutil.ToFloat64(h.c.metrics.truncated.WithLabelValues("udp://" + h.addrs["udp"])); got != 0 {
		t.Errorf("weir_syslog_truncated_total %v, want 0: nothing was cut", got)
	}
}

// TestPerConnectionWarningsAreThrottled: a failed TLS handshake, a
// connection closed for a bad frame and an oversized frame are logged once
// per 10 s with a count, as refusals at max_connections are: a port scan,
// a load balancer's TCP health check on the TLS port or a host sending
// junk in a loop must not flood weir's log.
func TestPerConnectionWarningsAreThrottled(t *testing.T) {
	pki := newTestPKI(t)
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var logBuf syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tl := listener("tls")
	tl.CertFile, tl.KeyFile = pki.serverCert, pki.serverKey
	c, err := New(configs.Syslog{Listeners: []configs.SyslogListener{tl, listener("tcp")}}, b, WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	addrs, _ := c.Addrs(ctx)
	addr := map[string]string{}
	for _, a := range addrs {
		p, hp, _ := strings.Cut(a, "://")
		addr[p] = hp
	}
	const n = 200
	for i := 0; i < n; i++ {
		// A TCP health check on the TLS port.
		if hc, err := net.Dial("tcp", addr["tls"]); err == nil {
			hc.Close()
		}
		// Junk on the TCP port.
		if j, err := net.Dial("tcp", addr["tcp"]); err == nil {
			j.Write([]byte("1 <x")) // a frame, then no count
			j.Close()
		}
	}
	time.Sleep(500 * time.Millisecond)
	lines := strings.Count(logBuf.String(), "\n")
	t.Logf("%d WARN lines for %d health checks and %d junk connections, e.g.\n%.300s", lines, n, n, logBuf.String())
	if lines > 10 {
		t.Errorf("%d WARN lines in 2x%d short connections: per-connection warnings are not throttled as refusals are", lines, n)
	}
}

// TestKeyIsDeviceForNonUTF8HostName: the record key is the device as the
// JSON value carries it, also for a host name that is not UTF-8 (a Latin-1
// "réseau", as a Windows host's agent in code page 1252 sends it), so two
// such hosts that are one device in the value are one key on the topic.
func TestKeyIsDeviceForNonUTF8HostName(t *testing.T) {
	h := startCollector(t, listener("tcp"))
	conn, err := net.Dial("tcp", h.addrs["tcp"])
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "<13>1 2026-11-29T14:03:01Z r\xe9seau app - - - latin-1 host name\n")
	conn.Close()
	// readLogs fails the test on the first record whose key is not its
	// device.
	h.waitLogs(1)
}

// TestLFLinesStartingWithADigitAreKept: a connection whose first bytes
// are digits not followed by a space is newline-framed, not an octet count:
// a sender of lines that start with a digit (no <PRI>: rsyslog or
// syslog-ng forwarding with a file-style template that starts with the
// time, Logstash's tcp output, a script) has its lines published (as
// malformed when no format fits), not its connection closed at the first
// line. (rsyslog 8.2302's own imtcp loses such lines, "Framing Error ...
// delimiter is not SP".) Here Debian's rsyslogd forwards over TCP with
// such a template.
func TestLFLinesStartingWithADigitAreKept(t *testing.T) {
	if _, err := exec.LookPath("rsyslogd"); err != nil {
		t.Skip("rsyslogd not installed")
	}
	h := startCollector(t, listener("tcp"))
	_, tcpPort, _ := net.SplitHostPort(h.addrs["tcp"])
	inPort := peers.FreePort(t, "udp")
	work := t.TempDir()
	conf := fmt.Sprintf(`
global(workDirectory="%s")
module(load="imudp")
template(name="plain" type="string" string="%%TIMESTAMP:::date-rfc3339%% %%HOSTNAME%% %%syslogtag%%%%msg%%\n")
input(type="imudp" address="127.0.0.1" port="%d" ruleset="fwd")
ruleset(name="fwd") {
  action(type="omfwd" target="127.0.0.1" port="%s" protocol="tcp" template="plain"
         action.resumeRetryCount="-1" action.resumeInterval="1")
}
`, work, inPort, tcpPort)
	stderr := startRsyslog(t, work, conf)
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", inPort))
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	for i := 0; i < n; i++ {
		fmt.Fprintf(conn, "<13>Nov 29 14:08:10 dev1 app: plain template %d", i)
		time.Sleep(100 * time.Millisecond)
	}
	conn.Close()
	got := h.waitFor(n, 5*time.Second)
	name := "tcp://" + h.addrs["tcp"]
	badFrame := testutil.ToFloat64(h.c.metrics.dropped.WithLabelValues(name, "bad_frame"))
	if got < n {
		t.Errorf("%d of %d newline-framed lines published; connections closed for bad_frame: %v\nrsyslogd: %.400s",
			got, n, badFrame, stderr.String())
	}
}

// TestBusyConnectionKeepsItsBuffers: a connection's grown buffers are let
// go once it is quiet for trimAfter, not while it is busy (a batch of
// ordinary messages from one 16 KiB read is more JSON than a quiet
// connection keeps: trimming at every batch would regrow them each time).
func TestBusyConnectionKeepsItsBuffers(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	defer client.Close()
	var trims atomic.Int32
	ic := &idleConn{Conn: server, idle: time.Minute, progress: time.Now(),
		bloated: func() bool { return true }, trim: func() { trims.Add(1) }}
	go func() {
		for range 30 { // busy for 1.5 s: longer than trimAfter, never silent that long
			client.Write([]byte("<13>Nov 29 14:08:10 h app: busy\n"))
			time.Sleep(50 * time.Millisecond)
		}
	}()
	buf := make([]byte, 1024)
	for i := range 30 {
		if _, err := ic.Read(buf); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if n := trims.Load(); n != 0 {
		t.Errorf("a busy connection's buffers trimmed %d times", n)
	}
	// Quiet now: the next read trims, then goes on waiting.
	done := make(chan struct{})
	go func() { ic.Read(buf); close(done) }()
	time.Sleep(trimAfter + 300*time.Millisecond)
	if n := trims.Load(); n != 1 {
		t.Errorf("a quiet connection's buffers trimmed %d times, want 1", n)
	}
	client.Write([]byte("x\n"))
	<-done
}

// TestResetConnectionsAreThrottled: a sender that resets its connections
// (a load balancer's TCP health check, which closes with a RST: HAProxy's
// does; a port scan) is logged once per 10 s with a count, as the other
// per-connection reasons are, not one INFO line per connection: at weir's
// default log level that was one line for every check, for ever. Each
// is still counted (weir_syslog_connections_closed_total{reason="error"}).
func TestResetConnectionsAreThrottled(t *testing.T) {
	h, logBuf := startLoggedCollector(t, slog.LevelInfo, listener("tcp"))
	addr := h.addrs["tcp"]
	const n = 200
	for range n {
		hc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		hc.(*net.TCPConn).SetLinger(0) // close with a RST
		hc.Close()
	}
	var ended int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ended = int(testutil.ToFloat64(h.c.metrics.connsRejected.WithLabelValues("tcp://"+addr, "error"))); ended >= n {
			break
		}
	}
	if ended < n/2 {
		t.Fatalf("%d of %d reset connections counted closed (error)", ended, n)
	}
	lines := strings.Count(logBuf.String(), "connection ended")
	t.Logf("%d log lines for %d reset connections, e.g.\n%.300s", lines, n, logBuf.String())
	if lines > 10 {
		t.Errorf("%d log lines for %d reset connections: not throttled as the other per-connection reasons are", lines, n)
	}
}
