package enrich

import (
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// TestFlapping: a synthetic up/down sequence raises one flapping event and,
// once stable for the window, one cleared event; no storm. Interfaces and
// BGP sessions alike.
func TestFlapping(t *testing.T) {
	for _, fam := range []struct{ family, object string }{{"interface", "Gi0/1"}, {"bgp_peer", "10.0.0.2"}} {
		d := newDetector(time.Second, 5, 10*time.Minute)
		t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
		var got []telemetry.Event
		for i := 0; i < 20; i++ {
			typ := fam.family + "_down"
			if i%2 == 1 {
				typ = fam.family + "_up"
			}
			// The changes' severities as a device's lines give them:
			// the flapping and cleared events are weir's, of their own.
			ev := telemetry.Event{Type: typ, Device: "edge1", Object: fam.object, Severity: "error", Time: t0.Add(time.Duration(i) * 10 * time.Second)}
			got = append(got, d.observe(ev, ev.Time)...)
		}
		var flaps, changes int
		for _, ev := range got {
			switch ev.Type {
			case fam.family + "_flapping":
				flaps++
				if ev.Count != 6 || ev.Object != fam.object || ev.Severity != "warning" {
					t.Errorf("%s: flapping count %d of %q, severity %q, want 6 of %q, warning", fam.family, ev.Count, ev.Object, ev.Severity, fam.object)
				}
			case fam.family + "_down", fam.family + "_up":
				changes++
			}
		}
		if flaps != 1 || changes != 20 {
			t.Fatalf("%s: %d flapping events and %d changes; want 1 and 20", fam.family, flaps, changes)
		}
		if c := d.settle(t0.Add(5 * time.Minute)); len(c) != 0 {
			t.Fatalf("%s: cleared while still flapping: %v", fam.family, c)
		}
		cleared := d.settle(t0.Add(200*time.Second + 10*time.Minute + time.Second))
		if len(cleared) != 1 || cleared[0].Type != fam.family+"_flapping_cleared" || cleared[0].Object != fam.object || cleared[0].Severity != "notice" {
			t.Fatalf("%s: cleared: %+v", fam.family, cleared)
		}
		if again := d.settle(t0.Add(time.Hour)); len(again) != 0 {
			t.Fatalf("%s: cleared twice: %v", fam.family, again)
		}
	}
}

// TestSlowFlappingCleared: an interface that flaps, then keeps changing
// every 4 minutes (2 or 3 changes in any 10-minute window, never quiet
// for one) is cleared once it changes at most half the threshold times in
// a window, and not raised and cleared again at each later change; a
// fast burst after that raises it again.
func TestSlowFlappingCleared(t *testing.T) {
	d := newDetector(time.Second, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var flaps, cleared []telemetry.Event
	flip := flipper(d)
	change := func(at time.Time) {
		for _, out := range flip(at) {
			if out.Type == "interface_flapping" {
				flaps = append(flaps, out)
			}
		}
	}
	settleUntil := func(from, to time.Time) {
		for at := from; !at.After(to); at = at.Add(time.Second) {
			cleared = append(cleared, d.settle(at)...)
		}
	}
	for k := range 6 { // six changes in a minute: flapping
		change(t0.Add(time.Duration(k) * 10 * time.Second))
	}
	if len(flaps) != 1 {
		t.Fatalf("%d flapping events after the burst, want 1", len(flaps))
	}
	// Then a change every 4 minutes for two hours.
	last := t0.Add(50 * time.Second)
	for at := t0.Add(4 * time.Minute); at.Before(t0.Add(2 * time.Hour)); at = at.Add(4 * time.Minute) {
		settleUntil(last.Add(time.Second), at)
		change(at)
		last = at
	}
	if len(cleared) != 1 || cleared[0].Type != "interface_flapping_cleared" || !strings.Contains(cleared[0].Message, "at most half") {
		t.Fatalf("cleared events %+v, want one", cleared)
	}
	// 2 changes within the window when cleared: not before the burst's
	// six left it, 10 minutes after the last of them.
	if at := cleared[0].Time; at.Before(t0.Add(50*time.Second+10*time.Minute)) || at.After(t0.Add(20*time.Minute)) {
		t.Errorf("cleared at %v, want between 10m50s and 20m after the burst", at.Sub(t0))
	}
	if len(flaps) != 1 {
		t.Fatalf("%d flapping events while changing every 4 minutes, want 1", len(flaps))
	}
	// A new burst raises it again, cleared once no more than two of its
	// changes are within the window.
	burst := last.Add(time.Minute)
	for k := range 6 {
		change(burst.Add(time.Duration(k) * 5 * time.Second))
	}
	if len(flaps) != 2 {
		t.Fatalf("%d flapping events after a second burst, want 2", len(flaps))
	}
	settleUntil(burst.Add(time.Minute), burst.Add(25*time.Minute))
	if len(cleared) != 2 || cleared[1].Time.Before(burst.Add(10*time.Minute)) {
		t.Fatalf("cleared events %+v, want a second one 10 minutes after the burst", cleared)
	}
}

// TestRememberRebuildsState: events remembered by a warm-up leave the
// detector as observing them did (de-duplication and flapping, the cleared
// event following), without publishing anything.
func TestRememberRebuildsState(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	observed, remembered := newDetector(time.Second, 5, 10*time.Minute), newDetector(time.Second, 5, 10*time.Minute)
	for i := range 8 {
		ev := change(t0, "raw.syslog", i)
		observed.observe(ev, ev.Time)
		rememberAt(remembered, ev, ev.Time, t0)
	}
	// A duplicate within the window, then the ninth change.
	dup := change(t0, "raw.traps", 7)
	if got := remembered.observe(dup, dup.Time.Add(500*time.Millisecond)); len(got) != 0 {
		t.Errorf("duplicate of a remembered event published: %v", got)
	}
	ninth := change(t0, "raw.syslog", 8)
	if got := remembered.observe(ninth, ninth.Time); len(got) != 1 || got[0].Type != "interface_down" {
		t.Errorf("change after the warm-up: %v, want the change alone (the flapping event went out before)", got)
	}
	observed.observe(ninth, ninth.Time)
	at := t0.Add(80*time.Second + 10*time.Minute + time.Second)
	want, got := observed.settle(at), remembered.settle(at)
	if len(got) != 1 || got[0].Type != "interface_flapping_cleared" || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("settled: %v, want %v", got, want)
	}
}

// change is the i-th of a down/up sequence 10 s apart, caused by offset i
// of partition 0 of topic.
func change(t0 time.Time, topic string, i int) telemetry.Event {
	typ := [...]string{"interface_down", "interface_up"}[i%2]
	return telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Time: t0.Add(time.Duration(i) * 10 * time.Second),
		Cause: telemetry.Cause{Topic: topic, Offset: int64(i)}}
}

