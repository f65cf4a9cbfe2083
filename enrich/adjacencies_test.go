package enrich

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestParallelOSPFAdjacencies: two routers joined by two links have an
// OSPF adjacency on each, both to one router ID. The neighbor is down
// from the first adjacency down to the last one back: the first back
// must not say it is up (that ended the alert the other adjacency still
// deserved), and the second down is no change of it.
func TestParallelOSPFAdjacencies(t *testing.T) {
	evs := syslogLineEvents(t, 5*time.Second,
		"<189>1: edge1: *Nov 29 14:00:00.000: %OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/1 from FULL to DOWN, Neighbor Down: Dead timer expired",
		"<189>2: edge1: *Nov 29 14:00:05.000: %OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/2 from FULL to DOWN, Neighbor Down: Dead timer expired",
		"<189>3: edge1: *Nov 29 14:00:10.000: %OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/1 from LOADING to FULL, Loading Done",
		"<189>4: edge1: *Nov 29 14:00:15.000: %OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/2 from LOADING to FULL, Loading Done",
		// One adjacency down alone, then back: a change each, as before.
		"<189>5: edge1: *Nov 29 14:00:20.000: %OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on Gi0/2 from FULL to DOWN, Neighbor Down: Interface down or detached",
		"<189>6: edge1: *Nov 29 14:00:25.000: %OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/2 from LOADING to FULL, Loading Done",
	)
	var got []string
	for _, e := range evs {
		got = append(got, e.Type+" "+e.ObjectID+": "+e.Message)
	}
	want := []string{"ospf_neighbor_down GigabitEthernet0/1", "ospf_neighbor_up GigabitEthernet0/2", "ospf_neighbor_down Gi0/2", "ospf_neighbor_up GigabitEthernet0/2"}
	if len(evs) != len(want) {
		t.Fatalf("got %d events:\n%s\nwant %d: %q", len(evs), strings.Join(got, "\n"), len(want), want)
	}
	for i, w := range want {
		typ, iface, _ := strings.Cut(w, " ")
		if evs[i].Type != typ || evs[i].ObjectID != "10.0.0.2" || !strings.Contains(evs[i].Message, " on "+iface+" ") {
			t.Errorf("event %d: %s, want %s of 10.0.0.2 on %s", i, got[i], typ, iface)
		}
	}
}

// ospfEvent is an OSPF neighbor event of edge1's neighbor 10.0.0.2 from
// topic's record offset, at t.
func ospfEvent(typ, topic string, offset int64, t time.Time) telemetry.Event {
	return telemetry.Event{V: telemetry.Version, Type: typ, Device: "edge1", Object: "10.0.0.2", Time: t,
		Cause: telemetry.Cause{Topic: topic, Partition: 0, Offset: offset}}
}

