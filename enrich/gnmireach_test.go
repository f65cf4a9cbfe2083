package enrich

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/telemetry"
)

// gnmiRecords are the raw.gnmi records the collector publishes for
// spine1's notification n received at at.
func gnmiRecords(t testing.TB, n *gpb.Notification, at time.Time) []broker.Record {
	t.Helper()
	var recs []broker.Record
	for _, m := range gnmi.Flatten("spine1", n, at) {
		v, _, err := m.AppendJSON(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, broker.Record{Key: []byte("spine1"), Value: v, Timestamp: at})
	}
	return recs
}

// gnmiNotification is an update of spine1 at at: the leaves of prefix,
// leaf by leaf (strings, or uint64 counters).
func gnmiNotification(t testing.TB, at time.Time, prefix string, leaves map[string]any) *gpb.Notification {
	t.Helper()
	p, err := gnmi.ParsePath(prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	n := &gpb.Notification{Prefix: p, Timestamp: at.UnixNano()}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range leaves {
			if !yield(k) {
				return
			}
		}
	}) {
		l, _ := gnmi.ParsePath(k, "")
		var v *gpb.TypedValue
		switch x := leaves[k].(type) {
		case string:
			v = &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: x}}
		case uint64:
			v = &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: x}}
		}
		n.Update = append(n.Update, &gpb.Update{Path: l, Val: v})
	}
	return n
}

// gnmiOper is spine1's on_change oper-status v of iface at at.
func gnmiOper(t testing.TB, at time.Time, iface, v string) []broker.Record {
	return gnmiRecords(t, gnmiNotification(t, at, "/interfaces/interface[name="+iface+"]/state", map[string]any{"oper-status": v}), at)
}

// gnmiCounters is a sample of iface's in-octets at at.
func gnmiCounters(t testing.TB, at time.Time, iface string, octets uint64) []broker.Record {
	return gnmiRecords(t, gnmiNotification(t, at, "/interfaces/interface[name="+iface+"]/state/counters", map[string]any{"in-octets": octets}), at)
}