// rememberAt remembers ev as caused by the record at ev.Cause, logged at at.
func rememberAt(d *detector, ev telemetry.Event, at, since time.Time) {
	r := broker.Record{Topic: ev.Cause.Topic, Partition: ev.Cause.Partition, Offset: ev.Cause.Offset, Timestamp: at}
	d.remember(&r, []telemetry.Event{ev}, since)
}

// TestRememberCountsAChangeOnce: the same change remembered again (its
// partition warmed up again after settle forgot its de-duplication time,
// or seen as a syslog line and as a trap) is one change, as it was when
// observed; and changes before the window start are no flapping.
func TestRememberCountsAChangeOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	const dedup = 30 * time.Second
	changes := func(d *detector) []time.Time { return d.changes[objectKey{"edge1", "gi0/1", "interface"}].times }
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 40 * time.Second) }

	// Observed live, then warmed up again by another worker.
	d := newDetector(dedup, 5, 10*time.Minute)
	for i := range 3 {
		ev := change(t0, "raw.syslog", i)
		d.observe(ev, at(i))
	}
	d.settle(t0.Add(3 * time.Minute)) // forgets the de-duplication times
	for i := range 3 {
		rememberAt(d, change(t0, "raw.syslog", i), at(i), t0)
	}
	if n := len(changes(d)); n != 3 {
		t.Errorf("observed and remembered again: %d changes, want 3", n)
	}

	// A syslog line and a trap for each change, warmed up one after the
	// other, with a settle between.
	d = newDetector(dedup, 5, 10*time.Minute)
	for i := range 3 {
		rememberAt(d, change(t0, "raw.syslog", i), at(i), t0)
	}
	d.settle(t0.Add(time.Hour))
	for i := range 3 {
		rememberAt(d, change(t0, "raw.traps", i), at(i).Add(500*time.Millisecond), t0)
	}
	if n, f := len(changes(d)), len(d.flapping); n != 3 || f != 0 {
		t.Errorf("syslog and traps: %d changes and %d flapping, want 3 and 0", n, f)
	}

	// Six changes that ended before the flap window of the restart: their
	// flapping was cleared before it.
	d = newDetector(dedup, 5, 10*time.Minute)
	for i := range 6 {
		rememberAt(d, change(t0, "raw.syslog", i), at(i), at(5).Add(time.Minute))
	}
	if len(d.flapping) != 0 {
		t.Errorf("flapping from changes before the window")
	}
	if c := d.settle(at(5).Add(11 * time.Minute)); len(c) != 0 {
		t.Errorf("cleared again: %v", c)
	}

	// A warm-up that runs after a live event: the older changes count, in
	// order, and the last time of the live one's type stays.
	d = newDetector(dedup, 2, 10*time.Minute)
	live := change(t0, "raw.traps", 4)
	d.observe(live, at(4))
	for i := range 4 {
		rememberAt(d, change(t0, "raw.syslog", i), at(i), t0)
	}
	if !d.last[eventKey{"edge1", "gi0/1", "interface_down"}].at.Equal(at(4)) {
		t.Errorf("an older remembered event moved the last time of a live one")
	}
	if ts := changes(d); !slices.IsSortedFunc(ts, time.Time.Compare) || len(ts) != 3 || !ts[2].Equal(at(4)) {
		t.Errorf("change times %v, want the newest 3 of 5 in order", ts)
	}
	if len(d.flapping) != 1 {
		t.Errorf("5 changes with a threshold of 2: not flapping")
	}

	// Trap-only changes warmed up after the syslog partition's later
	// ones still count.
	d = newDetector(dedup, 5, 10*time.Minute)
	rememberAt(d, change(t0, "raw.syslog", 6), at(6), t0)
	rememberAt(d, change(t0, "raw.syslog", 7), at(7), t0)
	for i := range 4 {
		rememberAt(d, change(t0, "raw.traps", i), at(i), t0)
	}
	if n, f := len(changes(d)), len(d.flapping); n != 6 || f != 1 {
		t.Errorf("syslog, then older traps: %d changes and %d flapping, want 6 and 1", n, f)
	}

	// Two events of one record (a reboot seen in a poll that also shows a
	// link down) both count; the record read again, neither.
	d = newDetector(dedup, 5, 10*time.Minute)
	r := broker.Record{Topic: "raw.snmp", Offset: 7, Timestamp: t0}
	evs := []telemetry.Event{{Type: "device_rebooted", Device: "edge1"}, {Type: "interface_down", Device: "edge1", Object: "Gi0/1"}}
	d.remember(&r, evs, t0)
	d.remember(&r, evs, t0)
	if n := len(changes(d)); n != 1 || len(d.last) != 2 {
		t.Errorf("one record's two events, twice: %d interface changes and %d last times, want 1 and 2", n, len(d.last))
	}
}