// TestParallelOSPFAdjacenciesWithTraps: ospfNbrStateChange names no
// interface, so a trap of one of two adjacencies cannot say which: its up
// must not end the neighbor's down while the lines say another adjacency
// is down, whichever of the line and the trap comes first.
func TestParallelOSPFAdjacenciesWithTraps(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	type report struct {
		typ, link string // link "": a trap
		at        int    // seconds after t0
	}
	down, up := "ospf_neighbor_down", "ospf_neighbor_up"
	for _, tc := range []struct {
		name    string
		reports []report
		want    []string // the types published, with their report's index
	}{
		{"line then trap", []report{
			{down, "Gi0/1", 0}, {down, "", 0}, {down, "Gi0/2", 60}, {down, "", 60},
			{up, "Gi0/1", 120}, {up, "", 120}, {up, "Gi0/2", 180}, {up, "", 180},
		}, []string{"ospf_neighbor_down@0", "ospf_neighbor_up@6"}},
		{"trap then line", []report{
			{down, "", 0}, {down, "Gi0/1", 0}, {down, "", 60}, {down, "Gi0/2", 60},
			{up, "", 120}, {up, "Gi0/1", 120}, {up, "", 180}, {up, "Gi0/2", 180},
		}, []string{"ospf_neighbor_down@0", "ospf_neighbor_up@6"}},
		{"traps alone, as before", []report{{down, "", 0}, {up, "", 60}}, []string{"ospf_neighbor_down@0", "ospf_neighbor_up@1"}},
		// The line of the last up lost: the trap says the neighbor is up.
		{"last line lost", []report{
			{down, "Gi0/1", 0}, {down, "Gi0/2", 60}, {up, "Gi0/1", 120}, {up, "", 180},
		}, []string{"ospf_neighbor_down@0", "ospf_neighbor_up@3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDetector(30*time.Second, 5, 10*time.Minute)
			var got []string
			for i, r := range tc.reports {
				at := t0.Add(time.Duration(r.at) * time.Second).Add(time.Duration(i) * time.Millisecond)
				topic := telemetry.TopicRawSyslog
				if r.link == "" {
					topic = telemetry.TopicRawTraps
				}
				ev := ospfEvent(r.typ, topic, int64(i), at)
				for _, e := range d.observeLinkInto(ev, adjacency{iface: r.link}, at, d.beginRecord(ev.Cause, at), nil) {
					got = append(got, e.Type+"@"+itoa(int(e.Cause.Offset)))
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("published %q, want %q", got, tc.want)
			}
		})
	}
}

// TestParallelOSPFAdjacenciesAfterRestart: a warm-up reads the lines of
// its window again, so the adjacency still down holds the neighbor down
// after a restart, as it did before.
func TestParallelOSPFAdjacenciesAfterRestart(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	for i, link := range []string{"GigabitEthernet0/1", "GigabitEthernet0/2"} {
		ev := ospfEvent("ospf_neighbor_down", telemetry.TopicRawSyslog, int64(i), t0.Add(time.Duration(i)*time.Minute))
		r := &broker.Record{Topic: ev.Cause.Topic, Partition: 0, Offset: ev.Cause.Offset, Timestamp: ev.Time}
		d.rememberLine(r, ev, adjacency{iface: link}, t0)
	}
	at := t0.Add(3 * time.Minute)
	ev := ospfEvent("ospf_neighbor_up", telemetry.TopicRawSyslog, 2, at)
	if out := d.observeLinkInto(ev, adjacency{iface: "Gi0/1"}, at, d.beginRecord(ev.Cause, at), nil); len(out) != 0 {
		t.Errorf("Gi0/1 back while Gi0/2 is down, after a restart: %v, want nothing", out)
	}
	at = at.Add(time.Minute)
	ev = ospfEvent("ospf_neighbor_up", telemetry.TopicRawSyslog, 3, at)
	if out := d.observeLinkInto(ev, adjacency{iface: "Gi0/2"}, at, d.beginRecord(ev.Cause, at), nil); len(out) != 1 || out[0].Type != "ospf_neighbor_up" {
		t.Errorf("the last adjacency back: %v, want ospf_neighbor_up", out)
	}
}

// TestAdjacenciesBounded: a sender inventing neighbors (syslog over UDP)
// does not grow the adjacencies kept down past maxObjects, which outlive
// the states settle forgets.
func TestAdjacenciesBounded(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	d.maxObjects = 10
	for i := range 100 {
		at := t0.Add(time.Duration(i) * time.Hour) // settle forgets each state before the next
		ev := ospfEvent("ospf_neighbor_down", telemetry.TopicRawSyslog, int64(i), at)
		ev.Object = "10.0.0." + itoa(i)
		d.observeLinkInto(ev, adjacency{iface: "Gi0/1"}, at, d.beginRecord(ev.Cause, at), nil)
		d.settle(at.Add(30 * time.Minute))
	}
	if n := len(d.adjacencies); n > 10 {
		t.Errorf("%d neighbors kept, want at most maxObjects (10)", n)
	}
}

// TestParallelOSPFAdjacenciesAcrossARename: a reload that renames the
// device moves what the detector holds of it to the new name, the
// adjacencies kept down too: the first adjacency back under the new name,
// while the other is still down, must not say the neighbor is up.
func TestParallelOSPFAdjacenciesAcrossARename(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9}\n")
	b := openBroker(t)
	stop := startRunner(NewWorker(b, inv, NewClassifier(), WithSharedEventRules(NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow))))
	defer stop()

	produceLine(t, b, "%OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/1 from FULL to DOWN, Neighbor Down: Dead timer expired")
	produceLine(t, b, "%OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/2 from FULL to DOWN, Neighbor Down: Dead timer expired")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 2)
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9}\n")
	produceLine(t, b, "%OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/1 from LOADING to FULL, Loading Done")
	produceLine(t, b, "%OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/2 from LOADING to FULL, Loading Done")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 4)
	stop()

	got := eventsAs(t, b, func(ev telemetry.Event) string {
		return ev.Type + " " + ev.Device + " " + ev.Object + " @" + itoa(int(ev.Cause.Offset))
	})
	want := []string{
		"ospf_neighbor_down core1 10.0.0.2 @0",
		"device_renamed core1-fra core1 @2", // with the first record under the new name, as ever
		"ospf_neighbor_up core1-fra 10.0.0.2 @3",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestParallelOSPFAdjacenciesWarmedInEitherOrder: a restart's warm-ups of
// raw.traps and raw.syslog run apart, in either order. Before it, two
// adjacencies went down and came back, the last one's up line lost and
// its trap saying the neighbor up. Whichever warm-up comes first, the
// neighbor is up after it: its next down is a change.
func TestParallelOSPFAdjacenciesWarmedInEitherOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	rec := func(ev telemetry.Event) *broker.Record {
		return &broker.Record{Topic: ev.Cause.Topic, Partition: 0, Offset: ev.Cause.Offset, Timestamp: ev.Time}
	}
	traps := func(d *detector, since time.Time) {
		for i, r := range []struct {
			typ string
			at  int
		}{{"ospf_neighbor_down", 0}, {"ospf_neighbor_down", 60}, {"ospf_neighbor_up", 120}, {"ospf_neighbor_up", 180}} {
			ev := ospfEvent(r.typ, telemetry.TopicRawTraps, int64(i), t0.Add(time.Duration(r.at)*time.Second+time.Millisecond))
			d.remember(rec(ev), []telemetry.Event{ev}, since)
		}
	}
	lines := func(d *detector, since time.Time) {
		for i, r := range []struct {
			typ, link string
			at        int
		}{{"ospf_neighbor_down", "Gi0/1", 0}, {"ospf_neighbor_down", "Gi0/2", 60}, {"ospf_neighbor_up", "Gi0/1", 120}} {
			ev := ospfEvent(r.typ, telemetry.TopicRawSyslog, int64(i), t0.Add(time.Duration(r.at)*time.Second))
			d.rememberLine(rec(ev), ev, adjacency{iface: r.link}, since)
		}
	}
	for _, order := range []string{"lines first", "traps first"} {
		t.Run(order, func(t *testing.T) {
			d := newDetector(30*time.Second, 5, 10*time.Minute)
			since := t0.Add(-time.Minute)
			if order == "lines first" {
				lines(d, since)
				traps(d, since)
			} else {
				traps(d, since)
				lines(d, since)
			}
			at := t0.Add(5 * time.Minute)
			ev := ospfEvent("ospf_neighbor_down", telemetry.TopicRawSyslog, 3, at)
			if out := d.observeLinkInto(ev, adjacency{iface: "Gi0/1"}, at, d.beginRecord(ev.Cause, at), nil); len(out) != 1 || out[0].Type != "ospf_neighbor_down" {
				t.Errorf("the neighbor down again after the warm-ups: %v, want ospf_neighbor_down", out)
			}
		})
	}
}