// TestGNMIRestartAfterALongCalm: spine1's on_change subscription without
// heartbeats sent Ethernet1 UP three hours ago, and its counters have
// come every minute since; weir is restarted, then Ethernet1 goes DOWN.
// That is one interface_down, as it is to a worker that ran all along;
// the same for a BGP session ESTABLISHED then, ACTIVE now.
// Before the warm-up read back past its window for such states, the
// restarted worker took the DOWN for Ethernet1's first state: no event.
// Ethernet2, DOWN three hours ago and UP since two, is deleted an hour
// ago (the port taken out of the config): made again, its first state is
// a start, no event, as it is to a worker that ran all along, and its
// counters since have their rates after the restart. Nothing is
// published twice.
func TestGNMIRestartAfterALongCalm(t *testing.T) {
	want := []string{"interface_up spine1 Ethernet2 from raw.gnmi", "interface_down spine1 Ethernet1 from raw.gnmi",
		"bgp_peer_down spine1 10.0.0.2 from raw.gnmi"}
	const bgp = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.2]/state"
	session := func(at time.Time, v string) []broker.Record {
		return gnmiRecords(t, gnmiNotification(t, at, bgp, map[string]any{"session-state": v}), at)
	}
	enriched := 0 // without a restart
	for _, restart := range []bool{false, true} {
		b, inv := openLog(t)
		now := time.Now().Truncate(time.Millisecond)
		ago := func(d time.Duration) time.Time { return now.Add(-d) }
		var recs []broker.Record
		recs = append(recs, gnmiOper(t, ago(3*time.Hour), "Ethernet1", "UP")...)
		recs = append(recs, gnmiOper(t, ago(3*time.Hour), "Ethernet2", "DOWN")...)
		recs = append(recs, session(ago(3*time.Hour), "ESTABLISHED")...)
		recs = append(recs, gnmiOper(t, ago(2*time.Hour), "Ethernet2", "UP")...)
		recs = append(recs, gnmiRecords(t, &gpb.Notification{Timestamp: ago(time.Hour).UnixNano(),
			Delete: []*gpb.Path{mustPath(t, "/interfaces/interface[name=Ethernet2]")}}, ago(time.Hour))...)
		for min := 179; min > 0; min-- {
			recs = append(recs, gnmiCounters(t, ago(time.Duration(min)*time.Minute), "Ethernet1", uint64(180-min)*1000)...)
			if min < 50 {
				recs = append(recs, gnmiCounters(t, ago(time.Duration(min)*time.Minute), "Ethernet2", uint64(50-min)*1000)...)
			}
		}
		if err := b.Produce(context.Background(), telemetry.TopicRawGNMI, recs); err != nil {
			t.Fatal(err)
		}
		opts := []WorkerOption{WithInputTopic(telemetry.TopicRawGNMI)}
		stop := startRunner(NewMetricsWorker(b, inv, opts...))
		waitCommitted(t, b, telemetry.TopicRawGNMI, len(recs))
		if restart {
			stop()
			stop = startRunner(NewMetricsWorker(b, inv, opts...))
		}
		more := append(gnmiOper(t, now, "Ethernet1", "DOWN"), gnmiOper(t, now, "Ethernet2", "DOWN")...)
		more = append(more, gnmiCounters(t, now, "Ethernet2", 50000)...)
		more = append(more, session(now, "ACTIVE")...)
		if err := b.Produce(context.Background(), telemetry.TopicRawGNMI, more); err != nil {
			t.Fatal(err)
		}
		waitCommitted(t, b, telemetry.TopicRawGNMI, len(recs)+len(more))
		stop()
		got := eventsAs(t, b, func(ev telemetry.Event) string {
			return ev.Type + " " + ev.Device + " " + ev.Object + " from " + ev.Cause.Topic
		})
		if !slices.Equal(got, want) {
			t.Errorf("restarted %v: events\n%s\nwant\n%s", restart, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		enr := readTopic(t, b, telemetry.TopicEnrichedMetrics)
		n := len(enr)
		last := ""
		for _, r := range enr {
			if v := string(r.Value); strings.Contains(v, `"interfaces_interface_state_counters"`) && strings.Contains(v, "Ethernet2") {
				last = v
			}
		}
		if !strings.Contains(last, `"in-octets_rate":16.6`) {
			// Its counters' rates go on: the delete before the window
			// does not forget the window's sample.
			t.Errorf("restarted %v: Ethernet2's last counters enriched as %s, want a rate of 16.6", restart, last)
		}
		if !restart {
			enriched = n
		} else if n != enriched {
			t.Errorf("restarted: %d enriched records, %d without a restart", n, enriched)
		}
	}
}

func mustPath(t testing.TB, s string) *gpb.Path {
	t.Helper()
	p, err := gnmi.ParsePath(s, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGNMIStateReadBackIsForgottenAsItWasSeen: the warm-up's read back
// finds Ethernet1's and Ethernet2's UP of six days before. Two hours on,
// Ethernet1 DOWN is interface_down; a day and a half on, Ethernet2 has
// been unseen for over forgetQuietAfter, and is forgotten as it was by a
// worker that ran all along: its DOWN is a first state. Before, a state
// read back was seen when it was read, and kept a week from then.
func TestGNMIStateReadBackIsForgottenAsItWasSeen(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	now := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	w.rates.setNow(now)
	for _, iface := range []string{"Ethernet1", "Ethernet2"} {
		for _, r := range gnmiOper(t, now.Add(-6*24*time.Hour), iface, "UP") {
			w.warmOlder(&r, now)
		}
	}
	down := func(at time.Time, iface string) []string {
		w.rates.setNow(at)
		w.sweepForgotten(at)
		var got []string
		for _, r := range gnmiOper(t, at, iface, "DOWN") {
			evs, _ := w.enrich(&r)
			for _, ev := range evs {
				got = append(got, ev.Type+" "+ev.Object)
			}
		}
		return got
	}
	if got := down(now.Add(2*time.Hour), "Ethernet1"); !slices.Equal(got, []string{"interface_down Ethernet1"}) {
		t.Errorf("Ethernet1 DOWN two hours on: events %q, want interface_down", got)
	}
	if got := down(now.Add(36*time.Hour), "Ethernet2"); len(got) > 0 {
		t.Errorf("Ethernet2 DOWN a day and a half on: events %q, want none (unseen for over %v)", got, forgetQuietAfter)
	}
}

// TestQuietBackFeedsTheWeekBeforeTheWindowOnce: of a partition's state
// records, the read back feeds, in log order, those of the week before
// the window (six days and three hours before it, and one stamped out of
// order), not the one of eight days before nor the window's, and reads
// the partition once.
func TestQuietBackFeedsTheWeekBeforeTheWindowOnce(t *testing.T) {
	b := &countingFetches{Broker: openBroker(t)}
	windowStart := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []broker.Record
	add := func(value string, at time.Time) int64 {
		recs = append(recs, broker.Record{Key: []byte("spine1"), Value: []byte(value), Timestamp: at})
		return int64(len(recs) - 1)
	}
	ago := func(d time.Duration) time.Time { return windowStart.Add(-d) }
	var want []int64
	add("state", ago(8*24*time.Hour))
	for min := 7 * 24 * 60; min > 0; min -= 10 {
		switch min {
		case 6 * 24 * 60, 180:
			want = append(want, add("state", ago(time.Duration(min)*time.Minute)))
		}
		add("counters", ago(time.Duration(min)*time.Minute))
	}
	add("counters", windowStart.Add(time.Minute))
	want = append(want, add("state", ago(time.Minute))) // out of order, before the window
	add("state", windowStart.Add(2*time.Minute))
	if err := b.ProducePartition(context.Background(), "w", 0, recs); err != nil {
		t.Fatal(err)
	}
	wm := newWarmer(b, 10*time.Minute, slog.New(slog.DiscardHandler))
	end := windowStart.Add(10 * time.Minute)
	var fed []int64
	wm.quietBack(context.Background(), "w", 0, int64(len(recs)), windowStart, end,
		func(r *broker.Record) bool { return string(r.Value) == "state" },
		func(r *broker.Record, e time.Time) {
			if !e.Equal(end) {
				t.Errorf("offset %d fed with the end %v, want %v", r.Offset, e, end)
			}
			fed = append(fed, r.Offset)
		})
	if !slices.Equal(fed, want) {
		t.Errorf("fed offsets %v, want %v", fed, want)
	}
	if b.records > len(recs) {
		t.Errorf("read %d records of a partition of %d", b.records, len(recs))
	}
}

// TestGNMIInputUnderAnotherTopic: a metrics worker reads gNMI states back
// past its window when its input is raw.gnmi, or another topic it is told
// is the gNMI collector's (gnmi.topic renamed), not raw.snmp's.
func TestGNMIInputUnderAnotherTopic(t *testing.T) {
	for _, tc := range []struct {
		opts []WorkerOption
		want bool
	}{
		{[]WorkerOption{WithInputTopic(telemetry.TopicRawGNMI)}, true},
		{[]WorkerOption{WithInputTopic("site1.gnmi"), WithGNMIInput()}, true},
		{[]WorkerOption{WithInputTopic("site1.gnmi")}, false},
		{nil, false},
	} {
		w := NewMetricsWorker(nil, nil, tc.opts...)
		if got := w.lostPolls().quiet != nil; got != tc.want {
			t.Errorf("input %s: reads gNMI states back %v, want %v", w.input, got, tc.want)
		}
	}
}

// BenchmarkReachBackGNMIStates is what the read back of on_change states
// costs a gNMI partition's warm-up at each restart or rebalance: a
// million counter records (300 bytes each, a sample a second of ten
// interfaces), one in a thousand an interface's oper-status, read from a
// week before the window. ns/op is the whole read back, states fed to a
// metrics worker; ns/record is per record read.
func BenchmarkReachBackGNMIStates(b *testing.B) {
	br := openBroker(b)
	const n = 1 << 20
	windowStart := time.Now().Add(-time.Hour)
	counters := gnmiCounters(b, windowStart, "Ethernet1", 1<<40)[0].Value
	counters = append(counters[:len(counters)-1:len(counters)-1], []byte(`,"pad":"`+strings.Repeat("x", max(0, 300-len(counters)-10))+`"}`)...)
	var states [10][]byte
	for i := range states {
		states[i] = gnmiOper(b, windowStart, "Ethernet"+strconv.Itoa(i), "UP")[0].Value
	}
	fillBeforeWindow(b, br, n, windowStart, "spine1", func(i int) []byte {
		if i%1000 == 0 {
			return states[i/1000%10]
		}
		return counters
	})
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	w.rates.setNow(time.Now())
	wm := newWarmer(br, 10*time.Minute, slog.New(slog.DiscardHandler))
	wm.lost = w.lostPolls
	b.ResetTimer()
	for range b.N {
		wm.reachBack(context.Background(), "w", 0, n, windowStart, windowStart.Add(10*time.Minute), w.warm)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
}
