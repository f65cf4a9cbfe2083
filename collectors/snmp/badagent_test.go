package snmp

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestAgentAnsweringWithTheRequest: a peer that sends each request back as
// it came (a UDP echo service on the port, a reflecting middlebox) answers
// with the request's own PDU type and a Null for every OID asked. That is
// not an SNMP response: the poll fails with a reason, and the target is not
// reported up with no data.
func TestAgentAnsweringWithTheRequest(t *testing.T) {
	echo, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := echo.ReadFrom(buf)
			if err != nil {
				return
			}
			echo.WriteTo(buf[:n], from)
		}
	}()
	for _, version := range []string{"1", "2c"} {
		t.Run("v"+version, func(t *testing.T) {
			name := "echo-v" + version
			target := testTarget(name, echo.LocalAddr().String(), func(tc *configs.SNMPTarget) {
				tc.Version = version
				tc.Interval = time.Second
			})
			reg := prometheus.NewRegistry()
			metrics, err := NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			capture := snmptest.NewCapture()
			p, err := New(Config{Targets: []configs.SNMPTarget{target}, Profiles: loadProfiles(t), Broker: capture, Metrics: metrics})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			ok := capture.WaitFor(10*time.Second, func(recs []broker.Record) bool { return countStatus(recs, name) >= 1 })
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Fatal("no poll of the echoing target")
			}
			st := statuses(t, capture.Records(), name)[0]
			errText, _ := st.Fields["error"].(string)
			if up := st.Fields["snmp_up"].(float64); up != 0 || !strings.Contains(errText, "not a response") {
				t.Fatalf("echoing peer: snmp_up %v, error %q; want down, with the PDU type named", up, errText)
			}
			if n := testutil.ToFloat64(metrics.Polls.WithLabelValues(name, ResultOK)); n != 0 {
				t.Errorf("%v polls of the echoing peer counted ok", n)
			}
			if n := testutil.ToFloat64(metrics.Polls.WithLabelValues(name, ResultError)); n < 1 {
				t.Errorf("polls of the echoing peer counted as errors: %v", n)
			}
		})
	}
}

// An agent that still answers a USM Report after gosnmp's retry (an
// unknown user, a wrong digest, a clock out of the window) fails the poll
// as auth, as gosnmp's own errors for them do; another Report is an error.
func TestReportPDUClassified(t *testing.T) {
	report := func(oid string) error {
		return checkResponse(&gosnmp.SnmpPacket{PDUType: gosnmp.Report, Variables: []gosnmp.SnmpPDU{{Name: oid, Type: gosnmp.Counter32, Value: uint(1)}}})
	}
	for _, oid := range []string{".1.3.6.1.6.3.15.1.1.2.0", ".1.3.6.1.6.3.15.1.1.3.0", ".1.3.6.1.6.3.15.1.1.5.0"} {
		if got := classify(report(oid)); got != ResultAuth {
			t.Errorf("Report %s classified %s, want %s", oid, got, ResultAuth)
		}
	}
	if got := classify(report(".1.3.6.1.6.3.11.2.1.1.0")); got != ResultError { // snmpUnknownSecurityModels
		t.Errorf("another Report classified %s, want %s", got, ResultError)
	}
	if err := checkResponse(&gosnmp.SnmpPacket{PDUType: gosnmp.GetResponse}); err != nil {
		t.Errorf("a response refused: %v", err)
	}
}