// TestFlapStateBounded: a storm of changes, with times going back and
// forth (device clocks), keeps no more than the threshold's worth of
// change times per object, and still raises one flapping event.
func TestFlapStateBounded(t *testing.T) {
	d := newDetector(0, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	flaps := 0
	for i := range 100_000 {
		j := i ^ 1 // the changes of each pair come in reverse order
		ev := change(t0, "raw.syslog", j%2)
		ev.Time = t0.Add(time.Duration(j) * 10 * time.Millisecond)
		ev.Cause.Offset = int64(i) // each its own record
		for _, out := range d.observe(ev, ev.Time) {
			if out.Type == "interface_flapping" {
				flaps++
			}
		}
	}
	st := d.changes[objectKey{"edge1", "gi0/1", "interface"}]
	if len(st.times) > 6 || len(st.types) != len(st.times) || flaps != 1 {
		t.Errorf("%d change times kept (%d types), %d flapping events; want at most 6 and 1", len(st.times), len(st.types), flaps)
	}
}

// TestDetectorOwnsItsStrings: events may hold strings decoded in place
// from a record whose bytes the broker reuses after the batch; what the
// detector keeps is its own copy.
func TestDetectorOwnsItsStrings(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, how := range []string{"observe", "remember"} {
		d := newDetector(30*time.Second, 1, time.Minute)
		buf := []byte("edge1Gi0/1")
		dev, obj := unsafe.String(&buf[0], 5), unsafe.String(&buf[5], 5)
		for i, typ := range []string{"interface_down", "interface_up"} {
			ev := telemetry.Event{Type: typ, Device: dev, Object: obj, Message: dev, Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
			at := t0.Add(time.Duration(i) * time.Second)
			if how == "observe" {
				d.observe(ev, at)
			} else {
				rememberAt(d, ev, at, t0)
			}
		}
		copy(buf, "XXXXXXXXXX") // the broker reuses the record's bytes
		again := telemetry.Event{Type: "interface_up", Device: "edge1", Object: "Gi0/1"}
		if got := d.observe(again, t0.Add(2*time.Second)); len(got) != 0 {
			t.Errorf("%s: the same change again passed: %v", how, got)
		}
		cleared := d.settle(t0.Add(2 * time.Minute))
		if len(cleared) != 1 || cleared[0].Device != "edge1" || cleared[0].Object != "Gi0/1" {
			t.Errorf("%s: cleared %+v, want one for edge1 Gi0/1", how, cleared)
		}
	}
}

func TestDedup(t *testing.T) {
	d := newDetector(30*time.Second, 0, time.Minute)
	t0 := time.Now()
	ev := telemetry.Event{Type: "bgp_peer_down", Device: "edge1", Object: "10.0.0.2"}
	if n := len(d.observe(ev, t0)); n != 1 {
		t.Fatal(n)
	}
	for _, after := range []time.Duration{5 * time.Second, 25 * time.Second} {
		if n := len(d.observe(ev, t0.Add(after))); n != 0 {
			t.Fatalf("duplicate %v after, within the window, published", after)
		}
	}
	// Past the window, the peer is still down: no change (see
	// TestSameStateIsNoChange), until a minute (the flap window) passes
	// without it reported.
	if n := len(d.observe(ev, t0.Add(40*time.Second))); n != 0 {
		t.Fatalf("the same state reported again after the window published")
	}
	if n := len(d.observe(ev, t0.Add(101*time.Second))); n != 1 {
		t.Fatalf("the same state reported after the flap window suppressed")
	}
}

// TestSameStateIsNoChange: an object reported again in the state it is in,
// past the de-duplication window, is no change: not published, not
// counted towards flapping.
func TestSameStateIsNoChange(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	// Each change seen by syslog and, 45 s later, by a poll (past the
	// 30 s window).
	flow := func(cycles int) (published, flapping int) {
		d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
		at, off := t0, int64(0)
		for range cycles {
			for _, typ := range []string{"interface_down", "interface_up"} {
				for _, path := range []struct {
					topic, object string
					lag           time.Duration
				}{{"raw.syslog", "GigabitEthernet0/1", 0}, {"raw.snmp", "Gi0/1", 45 * time.Second}} {
					off++
					ev := telemetry.Event{Type: typ, Device: "edge1", Object: path.object, Cause: telemetry.Cause{Topic: path.topic, Offset: off}}
					for _, e := range d.observe(ev, at.Add(path.lag)) {
						if e.Type == "interface_flapping" {
							flapping++
						} else {
							published++
						}
					}
				}
				at = at.Add(90 * time.Second)
			}
		}
		return published, flapping
	}
	if p, f := flow(2); p != 4 || f != 0 {
		t.Errorf("2 down/up cycles, each change seen twice: %d events and %d flapping, want 4 and 0", p, f)
	}
	if p, f := flow(3); p != 6 || f != 1 {
		t.Errorf("3 down/up cycles (6 changes, over the threshold of 5): %d events and %d flapping, want 6 and 1", p, f)
	}

	// A BGP peer that stays down sends bgpBackwardTransition at each
	// attempt to connect: one bgp_peer_down, then nothing.
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	var out []string
	for i := range 30 {
		ev := telemetry.Event{Type: "bgp_peer_down", Device: "edge1", Object: "10.0.0.2", Cause: telemetry.Cause{Topic: "raw.traps", Offset: int64(i)}}
		for _, e := range d.observe(ev, t0.Add(time.Duration(i)*time.Minute)) {
			out = append(out, e.Type)
		}
		d.settle(t0.Add(time.Duration(i) * time.Minute))
	}
	if len(out) != 1 {
		t.Errorf("a peer down for 30 minutes, reported every minute: events %v, want one bgp_peer_down", out)
	}
	// It comes up: a change.
	ev := telemetry.Event{Type: "bgp_peer_up", Device: "edge1", Object: "10.0.0.2", Cause: telemetry.Cause{Topic: "raw.traps", Offset: 30}}
	if got := d.observe(ev, t0.Add(30*time.Minute)); len(got) != 1 {
		t.Errorf("up after 30 minutes down: %v", got)
	}

	// A warm-up reading a trap partition's past after the syslog
	// partition's later changes: the trap's repeat of a down is not a
	// change.
	d = newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	for i, typ := range []string{"interface_down", "interface_up", "interface_down"} {
		rememberAt(d, telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}},
			t0.Add(time.Duration(i)*2*time.Minute), t0)
	}
	rememberAt(d, telemetry.Event{Type: "interface_down", Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: "raw.snmp", Offset: 0}},
		t0.Add(time.Minute), t0) // the first down, seen by a poll a minute later
	if n := len(d.changes[objectKey{"edge1", "gi0/1", "interface"}].times); n != 3 {
		t.Errorf("%d changes remembered, want 3", n)
	}
}

