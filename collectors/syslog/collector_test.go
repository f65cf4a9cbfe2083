package syslog

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/telemetry"
)

// harness runs a collector on loopback over an embedded broker.
type harness struct {
	t     *testing.T
	b     *embedded.Broker
	c     *Collector
	reg   *prometheus.Registry
	addrs map[string]string // protocol -> host:port
	stop  func()
}

func startCollector(t *testing.T, listeners ...configs.SyslogListener) *harness {
	t.Helper()
	return startCollectorWith(t, nil, listeners...)
}

// startLoggedCollector is startCollector with the collector's log, from
// level up, in the buffer it returns.
func startLoggedCollector(t *testing.T, level slog.Level, listeners ...configs.SyslogListener) (*harness, *syncbuf.Buffer) {
	t.Helper()
	var logs syncbuf.Buffer
	h := startCollectorWith(t, []Option{WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level})))}, listeners...)
	return h, &logs
}

func startCollectorWith(t *testing.T, opts []Option, listeners ...configs.SyslogListener) *harness {
	t.Helper()
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	c, err := New(configs.Syslog{Listeners: listeners}, b, append([]Option{WithRegisterer(reg)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	actx, acancel := context.WithTimeout(ctx, 5*time.Second)
	defer acancel()
	addrs, err := c.Addrs(actx)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, b: b, c: c, reg: reg, addrs: map[string]string{}}
	for _, a := range addrs {
		proto, addr, _ := strings.Cut(a, "://")
		h.addrs[proto] = addr
	}
	h.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		b.Close()
	}
	t.Cleanup(func() { h.stop() })
	return h
}

func listener(proto string) configs.SyslogListener {
	return configs.SyslogListener{Protocol: proto, Address: "127.0.0.1:0"}
}

// waitLogs reads raw.syslog until n records are there (or fails after a
// timeout) and returns them decoded.
func (h *harness) waitLogs(n int) []telemetry.Log {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		logs := h.readLogs()
		if len(logs) >= n || time.Now().After(deadline) {
			if len(logs) < n {
				h.t.Fatalf("%d of %d messages arrived", len(logs), n)
			}
			return logs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) readLogs() []telemetry.Log {
	h.t.Helper()
	infos, err := h.b.DescribeTopics(context.Background(), telemetry.TopicRawSyslog)
	if err != nil {
		return nil
	}
	var out []telemetry.Log
	var res broker.FetchResult
	for _, p := range infos[0].Partitions {
		for off := p.LogStartOffset; off < p.HighWatermark; {
			if err := h.b.Fetch(context.Background(), telemetry.TopicRawSyslog, p.Partition, off, broker.FetchOptions{}, &res); err != nil {
				h.t.Fatal(err)
			}
			for _, r := range res.Records {
				var l telemetry.Log
				if err := json.Unmarshal(r.Value, &l); err != nil {
					h.t.Fatalf("record %d/%d: %v: %s", p.Partition, r.Offset, err, r.Value)
				}
				if string(r.Key) != l.Device {
					h.t.Fatalf("key %q, device %q", r.Key, l.Device)
				}
				if len(r.Headers) != 2 || string(r.Headers[0].Value) != "syslog" || string(r.Headers[1].Value) != telemetry.SchemaLog {
					h.t.Fatalf("headers %v", r.Headers)
				}
				out = append(out, l)
				off = r.Offset + 1
			}
		}
	}
	return out
}

// byRaw indexes logs by raw text, failing on duplicates.
func byRaw(t *testing.T, logs []telemetry.Log) map[string]telemetry.Log {
	m := make(map[string]telemetry.Log, len(logs))
	for _, l := range logs {
		if l.RawBytes != nil {
			l.Raw = string(l.RawBytes) // the exact bytes
		}
		if _, dup := m[l.Raw]; dup {
			t.Errorf("message delivered twice: %.80q", l.Raw)
		}
		m[l.Raw] = l
	}
	return m
}

func TestCorpusOverUDPAndTCP(t *testing.T) {
	corpus := loadCorpus(t)
	for _, mode := range []string{"udp", "tcp-octet", "tcp-newline"} {
		t.Run(mode, func(t *testing.T) {
			proto := "tcp"
			if mode == "udp" {
				proto = "udp"
			}
			h := startCollector(t, listener(proto))
			conn, err := net.Dial(proto, h.addrs[proto])
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, c := range corpus {
				switch mode {
				case "udp":
					conn.Write([]byte(c.Raw))
					time.Sleep(200 * time.Microsecond) // loopback UDP: do not outrun the socket
				case "tcp-octet":
					fmt.Fprintf(conn, "%d %s", len(c.Raw), c.Raw)
				case "tcp-newline":
					if c.Raw == "" || strings.ContainsRune(c.Raw, 0) {
						continue // a newline stream cannot carry an empty message, nor a NUL (a trailer too)
					}
					fmt.Fprintf(conn, "%s\n", c.Raw)
				}
				want++
			}
			conn.Close()
			logs := byRaw(t, h.waitLogs(want))
			for _, c := range corpus {
				if mode == "tcp-newline" && (c.Raw == "" || strings.ContainsRune(c.Raw, 0)) {
					continue
				}
				l, ok := logs[c.Raw]
				if !ok {
					t.Errorf("missing %.80q", c.Raw)
					continue
				}
				checkAgainstCorpus(t, c, &l)
				if l.Listener != proto+"://"+h.addrs[proto] || !strings.HasPrefix(l.SourceAddr, "127.0.0.1:") || l.ReceivedAt.IsZero() {
					t.Errorf("receive fields: %+v", l)
				}
				if wantDev := c.Host; wantDev != "" && l.Device != wantDev {
					t.Errorf("device %q, want %q", l.Device, wantDev)
				} else if c.Host == "" && l.Device != "127.0.0.1" {
					t.Errorf("device %q, want the source IP", l.Device)
				}
			}
			if got := testutil.ToFloat64(h.c.metrics.parseFailures.WithLabelValues(proto + "://" + h.addrs[proto])); got == 0 {
				t.Errorf("parse failures not counted")
			}
		})
	}
}

// TestOctetCountWithTrailingNewline: rsyslog and syslog-ng count the
// newline they append, logger does not; both come out clean.
func TestOctetCountWithTrailingNewline(t *testing.T) {
	h := startCollector(t, listener("tcp"))
	conn, _ := net.Dial("tcp", h.addrs["tcp"])
	msg := "<13>Nov 29 14:08:10 host2 app: counted with newline"
	fmt.Fprintf(conn, "%d %s\n", len(msg)+1, msg)
	msg2 := "<13>Nov 29 14:08:11 host2 app: counted without newline"
	fmt.Fprintf(conn, "%d %s", len(msg2), msg2)
	msg3 := "<13>Nov 29 14:08:12 host2 app: newline after the frame"
	fmt.Fprintf(conn, "\n%d %s\n", len(msg3), msg3)
	conn.Close()
	logs := byRaw(t, h.waitLogs(3))
	for _, m := range []string{msg, msg2, msg3} {
		if l, ok := logs[m]; !ok || l.Format != FormatRFC3164 {
			t.Errorf("%q not clean: %+v", m, logs)
		}
	}
}

// TestBadInput: garbage, a 10 MiB line, huge frame lengths, an idle client
// and more connections than allowed each get a counted refusal while a
// well-behaved client keeps flowing.
func TestBadInput(t *testing.T) {
	l := listener("tcp")
	l.MaxConnections = 50
	l.MaxConnectionsPerIP = 50 // all from 127.0.0.1: the overall bound is tested
	l.IdleTimeout = configs.Duration(300 * time.Millisecond)
	h := startCollector(t, l)
	addr := h.addrs["tcp"]
	name := "tcp://" + addr
	closed := func(reason string) float64 {
		return testutil.ToFloat64(h.c.metrics.connsRejected.WithLabelValues(name, reason))
	}

	// Garbage: published as malformed lines, never dropped.
	g, _ := net.Dial("tcp", addr)
	g.Write([]byte("\x00\x01\xff garbage \x7f\nmore garbage\n"))
	g.Close()

	// A 10 MiB line: kept truncated at max_message_size, marked. Made
	// before the connection: making it took longer than the idle timeout
	// on a loaded machine (the race detector on, other tests running),
	// and the collector closed the connection as idle before its first
	// byte.
	line := []byte("<13>" + strings.Repeat("A", 10<<20) + "\n")
	big, _ := net.Dial("tcp", addr)
	go func() { big.Write(line); big.Close() }()

	// An octet count of 999999999: the frame is skipped and counted, and
	// the sender that stops mid-frame closed when idle.
	huge, _ := net.Dial("tcp", addr)
	huge.Write([]byte("999999999 <13>x"))
	buf := make([]byte, 1)
	huge.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := huge.Read(buf); err == nil {
		t.Error("huge frame: connection still open")
	}
	huge.Close()

	// An octet count of ten digits: the header cannot be trusted, the
	// connection is closed.
	bad, _ := net.Dial("tcp", addr)
	bad.Write([]byte("1234567890 <13>x"))
	bad.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := bad.Read(buf); err == nil {
		t.Error("ten-digit frame length: connection still open")
	}
	bad.Close()

	// A client that connects and sends nothing is closed when idle.
	idle, _ := net.Dial("tcp", addr)
	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idle.Read(buf); err == nil {
		t.Error("idle connection not closed")
	}
	idle.Close()

	// More connections than max_connections: the extra are refused.
	var conns []net.Conn
	for i := 0; i < 80; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			conns = append(conns, c)
		}
	}
	// Meanwhile a good client still gets through once slots free up.
	time.Sleep(200 * time.Millisecond)
	for _, c := range conns {
		c.Close()
	}
	// The closes free the slots as the server notices them: a client let
	// in while it still counts them full is refused (closed) again, so
	// the good client tries again until its line is through, as a real
	// sender reconnects.
	// Each try is its own line (a try whose line was only slow to land
	// is no duplicate), and none once one is through; then the 10 MiB
	// line is waited for, which a loaded machine takes a while to land.
	deadline := time.Now().Add(30 * time.Second)
	var logs map[string]telemetry.Log
	var sent time.Time
	tries, through := 0, false
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !through && time.Since(sent) > time.Second {
			good := dialRetry(t, addr)
			fmt.Fprintf(good, "<13>Nov 29 14:08:10 goodhost app: still flowing %d\n", tries)
			good.Close()
			sent, tries = time.Now(), tries+1
		}
		logs = byRaw(t, h.readLogs())
		flowing := 0
		for raw := range logs {
			if strings.HasPrefix(raw, "<13>Nov 29 14:08:10 goodhost app: still flowing ") {
				flowing++
			}
		}
		through = flowing > 0
		if through && len(logs)-flowing >= 3 {
			break
		}
	}
	// The NUL ends an empty line (RFC 6587 trailer), skipped.
	if _, ok := logs["\x01\xff garbage \x7f"]; !ok {
		t.Errorf("garbage line not published as malformed")
	}
	var sawBig bool
	for raw, l := range logs {
		if strings.HasPrefix(raw, "<13>AAAA") {
			sawBig = true
			if len(raw) != DefaultMaxMessageSize || !strings.Contains(l.ParseError, "truncated") {
				t.Errorf("10 MiB line kept as %d bytes, parse_error %q", len(raw), l.ParseError)
			}
		}
	}
	if !sawBig {
		t.Error("10 MiB line not published truncated")
	}
	// Published cut, so counted as truncated, not as dropped.
	if got := testutil.ToFloat64(h.c.metrics.truncated.WithLabelValues("tcp://" + addr)); got != 1 {
		t.Errorf("truncated %v, want 1", got)
	}
	if got := testutil.ToFloat64(h.c.metrics.dropped.WithLabelValues("tcp://"+addr, "truncated")); got != 0 {
		t.Errorf("dropped{truncated} %v, want 0", got)
	}
	if !through {
		t.Error("good client starved")
	}
	if got := testutil.ToFloat64(h.c.metrics.dropped.WithLabelValues(name, "frame_too_large")); got != 2 {
		t.Errorf("frame_too_large drops: %v, want 2", got)
	}
	if closed("frame_too_large") != 1 {
		t.Errorf("frame_too_large closes: %v", closed("frame_too_large"))
	}
	if closed("idle") < 1 {
		t.Errorf("idle closes: %v", closed("idle"))
	}
	if closed("too_many_connections") < 1 {
		t.Errorf("too_many_connections: %v", closed("too_many_connections"))
	}
}

