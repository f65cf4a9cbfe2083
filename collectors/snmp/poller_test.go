package snmp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

func loadProfiles(t testing.TB) *profile.Set {
	t.Helper()
	s, err := profile.Load(configs.BuiltinSNMPProfiles(), "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testTarget(name, addr string, mod func(*configs.SNMPTarget)) configs.SNMPTarget {
	tc := configs.DefaultSNMPTarget()
	tc.Name = name
	host, port, _ := strings.Cut(addr, ":")
	p, _ := strconv.Atoi(port)
	tc.Host, tc.Port = host, uint16(p)
	tc.Timeout = time.Second
	tc.Retries = 0
	if mod != nil {
		mod(&tc)
	}
	return tc
}

func v3(user, auth, priv string) func(*configs.SNMPTarget) {
	return func(tc *configs.SNMPTarget) {
		tc.Version = "3"
		tc.V3 = configs.SNMPv3{User: user, SecurityLevel: "authPriv", AuthProtocol: "SHA256", AuthPassword: auth,
			PrivProtocol: "AES", PrivPassword: priv}
	}
}

func decode(t testing.TB, recs []broker.Record) []telemetry.Metric {
	t.Helper()
	var out []telemetry.Metric
	for _, r := range recs {
		var m telemetry.Metric
		if err := json.Unmarshal(r.Value, &m); err != nil {
			t.Fatalf("record %s: %v", r.Value, err)
		}
		out = append(out, m)
	}
	return out
}

// countStatus counts a device's status records without decoding them: it
// runs on every produce while a test waits.
func countStatus(recs []broker.Record, device string) int {
	n := 0
	for _, r := range recs {
		if string(r.Key) == device && bytes.Contains(r.Value, []byte(`"measurement":"snmp_status"`)) {
			n++
		}
	}
	return n
}

func statuses(t testing.TB, recs []broker.Record, device string) []telemetry.Metric {
	var out []telemetry.Metric
	for _, m := range decode(t, recs) {
		if m.Measurement == "snmp_status" && m.Device == device {
			out = append(out, m)
		}
	}
	return out
}

// TestPollMatchesSnmpbulkwalk polls snmpd once and compares what weir
// publishes for the system and if-mib profiles with snmpbulkwalk's view of
// the same agent, read just before and just after.
func TestPollMatchesSnmpbulkwalk(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets:  []configs.SNMPTarget{testTarget("lab1", agent.Addr, func(tc *configs.SNMPTarget) { tc.Tags = map[string]string{"site": "lab"} })},
		Profiles: loadProfiles(t),
		Broker:   capture,
	})
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string]string{
		"ifDescr": "1.3.6.1.2.1.2.2.1.2", "ifOperStatus": "1.3.6.1.2.1.2.2.1.8", "ifAdminStatus": "1.3.6.1.2.1.2.2.1.7",
		"ifMtu": "1.3.6.1.2.1.2.2.1.4", "ifName": "1.3.6.1.2.1.31.1.1.1.1", "ifAlias": "1.3.6.1.2.1.31.1.1.1.18",
		"ifHighSpeed": "1.3.6.1.2.1.31.1.1.1.15", "ifHCInOctets": "1.3.6.1.2.1.31.1.1.1.6", "ifHCOutOctets": "1.3.6.1.2.1.31.1.1.1.10",
		"ifInOctets": "1.3.6.1.2.1.2.2.1.10", "ifHCInUcastPkts": "1.3.6.1.2.1.31.1.1.1.7",
		"ifPhysAddress": "1.3.6.1.2.1.2.2.1.6", "ifCounterDiscontinuityTime": "1.3.6.1.2.1.31.1.1.1.19",
	}
	walk := func() (map[string]snmptest.Varbind, []snmptest.Varbind) {
		byOID := map[string]snmptest.Varbind{}
		sys := agent.BulkWalk(t, 25, "1.3.6.1.2.1.1")
		for _, v := range sys {
			byOID[v.OID] = v
		}
		for _, oid := range cols {
			for _, v := range agent.BulkWalk(t, 25, oid) {
				byOID[v.OID] = v
			}
		}
		return byOID, sys
	}
	before, _ := walk()
	if err := p.PollOnce(context.Background(), "lab1"); err != nil {
		t.Fatal(err)
	}
	after, _ := walk()

	recs := capture.Records()
	for _, r := range recs {
		if string(r.Key) != "lab1" || r.Topic != telemetry.TopicRawSNMP {
			t.Fatalf("key %q topic %q", r.Key, r.Topic)
		}
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		if h["source"] != "snmp" || h["schema"] != "metric/1" {
			t.Fatalf("headers %v", h)
		}
	}
	ms := decode(t, recs)
	var system *telemetry.Metric
	ifaces := map[string]telemetry.Metric{}
	for i, m := range ms {
		switch m.Measurement {
		case "snmp_system":
			system = &ms[i]
		case "snmp_interface":
			ifaces[m.Tags["ifIndex"]] = m
		}
	}
	st := statuses(t, recs, "lab1")
	if len(st) != 1 || st[0].Fields["snmp_up"] != float64(1) || st[0].Fields["error"] != "" || st[0].Fields["varbinds"].(float64) < 10 {
		t.Fatalf("status %+v", st)
	}
	if system == nil {
		t.Fatal("no snmp_system record")
	}
	for field, oid := range map[string]string{"sysName": "1.3.6.1.2.1.1.5.0", "sysDescr": "1.3.6.1.2.1.1.1.0", "sysContact": "1.3.6.1.2.1.1.4.0", "sysLocation": "1.3.6.1.2.1.1.6.0"} {
		if got, want := system.Fields[field], before[oid].Value; got != want {
			t.Errorf("%s: weir %q, snmpbulkwalk %q", field, got, want)
		}
	}
	if got, want := system.Fields["sysObjectID"], strings.TrimPrefix(before["1.3.6.1.2.1.1.2.0"].Value, "."); got != want {
		t.Errorf("sysObjectID: weir %q, snmpbulkwalk %q", got, want)
	}
	up0, _ := strconv.ParseFloat(before["1.3.6.1.2.1.1.3.0"].Value, 64)
	up1, _ := strconv.ParseFloat(after["1.3.6.1.2.1.1.3.0"].Value, 64)
	if got := system.Fields["sysUpTime"].(float64); got < up0 || got > up1 || float64(system.Uptime) != got {
		t.Errorf("sysUpTime: weir %v (uptime %d), snmpbulkwalk %v..%v", got, system.Uptime, up0, up1)
	}
	if system.Tags["site"] != "lab" || system.Device != "lab1" {
		t.Errorf("system tags %v", system.Tags)
	}

	rows := 0
	for oid, v := range before {
		if !strings.HasPrefix(oid, cols["ifDescr"]+".") {
			continue
		}
		idx := strings.TrimPrefix(oid, cols["ifDescr"]+".")
		rows++
		m, ok := ifaces[idx]
		if !ok {
			t.Errorf("interface %s (%s) not published", idx, v.Value)
			continue
		}
		if m.Uptime == 0 || !m.Time.Equal(system.Time) {
			t.Errorf("interface %s: uptime %d time %v", idx, m.Uptime, m.Time)
		}
		for name, col := range cols {
			b, a := before[col+"."+idx], after[col+"."+idx]
			switch name {
			case "ifDescr", "ifName", "ifAlias":
				if m.Tags[name] != b.Value {
					t.Errorf("if %s %s: weir %q, snmpbulkwalk %q", idx, name, m.Tags[name], b.Value)
				}
			case "ifPhysAddress":
				want := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(b.Value), " ", ":"))
				if got, _ := m.Fields[name].(string); got != want && !(got == "" && want == `""`) {
					t.Errorf("if %s %s: weir %q, snmpbulkwalk %q", idx, name, got, b.Value)
				}
			case "ifOperStatus", "ifAdminStatus", "ifMtu", "ifHighSpeed", "ifCounterDiscontinuityTime":
				if fmt.Sprint(m.Fields[name]) != b.Value {
					t.Errorf("if %s %s: weir %v, snmpbulkwalk %q", idx, name, m.Fields[name], b.Value)
				}
			default: // counters: between the two reads
				lo, _ := strconv.ParseUint(b.Value, 10, 64)
				hi, _ := strconv.ParseUint(a.Value, 10, 64)
				got, ok := m.Fields[name].(float64)
				if !ok || uint64(got) < lo || uint64(got) > hi {
					t.Errorf("if %s %s: weir %v, snmpbulkwalk %d..%d", idx, name, m.Fields[name], lo, hi)
				}
				found := false
				for _, c := range m.Counters {
					found = found || c == name
				}
				if !found {
					t.Errorf("if %s: %s not in counters %v", idx, name, m.Counters)
				}
			}
		}
	}
	if rows == 0 || rows != len(ifaces) {
		t.Errorf("snmpbulkwalk sees %d interfaces, weir published %d", rows, len(ifaces))
	}
}

