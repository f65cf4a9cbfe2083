package gnmi

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	fake "github.com/openconfig/gnmi/testing/fake/gnmi"
	fpb "github.com/openconfig/gnmi/testing/fake/proto"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
	"github.com/weirnet/weir/telemetry"
)

const countersPath = "/interfaces/interface/state/counters"
const bgpPath = "/network-instances/network-instance/protocols/protocol/bgp/neighbors/neighbor/state/session-state"

func simTarget(name, addr string, subs ...configs.GNMISubscription) configs.GNMITarget {
	return configs.GNMITarget{Name: name, Address: addr, Insecure: true, Encoding: "proto", Subscriptions: subs}
}

func ethernet1(m metric) bool {
	return m.Measurement == "interfaces_interface_state_counters" && m.Tags["name"] == "Ethernet1"
}

// TestFakeAgent: openconfig's own fake agent, in-process, serving fixed
// responses with keyed paths, an update and a delete; weir publishes them.
func TestFakeAgent(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UnixNano()
	p := func(s string) *gpb.Path { return mustPath(t, s) }
	agent, err := fake.New(&fpb.Config{
		Target:     "fake1",
		Port:       0,
		DisableEof: true,
		Generator: &fpb.Config_Fixed{Fixed: &fpb.FixedGenerator{Responses: []*gpb.SubscribeResponse{
			{Response: &gpb.SubscribeResponse_Update{Update: &gpb.Notification{
				Timestamp: ts,
				Prefix:    p("/interfaces/interface[name=Ethernet1]/state/counters"),
				Update: []*gpb.Update{
					{Path: p("in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 42}}},
					{Path: p("in-errors"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 3}}},
				},
			}}},
			{Response: &gpb.SubscribeResponse_Update{Update: &gpb.Notification{
				Timestamp: ts + 1,
				Prefix:    p("/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors"),
				Update:    []*gpb.Update{{Path: p("neighbor[neighbor-address=192.0.2.1]/state/session-state"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "ESTABLISHED"}}}},
				Delete:    []*gpb.Path{p("neighbor[neighbor-address=192.0.2.2]")},
			}}},
		}}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	_, port, _ := net.SplitHostPort(agent.Address())
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("fake1", "127.0.0.1:"+port, sub(countersPath, "stream", "sample", time.Second))}})
	waitFor(t, 10*time.Second, "3 records from the fake agent", func() bool { return len(r.b.metrics(t)) >= 3 })
	waitFor(t, 5*time.Second, "sync", func() bool { return testutil.ToFloat64(r.m.Syncs.WithLabelValues("fake1")) == 1 })
	ms := r.b.metrics(t)
	if len(ms) != 3 {
		t.Fatalf("want 3 records, got %d", len(ms))
	}
	c := ms[0]
	if c.Topic != telemetry.TopicRawGNMI || c.Key != "fake1" || c.Device != "fake1" || c.Headers["source"] != "gnmi" || c.Headers["schema"] != "metric/1" ||
		c.Measurement != "interfaces_interface_state_counters" || c.Tags["name"] != "Ethernet1" ||
		c.Fields["in-octets"] != json.Number("42") || c.Fields["in-errors"] != json.Number("3") || c.Time.UnixNano() != ts {
		t.Errorf("counters: %+v", c)
	}
	// The BGP notification's delete comes before its update, as gNMI
	// applies them.
	if b := ms[2]; b.Tags["neighbor-address"] != "192.0.2.1" || b.Fields["session-state"] != "ESTABLISHED" || b.Tags["protocol_name"] != "BGP" {
		t.Errorf("bgp: %+v", b)
	}
	if d := ms[1]; d.Tags["neighbor-address"] != "192.0.2.2" || d.Fields["deleted"] != true {
		t.Errorf("delete: %+v", d)
	}
	if got := testutil.ToFloat64(r.m.Updates.WithLabelValues("fake1")); got != 4 {
		t.Errorf("updates_total %v, want 4", got)
	}
	if testutil.ToFloat64(r.m.Connected.WithLabelValues("fake1")) != 1 {
		t.Errorf("not connected")
	}
}

