package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestWarmupAfterRestart: a metrics worker started after another stopped
// (a restart, or a rebalance) reads back the window before its first
// record, so the first poll it enriches has its rates, and a link that
// went down in between raises interface_down; also when weir was stopped
// for longer than the window (it ends at the last record enriched). With
// warm-up off, neither.
func TestWarmupAfterRestart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		warmup  time.Duration
		stopped time.Duration // how long before the third poll the first two were logged
		want    bool
	}{{"on", DefaultWarmup, 0, true}, {"on, stopped for hours", DefaultWarmup, 3 * time.Hour, true}, {"off", 0, 0, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := embedded.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
			poll := func(minute int, oper1 int64) {
				t.Helper()
				var recs []broker.Record
				for _, ifName := range []string{"Gi0/1", "Gi0/2"} {
					oper := int64(1)
					if ifName == "Gi0/1" {
						oper = oper1
					}
					m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
						Tags:     map[string]string{"ifName": ifName, "agent": "192.0.2.1"},
						Fields:   map[string]any{"ifHCInOctets": uint64(minute * 6000), "ifOperStatus": oper, "ifHighSpeed": int64(1000)},
						Counters: []string{"ifHCInOctets"}, Time: t0.Add(time.Duration(minute) * time.Minute), Uptime: uint32(100000 + minute*6000), Source: "snmp"}
					v, _ := json.Marshal(&m)
					ts := time.Now()
					if minute < 2 {
						ts = ts.Add(-tc.stopped)
					}
					recs = append(recs, broker.Record{Key: []byte("edge1"), Value: v, Timestamp: ts})
				}
				if err := b.Produce(context.Background(), telemetry.TopicRawSNMP, recs); err != nil {
					t.Fatal(err)
				}
			}
			inv, _ := ParseInventory([]byte(testInventory))
			run := func(rows int) {
				t.Helper()
				w := NewMetricsWorker(b, inv, WithWarmup(tc.warmup))
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { w.Run(ctx); close(done) }()
				defer func() { cancel(); <-done }()
				for deadline := time.Now().Add(10 * time.Second); len(interfaceRows(t, b)) < rows; time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%d interface rows enriched, want %d", len(interfaceRows(t, b)), rows)
					}
				}
			}
			poll(0, 1)
			poll(1, 1)
			run(4) // the first worker enriches two polls and stops
			poll(2, 2)
			run(6) // its successor enriches the third

			rows := interfaceRows(t, b)
			for _, m := range rows[4:] {
				rate, ok := m.Fields["ifHCInOctets_rate"].(float64)
				if ok != tc.want || ok && rate != 100 {
					t.Errorf("%s after the restart: rate %v (%v), want one: %v", m.Tags["ifName"], rate, ok, tc.want)
				}
			}
			var events []string
			for _, r := range readTopic(t, b, telemetry.TopicEvents) {
				var ev telemetry.Event
				json.Unmarshal(r.Value, &ev)
				events = append(events, ev.Type+" "+ev.Object)
			}
			if got := fmt.Sprint(events); tc.want && got != "[interface_down Gi0/1]" || !tc.want && len(events) != 0 {
				t.Errorf("events %s", got)
			}
		})
	}
}

// interfaceRows returns the snmp_interface records of enriched.metrics.
func interfaceRows(t *testing.T, b *embedded.Broker) []telemetry.Metric {
	var rows []telemetry.Metric
	for _, r := range readTopic(t, b, telemetry.TopicEnrichedMetrics) {
		var m telemetry.Metric
		if err := json.Unmarshal(r.Value, &m); err != nil {
			t.Fatal(err)
		}
		if m.Measurement == "snmp_interface" {
			rows = append(rows, m)
		}
	}
	return rows
}

