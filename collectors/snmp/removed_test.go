package snmp

import (
	"context"
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