// TestTargetsAreIsolated polls, side by side: a v2c and a v3 authPriv
// target on a healthy agent, a v3 target with a wrong password, one with
// an unknown user, and a dead target. Each failure is reported on its own
// target with a clear error; the healthy ones keep their schedule.
func TestTargetsAreIsolated(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	// "dead" answers nothing (a hung agent, or a firewall dropping
	// packets): it must time out. "refused" has nothing listening, which
	// loopback reports at once (ICMP port unreachable).
	hole, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hole.Close()
	dead := hole.LocalAddr().String()
	refused := fmt.Sprintf("127.0.0.1:%d", snmptest.FreeUDPPort(t))
	// 3 s: a healthy v3 authPriv poll of snmpd took most of 1 s under
	// -race on a loaded machine and was cut off at the slot.
	interval := 3 * time.Second
	slow := func(tc *configs.SNMPTarget) { tc.Interval = interval; tc.Timeout = 800 * time.Millisecond }
	both := func(fs ...func(*configs.SNMPTarget)) func(*configs.SNMPTarget) {
		return func(tc *configs.SNMPTarget) {
			for _, f := range fs {
				f(tc)
			}
		}
	}
	targets := []configs.SNMPTarget{
		testTarget("good-v2c", agent.Addr, slow),
		testTarget("good-v3", agent.Addr, both(slow, v3(snmptest.V3User, snmptest.V3AuthPass, snmptest.V3PrivPass))),
		testTarget("bad-password", agent.Addr, both(slow, v3(snmptest.V3User, "wrongpass123", snmptest.V3PrivPass))),
		testTarget("unknown-user", agent.Addr, both(slow, v3("nobody", snmptest.V3AuthPass, snmptest.V3PrivPass))),
		testTarget("bad-priv", agent.Addr, both(slow, v3(snmptest.V3User, snmptest.V3AuthPass, "wrongpriv123"))),
		testTarget("dead", dead, slow),
		testTarget("refused", refused, slow),
	}
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: targets, Profiles: loadProfiles(t), Broker: capture, Metrics: metrics, MaxConcurrency: len(targets)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	// What each target's polls say. A poll of a failing target may also
	// end in its interval's deadline on a loaded machine (the diagnosis
	// of a wrong priv password asks the agent again): any of its polls
	// carrying the diagnosis is enough.
	wants := map[string]string{
		"good-v2c":     "",
		"good-v3":      "",
		"bad-password": "wrong digest: check auth_password and auth_protocol of user \"weir\"",
		"unknown-user": "unknown username: the agent has no user \"nobody\"",
		"bad-priv":     "decryption",
		"dead":         "timeout",
		"refused":      "connection refused",
	}
	says := func(st telemetry.Metric, name, want string) bool {
		errText, _ := st.Fields["error"].(string)
		up, _ := st.Fields["snmp_up"].(float64)
		if want == "" {
			return up == 1 && errText == ""
		}
		return up == 0 && strings.Contains(errText, want) && strings.Contains(errText, "snmp "+name+":")
	}
	said := func(recs []broker.Record, name string) bool {
		for _, st := range statuses(t, recs, name) {
			if says(st, name, wants[name]) {
				return true
			}
		}
		return false
	}
	ok := capture.WaitFor(60*time.Second, func(recs []broker.Record) bool {
		if countStatus(recs, "good-v2c") < 4 || countStatus(recs, "dead") < 2 {
			return false
		}
		for name := range wants {
			if !said(recs, name) {
				return false
			}
		}
		return true
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
	recs := capture.Records()
	if !ok {
		for name, want := range wants {
			for _, st := range statuses(t, recs, name) {
				t.Logf("%s: up %v error %q (want %q)", name, st.Fields["snmp_up"], st.Fields["error"], want)
			}
		}
		t.Fatal("not every target was polled, with what its polls should say, in time")
	}
	// A healthy target's polls never fail.
	for _, name := range []string{"good-v2c", "good-v3"} {
		for _, st := range statuses(t, recs, name) {
			if !says(st, name, "") {
				t.Errorf("%s: up %v error %q", name, st.Fields["snmp_up"], st.Fields["error"])
			}
		}
	}
	// The healthy target's polls are an interval apart, not held up by
	// the dead one's timeouts.
	st := statuses(t, recs, "good-v2c")
	for i := 1; i < len(st); i++ {
		gap := st[i].Time.Sub(st[i-1].Time)
		if gap < interval-300*time.Millisecond || gap > interval+500*time.Millisecond {
			t.Errorf("good-v2c polls %d and %d are %v apart, want about %v", i-1, i, gap, interval)
		}
	}
	// The v3 target's data arrived too.
	gotV3 := false
	for _, m := range decode(t, recs) {
		if m.Device == "good-v3" && m.Measurement == "snmp_interface" && m.Tags["ifDescr"] != "" {
			gotV3 = true
		}
	}
	if !gotV3 {
		t.Error("no interface records from the v3 target")
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("dead", ResultTimeout)); n < 2 {
		t.Errorf("dead timeouts counted %v", n)
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("bad-password", ResultAuth)); n < 1 {
		t.Errorf("auth errors counted %v", n)
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("good-v2c", ResultOK)); n < 4 {
		t.Errorf("good polls counted %v", n)
	}
	if v := testutil.ToFloat64(metrics.LastSuccess.WithLabelValues("good-v3")); v < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last success %v", v)
	}
}

func TestOffsetsSpreadAndAreStable(t *testing.T) {
	interval := time.Minute
	buckets := make([]int, 10)
	for i := 0; i < 1000; i++ {
		off := Offset(fmt.Sprintf("router%d", i), interval)
		if off < 0 || off >= interval {
			t.Fatalf("offset %v", off)
		}
		buckets[off*10/interval]++
	}
	for i, n := range buckets {
		if n < 60 || n > 140 {
			t.Errorf("bucket %d has %d of 1000 targets: not spread evenly", i, n)
		}
	}
	// Stable across processes and restarts: FNV-1a of the name, so a
	// target keeps its slot (this value must never change).
	h := fnv.New64a()
	h.Write([]byte("edge1"))
	if got, want := Offset("edge1", interval), time.Duration(h.Sum64()%uint64(interval)); got != want {
		t.Errorf("offset of edge1 %v, want %v", got, want)
	}
	now := time.Unix(1000, 0)
	if s := firstSlot(now, interval, 5*time.Second); !s.Equal(time.Unix(1025, 0)) {
		t.Errorf("first slot %v", s.Unix())
	}
	// The slot keeps the monotonic clock (String shows it as "m=..."):
	// the schedule does not follow steps of the wall clock.
	if s := firstSlot(time.Now(), interval, 5*time.Second); !strings.Contains(s.String(), " m=") {
		t.Errorf("first slot %v has no monotonic clock reading", s)
	}
}

func TestUnknownProfileIsAConfigError(t *testing.T) {
	tc := testTarget("x", "127.0.0.1:1", func(tc *configs.SNMPTarget) { tc.Profiles.Names = []string{"if-mibb"}; tc.Line = 7 })
	_, err := New(Config{Targets: []configs.SNMPTarget{tc}, Profiles: loadProfiles(t), Broker: snmptest.NewCapture()})
	if err == nil || !strings.Contains(err.Error(), "snmp target x (line 7): unknown profile if-mibb") {
		t.Fatalf("err %v", err)
	}
}

func TestDecodeIndex(t *testing.T) {
	for _, tc := range []struct {
		suffix string
		idx    []profile.Index
		want   string
	}{
		{"7", []profile.Index{{Name: "ifIndex", Type: "int"}}, "map[ifIndex:7]"},
		{"10.0.0.1", []profile.Index{{Name: "peer", Type: "ipv4"}}, "map[peer:10.0.0.1]"},
		{"3.97.98.99.5", []profile.Index{{Name: "s", Type: "string"}, {Name: "n", Type: "int"}}, "map[n:5 s:abc]"},
		{"97.98", []profile.Index{{Name: "s", Type: "implied_string"}}, "map[s:ab]"},
		{"1.2", []profile.Index{{Name: "a", Type: "int"}, {Name: "b", Type: "ipv4"}}, "map[index:1.2]"},
		{"1.2.3", nil, "map[index:1.2.3]"},
		// More sub-identifiers than the index has: not row 2.
		{"2.5", []profile.Index{{Name: "ifIndex", Type: "int"}}, "map[index:2.5]"},
		// A string's length past the sub-identifiers left, so large that
		// the bounds check's sum overflowed (and the slice panicked).
		{"1.9223372036854775807.65", []profile.Index{{Name: "a", Type: "int"}, {Name: "s", Type: "string"}}, "map[index:1.9223372036854775807.65]"},
	} {
		if got := fmt.Sprint(decodeIndex(tc.suffix, tc.idx)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.suffix, got, tc.want)
		}
	}
}