// TestWarmerReadsTheWindow: the warmer feeds the records of the window
// before the first record, by record time, and no others, however far
// back the window starts.
func TestWarmerReadsTheWindow(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const n = 20_000
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var recs []broker.Record
	for i := range n {
		recs = append(recs, broker.Record{Value: []byte(fmt.Sprint(i)), Timestamp: t0.Add(time.Duration(i) * time.Second)})
	}
	if err := b.ProducePartition(context.Background(), "w", 0, recs); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		upTo, cutoffSec int64
		first, count    int64
	}{
		{n, n - 1000, n - 1000, 1000},
		{n, n - 5000, n - 5000, 5000}, // past the first steps back
		{n - 10, -1, 0, n - 10},       // back to the log start
		{15_000, 14_999, 14_999, 1},
		{15_000, 15_000, 0, 0}, // nothing in the window
	} {
		wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
		var fed []int64
		got, err := wm.read(context.Background(), "w", 0, tc.upTo, t0.Add(time.Duration(tc.cutoffSec)*time.Second),
			func(r *broker.Record) { fed = append(fed, r.Offset) })
		if err != nil {
			t.Fatal(err)
		}
		if int64(got) != tc.count || int64(len(fed)) != tc.count || tc.count > 0 && (fed[0] != tc.first || fed[len(fed)-1] != tc.upTo-1) {
			t.Errorf("upTo %d cutoff %d: fed %d records (%d returned), want %d from %d", tc.upTo, tc.cutoffSec, len(fed), got, tc.count, tc.first)
		}
	}
}

// TestWarmerStopsWithItsContext: a stop in the middle of a warm-up ends it
// at the next fetch: a window of millions of records would otherwise hold
// weir's stop for as long as they take to read (the log's fetch of what is
// there does not look at ctx).
func TestWarmerStopsWithItsContext(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const n = 20_000 // of 2 KiB: 40 MiB, several fetches
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var recs []broker.Record
	value := make([]byte, 2048)
	for i := range n {
		recs = append(recs, broker.Record{Value: value, Timestamp: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	if err := b.ProducePartition(context.Background(), "w", 0, recs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
	fed := 0
	got, err := wm.read(ctx, "w", 0, n, t0.Add(-time.Hour), func(*broker.Record) {
		if fed++; fed == 10 {
			cancel() // weir stops while the first fetch's records are fed
		}
	})
	if !errors.Is(err, context.Canceled) || got >= n {
		t.Errorf("warm-up after the stop: %d of %d records fed, err %v", got, n, err)
	}
}

// retentionMoved is a broker whose log start moved to start while the
// warmer worked: the first description it gives is stale.
type retentionMoved struct {
	*embedded.Broker
	start     int64
	described int
}

func (b *retentionMoved) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	infos, err := b.Broker.DescribeTopics(ctx, names...)
	b.described++
	for i := range infos {
		for j := range infos[i].Partitions {
			if b.described > 1 {
				infos[i].Partitions[j].LogStartOffset = b.start
			}
		}
	}
	return infos, err
}

func (b *retentionMoved) Fetch(ctx context.Context, topic string, partition int32, offset int64, opts broker.FetchOptions, into *broker.FetchResult) error {
	if offset < b.start {
		return fmt.Errorf("%w: %d before %d", broker.ErrOffsetOutOfRange, offset, b.start)
	}
	return b.Broker.Fetch(ctx, topic, partition, offset, opts, into)
}

// TestWarmerFollowsRetention: when retention has moved the log start past
// where the warmer meant to read, it reads from the new start rather than
// giving up.
func TestWarmerFollowsRetention(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var recs []broker.Record
	for i := range 6000 {
		recs = append(recs, broker.Record{Value: []byte(fmt.Sprint(i)), Timestamp: t0.Add(time.Duration(i) * time.Second)})
	}
	if err := eb.ProducePartition(context.Background(), "w", 0, recs); err != nil {
		t.Fatal(err)
	}
	b := &retentionMoved{Broker: eb, start: 5500}
	wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
	var fed []int64
	n, err := wm.read(context.Background(), "w", 0, 6000, t0, func(r *broker.Record) { fed = append(fed, r.Offset) })
	if err != nil {
		t.Fatal(err)
	}
	if n != 500 || len(fed) != 500 || fed[0] != 5500 || fed[499] != 5999 {
		t.Fatalf("fed %d records (%d returned) from %v, want 500 from 5500", len(fed), n, fed[:min(1, len(fed))])
	}
}

// TestFlappingSurvivesRestart: an interface that was flapping when the
// syslog worker stopped is still known to flap after a restart (the
// warm-up replays the window into the event detector), so its cleared
// event follows once it settles, and no second flapping event is raised:
// whether a new record comes to the partition after the restart or none
// (the warm-up of an idle partition). Without warm-up the new worker
// never learns it flapped: no cleared.
func TestFlappingSurvivesRestart(t *testing.T) {
	t.Parallel() // each case waits out flap windows, on a log of its own
	for _, tc := range []struct {
		name      string
		warmup    time.Duration
		newRecord bool
		want      bool
	}{{"on", DefaultWarmup, true, true}, {"on, idle", DefaultWarmup, false, true}, {"off", 0, true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := embedded.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			line := func(ifName, state string) broker.Record {
				l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 3, Format: "rfc3164",
					Message:    "%LINK-3-UPDOWN: Interface " + ifName + ", changed state to " + state,
					SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
				return broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)}
			}
			events := func() []string {
				var out []string
				for _, r := range readTopic(t, b, telemetry.TopicEvents) {
					var ev telemetry.Event
					json.Unmarshal(r.Value, &ev)
					out = append(out, ev.Type+" "+ev.Object)
				}
				return out
			}
			inv, _ := ParseInventory([]byte(testInventory))
			const window = time.Second
			run := func(until func([]string) bool, wait time.Duration) {
				t.Helper()
				w := NewWorker(b, inv, NewClassifier(), WithEventRules(0, 3, window), WithWarmup(tc.warmup))
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { w.Run(ctx); close(done) }()
				defer func() { cancel(); <-done }()
				for deadline := time.Now().Add(wait); !until(events()); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						return
					}
				}
			}
			var flaps []broker.Record
			for i := range 4 {
				flaps = append(flaps, line("Gi0/1", [...]string{"down", "up"}[i%2]))
			}
			if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, flaps); err != nil {
				t.Fatal(err)
			}
			has := func(ev string) func([]string) bool {
				return func(evs []string) bool { return slices.Contains(evs, ev) }
			}
			run(has("interface_flapping Gi0/1"), 10*time.Second) // stops before the link settles
			if got := events(); len(got) != 5 {
				t.Fatalf("before the restart: events %v, want 4 changes and interface_flapping", got)
			}
			if tc.newRecord { // another line of the device's partition, after the restart
				if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, []broker.Record{line("Gi0/9", "up")}); err != nil {
					t.Fatal(err)
				}
			}
			wait := 10 * time.Second
			if !tc.want {
				wait = 4 * window
			}
			run(has("interface_flapping_cleared Gi0/1"), wait)
			got := events()
			if has("interface_flapping_cleared Gi0/1")(got) != tc.want {
				t.Errorf("after the restart: events %v; want interface_flapping_cleared Gi0/1: %v", got, tc.want)
			}
			flapping := 0
			for _, ev := range got {
				if ev == "interface_flapping Gi0/1" {
					flapping++
				}
			}
			if flapping != 1 {
				t.Errorf("%d interface_flapping events, want 1", flapping)
			}
		})
	}
}

