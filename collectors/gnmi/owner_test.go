package gnmi

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
)

// fakeOwner owns the targets the test says.
type fakeOwner struct {
	mu      sync.Mutex
	owned   map[string]bool
	changed chan struct{}
}

func newFakeOwner(names ...string) *fakeOwner {
	o := &fakeOwner{changed: make(chan struct{})}
	o.set(names...)
	return o
}

func (o *fakeOwner) set(names ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.owned = map[string]bool{}
	for _, n := range names {
		o.owned[n] = true
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *fakeOwner) Owns(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owned[name]
}

func (o *fakeOwner) Changed() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// TestOwnerStartsAndStopsStreams: with an owner (several weir processes
// sharing the targets), a target's stream runs only while it is owned: it
// starts when the target is gained and stops when it is lost.
func TestOwnerStartsAndStopsStreams(t *testing.T) {
	_, addrA, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 2})
	_, addrB, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 2})
	o := newFakeOwner("a")
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{
		simTarget("a", addrA, sub(countersPath, "stream", "sample", 50*time.Millisecond)),
		simTarget("b", addrB, sub(countersPath, "stream", "sample", 50*time.Millisecond)),
	}}, WithOwner(o))
	connected := func(name string) bool { return testutil.ToFloat64(r.m.Connected.WithLabelValues(name)) == 1 }
	from := func(name string) int { return len(r.b.where(t, func(m metric) bool { return m.Key == name })) }

	waitFor(t, 10*time.Second, "a to stream", func() bool { return connected("a") && from("a") > 0 })
	time.Sleep(200 * time.Millisecond)
	if connected("b") || from("b") > 0 {
		t.Fatal("b streams while another process owns it")
	}

	o.set("b")
	waitFor(t, 10*time.Second, "b to stream", func() bool { return connected("b") && from("b") > 0 })
	waitFor(t, 5*time.Second, "a to stop", func() bool { return !connected("a") })
	n := from("a")
	time.Sleep(300 * time.Millisecond)
	if from("a") != n {
		t.Fatal("records from a after it was handed over")
	}

	o.set("a", "b")
	waitFor(t, 10*time.Second, "a to stream again", func() bool { return connected("a") && from("a") > n })
	if st := r.c.Status(); st[0].Sessions != 2 || st[1].Sessions != 1 {
		t.Errorf("sessions: a %d, b %d; want 2 and 1", st[0].Sessions, st[1].Sessions)
	}
}

// TestTakeDrainsAfterStop: once the stream has stopped (a target handed
// over), the publisher still gets what was queued, then stops.
func TestTakeDrainsAfterStop(t *testing.T) {
	q := newQueue(10, 1<<20, testBudget(1<<40))
	q.push(item{})
	q.push(item{})
	stop := make(chan struct{})
	close(stop)
	b, ok := q.take(t.Context(), stop, nil)
	if !ok || len(b) != 2 {
		t.Fatalf("take after stop: %d items, %v", len(b), ok)
	}
	done := make(chan bool)
	go func() {
		_, ok := q.take(t.Context(), stop, b)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("take on an empty, stopped queue returned items")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("take on an empty, stopped queue blocks")
	}
}

// TestNotOwnedTargetHasNoStateSeries: with targets shared by several weir
// processes, a process exports weir_gnmi_connected and
// weir_gnmi_last_update_timestamp_seconds only for the targets it streams:
// a 0 for each target another process owns looked exactly like a target
// down, and an alert on weir_gnmi_connected == 0 fired on every other
// process. A target handed over takes its series with it; taken back, it
// has them again.
func TestNotOwnedTargetHasNoStateSeries(t *testing.T) {
	_, addrA, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 2})
	_, addrB, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 2})
	o := newFakeOwner("a")
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{
		simTarget("a", addrA, sub(countersPath, "stream", "sample", 50*time.Millisecond)),
		simTarget("b", addrB, sub(countersPath, "stream", "sample", 50*time.Millisecond)),
	}}, WithOwner(o))
	exported := func() string {
		var names []string
		for _, n := range []string{"a", "b"} {
			if _, ok := gathered(t, r.reg, "weir_gnmi_connected", n); ok {
				names = append(names, n)
			}
		}
		return strings.Join(names, ",")
	}
	waitFor(t, 10*time.Second, "a streaming, and exported alone", func() bool { return exported() == "a" && testutil.CollectAndCount(r.m.LastUpdate) == 1 })
	o.set("b")
	waitFor(t, 10*time.Second, "b streaming, and exported alone", func() bool { return exported() == "b" })
}

// TestHandedOverWhileDownSaysNoRemoval: a target down here and then handed
// over to another process is that process's to tell about: a reload that
// takes it out publishes no removal from here, as the SNMP poller's
// targets it no longer owns do not. The owner says what it found.
func TestHandedOverWhileDownSaysNoRemoval(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close()
	o := newFakeOwner("down1")
	cfg := configs.GNMI{Targets: []configs.GNMITarget{simTarget("down1", down, sub(countersPath, "stream", "sample", 50*time.Millisecond))}}
	cfg.RetryMin, cfg.RetryMax = configs.Duration(20*time.Millisecond), configs.Duration(50*time.Millisecond)
	r := startCollector(t, cfg, WithOwner(o))
	waitFor(t, 10*time.Second, "a failed attempt's status", func() bool { return len(r.b.where(t, isStatus)) > 0 })
	o.set()
	time.Sleep(300 * time.Millisecond) // the stream stops
	n := len(r.b.where(t, isStatus))
	if err := r.c.Update(nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	for _, m := range r.b.where(t, isStatus)[n:] {
		t.Errorf("published after the hand-over: %+v", m.Fields)
	}
}
