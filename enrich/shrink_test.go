package enrich

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestForgottenStateGivesMemoryBack: once settle has forgotten the state
// of 200,000 objects, the detector's maps are rebuilt and the heap they
// held is free again (Go maps keep their buckets when entries go).
func TestForgottenStateGivesMemoryBack(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	t0 := time.Now()
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	const n = 200_000
	for i := range n {
		d.observe(telemetry.Event{Type: "interface_down", Device: fmt.Sprintf("edge%d", i), Object: "Gi0/1",
			Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}, t0)
	}
	full := heap()
	for s := 0; s < 120 && len(d.last)+len(d.states)+len(d.changes) > 0; s++ {
		d.settle(t0.Add(11*time.Minute + time.Duration(s)*time.Second))
	}
	if left := len(d.last) + len(d.states) + len(d.changes); left > 0 {
		t.Fatalf("%d entries left after two minutes of settling", left)
	}
	after := heap()
	runtime.KeepAlive(d)
	t.Logf("heap: %d MB before, %d MB with %d objects, %d MB after they were forgotten", before>>20, full>>20, n, after>>20)
	if held := int64(after) - int64(before); held > int64(full-before)/4 {
		t.Errorf("%d MB still held once every object was forgotten, of %d MB", held>>20, (full-before)>>20)
	}
}

func TestShrunk(t *testing.T) {
	var s shrinkable
	m := map[int]int{}
	for i := range 10_000 {
		m[i] = i
	}
	if m2 := shrunk(m, &s); len(m2) != 10_000 || s.peak != 10_000 {
		t.Fatalf("full map: %d entries, peak %d", len(m2), s.peak)
	}
	for i := range 8_000 {
		delete(m, i)
	}
	m2 := shrunk(m, &s)
	if len(m2) != 2_000 || s.peak != 2_000 || m2[9_999] != 9_999 {
		t.Fatalf("a fifth left: %d entries, peak %d", len(m2), s.peak)
	}
	m2[1] = 1 // a new map: m is not changed
	if _, ok := m[1]; ok {
		t.Fatal("shrunk returned the same map")
	}
}

// TestDetectorObjectsBounded: past maxObjects, the events of objects the
// detector does not know are passed on as they come and counted, while
// the objects it knows keep their de-duplication.
func TestDetectorObjectsBounded(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	d.maxObjects = 100
	untracked := prometheus.NewCounter(prometheus.CounterOpts{Name: "u"})
	d.countUntracked(untracked)
	t0 := time.Now()
	down := func(i int) telemetry.Event {
		return telemetry.Event{Type: "interface_down", Device: fmt.Sprintf("edge%d", i), Object: "Gi0/1",
			Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
	}
	for i := range 1000 {
		if out := d.observe(down(i), t0); len(out) != 1 {
			t.Fatalf("object %d: %d events out, want its one", i, len(out))
		}
	}
	if len(d.states) != 100 || testutil.ToFloat64(untracked) != 900 {
		t.Fatalf("%d states kept, %v events untracked; want 100 and 900", len(d.states), testutil.ToFloat64(untracked))
	}
	again := down(5)
	again.Cause.Offset = 5000
	if out := d.observe(again, t0.Add(time.Second)); len(out) != 0 {
		t.Fatalf("a known object's repeat passed on: %v", out)
	}
}

// TestDetectorObjectsBoundedWarmUp: the warm-up's remember keeps the
// bound observe does. It read back every event of the flap window (the
// records live enrichment published, or that it passed on untracked past
// the bound) and kept state for each object: a sender that had invented a
// million host names before a restart grew the detector past maxObjects
// with each restart's warm-up.
func TestDetectorObjectsBoundedWarmUp(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	d.maxObjects = 100
	untracked := prometheus.NewCounter(prometheus.CounterOpts{Name: "u"})
	d.countUntracked(untracked)
	t0 := time.Now().Add(-time.Minute)
	since := t0.Add(-DefaultFlapWindow)
	for i := range 1000 {
		r := &broker.Record{Topic: "raw.syslog", Offset: int64(i), Timestamp: t0.Add(time.Duration(i) * time.Millisecond)}
		ev := telemetry.Event{Type: "interface_down", Device: fmt.Sprintf("edge%d", i), Object: "Gi0/1",
			Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
		ev.ObjectID = objectID(ev)
		d.remember(r, []telemetry.Event{ev}, since)
	}
	if len(d.states) > 100 || len(d.last) > 200 || len(d.changes) > 100 {
		t.Fatalf("after a warm-up of 1000 objects: %d states, %d last times, %d flap states; want at most 100, 200, 100",
			len(d.states), len(d.last), len(d.changes))
	}
	if got := testutil.ToFloat64(untracked); got != 0 {
		t.Fatalf("%v events counted untracked by the warm-up, which passes none on", got)
	}
	// Live, an object past the bound is passed on and counted.
	ev := telemetry.Event{Type: "interface_down", Device: "edge999", Object: "Gi0/1",
		Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 5000}}
	if out := d.observe(ev, time.Now()); len(out) != 1 || testutil.ToFloat64(untracked) != 1 {
		t.Fatalf("a live event of an object past the bound: %d out, %v untracked", len(out), testutil.ToFloat64(untracked))
	}
}