// positionAt is a consumer that only tells a position.
type positionAt struct {
	broker.Consumer
	pos int64
}

func (p positionAt) Position(context.Context, broker.TopicPartition) (int64, bool) {
	return p.pos, true
}

// TestIdleWarmupStaysInTheLog: an idle partition warms up from the
// member's position, but not from a position past the log's end (a
// commit from an earlier topic of that name), which would read records
// nobody enriched before.
func TestIdleWarmupStaysInTheLog(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	recs := make([]broker.Record, 10)
	for i := range recs {
		recs[i] = broker.Record{Value: []byte(fmt.Sprint(i)), Timestamp: time.Now()}
	}
	if err := b.ProducePartition(context.Background(), "w", 0, recs); err != nil {
		t.Fatal(err)
	}
	tp := []broker.TopicPartition{{Topic: "w", Partition: 0}}
	for _, tc := range []struct{ pos, want int64 }{{10, 10}, {4, 4}, {50, 0}} {
		wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
		var fed int64
		wm.idle(context.Background(), positionAt{pos: tc.pos}, tp, func(*broker.Record, time.Time) { fed++ })
		if fed != tc.want {
			t.Errorf("position %d: %d records warmed up, want %d", tc.pos, fed, tc.want)
		}
	}
}

// TestClearedNotRepeatedAtRestart: an object that flapped and was cleared
// before a restart gets no second cleared event after it. The warm-up
// reads the partition up to its last record, which shows the object
// flapping still; the cleared event, caused by no record, is in the
// events topic only.
func TestClearedNotRepeatedAtRestart(t *testing.T) {
	t.Parallel() // it waits out flap windows, on a log of its own
	rig := newFlapRig(t, nil)
	count, run := rig.count, rig.run
	run(func() bool { return count("interface_flapping_cleared") > 0 }, 10*time.Second)
	if n := count("interface_flapping_cleared"); n != 1 {
		t.Fatalf("before the restarts: %d cleared events, want 1", n)
	}
	for restart := range 2 {
		run(func() bool { return count("interface_flapping_cleared") > 1 }, 4*flapRigWindow)
		if n := count("interface_flapping_cleared"); n != 1 {
			t.Errorf("after restart %d: %d cleared events, want the 1 of before", restart+1, n)
		}
	}
	if n := count("interface_flapping"); n != 1 {
		t.Errorf("%d interface_flapping events, want 1", n)
	}
	// Flapping again, and stopped before it settles: the cleared event
	// of before is not this flapping's.
	rig.flap()
	run(func() bool { return count("interface_flapping") > 1 }, 10*time.Second)
	if n := count("interface_flapping_cleared"); n != 1 {
		t.Fatalf("flapping again: %d cleared events before it settled, want the 1 of before", n)
	}
	run(func() bool { return count("interface_flapping_cleared") > 1 }, 10*time.Second)
	if n := count("interface_flapping_cleared"); n != 2 {
		t.Errorf("flapping again, then a restart: %d cleared events, want 2", n)
	}
}