// TestSettleBounded: with many quiet objects a settle visits a bounded
// share of them, yet a flapping object is always cleared, and in time
// every quiet object is forgotten.
func TestSettleBounded(t *testing.T) {
	d := newDetector(time.Second, 2, time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	const quiet = 100_000
	for i := range quiet {
		d.observe(telemetry.Event{Type: "interface_down", Device: "d", Object: "if" + itoa(i)}, t0)
	}
	for i := range 3 { // one flapping object
		d.observe(telemetry.Event{Type: []string{"interface_down", "interface_up"}[i%2], Device: "f", Object: "x"}, t0.Add(time.Duration(i)*time.Second))
	}
	if len(d.flapping) != 1 {
		t.Fatalf("%d flapping objects, want 1", len(d.flapping))
	}
	now := t0.Add(2 * time.Minute)
	cleared := d.settle(now)
	if len(cleared) != 1 || cleared[0].Type != "interface_flapping_cleared" {
		t.Fatalf("cleared %v", cleared)
	}
	if left := len(d.changes); left < quiet-settleBudget(quiet+1) {
		t.Fatalf("one settle visited %d objects, budget %d", quiet-left, settleBudget(quiet+1))
	}
	if again := d.settle(now.Add(500 * time.Millisecond)); again != nil || len(d.changes) == 0 {
		t.Fatalf("a second settle within a second did work")
	}
	for i := 0; len(d.changes)+len(d.last) > 0 && i < 1000; i++ {
		now = now.Add(time.Second)
		d.settle(now)
	}
	if len(d.changes)+len(d.last) > 0 {
		t.Fatalf("%d objects and %d events never forgotten", len(d.changes), len(d.last))
	}
}

// TestFlappingOnWeirsClock: a device whose clock is hours off (or that
// sends RFC 3164 local time, read as UTC) still flaps once and does not
// clear at once: detection runs on when records entered the log, the
// clock settle runs on, not on the device's timestamps.
func TestFlappingOnWeirsClock(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var p syslog.Parser
	var recs []broker.Record
	for i := range 8 {
		state := []string{"down", "up"}[i%2]
		line := fmt.Sprintf("<187>%d: Nov 29 03:02:%02d.123: %%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1, changed state to %s", 40+i, 10+i, state)
		var l telemetry.Log
		p.ParseCopy([]byte(line), &l)
		l.Device, l.SourceAddr, l.ReceivedAt = "edge9", "192.0.2.9:514", time.Now()
		recs = append(recs, broker.Record{Key: []byte("edge9"), Value: l.AppendJSON(nil)})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, recs); err != nil {
		t.Fatal(err)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(b, inv, NewClassifier(), WithEventRules(0, DefaultFlapThreshold, DefaultFlapWindow))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	types := func() map[string]int {
		n := map[string]int{}
		for _, r := range readTopic(t, b, telemetry.TopicEvents) {
			var ev telemetry.Event
			json.Unmarshal(r.Value, &ev)
			n[ev.Type]++
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for types()["interface_flapping"] == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond) // two settle rounds
	cancel()
	<-done
	n := types()
	if n["interface_flapping"] != 1 || n["interface_flapping_cleared"] != 0 {
		t.Fatalf("events %v: want one interface_flapping and no clearing within the window", n)
	}
}

// TestChangeBackIsNotARepeat: down, up and down again within the
// de-duplication window are three changes: the last one published says
// the link is down.
func TestChangeBackIsNotARepeat(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Now()
	var published []string
	for i, typ := range []string{"interface_down", "interface_up", "interface_down", "interface_down"} {
		ev := telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
		for _, out := range d.observe(ev, t0.Add(time.Duration(i)*5*time.Second)) {
			published = append(published, out.Type)
		}
	}
	// The fourth, the same down again 5 s later (a trap after the
	// syslog line), is a repeat.
	if want := []string{"interface_down", "interface_up", "interface_down"}; !slices.Equal(published, want) {
		t.Errorf("published %v, want %v", published, want)
	}
}

// TestChangesInOneInstant: changes that enter the log in the same
// millisecond (a burst over TCP, a relay flushing its queue, a link
// bouncing) are taken in log order: each change back is a change, the
// repeats are not, and enough of them raise flapping.
func TestChangesInOneInstant(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	now := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var published []string
	types := []string{"interface_down", "interface_down", "interface_up", "interface_down", "interface_up",
		"interface_up", "interface_down", "interface_up", "interface_down", "interface_up"}
	for i, typ := range types {
		ev := telemetry.Event{Type: typ, Device: "leaf1", Object: "Ethernet12", Time: now,
			Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
		for _, out := range d.observe(ev, now) {
			published = append(published, out.Type)
		}
	}
	want := []string{"interface_down", "interface_up", "interface_down", "interface_up", "interface_down",
		"interface_up", "interface_flapping", "interface_down", "interface_up"}
	if !slices.Equal(published, want) {
		t.Errorf("published %v,\nwant      %v", published, want)
	}
}

// TestOneBounceByTwoPathsInOneInstant: one bounce (down and up in one
// millisecond, a burst) reported by syslog and by traps is one down and
// one up, whichever worker runs ahead: across partitions there is no log
// order to take.
func TestOneBounceByTwoPathsInOneInstant(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	now := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var published []string
	for i, e := range []struct{ topic, typ string }{
		{"raw.syslog", "interface_down"}, {"raw.syslog", "interface_up"}, // the syslog worker
		{"raw.traps", "interface_down"}, {"raw.traps", "interface_up"}, // the trap worker, behind it
	} {
		ev := telemetry.Event{Type: e.typ, Device: "edge1", Object: "Gi0/1", Time: now,
			Cause: telemetry.Cause{Topic: e.topic, Offset: int64(i)}}
		for _, out := range d.observe(ev, now) {
			published = append(published, out.Type)
		}
	}
	if want := []string{"interface_down", "interface_up"}; !slices.Equal(published, want) {
		t.Errorf("published %v, want %v", published, want)
	}
	if n := len(d.changes[objectKey{"edge1", "gi0/1", "interface"}].times); n != 2 {
		t.Errorf("%d changes counted towards flapping, want 2", n)
	}
}

// TestWarmupInTheInstantOfALiveChange: a warm-up reads a trap partition's
// past after the syslog worker passed on live changes; its linkDown was
// appended in the millisecond of the live interface_up. It must not make
// the object down again: a poll 45 s later that sees the link up (as it
// has been since) is no change.
func TestWarmupInTheInstantOfALiveChange(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	t1 := t0.Add(10 * time.Second)
	ev := func(topic, typ string, off int64) telemetry.Event {
		return telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: topic, Offset: off}}
	}
	d.observe(ev("raw.syslog", "interface_down", 1), t0)
	d.observe(ev("raw.syslog", "interface_up", 2), t1)
	rememberAt(d, ev("raw.traps", "interface_down", 7), t1, t0)
	if got := d.observe(ev("raw.snmp", "interface_up", 3), t1.Add(45*time.Second)); len(got) != 0 {
		t.Errorf("a poll that sees the link up, as it was: published %s", got[0].Type)
	}
}

// TestRedoLeavesTheStateAsItWas: a down and an up 1 s apart whose
// transaction aborted are enriched again; a down 5 s later is a change
// (down, up, down), not a repeat of the redone down.
func TestRedoLeavesTheStateAsItWas(t *testing.T) {
	d := newDetector(DefaultDedupWindow, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	ev := func(typ string, off int64) telemetry.Event {
		return telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: off}}
	}
	var got []string
	for _, s := range []struct {
		typ string
		off int64
		at  time.Duration
	}{
		{"interface_down", 1, 0}, {"interface_up", 2, time.Second}, // the aborted batch
		{"interface_down", 1, 0}, {"interface_up", 2, time.Second}, // enriched again
		{"interface_down", 3, 6 * time.Second}, // the link goes down again
	} {
		for _, out := range d.observe(ev(s.typ, s.off), t0.Add(s.at)) {
			got = append(got, out.Type)
		}
	}
	want := []string{"interface_down", "interface_up", "interface_down", "interface_up", "interface_down"}
	if !slices.Equal(got, want) {
		t.Errorf("published %v,\nwant      %v", got, want)
	}
}

// TestRememberRebuildsFlappingWithinDedup: a warm-up after a restart
// rebuilds the flapping of a link that changed every 10 s, as observing it
// did, with the default 30 s de-duplication window: a down 20 s after the
// last down, an up between, is a change, not the same down again. Else
// the restarted process never clears the flapping the old one raised.
func TestRememberRebuildsFlappingWithinDedup(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	observed, remembered := newDetector(DefaultDedupWindow, 5, 10*time.Minute), newDetector(DefaultDedupWindow, 5, 10*time.Minute)
	for i := range 8 {
		ev := change(t0, "raw.syslog", i)
		observed.observe(ev, ev.Time)
		rememberAt(remembered, ev, ev.Time, t0)
	}
	key := objectKey{"edge1", "gi0/1", "interface"}
	if o, r := len(observed.changes[key].times), len(remembered.changes[key].times); o != r {
		t.Errorf("warm-up counted %d changes, observing them %d", r, o)
	}
	at := t0.Add(70*time.Second + 10*time.Minute + time.Second)
	want, got := observed.settle(at), remembered.settle(at)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("settled after the warm-up: %v\nwant %v", got, want)
	}
}