// TestOSPFv2AndOSPFv3AdjacenciesOnOneLink: a dual-stack link runs an
// OSPFv2 and an OSPFv3 adjacency to one router ID, two processes whose
// lines name the same interface. The neighbor is down until both are
// back: OSPFv2's up, while OSPFv3's is still down, must not say it is up.
func TestOSPFv2AndOSPFv3AdjacenciesOnOneLink(t *testing.T) {
	evs := syslogLineEvents(t, 5*time.Second,
		"<189>1: edge1: *Nov 29 14:00:00.000: %OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/1 from FULL to DOWN, Neighbor Down: Interface down or detached",
		"<189>2: edge1: *Nov 29 14:00:00.100: %OSPFV3-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/1 from FULL to DOWN, Neighbor Down: Interface down or detached",
		"<189>3: edge1: *Nov 29 14:00:10.000: %OSPF-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/1 from LOADING to FULL, Loading Done",
		"<189>4: edge1: *Nov 29 14:05:00.000: %OSPFV3-5-ADJCHG: Process 1, Nbr 10.0.0.2 on GigabitEthernet0/1 from LOADING to FULL, Loading Done",
	)
	var got []string
	for _, e := range evs {
		got = append(got, e.Type+": "+e.Message)
	}
	if len(evs) != 2 || evs[0].Type != "ospf_neighbor_down" || evs[1].Type != "ospf_neighbor_up" || !strings.Contains(evs[1].Message, "%OSPFV3-") {
		t.Fatalf("got:\n%s\nwant ospf_neighbor_down, then ospf_neighbor_up by OSPFv3's line", strings.Join(got, "\n"))
	}
}