// TestUptimeIsSysUpTimeWithHostResources: records carry the agent's
// sysUpTime as uptime, also where a profile polls the host's
// hrSystemUptime (host-resources): sysUpTime is what the agent's coldStart
// trap carries, and the poll and the trap of one reboot must give one boot
// time, or one reboot is two device_rebooted whenever the host took longer
// than the de-duplication window to start snmpd.
func TestUptimeIsSysUpTimeWithHostResources(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	for _, profiles := range [][]string{{"system", "host-resources"}, {"system"}} {
		capture := snmptest.NewCapture()
		p, err := New(Config{
			Targets: []configs.SNMPTarget{testTarget("lab1", agent.Addr, func(tc2 *configs.SNMPTarget) {
				tc2.Profiles = configs.SNMPProfiles{Names: profiles}
			})},
			Profiles: loadProfiles(t), Broker: capture,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PollOnce(context.Background(), "lab1"); err != nil {
			t.Fatal(err)
		}
		var sysUp float64
		var uptime uint32
		for _, m := range decode(t, capture.Records()) {
			if m.Measurement == "snmp_system" {
				sysUp, _ = m.Fields["sysUpTime"].(float64)
				uptime = m.Uptime
			}
		}
		// The scalars and sysUpTime come in one GET: the same ticks,
		// give or take the GET's own time.
		if d := float64(uptime) - sysUp; d < -100 || d > 100 || uptime == 0 {
			t.Errorf("profiles %v: uptime %d, want sysUpTime %v", profiles, uptime, sysUp)
		}
	}
}

// TestSystemRowComesFirst: a poll writes its snmp_system row (sysName)
// before the rows of the tables. Enrichment finds a target the inventory
// lists only by its sysName from that row, for the rows that follow it in
// the poll; the profiles go in name order (if-mib before system), and a
// new target's first poll had every interface row tagged unknown and
// named after the target, a stray series in every sink.
func TestSystemRowComesFirst(t *testing.T) {
	order := pollOrder(t, "system", "if-mib")
	if len(order) < 2 || order[0] != "snmp_system" {
		t.Fatalf("measurements in the order written: %v; want snmp_system first", order)
	}
}

// pollOrder polls a real snmpd once with profiles and returns the
// measurements of the records in the order written.
func pollOrder(t *testing.T, profiles ...string) []string {
	t.Helper()
	agent := snmptest.StartSNMPD(t)
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("lab1", agent.Addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: profiles}
		})},
		Profiles: loadProfiles(t), Broker: capture,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "lab1"); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range decode(t, capture.Records()) {
		order = append(order, m.Measurement)
	}
	return order
}

// TestSystemRowComesBeforeOtherScalars: the snmp_system row comes first
// of a poll also when the target has other profiles with scalars, whose
// names sort before "system" (bgp4-mib, host-resources, icmp, ip; the
// example config's [system, if-mib, bgp4-mib, ...], and profiles: auto on
// a Net-SNMP agent): their rows, written before the sysName, were tagged
// unknown on a new target's first poll and named after the target.
func TestSystemRowComesBeforeOtherScalars(t *testing.T) {
	order := pollOrder(t, "system", "if-mib", "host-resources", "icmp")
	if len(order) < 3 || order[0] != "snmp_system" {
		t.Fatalf("measurements in the order written: %v; want snmp_system first", order)
	}
}
