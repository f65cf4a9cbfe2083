package snmp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/collectors/snmp/sim"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestUpdateTargets: a reload adds, changes and removes targets while the
// poller runs; an unchanged target keeps its session and its schedule, and
// a reload with a bad target changes nothing.
func TestUpdateTargets(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interval := 300 * time.Millisecond
	target := func(name, addr string, every time.Duration) configs.SNMPTarget {
		return testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = every, 250*time.Millisecond
			tc.Profiles.Names = []string{"system"}
		})
	}
	addrA, agentA := startSim(t, ctx, sim.Options{Name: "a", Interfaces: 1})
	addrB, _ := startSim(t, ctx, sim.Options{Name: "b", Interfaces: 1})
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: []configs.SNMPTarget{target("a", addrA, interval), target("gone", addrB, interval)},
		Profiles: loadProfiles(t), Broker: capture})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	polled := func(name string, n int) {
		t.Helper()
		if !capture.WaitFor(10*time.Second, func(recs []broker.Record) bool { return countStatus(recs, name) >= n }) {
			t.Fatalf("%s polled %d times, want %d", name, countStatus(capture.Records(), name), n)
		}
	}
	polled("a", 2)
	polled("gone", 1)

	// a unchanged (written on another line), gone removed, new added.
	moved := target("a", addrA, interval)
	moved.Line = 99
	if err := p.Update([]configs.SNMPTarget{moved, target("new", addrB, interval)}); err != nil {
		t.Fatal(err)
	}
	polled("new", 2)
	goneAt := countStatus(capture.Records(), "gone")
	aAt := countStatus(capture.Records(), "a")
	polled("a", aAt+3)
	if n := countStatus(capture.Records(), "gone"); n > goneAt+1 {
		t.Errorf("a removed target was polled %d more times", n-goneAt)
	}
	if n := agentA.Sources(); n != 1 {
		t.Errorf("the unchanged target's requests came from %d sockets, want 1 (its session kept)", n)
	}
	if n := testutil.CollectAndCount(p.cfg.Metrics.LastSuccess); n != 2 {
		t.Errorf("%d weir_snmp_last_success series, want 2 (a and new): the removed target's stays", n)
	}

	// A bad profile: the update fails and the targets stay.
	bad := target("worse", addrB, interval)
	bad.Profiles.Names = []string{"no-such-profile"}
	if err := p.Update([]configs.SNMPTarget{bad}); err == nil {
		t.Fatal("an update with an unknown profile was taken")
	}
	newAt := countStatus(capture.Records(), "new")
	polled("new", newAt+2)

	// A changed interval restarts the target with it.
	if err := p.Update([]configs.SNMPTarget{target("a", addrA, 2*interval), target("new", addrB, interval)}); err != nil {
		t.Fatal(err)
	}
	aAt = countStatus(capture.Records(), "a")
	polled("a", aAt+3)
	st := statuses(t, capture.Records(), "a")
	if gap := st[len(st)-1].Time.Sub(st[len(st)-2].Time); gap < 2*interval-100*time.Millisecond {
		t.Errorf("polls %v apart after the interval changed to %v", gap, 2*interval)
	}
}

// TestReloadEditedProfile: a profile file edited (a scalar added) and
// read again at a reload restarts the targets that poll with it, which
// poll the new scalar; a reload whose profiles read the same keeps the
// target's session. The poller kept the profiles of its start for ever.
func TestReloadEditedProfile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	write := func(scalars string) *profile.Set {
		t.Helper()
		prof := "name: mine\nmeasurement: snmp_mine\nscalars:\n" + scalars
		if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte(prof), 0o644); err != nil {
			t.Fatal(err)
		}
		set, err := profile.Load(configs.BuiltinSNMPProfiles(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	set := write("  - {name: sysName, oid: 1.3.6.1.2.1.1.5.0, type: string}\n")
	addr, agent := startSim(t, ctx, sim.Options{Name: "a", Interfaces: 1})
	tc := testTarget("a", addr, func(tc *configs.SNMPTarget) {
		tc.Interval, tc.Timeout = 300*time.Millisecond, 250*time.Millisecond
		tc.Profiles.Names = []string{"mine"}
	})
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: []configs.SNMPTarget{tc}, Profiles: set, Broker: capture})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	hasField := func(field string) bool {
		for _, m := range decode(t, capture.Records()) {
			if _, ok := m.Fields[field]; ok && m.Measurement == "snmp_mine" {
				return true
			}
		}
		return false
	}
	if !capture.WaitFor(10*time.Second, func([]broker.Record) bool { return hasField("sysName") }) {
		t.Fatal("no sysName polled")
	}
	// Read again, the same: the target keeps its session.
	if err := p.Reload(write("  - {name: sysName, oid: 1.3.6.1.2.1.1.5.0, type: string}\n"), []configs.SNMPTarget{tc}); err != nil {
		t.Fatal(err)
	}
	at := countStatus(capture.Records(), "a")
	if !capture.WaitFor(10*time.Second, func(recs []broker.Record) bool { return countStatus(recs, "a") >= at+2 }) {
		t.Fatal("not polled after a reload")
	}
	if n := agent.Sources(); n != 1 {
		t.Errorf("profiles read the same: the target's requests came from %d sockets, want 1 (its session kept)", n)
	}
	// Edited: sysLocation added.
	if err := p.Reload(write("  - {name: sysName, oid: 1.3.6.1.2.1.1.5.0, type: string}\n  - {name: sysLocation, oid: 1.3.6.1.2.1.1.6.0, type: string}\n"),
		[]configs.SNMPTarget{tc}); err != nil {
		t.Fatal(err)
	}
	if !capture.WaitFor(10*time.Second, func([]broker.Record) bool { return hasField("sysLocation") }) {
		t.Fatal("the scalar added to the profile is not polled after the reload")
	}
}

// TestReloadProfileCommentKeepsSession: a comment added at the top of a
// profile file moves the lines its scalars are written on and nothing
// else; the targets polling with it restarted at the reload (a new
// session, an SNMPv3 discovery each), as if the profile had changed.
func TestReloadProfileCommentKeepsSession(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	write := func(prof string) *profile.Set {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte(prof), 0o644); err != nil {
			t.Fatal(err)
		}
		set, err := profile.Load(configs.BuiltinSNMPProfiles(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	const prof = "name: mine\nmeasurement: snmp_mine\nscalars:\n  - {name: sysName, oid: 1.3.6.1.2.1.1.5.0, type: string}\n"
	addr, agent := startSim(t, ctx, sim.Options{Name: "a", Interfaces: 1})
	named := testTarget("a", addr, func(tc *configs.SNMPTarget) {
		tc.Interval, tc.Timeout = 300*time.Millisecond, 250*time.Millisecond
		tc.Profiles.Names = []string{"mine"}
	})
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: []configs.SNMPTarget{named}, Profiles: write(prof), Broker: capture})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if !capture.WaitFor(10*time.Second, func(recs []broker.Record) bool { return countStatus(recs, "a") >= 2 }) {
		t.Fatal("not polled")
	}
	if err := p.Reload(write("# owned by the NOC\n\n"+prof), []configs.SNMPTarget{named}); err != nil {
		t.Fatal(err)
	}
	at := countStatus(capture.Records(), "a")
	if !capture.WaitFor(10*time.Second, func(recs []broker.Record) bool { return countStatus(recs, "a") >= at+2 }) {
		t.Fatal("not polled after a reload")
	}
	if n := agent.Sources(); n != 1 {
		t.Errorf("a comment added to the profile: the target's requests came from %d sockets, want 1 (its session kept)", n)
	}
}
