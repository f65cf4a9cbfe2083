package snmp

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/sim"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestRemovedTargetSaysSo: a target a reload removes gets one last
// snmp_status record, with removed true and no snmp_up, after its polls
// (enrichment ends the target's reachability with it); the targets that
// stay get none, and one this process does not poll (another weir
// process of a cluster owns it) says nothing, as its owner does.
func TestRemovedTargetSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	target := func(name, addr string) configs.SNMPTarget {
		return testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = 300*time.Millisecond, 250*time.Millisecond
			tc.Profiles.Names = []string{"system"}
		})
	}
	addr, _ := startSim(t, ctx, sim.Options{Name: "a", Interfaces: 1})
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: []configs.SNMPTarget{target("a", addr), target("gone", addr), target("elsewhere", addr)},
		Profiles: loadProfiles(t), Broker: capture, Owner: func(name string) bool { return name != "elsewhere" }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if !capture.WaitFor(10*time.Second, func(recs []broker.Record) bool {
		return countStatus(recs, "gone") >= 2 && countStatus(recs, "a") >= 2
	}) {
		t.Fatal("not polled")
	}
	if err := p.Update([]configs.SNMPTarget{target("a", addr)}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if ms, _ := p.set.Members(); len(ms) == 1 {
			break // the update is applied: the removed targets' Gone returned
		} else if time.Now().After(deadline) {
			t.Fatalf("members %d after the update, want 1", len(ms))
		}
	}
	removedOf := func(device string) (n int, last bool) {
		st := statuses(t, capture.Records(), device)
		for i, m := range st {
			if m.Fields["removed"] == true {
				n++
				last = i == len(st)-1
				if _, ok := m.Fields["snmp_up"]; ok || len(m.Fields) != 1 {
					t.Errorf("%s: the removal's record has fields %v, want removed alone", device, m.Fields)
				}
			}
		}
		return n, last
	}
	if n, last := removedOf("gone"); n != 1 || !last {
		t.Errorf("the removed target: %d records saying so (last of its statuses: %v), want 1, last", n, last)
	}
	if n, _ := removedOf("elsewhere"); n != 0 {
		t.Errorf("a removed target another process polls: %d records saying so, want 0", n)
	}
	at := countStatus(capture.Records(), "a")
	if !capture.WaitFor(10*time.Second, func(recs []broker.Record) bool { return countStatus(recs, "a") >= at+2 }) {
		t.Fatal("the target that stays is not polled on")
	}
	if n, _ := removedOf("a"); n != 0 {
		t.Errorf("the target that stays: %d records saying it was removed", n)
	}
	if slices.ContainsFunc(capture.Records(), func(r broker.Record) bool { return string(r.Key) == "" }) {
		t.Error("a record with no key")
	}
}

// refusing is a capture that refuses records of one device, as a broker
// refuses a record over its size limit.
type refusing struct {
	*snmptest.Capture
	device string
}

func (r refusing) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	for _, rec := range recs {
		if string(rec.Key) == r.device {
			return broker.ErrRecordTooLarge
		}
	}
	return r.Capture.Produce(ctx, topic, recs)
}