// TestOneInstantByTwoPathsKeepsEachLogOrder: in one millisecond a trap
// reports a link down, and the syslog partition down, up, down (a burst
// through one partition): three changes, ending down, whichever path came
// first. And a bounce seen whole by syslog and by traps, the two workers
// interleaved any way, is as many changes as one path saw.
func TestOneInstantByTwoPathsKeepsEachLogOrder(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	run := func(reports []string) []string {
		d := newDetector(DefaultDedupWindow, 5, 10*time.Minute)
		var got []string
		for i, r := range reports { // "s" or "t" (syslog, traps), then "d" or "u"
			topic := map[byte]string{'s': "raw.syslog", 't': "raw.traps"}[r[0]]
			typ := map[byte]string{'d': "interface_down", 'u': "interface_up"}[r[1]]
			ev := telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: topic, Offset: int64(i)}}
			for _, out := range d.observe(ev, t0) {
				got = append(got, out.Type[len("interface_"):])
			}
		}
		return got
	}
	for _, tc := range []struct{ reports, want []string }{
		{[]string{"td", "sd", "su", "sd"}, []string{"down", "up", "down"}},
		{[]string{"sd", "td", "tu", "su", "sd"}, []string{"down", "up", "down"}},
		{[]string{"sd", "td", "su", "tu", "td", "sd", "tu", "su"}, []string{"down", "up", "down", "up"}},
		{[]string{"td", "sd", "su", "tu", "sd", "td", "su", "tu"}, []string{"down", "up", "down", "up"}},
	} {
		if got := run(tc.reports); !slices.Equal(got, tc.want) {
			t.Errorf("%v: published %v, want %v", tc.reports, got, tc.want)
		}
	}
}

// report is a report of edge1's Gi0/1 a test gives the detector: of
// type typ, from a record of topic, entering the log at t0 plus at.
type report struct {
	topic, typ string
	at         time.Duration
}

// observeReports observes the reports in order, each from a record of its
// own, and returns the types published.
func observeReports(d *detector, t0 time.Time, reports []report) []string {
	var got []string
	for i, r := range reports {
		ev := telemetry.Event{Type: r.typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: r.topic, Offset: int64(i)}}
		for _, out := range d.observe(ev, t0.Add(r.at)) {
			got = append(got, out.Type)
		}
	}
	return got
}

// TestLateReportOfAnEarlierChange: syslog logs a link down at 0 s and up
// at 10 s; the metrics worker, behind, then takes a poll of 5 s that saw
// it down, and the next poll (65 s) that sees it up. The link is up: the
// late poll is the down syslog reported, and the last event must be up.
func TestLateReportOfAnEarlierChange(t *testing.T) {
	d := newDetector(DefaultDedupWindow, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	got := observeReports(d, t0, []report{
		{"raw.syslog", "interface_down", 0}, {"raw.syslog", "interface_up", 10 * time.Second},
		{"raw.snmp", "interface_down", 5 * time.Second}, {"raw.snmp", "interface_up", 65 * time.Second},
	})
	if len(got) == 0 || got[len(got)-1] != "interface_up" {
		t.Errorf("published %v: the last says the link is down", got)
	}
}

// TestLateTrapOfABounceInOneInstant: syslog logs a bounce in one
// millisecond (down, up), a poll 1 s later sees the link up, and the trap
// worker, behind, then takes its linkDown and linkUp of the bounce: both
// are reports of the past, no change.
func TestLateTrapOfABounceInOneInstant(t *testing.T) {
	d := newDetector(DefaultDedupWindow, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	got := observeReports(d, t0, []report{
		{"raw.syslog", "interface_down", 0}, {"raw.syslog", "interface_up", 0},
		{"raw.snmp", "interface_up", time.Second},
		{"raw.traps", "interface_down", 0}, {"raw.traps", "interface_up", 0},
	})
	if want := []string{"interface_down", "interface_up"}; !slices.Equal(got, want) {
		t.Errorf("published %v, want %v", got, want)
	}
}

// TestWarmupOfAnOlderDownLeavesALiveDownNew: live, a link came up at
// 10 s; a warm-up then reads a trap partition's down of 0 s (older). A
// real down at 20 s is a change (up at 10 s came between), not a repeat
// of the remembered one.
func TestWarmupOfAnOlderDownLeavesALiveDownNew(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	ev := func(topic, typ string, off int64) telemetry.Event {
		return telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: topic, Offset: off}}
	}
	d.observe(ev("raw.syslog", "interface_up", 1), t0.Add(10*time.Second))
	rememberAt(d, ev("raw.traps", "interface_down", 7), t0, t0.Add(-time.Minute))
	if got := d.observe(ev("raw.syslog", "interface_down", 2), t0.Add(20*time.Second)); len(got) != 1 || got[0].Type != "interface_down" {
		t.Errorf("a live down after the up: published %v, want interface_down", got)
	}
}

// TestEveryInterleavingOfTwoPathsInOneInstant: a link's changes in one
// millisecond (1 to 4, starting down or up), each reported whole by syslog
// and by traps, the two workers' reports interleaved in every way (196
// cases): what is published is the changes, once each, in their order.
func TestEveryInterleavingOfTwoPathsInOneInstant(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	types := [2]string{"interface_down", "interface_up"}
	cases := 0
	for n := 1; n <= 4; n++ {
		for first := range 2 {
			var changes []string
			for i := range n {
				changes = append(changes, types[(first+i)%2])
			}
			// Each interleaving is a choice, per report, of the path
			// whose next report comes: n from syslog, n from traps.
			for mask := 0; mask < 1<<(2*n); mask++ {
				if bits.OnesCount(uint(mask)) != n {
					continue
				}
				cases++
				d := newDetector(30*time.Second, 100, 10*time.Minute)
				next := map[string]int{}
				var got []string
				for i := range 2 * n {
					topic := "raw.syslog"
					if mask&(1<<i) != 0 {
						topic = "raw.traps"
					}
					ev := telemetry.Event{Type: changes[next[topic]], Device: "edge1", Object: "Gi0/1",
						Cause: telemetry.Cause{Topic: topic, Offset: int64(next[topic])}}
					next[topic]++
					for _, out := range d.observe(ev, t0) {
						got = append(got, out.Type)
					}
				}
				if !slices.Equal(got, changes) {
					t.Errorf("changes %v, interleaving %0*b (1: a trap): published %v", changes, 2*n, mask, got)
				}
			}
		}
	}
	if cases != 196 {
		t.Fatalf("%d cases, want 196", cases)
	}
}