// TestGetTooBigAsksForFewer: an agent whose answer to a GET of several
// scalars would not fit its message size answers tooBig (RFC 3416 4.2.1);
// the poller asks again for them in halves, down to one at a time, and
// the poll succeeds with every scalar. (It failed every poll.)
func TestGetTooBigAsksForFewer(t *testing.T) {
	var mu sync.Mutex
	largest := 0
	addr := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		if req.PDUType != gosnmp.GetRequest {
			return &gosnmp.SnmpPacket{Variables: req.Variables, Error: gosnmp.GenErr, ErrorIndex: 1}
		}
		if len(req.Variables) > 2 {
			return &gosnmp.SnmpPacket{Variables: req.Variables, Error: gosnmp.TooBig}
		}
		mu.Lock()
		largest = max(largest, len(req.Variables))
		mu.Unlock()
		resp := &gosnmp.SnmpPacket{}
		for _, v := range req.Variables {
			pdu := gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.OctetString, Value: []byte("x" + v.Name)}
			if v.Name == ".1.3.6.1.2.1.1.3.0" {
				pdu = gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.TimeTicks, Value: uint32(1234)}
			}
			resp.Variables = append(resp.Variables, pdu)
		}
		return resp
	})
	capture := snmptest.NewCapture()
	p := systemPoller(t, "a", addr, capture, nil)
	if err := p.PollOnce(context.Background(), "a"); err != nil {
		t.Fatalf("poll: %v", err)
	}
	var system map[string]any
	for _, m := range decode(t, capture.Records()) {
		if m.Measurement == "snmp_system" {
			system = m.Fields
		}
	}
	mu.Lock() // the agent's goroutine wrote it; a UDP answer is no happens-before edge
	most := largest
	mu.Unlock()
	if system["sysName"] != "x.1.3.6.1.2.1.1.5.0" || system["sysDescr"] != "x.1.3.6.1.2.1.1.1.0" || most != 2 {
		t.Fatalf("system fields %v (largest GET answered: %d varbinds)", system, most)
	}
}

// TestGetAgentErrorNamesTheObject: an agent that fails a GET of scalars
// with an error-status names the object at fault in error-index (a
// subagent that does not answer, behind one of the profile's scalars).
// The poll's error names that object, not the first of the request
// (sysUpTime, which the agent has), which sent one looking in the wrong
// place.
func TestGetAgentErrorNamesTheObject(t *testing.T) {
	const sysName = ".1.3.6.1.2.1.1.5.0"
	addr := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		for i, v := range req.Variables {
			if v.Name == sysName {
				return &gosnmp.SnmpPacket{Variables: req.Variables, Error: gosnmp.GenErr, ErrorIndex: uint8(i + 1)}
			}
		}
		resp := &gosnmp.SnmpPacket{}
		for _, v := range req.Variables {
			resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.TimeTicks, Value: uint32(1)})
		}
		return resp
	})
	capture := snmptest.NewCapture()
	p := systemPoller(t, "a", addr, capture, nil)
	err := p.PollOnce(context.Background(), "a")
	if err == nil || !strings.Contains(err.Error(), "get 1.3.6.1.2.1.1.5.0: agent error GenErr") {
		t.Fatalf("poll error %v; want it to name the object at error-index, %s", err, sysName[1:])
	}
}

// TestResultNotTakenFromTheTargetName: a poll's result was read from its
// error's text, which starts with the target's name: every failure of a
// target named like "fw-timeout-lab" counted as a timeout (and set off
// the v3 probes for silence), an agent's genErr included.
func TestResultNotTakenFromTheTargetName(t *testing.T) {
	addr := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: req.Variables, Error: gosnmp.GenErr, ErrorIndex: 1}
	})
	metrics, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	name := "fw-timeout-lab"
	p := systemPoller(t, name, addr, snmptest.NewCapture(), metrics)
	if err := p.PollOnce(context.Background(), name); err == nil {
		t.Fatal("a poll answered genErr worked")
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues(name, ResultError)); n != 1 {
		t.Errorf("the genErr poll counted error %v times, timeout %v times; want error once", n,
			testutil.ToFloat64(metrics.Polls.WithLabelValues(name, ResultTimeout)))
	}
}

// systemPoller is a poller of one target, name at addr, polling the
// system profile into capture.
func systemPoller(t *testing.T, name, addr string, capture *snmptest.Capture, metrics *Metrics) *Poller {
	t.Helper()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"system"}}
		})},
		Profiles: loadProfiles(t), Broker: capture, Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAnswersWithAnotherRequestIDSaySo: an agent that answers every