func TestSimSample(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 3})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("sim1", addr, sub(countersPath, "stream", "sample", 50*time.Millisecond))}})
	waitFor(t, 10*time.Second, "3 samples of Ethernet1", func() bool { return len(r.b.where(t, ethernet1)) >= 3 })
	ms := r.b.where(t, ethernet1)
	var prev uint64
	for i, m := range ms[:3] {
		n, ok := m.Fields["in-octets"].(json.Number)
		v, err := n.Int64()
		if !ok || err != nil || len(m.Fields) != len(sim.Counters) || len(m.Counters) != len(sim.Counters) {
			t.Fatalf("sample %d: %+v", i, m)
		}
		if uint64(v) < prev {
			t.Errorf("in-octets went back: %d < %d", v, prev)
		}
		prev = uint64(v)
		if m.Tags["path"] != "/interfaces/interface[name=Ethernet1]/state/counters" || m.Key != "sim1" {
			t.Errorf("tags %v key %s", m.Tags, m.Key)
		}
	}
	if !ms[2].Time.After(ms[0].Time) {
		t.Errorf("sample times do not advance: %v %v", ms[0].Time, ms[2].Time)
	}
	if testutil.ToFloat64(r.m.LastUpdate.WithLabelValues("sim1")) < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last update timestamp not set")
	}
}

func TestSimOnChangeJSON(t *testing.T) {
	s, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Neighbors: 3, ToggleEvery: -1})
	tg := simTarget("sim1", addr, sub(bgpPath, "stream", "on_change", 0))
	tg.Encoding = "json"
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{tg}})
	isBGP := func(m metric) bool { return strings.HasSuffix(m.Measurement, "neighbor_state") }
	waitFor(t, 10*time.Second, "initial BGP state", func() bool { return len(r.b.where(t, isBGP)) == 3 })
	waitFor(t, 5*time.Second, "sync", func() bool { return r.c.Status()[0].Synced })
	s.Toggle(1)
	waitFor(t, 10*time.Second, "the toggled neighbor", func() bool { return len(r.b.where(t, isBGP)) == 4 })
	last := r.b.where(t, isBGP)[3]
	if last.Tags["neighbor-address"] != "10.0.0.2" || last.Fields["session-state"] != "IDLE" || last.Tags["name"] != "default" {
		t.Errorf("toggle: %+v", last)
	}
	// Nothing else changed, so nothing else came.
	time.Sleep(100 * time.Millisecond)
	if n := len(r.b.where(t, isBGP)); n != 4 {
		t.Errorf("%d records, want 4", n)
	}
}

func TestSimOnce(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 4})
	tg := simTarget("sim1", addr, sub(countersPath, "once", "", 0), sub(bgpPath, "once", "", 0))
	tg.Encoding = "json_ietf"
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{tg}})
	waitFor(t, 10*time.Second, "4 interfaces and 4 neighbors", func() bool { return len(r.b.metrics(t)) >= 8 })
	waitFor(t, 5*time.Second, "the once subscription to end", func() bool { return r.c.Status()[0].Completed })
	time.Sleep(100 * time.Millisecond)
	if n := len(r.b.metrics(t)); n != 8 {
		t.Errorf("%d records, want 8", n)
	}
	st := r.c.Status()[0]
	if st.Sessions != 1 || st.LastError != nil || testutil.ToFloat64(r.m.Reconnects.WithLabelValues("sim1")) != 0 {
		t.Errorf("once should not reconnect: %+v", st)
	}
	// JSON_IETF objects expanded into typed leaves; the sim quotes its
	// counter64s, as RFC 7951 has it, and they are counters still.
	e := r.b.where(t, ethernet1)[0]
	if _, ok := e.Fields["out-octets"].(json.Number); !ok || len(e.Fields) != len(sim.Counters) || len(e.Counters) != len(sim.Counters) {
		t.Errorf("json_ietf fields: %#v, counters %v", e.Fields, e.Counters)
	}
}

func TestSimPoll(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 2})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("sim1", addr, sub("/interfaces/interface[name=Ethernet1]/state/counters/in-octets", "poll", "", 50*time.Millisecond))}})
	waitFor(t, 10*time.Second, "4 polls", func() bool { return len(r.b.where(t, ethernet1)) >= 4 })
	ms := r.b.where(t, ethernet1)
	for _, m := range ms {
		if len(m.Fields) != 1 || m.Fields["in-octets"] == nil {
			t.Fatalf("poll of one leaf: %+v", m)
		}
	}
	if n := len(r.b.where(t, func(m metric) bool { return m.Tags["name"] == "Ethernet2" })); n != 0 {
		t.Errorf("Ethernet2 not asked for, got %d", n)
	}
	if testutil.ToFloat64(r.m.Syncs.WithLabelValues("sim1")) < 4 {
		t.Errorf("each poll ends with a sync_response")
	}
}