// TestRedoPassesAgainCountsOnce: a record enriched again after its
// transaction aborted (by another worker of the process, which shares the
// detector) gives its events again, as they were never committed, but
// its changes do not count twice towards flapping.
func TestRedoPassesAgainCountsOnce(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Now()
	var evs []telemetry.Event
	for i := range 4 {
		ev := change(t0, "raw.syslog", i)
		evs = append(evs, ev)
		if n := len(d.observe(ev, t0.Add(time.Duration(i)*time.Second))); n != 1 {
			t.Fatalf("change %d: %d events", i, n)
		}
	}
	for i, ev := range evs { // the aborted batch, enriched again
		out := d.observe(ev, t0.Add(time.Duration(i)*time.Second))
		if len(out) != 1 || out[0].Type != ev.Type {
			t.Errorf("redo of change %d: %v", i, out)
		}
	}
	if len(d.flapping) != 0 {
		t.Error("4 changes, each seen twice, raised flapping with a threshold of 5")
	}
}

// TestInterfaceSpellingsAreOneObject: the same change of an IOS interface
// by syslog (GigabitEthernet0/1) and by the SNMP poller (ifName Gi0/1)
// is one event; each keeps its spelling when it passes.
func TestInterfaceSpellingsAreOneObject(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Now()
	for i, tc := range []struct {
		obj  string
		pass bool
	}{
		{"GigabitEthernet0/1", true}, {"Gi0/1", false}, {"gi0/1", false},
		{"GigabitEthernet0/2", true}, // another interface
		{"Ethernet1/1", true}, {"Eth1/1", false}, {"et1/1", false},
		{"ge-0/0/0", true}, {"GE-0/0/0", true}, // Junos names are kept as they are
	} {
		ev := telemetry.Event{Type: "interface_down", Device: "edge1", Object: tc.obj, Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
		out := d.observe(ev, t0.Add(time.Duration(i)*time.Second))
		if got := len(out) == 1; got != tc.pass || got && out[0].Object != tc.obj {
			t.Errorf("%s: %v", tc.obj, out)
		}
	}
	for name, want := range map[string]string{
		"GigabitEthernet0/1": "gi0/1", "TenGigabitEthernet1/0/1": "te1/0/1", "Port-channel10": "po10",
		"Vlan100": "vl100", "Et1": "et1", "ge-0/0/0": "ge-0/0/0", "Ethernet 1/1/1": "Ethernet 1/1/1", "Gi0/1": "gi0/1", "gi0/1": "gi0/1",
	} {
		if got := telemetry.ObjectID("interface_down", name); got != want {
			t.Errorf("ObjectID(interface_down, %q) = %q, want %q", name, got, want)
		}
	}
}

// TestNeighborSpellingsAreOneObject: a BGP session lost as IOS logs it
// (IPv6 in capitals) and as a trap's peer table index or gNMI gives it
// (RFC 5952) is one event, and one object to count flaps by; each event
// keeps its spelling.
func TestNeighborSpellingsAreOneObject(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Now()
	for i, tc := range []struct {
		typ, obj string
		pass     bool
	}{
		{"bgp_peer_down", "2001:DB8::1", true}, {"bgp_peer_down", "2001:db8::1", false}, {"bgp_peer_down", "2001:0db8:0:0:0:0:0:1", false},
		{"bgp_peer_down", "2001:db8::2", true}, // another peer
		{"bgp_peer_down", "192.0.2.1", true}, {"bgp_peer_down", "192.0.2.1", false},
		{"ospf_neighbor_down", "FE80::1", true}, {"ospf_neighbor_down", "fe80::1", false},
		{"bgp_peer_down", "not-an-address", true},
	} {
		ev := telemetry.Event{Type: tc.typ, Device: "edge1", Object: tc.obj, Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
		out := d.observe(ev, t0.Add(time.Duration(i)*time.Second))
		if got := len(out) == 1; got != tc.pass || got && out[0].Object != tc.obj {
			t.Errorf("%s %s: %v", tc.typ, tc.obj, out)
		}
	}
	for addr, want := range map[string]string{"2001:DB8::1": "2001:db8::1", "2001:db8:0:0:1:0:0:1": "2001:db8::1:0:0:1",
		"2001:db8::1": "2001:db8::1", "10.0.0.1": "10.0.0.1", "peer-x": "peer-x", "::FFFF:10.0.0.1": "::ffff:10.0.0.1"} {
		if got := telemetry.ObjectID("bgp_peer_down", addr); got != want {
			t.Errorf("ObjectID(bgp_peer_down, %q) = %q, want %q", addr, got, want)
		}
	}
}

// TestRedoIsPerRecord: the events of one record (a reboot and a link
// change from one SNMP row) are one redo decision: the second is not
// taken for a redo of the first, so it is de-duplicated and counted as
// any other.
func TestRedoIsPerRecord(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Now()
	sys := telemetry.Event{Type: "interface_up", Device: "edge1", Object: "GigabitEthernet0/1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 7}}
	d.observe(sys, t0)
	c := telemetry.Cause{Topic: "raw.snmp", Offset: 1}
	redo := d.beginRecord(c, t0.Add(5*time.Second))
	var got []string
	for _, ev := range []telemetry.Event{{Type: "device_rebooted", Device: "edge1", Cause: c}, {Type: "interface_up", Device: "edge1", Object: "Gi0/1", Cause: c}} {
		for _, out := range d.observeInto(ev, t0.Add(5*time.Second), redo, nil) {
			got = append(got, out.Type)
		}
	}
	if !slices.Equal(got, []string{"device_rebooted"}) {
		t.Errorf("published %v: the link change was a repeat of the syslog line's", got)
	}
}

// TestRedoRaisesFlappingAgain: a redo of the record that started a
// flapping gives the flapping event again with its change: neither was
// committed.
func TestRedoRaisesFlappingAgain(t *testing.T) {
	d := newDetector(30*time.Second, 2, 10*time.Minute)
	t0 := time.Now()
	var last telemetry.Event
	for i := range 3 {
		last = change(t0, "raw.syslog", i)
		out := d.observe(last, t0.Add(time.Duration(i)*time.Second))
		if i == 2 && len(out) != 2 {
			t.Fatalf("third change: %v", out)
		}
	}
	out := d.observe(last, t0.Add(2*time.Second))
	if len(out) != 2 || out[1].Type != "interface_flapping" {
		t.Errorf("redo of the record that started the flapping: %v", out)
	}
}

// TestRecreatedTopicIsNoRedo: records of a topic deleted and made again
// (offsets starting over, appended later) are no redos: they are
// de-duplicated as any other.
func TestRecreatedTopicIsNoRedo(t *testing.T) {
	d := newDetector(30*time.Second, 5, 10*time.Minute)
	t0 := time.Now()
	d.observe(telemetry.Event{Type: "interface_down", Device: "edge9", Object: "Gi0/9", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 5000}}, t0)
	n := 0
	for i := range 2 { // %LINK and %LINEPROTO of one change
		ev := telemetry.Event{Type: "interface_down", Device: "edge1", Object: "Gi0/1", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
		n += len(d.observe(ev, t0.Add(time.Hour+time.Duration(i)*time.Second)))
	}
	if n != 1 {
		t.Errorf("one interface going down published %d times on the topic made again", n)
	}
}

// TestMoreInterfaceSpellingsAreOneObject: the long and short names of one port
// (IOS logs TwoGigabitEthernet1/0/1, the poller's ifName is Tw1/0/1) are
// one object, so one change seen both ways is one event.
func TestMoreInterfaceSpellingsAreOneObject(t *testing.T) {
	for long, short := range map[string]string{
		"TwoGigabitEthernet1/0/1": "Tw1/0/1", "FiveGigabitEthernet1/0/1": "Fi1/0/1", "AppGigabitEthernet1/0/1": "Ap1/0/1",
		"FourHundredGigE0/0/0/1": "FH0/0/0/1", "Bundle-Ether10": "BE10", "GigabitEthernet0/1": "Gi0/1",
		"TwentyFiveGigE1/0/1": "Twe1/0/1",
	} {
		if a, b := telemetry.ObjectID("interface_down", long), telemetry.ObjectID("interface_down", short); a != b {
			t.Errorf("%s is %q, %s is %q", long, a, short, b)
		}
	}
	if a, b := telemetry.ObjectID("interface_down", "Tw1/0/1"), telemetry.ObjectID("interface_down", "Twe1/0/1"); a == b {
		t.Errorf("2.5G and 25G ports are one object: %q", a)
	}
}

// TestRebootByTrapAndPollIsOneEvent: a coldStart trap and the first poll
// after the restart, a minute apart (past the 30 s window, as a 60 s poll
// often is), are one device_rebooted: both give the same boot time. A
// second restart three minutes later is a second event.
func TestRebootByTrapAndPollIsOneEvent(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	n := 0
	reboot := func(topic string, offset int64, at time.Time, uptime uint32) {
		ev := telemetry.Event{Type: "device_rebooted", Device: "edge1", Time: bootTime(at, uptime), Cause: telemetry.Cause{Topic: topic, Offset: offset}}
		n += len(d.observe(ev, at))
		d.settle(at)
	}
	reboot("raw.traps", 1, t0, 500)                     // coldStart 5 s after the boot
	reboot("raw.snmp", 1, t0.Add(55*time.Second), 6000) // the poll, 60 s up
	if n != 1 {
		t.Fatalf("%d events for one restart seen by a trap and a poll 55 s apart", n)
	}
	reboot("raw.traps", 2, t0.Add(3*time.Minute), 300) // restarted again
	reboot("raw.snmp", 2, t0.Add(3*time.Minute+40*time.Second), 4300)
	if n != 2 {
		t.Fatalf("%d events for two restarts three minutes apart, want 2", n)
	}
}

// TestBootTimeOfARecordWithoutTime: a trap record with no received_at
// (any Kafka client may write one) gives no boot time, not year 0 less
// its uptime, which an event cannot be encoded with.
func TestBootTimeOfARecordWithoutTime(t *testing.T) {
	if b := bootTime(time.Time{}, 3_456_000_000); !b.IsZero() {
		t.Fatalf("boot time %v of a record without a time", b)
	}
	ev := telemetry.Event{V: 1, Type: "device_rebooted", Device: "edge1", Time: bootTime(time.Time{}, 3_456_000_000)}
	if _, _, err := ev.AppendJSON(nil, nil); err != nil {
		t.Fatalf("the event does not encode: %v", err)
	}
}

// TestUnencodableEventIsCounted: an event whose time JSON cannot hold
// (after year 9999: any Kafka client may write such a record) is left out
// of the events topic and counted as a drop with its reason, and the
// events after it are encoded as usual.
func TestUnencodableEventIsCounted(t *testing.T) {
	m := NewWorkerMetrics(nil).m
	var e eventRecords
	ev := telemetry.Event{V: 1, Type: "interface_down", Device: "core9", Object: "Gi0/3",
		Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	recs := e.append(m, nil, telemetry.TopicEvents, ev, 0, 7)
	ev.Time = time.Now()
	recs = e.append(m, recs, telemetry.TopicEvents, ev, 0, 8)
	if len(recs) != 1 || recs[0].src != 8 {
		t.Fatalf("%d records (%+v), want the second event's alone", len(recs), recs)
	}
	if n := testutil.ToFloat64(m.dropped.WithLabelValues(telemetry.TopicEvents, "unencodable")); n != 1 {
		t.Errorf("weir_enrich_dropped_total{topic=events,reason=unencodable} = %v, want 1", n)
	}
}

// TestPollsSlowerThanTheFlapWindow: with SNMP polled less often than the
// flap window (flap.window 1m, polls every 90 s), the first poll after a
// change may come more than the window after the syslog line, gNMI update
// or trap that reported it. The poll's report of the same change, and its
// sysUpTime that went back with the coldStart trap's restart, are the same
// change still: one interface_down, one device_rebooted.
func TestPollsSlowerThanTheFlapWindow(t *testing.T) {
	rules := NewEventRules(10*time.Second, 3, time.Minute)
	targets := NewSNMPTargets([]SNMPTarget{{Name: "edge1", Host: "192.0.2.1", Interval: 90 * time.Second}})
	NewMetricsWorker(nil, nil, WithSharedEventRules(rules), WithSNMPTargets(targets))
	d := rules.d
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var got []string
	observe := func(ev telemetry.Event, at time.Time) {
		for now := at.Add(-20 * time.Second); now.Before(at); now = now.Add(time.Second) {
			d.settle(now)
		}
		for _, e := range d.observe(ev, at) {
			got = append(got, e.Type+" "+e.Cause.Topic)
		}
	}
	// The coldStart trap 5 s after the boot, with the gNMI update of a
	// link down; the poll 85 s later (the restart came just after one).
	observe(telemetry.Event{Type: "device_rebooted", Device: "edge1", Time: bootTime(t0, 500), Cause: telemetry.Cause{Topic: "raw.traps", Offset: 1}}, t0)
	observe(telemetry.Event{Type: "interface_down", Device: "edge1", Object: "Ethernet1", Cause: telemetry.Cause{Topic: "raw.gnmi", Offset: 1}}, t0.Add(time.Second))
	poll := t0.Add(85 * time.Second)
	observe(telemetry.Event{Type: "device_rebooted", Device: "edge1", Time: bootTime(poll, 9000), Cause: telemetry.Cause{Topic: "raw.snmp", Offset: 1}}, poll)
	observe(telemetry.Event{Type: "interface_down", Device: "edge1", Object: "Et1", Cause: telemetry.Cause{Topic: "raw.snmp", Offset: 2}}, poll)
	if want := []string{"device_rebooted raw.traps", "interface_down raw.gnmi"}; !slices.Equal(got, want) {
		t.Errorf("a restart and a link down, then the poll 85 s later seeing both: events %q, want %q", got, want)
	}
}

// TestConfigChangeWithoutUserIsTheNamedOne: IOS reports a change both by
// ciscoConfigManEvent, which names no user, and by %SYS-5-CONFIG_I, which
// does. A change without a user within the window of one of the device's
// is that one again; one naming a user is never left out for one that
// names none (two users' changes in a minute are two changes).
func TestConfigChangeWithoutUserIsTheNamedOne(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	syslog := telemetry.Event{Type: "config_changed", Device: "edge1", Object: "netops", Cause: telemetry.Cause{Topic: "raw.syslog", Offset: 1}}
	trap := telemetry.Event{Type: "config_changed", Device: "edge1", Cause: telemetry.Cause{Topic: "raw.traps", Offset: 1}}
	publish := func(d *detector, evs []telemetry.Event, gaps ...time.Duration) (objects []string) {
		at := t0
		for i, ev := range evs {
			at = at.Add(gaps[i])
			for _, e := range d.observe(ev, at) {
				objects = append(objects, e.Object)
			}
		}
		return objects
	}
	newD := func() *detector { return newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow) }
	if got := publish(newD(), []telemetry.Event{syslog, trap}, 0, time.Second); !slices.Equal(got, []string{"netops"}) {
		t.Errorf("syslog, then the trap a second later: published %q, want the syslog's alone", got)
	}
	if got := publish(newD(), []telemetry.Event{trap, syslog}, 0, time.Second); !slices.Equal(got, []string{"", "netops"}) {
		t.Errorf("the trap, then syslog a second later: published %q, want both (the user is news)", got)
	}
	other := syslog
	other.Object, other.Cause.Offset = "alice", 2
	trap2 := trap
	trap2.Cause.Offset = 2
	if got := publish(newD(), []telemetry.Event{trap, syslog, trap2, other}, 0, time.Second, 10*time.Second, time.Second); !slices.Equal(got, []string{"", "netops", "alice"}) {
		t.Errorf("two users' changes 10 s apart, each by trap and syslog: published %q, want the first trap and both users", got)
	}
	if got := publish(newD(), []telemetry.Event{syslog, trap}, 0, time.Minute); !slices.Equal(got, []string{"netops", ""}) {
		t.Errorf("the trap a minute after: published %q, want both (two changes)", got)
	}
	elsewhere := trap
	elsewhere.Device = "edge2"
	if got := publish(newD(), []telemetry.Event{syslog, elsewhere}, 0, time.Second); !slices.Equal(got, []string{"netops", ""}) {
		t.Errorf("another device's trap: published %q, want both", got)
	}
	// After a restart, the warm-up remembers the syslog line's event.
	d := newD()
	rememberAt(d, syslog, t0, t0.Add(-time.Hour))
	if got := d.observe(trap, t0.Add(2*time.Second)); len(got) != 0 {
		t.Errorf("the trap after the syslog line was remembered: published %v", got)
	}
}

// settle is settleClears with the cleared events of flapping a warm-up
// rebuilt taken as unpublished.
func (d *detector) settle(now time.Time) []telemetry.Event {
	out, rebuilt := d.settleClears(now)
	for _, r := range rebuilt {
		out = append(out, r.ev)
	}
	return out
}

// TestChangeOfNoObjectIsPassedOn: a state change that names no object (a
// linkDown trap without its interface varbinds) is published every time,
// as it is: two of them may be two interfaces, so they are neither one
// object's repeats nor its flapping, and they leave named objects'
// state alone.
func TestChangeOfNoObjectIsPassedOn(t *testing.T) {
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var got []string
	for i := range 12 {
		typ := []string{"interface_down", "interface_down", "interface_up", "bgp_peer_down", "ospf_neighbor_down", "bgp_peer_up"}[i%6]
		ev := telemetry.Event{Type: typ, Device: "edge1", Time: t0.Add(time.Duration(i) * time.Second),
			Cause: telemetry.Cause{Topic: "raw.traps", Offset: int64(i)}}
		for _, e := range d.observe(ev, ev.Time) {
			got = append(got, e.Type)
			if e.ObjectID != "" {
				t.Errorf("%s of no object has object id %q", e.Type, e.ObjectID)
			}
		}
	}
	if len(got) != 12 || slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, "_flapping") }) {
		t.Fatalf("12 changes of no object published as %q; want each once, no flapping", got)
	}
	named := telemetry.Event{Type: "interface_down", Device: "edge1", Object: "Gi0/1", Time: t0.Add(time.Minute),
		Cause: telemetry.Cause{Topic: "raw.traps", Offset: 20}}
	if evs := d.observe(named, named.Time); len(evs) != 1 {
		t.Fatalf("a named interface's first down after unnamed ones: published %v", evs)
	}
}