func dialRetry(t *testing.T, addr string) net.Conn {
	for i := 0; i < 100; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("cannot connect")
	return nil
}

// TestManyConnections opens 2,000 connections at once, each sending one
// message: all arrive, none twice.
func TestManyConnections(t *testing.T) {
	const n = 2000
	// n devices, here all at 127.0.0.1: past the default per-address
	// bound (1024).
	l := listener("tcp")
	l.MaxConnectionsPerIP = n
	h := startCollector(t, l)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Go(func() {
			c, err := net.Dial("tcp", h.addrs["tcp"])
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			msg := fmt.Sprintf("<14>1 2026-11-29T14:08:00Z conn%d app - - - message %d", i, i)
			fmt.Fprintf(c, "%d %s", len(msg), msg)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	logs := byRaw(t, h.waitLogs(n))
	if len(logs) != n {
		t.Fatalf("%d distinct messages, want %d", len(logs), n)
	}
}

// TestBackPressure: while the broker refuses writes, TCP messages wait (the
// reader stops) and arrive once it accepts again; nothing is lost.
func TestBackPressure(t *testing.T) {
	r := runRefusing(t, listener("tcp"))
	conn, _ := net.Dial("tcp", r.addr)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: msg %d\n", i)
	}
	time.Sleep(300 * time.Millisecond)
	r.fb.fail.Store(false)
	conn.Close()
	h := &harness{t: t, b: r.b}
	logs := byRaw(t, h.waitLogs(100))
	if len(logs) != 100 {
		t.Fatalf("%d messages after the broker recovered", len(logs))
	}
}

// TestRefusedMessageIsDroppedNotRetried: a message the broker refuses for
// good (over its size limit) is dropped and counted, the others of the
// batch are published once, and the connection keeps flowing.
func TestRefusedMessageIsDroppedNotRetried(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithMaxMessageBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := New(configs.Syslog{Listeners: []configs.SyslogListener{listener("tcp")}}, b)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	addrs, _ := c.Addrs(ctx)
	_, addr, _ := strings.Cut(addrs[0], "://")
	conn, _ := net.Dial("tcp", addr)
	var buf strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&buf, "<13>Nov 29 14:08:10 h app: small %d\n", i)
		if i == 10 {
			fmt.Fprintf(&buf, "<13>Nov 29 14:08:10 h app: %s\n", strings.Repeat("x", 8000))
		}
	}
	conn.Write([]byte(buf.String()))
	conn.Close()
	h := &harness{t: t, b: b}
	logs := byRaw(t, h.waitLogs(20))
	time.Sleep(200 * time.Millisecond)
	if n := len(h.readLogs()); n != 20 {
		t.Fatalf("%d records published, want the 20 small ones once", n)
	}
	if len(logs) != 20 {
		t.Fatalf("%d distinct", len(logs))
	}
	name := "tcp://" + addr
	if got := testutil.ToFloat64(c.metrics.dropped.WithLabelValues(name, "rejected")); got != 1 {
		t.Fatalf("rejected drops %v", got)
	}
}

