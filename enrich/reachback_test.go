package enrich

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// status is core9's snmp_status record of a poll at at: answered with
// uptime (ticks), or failed when up is 0.
func (f *linkRestart) status(at time.Time, up int64, uptime uint32) broker.Record {
	fields := map[string]any{"snmp_up": up}
	if up == 0 {
		fields["error"] = "snmp core9: request timeout"
	}
	m := telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "core9", Source: "snmp",
		Tags: map[string]string{"agent": "192.0.2.9"}, Fields: fields, Time: at, Uptime: uptime}
	v, err := json.Marshal(&m)
	if err != nil {
		f.t.Fatal(err)
	}
	return broker.Record{Key: []byte("core9"), Value: v, Timestamp: at}
}

// failedPolls produces core9's failed polls of minutes from to to (from
// start), one a minute, and returns how many.
func (f *linkRestart) failedPolls(start time.Time, from, to int) int {
	for min := from; min <= to; min++ {
		f.produce(telemetry.TopicRawSNMP, f.status(start.Add(time.Duration(min)*time.Minute), 0, 0))
	}
	return to - from + 1
}

// answered is a poll at at that answered: Gi0/3's row with ifOperStatus
// oper, then the status with uptime, both with the poll's time as the
// poller publishes them.
func (f *linkRestart) answered(at time.Time, oper int64, uptime uint32) []broker.Record {
	row := f.poll(at, oper)
	var m telemetry.Metric
	if err := json.Unmarshal(row.Value, &m); err != nil {
		f.t.Fatal(err)
	}
	m.Uptime = uptime
	v, err := json.Marshal(&m)
	if err != nil {
		f.t.Fatal(err)
	}
	row.Value = v
	return []broker.Record{row, f.status(at, 1, uptime)}
}

// TestRestartDuringAnOutageLongerThanTheWarmup: core9's site loses power;
// its polls fail every minute for 90 minutes, and weir is restarted 80
// minutes in. The warm-up's window (10 minutes) holds failed polls alone:
// the device's last sysUpTime and Gi0/3's last state are before it. When
// the device answers again, up 5 minutes with Gi0/3 down, that is a
// reboot and a link down, as it is to a worker that ran all along. Before
// the warm-up reached back past its window for the last answered poll,
// the restarted worker saw a first uptime and a first state: only
// device_reachable.
func TestRestartDuringAnOutageLongerThanTheWarmup(t *testing.T) {
	want := []string{
		"device_unreachable core9  from raw.snmp",
		"device_rebooted core9  from raw.snmp",
		"interface_down core9 gi0/3 from raw.snmp",
		"device_reachable core9  from raw.snmp",
	}
	outageOfNinetyMinutes(t, false).check("without a restart", true, want...)
	outageOfNinetyMinutes(t, true).check("restarted 80 minutes in", false, want...)
}

// outageOfNinetyMinutes plays TestRestartDuringAnOutageLongerThanTheWarmup's
// polls to a metrics worker, restarted 80 minutes into the outage or not.
func outageOfNinetyMinutes(t *testing.T, restart bool) *linkRestart {
	f := newLinkRestart(t)
	start := time.Now().Add(-90 * time.Minute).Truncate(time.Second)
	const hundredDays = 100 * 24 * 3600 * 100
	f.produce(telemetry.TopicRawSNMP, f.answered(start, 1, hundredDays)...)
	n := 2
	failed := func(from, to int) { n += f.failedPolls(start, from, to) }
	failed(1, 80)
	stop := startRunner(NewMetricsWorker(f.b, f.inv, f.before()...))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, n)
	if restart {
		stop()
		f.check("before the restart", true, "device_unreachable core9  from raw.snmp")
		stop = startRunner(NewMetricsWorker(f.b, f.inv, f.before()...))
	}
	defer stop()
	failed(81, 89)
	f.produce(telemetry.TopicRawSNMP, f.answered(start.Add(90*time.Minute), 2, 5*60*100)...)
	n += 2
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, n)
	return f
}

