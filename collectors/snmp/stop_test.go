package snmp

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestStopNotHeldByDeadAgent: weir stopping (or a reload removing a
// target) while a request to a dead agent is in flight waits for that
// request's whole timeout unless the socket is closed: gosnmp only looks
// at the context between retries.
func TestStopNotHeldByDeadAgent(t *testing.T) {
	var asked atomic.Int32
	addr := fakeAgent(t, func(*gosnmp.SnmpPacket) *gosnmp.SnmpPacket { asked.Add(1); return nil }) // never answers
	const timeout = 8 * time.Second
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("dead", addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout, tc.Retries = timeout, timeout, 0
			tc.Profiles.Names = []string{"system"}
		})},
		Profiles: loadProfiles(t), Broker: snmptest.NewCapture(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	for deadline := time.Now().Add(2 * timeout); asked.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("no request reached the agent")
		}
	}
	start := time.Now()
	cancel()
	select {
	case <-done:
		t.Logf("Run returned %v after cancel", time.Since(start))
	case <-time.After(3 * time.Second): // of the 8 s the request would wait
		<-done
		t.Fatalf("Run returned %v after cancel: a poll of a dead agent holds up the stop for its request timeout (%v)", time.Since(start), timeout)
	}
}

// TestReloadNotHeldByDeadAgent: a reload that removes a target whose
// request to a dead agent is in flight is applied only when the request
// times out; the reload's other changes (targets added) wait as long.
func TestReloadNotHeldByDeadAgent(t *testing.T) {
	var asked atomic.Int32
	addr := fakeAgent(t, func(*gosnmp.SnmpPacket) *gosnmp.SnmpPacket { asked.Add(1); return nil })
	const timeout = 8 * time.Second
	target := func(name string) configs.SNMPTarget {
		return testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout, tc.Retries = timeout, timeout, 0
			tc.Profiles.Names = []string{"system"}
		})
	}
	p, err := New(Config{Targets: []configs.SNMPTarget{target("dead")}, Profiles: loadProfiles(t), Broker: snmptest.NewCapture()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(2 * timeout); asked.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no request reached the agent")
		}
	}
	start := time.Now()
	if err := p.Update([]configs.SNMPTarget{target("added")}); err != nil {
		t.Fatal(err)
	}
	for {
		if ms, _ := p.set.Members(); len(ms) == 1 && ms[0].Name == "added" {
			break
		}
		if time.Since(start) > 3*time.Second {
			t.Fatalf("reload not applied %v after it was asked for: the removed target's request to a dead agent holds it up (timeout %v)", time.Since(start), timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("reload applied in %v", time.Since(start))
}