// request, but with another request ID (a broken agent, another program
// on its port), has its answers dropped by gosnmp, which waits on until
// the timeout. The poll said "nothing was answered: the agent is down or
// unreachable, or does not accept the community", counted as a timeout:
// a search in the wrong place. It says what came, counted error.
func TestAnswersWithAnotherRequestIDSaySo(t *testing.T) {
	addr := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		var vbs []gosnmp.SnmpPDU
		for _, v := range req.Variables {
			vbs = append(vbs, gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.TimeTicks, Value: uint32(1234)})
		}
		return &gosnmp.SnmpPacket{RequestID: req.RequestID + 7, Variables: vbs}
	})
	metrics, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	capture := snmptest.NewCapture()
	p := systemPoller(t, "wrongid", addr, capture, metrics)
	err = p.PollOnce(context.Background(), "wrongid")
	if err == nil || strings.Contains(err.Error(), "nothing was answered") || !strings.Contains(err.Error(), "no answer to the request: they carry other request IDs") {
		t.Fatalf("poll of an agent answering with other request IDs: %v", err)
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("wrongid", ResultError)); n != 1 {
		t.Errorf("counted error %v times, timeout %v times; want error once", n,
			testutil.ToFloat64(metrics.Polls.WithLabelValues("wrongid", ResultTimeout)))
	}
	if st := statuses(t, capture.Records(), "wrongid"); len(st) != 1 || st[0].Fields["snmp_up"] != float64(0) {
		t.Errorf("status records %v", st)
	}
}

// TestLateDuplicateThenOutageIsATimeout: an agent that answered a request
// twice (a request sent again on a slow path, both answered) leaves the
// second answer of the poll's last request in the session's socket; the
// next poll finds it first. When the agent is then down, that stale
// datagram, of the poll before, made the timeout read as an agent
// answering with other request IDs ("a broken agent, or another program
// answering on its port"), counted error: an outage reported as a broken
// agent. It is a timeout, said as nothing answered.
func TestLateDuplicateThenOutageIsATimeout(t *testing.T) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var down atomic.Bool
	go func() {
		dec := &gosnmp.GoSNMP{}
		buf := make([]byte, 65535)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			req, err := dec.SnmpDecodePacket(buf[:n])
			if err != nil || down.Load() {
				continue
			}
			resp := &gosnmp.SnmpPacket{Version: req.Version, Community: req.Community, PDUType: gosnmp.GetResponse, RequestID: req.RequestID}
			for _, v := range req.Variables {
				resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.TimeTicks, Value: uint32(1234)})
			}
			b, err := resp.MarshalMsg()
			if err != nil {
				panic(err)
			}
			conn.WriteTo(b, from)
			conn.WriteTo(b, from) // and again, as an answer to the request sent again
		}
	}()
	metrics, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	name := "dup"
	p := systemPoller(t, name, conn.LocalAddr().String(), snmptest.NewCapture(), metrics)
	// As scheduled polls do, on one session (PollOnce closes it).
	tgt := p.targets[0]
	defer tgt.close()
	if err := tgt.pollAndPublish(context.Background(), time.Now().Add(20*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the duplicate is in the socket
	down.Store(true)
	err = tgt.pollAndPublish(context.Background(), time.Now().Add(20*time.Second), nil)
	if err == nil || !strings.Contains(err.Error(), "nothing was answered") || strings.Contains(err.Error(), "other request IDs") {
		t.Fatalf("poll of an agent gone down after a duplicate answer: %v", err)
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues(name, ResultTimeout)); n != 1 {
		t.Errorf("counted timeout %v times, error %v times; want timeout once", n,
			testutil.ToFloat64(metrics.Polls.WithLabelValues(name, ResultError)))
	}
	// The duplicate left by the first poll's last request; the ones of
	// its earlier requests were read and dropped while it ran.
	if n := testutil.ToFloat64(metrics.DroppedDatagrams.WithLabelValues(name, DropLate)); n != 1 {
		t.Errorf("late answers counted %v, want 1", n)
	}
}