// TestClearedNotRepeatedWithDeviceClockAhead: the flapping event carries
// the device's time, its cleared event weir's; a device clock hours ahead
// made the flapping event look later than its cleared one, and every
// restart cleared the object again.
func TestClearedNotRepeatedWithDeviceClockAhead(t *testing.T) {
	t.Parallel() // it waits out flap windows, on a log of its own
	ahead := time.Now().Add(3 * time.Hour).Truncate(time.Second)
	rig := newFlapRig(t, &ahead)
	count, run := rig.count, rig.run
	run(func() bool { return count("interface_flapping_cleared") > 0 }, 10*time.Second)
	if n := count("interface_flapping_cleared"); n != 1 {
		t.Fatalf("before the restart: %d cleared events, want 1", n)
	}
	run(func() bool { return count("interface_flapping_cleared") > 1 }, 4*flapRigWindow)
	if n := count("interface_flapping_cleared"); n != 1 {
		t.Errorf("after a restart: %d cleared events, want the 1 of before", n)
	}
}

// flapRigWindow is flapRig's flap window (threshold 3).
const flapRigWindow = time.Second

// flapRig is a log in which edge1's Gi0/1 flaps (four changes in
// raw.syslog, with the device time at when it is not nil), for the tests
// of cleared events across restarts.
type flapRig struct {
	t          *testing.T
	b          *embedded.Broker
	inv        *Inventory
	deviceTime *time.Time
}

func newFlapRig(t *testing.T, at *time.Time) *flapRig {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	inv, _ := ParseInventory([]byte(testInventory))
	rig := &flapRig{t: t, b: b, inv: inv, deviceTime: at}
	rig.flap()
	return rig
}

// flap appends the four changes.
func (rig *flapRig) flap() {
	var flaps []broker.Record
	for i := range 4 {
		l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 3, Format: "rfc3164",
			Message:    "%LINK-3-UPDOWN: Interface Gi0/1, changed state to " + [...]string{"down", "up"}[i%2],
			SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now(), Time: rig.deviceTime}
		flaps = append(flaps, broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)})
	}
	if err := rig.b.Produce(context.Background(), telemetry.TopicRawSyslog, flaps); err != nil {
		rig.t.Fatal(err)
	}
}