// TestReachBackFindsEachTargetsLastAnsweredPoll: of four targets whose
// polls fail throughout the window, a answered 200 and 300 minutes before
// it, b 30 minutes before it (within the first read back), c never, and d
// eight days before it (past maxReachBack). a2, another target under a's
// key, answered 100 minutes before, but its polls are not lost. The reach
// back feeds a's poll of 200 minutes before and b's, each whole and in
// log order, and nothing else; it ends though c and d are not found.
func TestReachBackFindsEachTargetsLastAnsweredPoll(t *testing.T) {
	b := openBroker(t)
	windowStart := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var recs []broker.Record
	add := func(key, value string, at time.Time) int64 {
		recs = append(recs, broker.Record{Key: []byte(key), Value: []byte(value), Timestamp: at})
		return int64(len(recs) - 1)
	}
	ago := func(d time.Duration) time.Time { return windowStart.Add(-d) }
	add("d", "d answered", ago(8*24*time.Hour))
	add("d", "d answered", ago(8*24*time.Hour))
	add("a", "a answered", ago(300*time.Minute))
	var want []int64
	for min := 299; min > 0; min-- {
		at := ago(time.Duration(min) * time.Minute)
		switch min {
		case 200:
			want = append(want, add("a", "a answered", at))
			add("c", "c failed", at)
			want = append(want, add("a", "a answered", at), add("a", "a answered", at))
		case 100:
			add("a", "a2 answered", at)
		case 30:
			want = append(want, add("b", "b answered", at), add("b", "b answered", at))
		default:
			add("a", "a failed", at)
			if min < 30 {
				add("b", "b failed", at)
			}
			add("c", "c failed", at)
		}
	}
	for min := range 11 { // the window: failed polls alone
		add("a", "a failed", windowStart.Add(time.Duration(min)*time.Minute))
		add("b", "b failed", windowStart.Add(time.Duration(min)*time.Minute))
	}
	if err := b.ProducePartition(context.Background(), "w", 0, recs); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	wm := newWarmer(b, 10*time.Minute, slog.New(slog.NewTextHandler(&logged, nil)))
	wm.lost = func() lostPolls {
		return lostPolls{targets: map[string]bool{"a": true, "b": true, "c": true, "d": true},
			keys: map[string]bool{"a": true, "b": true, "c": true, "d": true},
			answered: func(r *broker.Record) (string, bool) {
				if !r.Timestamp.Before(windowStart) {
					t.Errorf("offset %d, in the window, looked at", r.Offset)
				}
				target, state, _ := strings.Cut(string(r.Value), " ")
				return target, state == "answered"
			}}
	}
	end := windowStart.Add(10 * time.Minute)
	var fed []int64
	wm.reachBack(context.Background(), "w", 0, int64(len(recs)), windowStart, end, func(r *broker.Record, e time.Time) {
		if !e.Equal(end) {
			t.Errorf("offset %d fed with the end %v, want %v", r.Offset, e, end)
		}
		fed = append(fed, r.Offset)
	})
	slices.Sort(want)
	if !slices.Equal(fed, want) {
		t.Errorf("fed offsets %v, want %v", fed, want)
	}
	if !strings.Contains(logged.String(), "found=2 not_found=2") {
		t.Errorf("log %q does not say found=2 not_found=2", logged.String())
	}
}

// BenchmarkReachBackNotFound is what a target down for good costs a
// partition's warm-up at each restart: a reach back through a million
// records of other devices (300 bytes each, a poll a second of ten rows)
// that finds nothing. ns/op is the whole read; ns/record is per record.
func BenchmarkReachBackNotFound(b *testing.B) {
	br := openBroker(b)
	const n = 1 << 20
	windowStart := time.Now().Add(-time.Hour)
	value := bytes.Repeat([]byte("x"), 300)
	fillBeforeWindow(b, br, n, windowStart, "other", func(int) []byte { return value })
	wm := newWarmer(br, 10*time.Minute, slog.New(slog.DiscardHandler))
	wm.lost = func() lostPolls {
		return lostPolls{targets: map[string]bool{"down": true}, keys: map[string]bool{"down": true},
			answered: func(*broker.Record) (string, bool) { return "", false }}
	}
	b.ResetTimer()
	for range b.N {
		wm.reachBack(context.Background(), "w", 0, n, windowStart, windowStart.Add(10*time.Minute), func(*broker.Record, time.Time) {})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
}

// fillBeforeWindow writes n records keyed key to partition 0 of topic w,
// a tenth of a second apart and ending at windowStart, the i-th valued
// value(i): a partition for a warm-up's reach back to read.
func fillBeforeWindow(b *testing.B, br broker.Broker, n int, windowStart time.Time, key string, value func(i int) []byte) {
	recs := make([]broker.Record, 0, 1<<14)
	for i := range n {
		at := windowStart.Add(-time.Duration(n-i) / 10 * time.Second)
		recs = append(recs, broker.Record{Key: []byte(key), Value: value(i), Timestamp: at})
		if len(recs) == cap(recs) || i == n-1 {
			if err := br.ProducePartition(context.Background(), "w", 0, recs); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
}