// TestShutdownWhileBrokerFails: with a pending batch the broker refuses,
// Run still returns within the shutdown flush timeout.
func TestShutdownWhileBrokerFails(t *testing.T) {
	r := runRefusing(t, listener("tcp"))
	conn, _ := net.Dial("tcp", r.addr)
	fmt.Fprintf(conn, "<13>Nov 29 14:08:10 h app: pending\n")
	time.Sleep(100 * time.Millisecond)
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(shutdownFlushTimeout + 5*time.Second):
		t.Fatal("Run did not return while the broker refused writes")
	}
	conn.Close()
}

// TestShutdownBoundedWithBatchesBuffered: with the broker refusing and
// several batches' worth of messages already read, Run returns within the
// shutdown flush timeout in all, not that timeout per batch.
func TestShutdownBoundedWithBatchesBuffered(t *testing.T) {
	r := runRefusing(t, listener("tcp"))
	conn, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte(strings.Repeat("x\n", 3000))) // one read, a few batches
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(shutdownFlushTimeout + 2*time.Second):
		<-r.done
		t.Fatalf("Run returned %v after shutdown; the bound is %v", time.Since(start), shutdownFlushTimeout)
	}
}

// TestUDPPortTakenIsAnError: a second collector (a second weir) on a UDP
// port already served fails to start, rather than bind it beside the first
// (every reader socket sets SO_REUSEPORT) and take part of the traffic.
func TestUDPPortTakenIsAnError(t *testing.T) {
	h := startCollector(t, listener("udp"))
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l := listener("udp")
	l.Address = configs.Address(h.addrs["udp"])
	c, err := New(configs.Syslog{Listeners: []configs.SyslogListener{l}}, b)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Run(ctx); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("second collector on %s: %v", h.addrs["udp"], err)
	}
}