func TestWrongCredentials(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Username: "weir", Password: "right"})
	bad := simTarget("bad", addr, sub(countersPath, "stream", "sample", time.Second))
	bad.Username, bad.Password = "weir", "wrong"
	good := simTarget("good", addr, sub(countersPath, "stream", "sample", time.Second))
	good.Username, good.Password = "weir", "right"
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{bad, good}})
	waitFor(t, 10*time.Second, "the refusal", func() bool { return r.c.Status()[0].LastError != nil })
	err := r.c.Status()[0].LastError
	if want := `gnmi bad: capabilities: ` + addr + ` refused the credentials for user "weir"`; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("error %q, want %q", err, want)
	}
	waitFor(t, 5*time.Second, "errors_total{code=Unauthenticated}", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("bad", "Unauthenticated")) >= 1
	})
	waitFor(t, 10*time.Second, "the good target's data", func() bool {
		return len(r.b.where(t, func(m metric) bool { return m.Device == "good" })) > 0
	})
	if n := len(r.b.where(t, func(m metric) bool { return m.Device == "bad" && !isStatus(m) })); n != 0 {
		t.Errorf("%d records from the refused target", n)
	}
	// What it published says why: gnmi_status, gnmi_up 0, the error.
	st := r.b.where(t, func(m metric) bool { return m.Device == "bad" && isStatus(m) })
	if len(st) == 0 || st[0].Fields["gnmi_up"] != json.Number("0") || !strings.Contains(fmt.Sprint(st[0].Fields["error"]), "refused the credentials") {
		t.Errorf("the refused target's status records: %+v", st)
	}
	if n := len(r.b.where(t, func(m metric) bool { return m.Device == "good" && isStatus(m) })); n != 0 {
		t.Errorf("%d status records from the target that serves: want none, its data says it", n)
	}
}

// TestNoCredentials: a target that wants credentials, given none, is
// said to want them, not to have refused credentials never sent.
func TestNoCredentials(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Username: "weir", Password: "right"})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("anon", addr, sub(countersPath, "stream", "sample", time.Second))}})
	waitFor(t, 10*time.Second, "the refusal", func() bool { return r.c.Status()[0].LastError != nil })
	err := r.c.Status()[0].LastError
	if want := `gnmi anon: capabilities: ` + addr + ` refused the call without credentials (set username and password)`; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestReconnect(t *testing.T) {
	_, addr, stop := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 1})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("sim1", addr, sub(countersPath, "stream", "sample", 50*time.Millisecond))}})
	waitFor(t, 10*time.Second, "data", func() bool { return len(r.b.metrics(t)) >= 2 })
	stop()
	waitFor(t, 10*time.Second, "disconnected", func() bool { return testutil.ToFloat64(r.m.Connected.WithLabelValues("sim1")) == 0 })
	stoppedAt := time.Now()
	waitFor(t, 10*time.Second, "a failed reconnect", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("sim1", "Unavailable")) >= 2
	})
	before := len(r.b.metrics(t))
	startSim(t, addr, sim.Config{Interfaces: 1})
	waitFor(t, 10*time.Second, "data after the restart", func() bool { return len(r.b.metrics(t)) >= before+2 })
	if testutil.ToFloat64(r.m.Connected.WithLabelValues("sim1")) != 1 {
		t.Errorf("not connected after restart")
	}
	if n := testutil.ToFloat64(r.m.Reconnects.WithLabelValues("sim1")); n < 2 {
		t.Errorf("reconnects_total %v, want >= 2", n)
	}
	// The gap is visible in the data too: nothing stamped while down.
	ms := r.b.metrics(t)
	if gap := ms[before].Time.Sub(ms[before-1].Time); gap < time.Since(stoppedAt)/4 && gap < 100*time.Millisecond {
		t.Errorf("no gap between %v and %v", ms[before-1].Time, ms[before].Time)
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "weir test CA")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	srvCert := ca.TLSCert(t, "sim.lab")
	cliCertPEM, cliKeyPEM := ca.Leaf(t, "weir")
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{TLS: &tls.Config{
		Certificates: []tls.Certificate{srvCert}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	}})
	good := simTarget("tls", addr, sub(countersPath, "stream", "sample", time.Second))
	good.Insecure = false
	good.TLS = &configs.GNMITLS{CAFile: ca.File, CertFile: write("c.pem", cliCertPEM), KeyFile: write("c.key", cliKeyPEM), ServerName: "sim.lab"}
	nocert := good
	nocert.Name = "nocert"
	nocert.TLS = &configs.GNMITLS{CAFile: good.TLS.CAFile, ServerName: "sim.lab"}
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{good, nocert}})
	waitFor(t, 10*time.Second, "data over TLS", func() bool { return len(r.b.where(t, func(m metric) bool { return m.Device == "tls" })) > 0 })
	waitFor(t, 10*time.Second, "the target without a client certificate to fail", func() bool { return r.c.Status()[1].LastError != nil })
	if n := len(r.b.where(t, func(m metric) bool { return m.Device == "nocert" && !isStatus(m) })); n != 0 {
		t.Errorf("records without a client certificate: %d", n)
	}
	if _, err := New(configs.GNMI{Targets: []configs.GNMITarget{{Name: "x", Address: addr, TLS: &configs.GNMITLS{CAFile: filepath.Join(dir, "missing.pem")}, Subscriptions: good.Subscriptions}}}, &memBroker{}); err == nil || !strings.Contains(err.Error(), "gnmi x: tls ca_file") {
		t.Errorf("missing CA: %v", err)
	}

	// A client certificate renewed in place, config unchanged: a reload
	// resubscribes with it.
	strangerPEM, strangerKeyPEM := tlstest.NewCA(t, "another CA").Leaf(t, "weir")
	rot := good
	rot.Name, rot.Timeout = "rotated", configs.Duration(5*time.Second) // startCollector's timeout: the config stays equal
	rot.TLS = &configs.GNMITLS{CAFile: good.TLS.CAFile, CertFile: write("r.pem", strangerPEM), KeyFile: write("r.key", strangerKeyPEM), ServerName: "sim.lab"}
	r2 := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{rot}})
	waitFor(t, 10*time.Second, "a certificate the target does not trust to fail", func() bool { return r2.c.Status()[0].LastError != nil })
	st, _ := os.Stat(rot.TLS.CertFile)
	write("r.pem", cliCertPEM)
	write("r.key", cliKeyPEM)
	os.Chtimes(rot.TLS.CertFile, st.ModTime(), st.ModTime()) // copied with its time kept (cp -p): contents tell
	if err := r2.c.Update([]configs.GNMITarget{rot}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "data with the renewed certificate", func() bool {
		return len(r2.b.where(t, func(m metric) bool { return m.Device == "rotated" })) > 0
	})
}