// count counts the events of typ in the events topic.
func (rig *flapRig) count(typ string) int {
	n := 0
	for _, r := range readTopic(rig.t, rig.b, telemetry.TopicEvents) {
		var ev telemetry.Event
		json.Unmarshal(r.Value, &ev)
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// run runs a syslog worker (a weir process) until until holds or wait
// passes, and stops it.
func (rig *flapRig) run(until func() bool, wait time.Duration) {
	rig.t.Helper()
	w := NewWorker(rig.b, rig.inv, NewClassifier(), WithEventRules(0, 3, flapRigWindow), WithWarmup(DefaultWarmup))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(wait); !until(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return
		}
	}
}

// TestWarmerKeepsNoWindowBuffer: a warm-up's fetch buffer (up to
// logwindow.FetchBytes, 8 MiB) is not kept by the worker for as long as it
// runs: each worker kept one, some 50 MB of heap after a restart.
func TestWarmerKeepsNoWindowBuffer(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Now().Add(-time.Minute)
	value := bytes.Repeat([]byte("x"), 1024)
	for batch := range 16 {
		recs := make([]broker.Record, 1024)
		for i := range recs {
			recs[i] = broker.Record{Value: value, Timestamp: t0.Add(time.Duration(batch*1024+i) * time.Millisecond)}
		}
		if err := b.ProducePartition(context.Background(), "w", 0, recs); err != nil {
			t.Fatal(err)
		}
	}
	var ms runtime.MemStats
	heap := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
	before := heap()
	n, err := wm.read(context.Background(), "w", 0, 16*1024, t0.Add(-time.Second), func(*broker.Record) {})
	if err != nil || n != 16*1024 {
		t.Fatalf("read %d records, %v", n, err)
	}
	if kept := int64(heap()) - int64(before); kept > 2<<20 {
		t.Errorf("the warmer keeps %d KiB after reading a 16 MiB window", kept>>10)
	}
	runtime.KeepAlive(wm)
}

// TestWarmupFromTheStartEndsWhatItHeld: a partition read from its first
// record has no window to read back, only what a process before published
// of its records and did not commit. When the warm-up remembered some, it
// ends as any does, so the hold on settle it set ends with the worker's
// next poll, not after clockStale.
func TestWarmupFromTheStartEndsWhatItHeld(t *testing.T) {
	for _, adopted := range []bool{false, true} {
		wm := newWarmer(nil, time.Minute, slog.New(slog.DiscardHandler))
		wm.uncommitted = func(context.Context, string, int32, int64, time.Time) bool { return adopted }
		ended := 0
		wm.ended = func(broker.TopicPartition, time.Time) { ended++ }
		wm.before(context.Background(), []broker.Record{{Topic: "raw.traps", Offset: 0, Timestamp: time.Now()}}, func(*broker.Record, time.Time) {})
		if want := btoi(adopted); ended != want {
			t.Errorf("remembered some: %v; warm-up ended %d times, want %d", adopted, ended, want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// positionLater is a consumer given partitions whose positions it learns
// only after some calls, as a Kafka member may learn its committed offsets
// some time after it was given them.
type positionLater struct {
	broker.Consumer
	assigned []broker.TopicPartition
	pos      int64
	asked    map[broker.TopicPartition]int
}

func (p *positionLater) Assigned() []broker.TopicPartition { return p.assigned }

func (p *positionLater) Position(_ context.Context, tp broker.TopicPartition) (int64, bool) {
	p.asked[tp]++
	return p.pos, p.asked[tp] > 3*int(tp.Partition) // partition 0 at once, 1 at the fourth call
}

// TestEveryAssignedWarmsUpBeforeTheGate: before a worker counts as warm,
// every partition it was given is read back, also one whose position the
// consumer knows only a while after (idle alone leaves it to the next
// round, after the gate opened).
func TestEveryAssignedWarmsUpBeforeTheGate(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if err := b.CreateTopic(ctx, "w", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		recs := make([]broker.Record, 5)
		for i := range recs {
			recs[i] = broker.Record{Value: []byte(fmt.Sprint(i)), Timestamp: time.Now()}
		}
		if err := b.ProducePartition(ctx, "w", p, recs); err != nil {
			t.Fatal(err)
		}
	}
	c := &positionLater{assigned: []broker.TopicPartition{{Topic: "w", Partition: 0}, {Topic: "w", Partition: 1}}, pos: 5,
		asked: map[broker.TopicPartition]int{}}
	fed := map[int32]int{}
	feed := func(r *broker.Record, _ time.Time) { fed[r.Partition]++ }
	wm := newWarmer(b, time.Hour, slog.New(slog.DiscardHandler))
	wm.idle(ctx, c, c.assigned, feed)
	if fed[0] != 5 || fed[1] != 0 {
		t.Fatalf("idle warmed up %v, want partition 0 alone (1's position not known yet)", fed)
	}
	wm.everyAssigned(ctx, c, 5*time.Second, feed)
	if fed[0] != 5 || fed[1] != 5 {
		t.Fatalf("warmed up %v, want both partitions' 5 records, once", fed)
	}
}