// TestDropCountersExportedFromTheStart: weir_syslog_dropped_total and
// weir_syslog_connections_closed_total had no series until the first drop,
// so an alert on their rate (or increase) saw nothing to rise from; each
// listener's reasons are exported at 0 from the start.
func TestDropCountersExportedFromTheStart(t *testing.T) {
	mfs, err := startUDPTCPTLS(t).Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			proto, _, _ := strings.Cut(l["listener"], "://")
			have[mf.GetName()+"/"+proto+"/"+l["reason"]] = true
		}
	}
	for _, want := range []string{
		"weir_syslog_dropped_total/udp/kernel", "weir_syslog_dropped_total/udp/rejected",
		"weir_syslog_dropped_total/tcp/frame_too_large", "weir_syslog_dropped_total/tls/truncated_frame",
		"weir_syslog_connections_closed_total/tcp/too_many_connections", "weir_syslog_connections_closed_total/tls/tls_handshake",
		"weir_syslog_connections_closed_total/tcp/too_many_connections_per_ip", "weir_syslog_connections_closed_total/tls/too_many_connections_per_ip",
	} {
		if !have[want] {
			t.Errorf("no series %s at the start", want)
		}
	}
	if have["weir_syslog_connections_closed_total/tcp/tls_handshake"] || have["weir_syslog_dropped_total/udp/frame_too_large"] {
		t.Errorf("a reason exported for a listener that cannot count it")
	}
}