// TestRemovedWhileStoppedSaysSo: a target taken out of the config while
// weir was stopped gets its removal record at the next start (with the
// tags it was polled with), from the state file of the targets polled
// before; one whose record the broker did not take stays in the file and
// is told at the start after; a target still listed gets none.
func TestRemovedWhileStoppedSaysSo(t *testing.T) {
	state := filepath.Join(t.TempDir(), "snmp", "targets.json")
	addr, _ := startSim(t, context.Background(), sim.Options{Name: "a", Interfaces: 1})
	target := func(name string) configs.SNMPTarget {
		return testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = 300*time.Millisecond, 250*time.Millisecond
			tc.Profiles.Names = []string{"system"}
			tc.Tags = map[string]string{"site": "ams1"}
		})
	}
	// run runs a poller of targets until cond holds of what it published.
	run := func(b broker.Broker, capture *snmptest.Capture, cond func([]broker.Record) bool, targets ...configs.SNMPTarget) {
		t.Helper()
		p, err := New(Config{Targets: targets, Profiles: loadProfiles(t), Broker: b, StateFile: state})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()
		ok := capture.WaitFor(10*time.Second, cond)
		cancel()
		<-done
		if !ok {
			t.Fatal("what was waited for was not published")
		}
	}
	removals := func(recs []broker.Record, device string) (n int) {
		for _, m := range statuses(t, recs, device) {
			if m.Fields["removed"] == true {
				n++
				if m.Tags["site"] != "ams1" || m.Tags["agent"] != "127.0.0.1" {
					t.Errorf("%s: the removal's tags %v, want the target's", device, m.Tags)
				}
			}
		}
		return n
	}
	polled := func(device string) func([]broker.Record) bool {
		return func(recs []broker.Record) bool { return countStatus(recs, device) >= 1 }
	}

	first := snmptest.NewCapture()
	run(first, first, func(recs []broker.Record) bool { return polled("a")(recs) && polled("b")(recs) && polled("c")(recs) },
		target("a"), target("b"), target("c"))
	if n := removals(first.Records(), "a") + removals(first.Records(), "b") + removals(first.Records(), "c"); n != 0 {
		t.Fatalf("%d removals at a first start", n)
	}

	// b and c taken out while stopped; c's record is refused.
	second := snmptest.NewCapture()
	run(refusing{second, "c"}, second, polled("a"), target("a"))
	if n := removals(second.Records(), "b"); n != 1 {
		t.Errorf("the target removed while stopped: %d removals at the next start, want 1", n)
	}
	if n := removals(second.Records(), "a"); n != 0 {
		t.Errorf("the target still listed: %d removals", n)
	}

	third := snmptest.NewCapture()
	run(third, third, polled("a"), target("a"))
	if n := removals(third.Records(), "c"); n != 1 {
		t.Errorf("the target whose removal was refused: %d removals at the start after, want 1", n)
	}
	if n := removals(third.Records(), "b"); n != 0 {
		t.Errorf("the target told removed: %d removals again", n)
	}
}

// TestRemovalRefusedAtReloadToldAtNextStart: a target a reload removes
// whose removal record the broker does not take stays in the state file,
// and the next start publishes it.
func TestRemovalRefusedAtReloadToldAtNextStart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "targets.json")
	addr, _ := startSim(t, context.Background(), sim.Options{Name: "a", Interfaces: 1})
	target := func(name string) configs.SNMPTarget {
		return testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout = 300*time.Millisecond, 250*time.Millisecond
			tc.Profiles.Names = []string{"system"}
		})
	}
	start := func(b broker.Broker, targets ...configs.SNMPTarget) (*Poller, func()) {
		p, err := New(Config{Targets: targets, Profiles: loadProfiles(t), Broker: b, StateFile: state})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()
		return p, func() { cancel(); <-done }
	}
	first := snmptest.NewCapture()
	p, stop := start(refusing{first, "d"}, target("a"), target("d"))
	if !first.WaitFor(10*time.Second, func(recs []broker.Record) bool { return countStatus(recs, "a") >= 2 }) {
		t.Fatal("not polled")
	}
	if err := p.Update([]configs.SNMPTarget{target("a")}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		known, _ := readKnown(state)
		if slices.ContainsFunc(known, func(k knownTarget) bool { return k.Name == "d" }) && len(known) == 2 {
			if ms, _ := p.set.Members(); len(ms) == 1 {
				break // removed, and kept in the file as unsaid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the state file after the refused removal: %+v, want a and d", known)
		}
	}
	stop()

	second := snmptest.NewCapture()
	_, stop = start(second, target("a"))
	defer stop()
	if !second.WaitFor(10*time.Second, func(recs []broker.Record) bool {
		for _, m := range statuses(t, recs, "d") {
			if m.Fields["removed"] == true {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the removal refused at the reload was not published at the next start")
	}
}