// TestFlappingClearedMessage: a cleared event says how the object settled,
// in English whatever the count ("changed once", not "changed 1 times").
func TestFlappingClearedMessage(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		late int // changes after the burst, a minute apart, 9 minutes after it
		want string
	}{
		{0, "stable for 10m0s"},
		{1, "changed once within 10m0s, at most half the flapping threshold"},
		{2, "changed 2 times within 10m0s, at most half the flapping threshold"},
	} {
		d := newDetector(time.Second, 5, 10*time.Minute)
		change := flipper(d)
		for k := range 6 {
			change(t0.Add(time.Duration(k) * 10 * time.Second))
		}
		for k := range c.late {
			change(t0.Add(9*time.Minute + time.Duration(k)*time.Minute))
		}
		// The burst is out of the window, the late changes in it.
		cleared := d.settle(t0.Add(10*time.Minute + 51*time.Second))
		if len(cleared) != 1 || cleared[0].Message != c.want {
			t.Errorf("%d late changes: cleared %+v, want one with message %q", c.late, cleared, c.want)
		}
	}
}

// flipper returns a function that reports edge1's Gi0/1 down, then up,
// then down... at the time given, returning what d makes of each.
func flipper(d *detector) func(at time.Time) []telemetry.Event {
	i := 0
	return func(at time.Time) []telemetry.Event {
		typ := "interface_down"
		if i%2 == 1 {
			typ = "interface_up"
		}
		i++
		ev := telemetry.Event{Type: typ, Device: "edge1", Object: "Gi0/1", Time: at}
		return d.observe(ev, at)
	}
}