// startUDPTCPTLS starts a collector with a UDP, a TCP and a TLS listener
// and returns its metrics' registry.
func startUDPTCPTLS(t *testing.T) *prometheus.Registry {
	t.Helper()
	pki := newTestPKI(t)
	tl := listener("tls")
	tl.CertFile, tl.KeyFile = pki.serverCert, pki.serverKey
	return startCollector(t, listener("udp"), listener("tcp"), tl).reg
}

// TestConnectionsGaugeForStreamListenersOnly: weir_syslog_connections
// ("Open TCP/TLS syslog connections") has a series per TCP and TLS
// listener, and none for a UDP listener, which has no connections.
func TestConnectionsGaugeForStreamListenersOnly(t *testing.T) {
	mfs, err := startUDPTCPTLS(t).Gather()
	if err != nil {
		t.Fatal(err)
	}
	var protos []string
	for _, mf := range mfs {
		if mf.GetName() != "weir_syslog_connections" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, p := range m.GetLabel() {
				if p.GetName() == "listener" {
					proto, _, _ := strings.Cut(p.GetValue(), "://")
					protos = append(protos, proto)
				}
			}
		}
	}
	slices.Sort(protos)
	if !slices.Equal(protos, []string{"tcp", "tls"}) {
		t.Errorf("weir_syslog_connections for listeners %v, want [tcp tls]", protos)
	}
}