// TestInsecureAgainstTLS: `insecure: true` (plaintext) against a target
// that serves TLS failed with gRPC's "error reading server preface: EOF"
// alone; the error now says what to look at.
func TestInsecureAgainstTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{TLS: &tls.Config{
		Certificates: []tls.Certificate{ca.TLSCert(t, "sim.lab")}, MinVersion: tls.VersionTLS12,
	}})
	plain := simTarget("plain", addr, sub(countersPath, "stream", "sample", time.Second))
	plain.Insecure = true
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{plain}})
	waitFor(t, 10*time.Second, "the plaintext target to fail", func() bool { return r.c.Status()[0].LastError != nil })
	err := r.c.Status()[0].LastError
	if !strings.Contains(err.Error(), "insecure: true") || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("error %q does not point at insecure: true against a TLS target", err)
	}
}

// TestTLSAgainstPlaintext: TLS (the default) against a plaintext target
// failed with crypto/tls's "first record does not look like a TLS
// handshake" alone; the error now names the setting a lab target needs.
func TestTLSAgainstPlaintext(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{})
	tgt := simTarget("tls", addr, sub(countersPath, "stream", "sample", time.Second))
	tgt.Insecure = false
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{tgt}})
	waitFor(t, 10*time.Second, "the TLS target to fail", func() bool { return r.c.Status()[0].LastError != nil })
	err := r.c.Status()[0].LastError
	if !strings.Contains(err.Error(), "insecure: true") || !strings.Contains(err.Error(), "plaintext") {
		t.Errorf("error %q does not point at insecure: true for a plaintext target", err)
	}
}

// TestInsecureAgainstAClosingPlaintextTarget: the same "error reading
// server preface" comes from a plaintext address that reads the preface
// and closes (a TCP proxy whose backend is down, a target over its
// session limit) or answers in HTTP/1.1 (a web port): the hint that it
// serves TLS, shown for any of them, sent the operator to the wrong
// setting. It is given only when the address answers a TLS handshake.
func TestInsecureAgainstAClosingPlaintextTarget(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply []byte
	}{
		{"closes", nil},
		{"http1", []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						c.SetDeadline(time.Now().Add(5 * time.Second))
						buf := make([]byte, 512)
						if _, err := c.Read(buf); err != nil {
							return
						}
						c.Write(tc.reply)
						time.Sleep(20 * time.Millisecond)
					}()
				}
			}()
			plain := simTarget("plain", ln.Addr().String(), sub(countersPath, "stream", "sample", time.Second))
			r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{plain}})
			waitFor(t, 10*time.Second, "the target to fail", func() bool {
				err := r.c.Status()[0].LastError
				return err != nil && strings.Contains(err.Error(), "server preface")
			})
			if err := r.c.Status()[0].LastError; strings.Contains(err.Error(), "serve TLS") {
				t.Errorf("error %q asks whether a plaintext address serves TLS", err)
			}
		})
	}
}
