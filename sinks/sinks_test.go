package sinks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// fakeDest fails the first failN writes retryably, rejects metrics whose
// measurement is "bad", and records what it accepted.
type fakeDest struct {
	mu     sync.Mutex
	failN  int
	writes int
	got    map[string]int // device -> times seen
	closed bool
}

func (d *fakeDest) Write(ctx context.Context, items []sinks.Item) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes++
	if d.failN > 0 {
		d.failN--
		return &sinks.RetryableError{Err: errors.New("destination down")}
	}
	for _, it := range items {
		if it.Metric != nil && it.Metric.Measurement == "bad" {
			return &sinks.RejectedError{Reason: "bad_measurement", Err: fmt.Errorf("measurement %q refused", it.Metric.Measurement)}
		}
	}
	for _, it := range items {
		if d.got == nil {
			d.got = map[string]int{}
		}
		d.got[string(it.Record.Key)]++
	}
	return nil
}

func (d *fakeDest) Close() error { d.mu.Lock(); d.closed = true; d.mu.Unlock(); return nil }

func (d *fakeDest) seen() (distinct, total int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range d.got {
		distinct++
		total += n
	}
	return
}

func metrics(n int, measurement func(i int) string) []telemetry.Metric {
	out := make([]telemetry.Metric, n)
	for i := range out {
		out[i] = telemetry.Metric{V: 1, Measurement: measurement(i), Device: fmt.Sprintf("dev%d", i),
			Tags: map[string]string{"site": []string{"ams1", "fra1"}[i%2]}, Fields: map[string]any{"x": float64(i)},
			Time: time.Unix(1700000000, 0).UTC()}
	}
	return out
}

func devKey(i int) string { return fmt.Sprintf("dev%d", i) }

func cfg(name string) configs.Sink {
	return configs.Sink{Type: "test", Name: name, Topics: []string{"enriched.metrics"}, BatchSize: 50,
		FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry:         configs.SinkRetry{Initial: configs.Duration(5 * time.Millisecond), Max: configs.Duration(20 * time.Millisecond)}}
}

func TestRetryThenDeliverAndCommit(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(200, func(int) string { return "ifTable" }))
	d := &fakeDest{failN: 3}
	var logs syncbuf.Buffer
	r := sinktest.StartLogging(t, b, cfg("s1"), d, &logs)
	sinktest.Eventually(t, "200 records delivered", func() bool { n, _ := d.seen(); return n == 200 })
	// The outage's last line says it is over.
	sinktest.Eventually(t, "recovery logged", func() bool { return strings.Contains(logs.String(), "sink delivering again") })
	sinktest.Eventually(t, "records counted", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "s1"}) >= 200
	})
	if got := r.Counter("weir_sink_retries_total", map[string]string{"sink": "s1"}); got != 3 {
		t.Errorf("retries = %v, want 3", got)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if !d.closed {
		t.Error("destination not closed")
	}
	// Restart: committed, so nothing old comes again; new records do.
	d2 := &fakeDest{}
	sinktest.Start(t, b, cfg("s1"), d2)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(i int) string { return fmt.Sprintf("new%d", i) },
		metrics(10, func(int) string { return "ifTable" }))
	sinktest.Eventually(t, "new records", func() bool { n, _ := d2.seen(); return n == 10 })
	time.Sleep(100 * time.Millisecond) // a few flush intervals: nothing else may arrive
	if n, _ := d2.seen(); n != 10 {
		t.Fatalf("after restart saw %d records, want only the 10 new", n)
	}
}

func TestRejectedGoesToDeadLetter(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(30, func(i int) string {
		if i == 7 {
			return "bad"
		}
		return "ifTable"
	}))
	d := &fakeDest{}
	r := sinktest.Start(t, b, cfg("s2"), d)
	sinktest.Eventually(t, "29 good records", func() bool { n, _ := d.seen(); return n == 29 })
	sinktest.Eventually(t, "dead letter counted", func() bool {
		return r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "s2", "reason": "bad_measurement"}) == 1
	})
	dl := sinktest.ReadAll(t, b, telemetry.TopicDeadLetter)
	if len(dl) != 1 || string(dl[0].Key) != "dev7" {
		t.Fatalf("dead letters: %+v", dl)
	}
	if h := sinktest.Header(dl[0], sinks.HeaderDeadLetterReason); !strings.Contains(h, "refused") {
		t.Errorf("reason header %q", h)
	}
	if h := sinktest.Header(dl[0], telemetry.HeaderSchema); h != telemetry.SchemaMetric {
		t.Errorf("schema header kept: %q", h)
	}
	if sinktest.Header(dl[0], sinks.HeaderDeadLetterSink) != "s2" || sinktest.Header(dl[0], sinks.HeaderOriginalTopic) != "enriched.metrics" {
		t.Errorf("headers: %+v", dl[0].Headers)
	}
}

// TestDeadLetterTopicFromTheStart: a sink makes the dead-letter topic
// when it starts, so `weir consume dead.letter` and alerts on it work
// before the first dead letter.
func TestDeadLetterTopicFromTheStart(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Start(t, b, cfg("s-dl"), &fakeDest{})
	sinktest.Eventually(t, "dead.letter made", func() bool {
		infos, err := b.DescribeTopics(context.Background(), telemetry.TopicDeadLetter)
		return err == nil && len(infos) == 1 && len(infos[0].Partitions) > 0
	})
}

func TestFilterAndUndecodable(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(20, func(int) string { return "ifTable" }))
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "junk" }, []string{"not a metric"})
	c := cfg("s3")
	c.Filter = configs.SinkFilter{Tags: map[string]string{"site": "ams*"}}
	d := &fakeDest{}
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "10 ams1 records and 10 filtered", func() bool {
		n, _ := d.seen()
		return n == 10 && r.Counter("weir_sink_filtered_total", map[string]string{"sink": "s3"}) == 10
	})
	sinktest.Eventually(t, "decode error dead-lettered", func() bool {
		return r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "s3", "reason": "decode"}) == 1
	})
}

func TestMaxAttemptsDeadLetters(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(5, func(int) string { return "ifTable" }))
	c := cfg("s4")
	c.Retry.MaxAttempts = 2
	d := &fakeDest{failN: 1000}
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "batch dead-lettered", func() bool {
		return r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "s4", "reason": "retries_exhausted"}) == 5
	})
}

// TestStopAtRandomPoints stops and restarts a sink many times while records
// keep arriving: every record is delivered at least once, and what comes
// twice is bounded by one batch per restart.
func TestStopAtRandomPoints(t *testing.T) {
	b := sinktest.Broker(t)
	d := &fakeDest{}
	c := cfg("restarts")
	c.BatchSize = 20
	const total = 2000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < total; i += 50 {
			recs := make([]broker.Record, 50)
			for j := range recs {
				recs[j] = broker.Record{Key: fmt.Appendf(nil, "k%d", i+j), Value: []byte(`{"v":1,"measurement":"m","fields":{"x":1}}`),
					Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)}}}
			}
			if err := b.Produce(context.Background(), "enriched.metrics", recs); err != nil {
				t.Error(err) // not Fatal: this is not the test's goroutine
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	restarts := 0
	for stop := false; !stop; restarts++ {
		select {
		case <-done:
			stop = true
		default:
		}
		r := sinktest.Start(t, b, c, d)
		time.Sleep(time.Duration(5+restarts%4*7) * time.Millisecond)
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "every record delivered", func() bool { n, _ := d.seen(); return n == total })
	time.Sleep(100 * time.Millisecond)
	_, all := d.seen()
	if dup := all - total; dup > restarts*c.BatchSize {
		t.Fatalf("%d duplicates over %d restarts of batch %d", dup, restarts, c.BatchSize)
	}
	t.Logf("%d restarts, %d duplicates", restarts, all-total)
}

// pointDest takes metrics as Points and keeps copies of what it saw.
type pointDest struct {
	mu  sync.Mutex
	got map[string]string // device -> "measurement tags fields"
}

func (d *pointDest) Points() bool { return true }

func (d *pointDest) Write(_ context.Context, items []sinks.Item) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, it := range items {
		p := it.Point
		if p == nil || it.Metric != nil {
			return fmt.Errorf("item without a Point or with a Metric: %+v", it)
		}
		s := p.Measurement
		for _, t := range p.Tags {
			s += " " + t.Key + "=" + t.Value
		}
		for _, f := range p.Fields {
			s += fmt.Sprintf(" %s=%v(%d,%v)", f.Key, f.Value(), f.Kind, f.Counter)
		}
		d.got[p.Device] = s
	}
	return nil
}

func (d *pointDest) Close() error { return nil }

// TestPointsAcrossBatches: a destination taking Points gets every metric
// right although Points are reused from batch to batch, filtered on
// Points, including values only encoding/json decodes.
func TestPointsAcrossBatches(t *testing.T) {
	b := sinktest.Broker(t)
	const n = 500
	want := map[string]string{}
	recs := make([]broker.Record, 0, n)
	for i := range n {
		dev := fmt.Sprintf("d%d", i)
		site := []string{"ams1", "fra1"}[i%2]
		// Every seventh value has an escape, a key order of its own and
		// a key sinks do not know, which only encoding/json decodes.
		v := fmt.Sprintf(`{"v":1,"measurement":"m%d","device":%q,"tags":{"site":%q,"z":"v%d"},"fields":{"c":%d,"g":%d,"s":"x"},"counters":["c"],"time":"2026-11-29T12:00:00Z"}`,
			i%3, dev, site, i, i, i)
		if i%7 == 0 {
			v = fmt.Sprintf(`{"fields":{"s":"x","g":%d,"c":%d},"counters":["c"],"extra":{"a":[1,2]},"tags":{"z":"v%d","site":%q},"device":%q,"measurement":"m\u0025d","v":1}`,
				i, i, i, site, dev)
			v = strings.Replace(v, `m\u0025d`, fmt.Sprintf(`m\u00%x`, '0'+i%3), 1)
		}
		recs = append(recs, broker.Record{Key: []byte(dev), Value: []byte(v),
			Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)}}})
		if site == "ams1" && i%3 != 2 {
			want[dev] = fmt.Sprintf("m%d site=%s z=v%d c=%d(%d,true) g=%d(%d,false) s=x(%d,false)", i%3, site, i,
				i, telemetry.FieldInt, i, telemetry.FieldFloat, telemetry.FieldString)
		}
	}
	if err := b.Produce(context.Background(), "enriched.metrics", recs); err != nil {
		t.Fatal(err)
	}
	c := cfg("points")
	c.BatchSize = 37
	c.Filter = configs.SinkFilter{Measurements: []string{"m0", "m1"}, Tags: map[string]string{"site": "ams*"}}
	d := &pointDest{got: map[string]string{}}
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "every metric", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "points"})+
			r.Counter("weir_sink_filtered_total", map[string]string{"sink": "points"}) == n
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.got) != len(want) {
		t.Errorf("got %d metrics, want %d", len(d.got), len(want))
	}
	for dev, w := range want {
		if d.got[dev] != w {
			t.Errorf("%s: got  %q\nwant %q", dev, d.got[dev], w)
		}
	}
}

// stallingDest accepts n writes, then holds every later one until its
// context ends (a destination that hangs, then weir stopping).
type stallingDest struct {
	mu sync.Mutex
	n  int
}

func (d *stallingDest) Write(ctx context.Context, items []sinks.Item) error {
	d.mu.Lock()
	if d.n > 0 {
		d.n--
		d.mu.Unlock()
		return nil
	}
	d.mu.Unlock()
	<-ctx.Done()
	return &sinks.RetryableError{Err: ctx.Err()}
}

func (d *stallingDest) Close() error { return nil }

// TestCommitsEachBatch: a poll larger than a batch is committed batch by
// batch, so a sink stopped in its fourth batch has the first three
// committed and delivers only from the fourth on.
func TestCommitsEachBatch(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(1000, func(int) string { return "ifTable" }))
	d := &stallingDest{n: 3}
	r := sinktest.Start(t, b, cfg("s5"), d)
	committed := func() int64 {
		var n int64
		for p := int32(0); p < 3; p++ {
			off, _ := b.Committed(sinks.Group("s5"), "enriched.metrics", p)
			n += off
		}
		return n
	}
	sinktest.Eventually(t, "three batches committed", func() bool { return committed() == 150 })
	time.Sleep(50 * time.Millisecond)
	r.Stop()
	if n := committed(); n != 150 {
		t.Fatalf("%d records committed, want the 3 batches of 50 delivered", n)
	}
}

// partialDest delivers item by item, as the webhook's JSON form does: it
// takes n items in all, then fails every later one retryably (a
// rate-limited or hung receiver), saying how far each write got.
type partialDest struct {
	mu sync.Mutex
	n  int
}

func (d *partialDest) Write(_ context.Context, items []sinks.Item) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	done := min(d.n, len(items))
	d.n -= done
	if done == len(items) {
		return nil
	}
	err := &sinks.RetryableError{Err: errors.New("HTTP 429")}
	if done > 0 {
		return &sinks.PartialError{Done: done, Err: err}
	}
	return err
}

func (d *partialDest) Close() error { return nil }

// TestStopCommitsWhatWasDelivered: a sink stopped (weir restarted) while
// it retries the rest of a batch whose first records the destination took
// commits those, so the next start does not post them again (a chat hook
// would show each of them twice).
func TestStopCommitsWhatWasDelivered(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(40, func(int) string { return "ifTable" }))
	d := &partialDest{n: 25}
	r := sinktest.Start(t, b, cfg("s6"), d)
	sinktest.Eventually(t, "25 records delivered", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "s6"}) == 25
	})
	r.Stop()
	var committed int64
	for p := int32(0); p < 3; p++ {
		off, _ := b.Committed(sinks.Group("s6"), "enriched.metrics", p)
		committed += off
	}
	if committed != 25 {
		t.Fatalf("%d records committed at the stop, want the 25 delivered", committed)
	}
}

// TestStartLatest: a new sink with start: latest skips what its topics
// held before it joined (a webhook added to a weir that has run for days
// would post all of it), and, once it has committed, resumes where it was
// after a restart rather than at the end again.
func TestStartLatest(t *testing.T) {
	b := sinktest.Broker(t)
	old := func(i int) string { return fmt.Sprintf("old%d", i) }
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, old, metrics(200, func(int) string { return "ifTable" }))
	c := cfg("late")
	c.Start = "latest"
	d := &fakeDest{}
	r := sinktest.Start(t, b, c, d)
	// Joining takes a moment: records come until one is delivered.
	for i := 0; ; i++ {
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return fmt.Sprintf("new%d", i) },
			metrics(1, func(int) string { return "ifTable" }))
		if n, _ := d.seen(); n > 0 {
			break
		}
		if i > 500 {
			t.Fatal("nothing delivered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.mu.Lock()
	for k := range d.got {
		if strings.HasPrefix(k, "old") {
			t.Errorf("%s delivered: it was in the log before the sink started", k)
		}
	}
	d.mu.Unlock()
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	// Stopped: what comes meanwhile is delivered at the next start.
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(i int) string { return fmt.Sprintf("meanwhile%d", i) },
		metrics(5, func(int) string { return "ifTable" }))
	d2 := &fakeDest{}
	sinktest.Start(t, b, c, d2)
	sinktest.Eventually(t, "what came while the sink was stopped", func() bool {
		d2.mu.Lock()
		defer d2.mu.Unlock()
		n := 0
		for k := range d2.got {
			if strings.HasPrefix(k, "meanwhile") {
				n++
			}
		}
		if n != 5 {
			t.Logf("got %v", d2.got)
		}
		return n == 5
	})
}

// TestFilterSeverityNames: `severities` takes the syslog names the docs
// give (emerg ... debug) and numbers, and matches them on logs and events
// as enrichment writes them, whose severity_name (and an event's
// severity) is the long form ("error", "critical", "emergency",
// "informational"). Either spelling in the filter selects the same records.
func TestFilterSeverityNames(t *testing.T) {
	b := sinktest.Broker(t)
	long := []string{"emergency", "alert", "critical", "error", "warning", "notice", "informational", "debug"}
	logs := make([]telemetry.EnrichedLog, 8)
	evs := make([]telemetry.Event, 8)
	for i := range 8 {
		logs[i].Log = telemetry.Log{V: 1, Device: fmt.Sprintf("log%d", i), Facility: 23, Severity: i, Message: "m"}
		logs[i].SeverityName = long[i]
		evs[i] = telemetry.Event{V: 1, Type: "interface_down", Device: fmt.Sprintf("ev%d", i), Severity: long[i]}
	}
	sinktest.Produce(t, b, "enriched.syslog", telemetry.SchemaLog, func(i int) string { return fmt.Sprintf("log%d", i) }, logs)
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, func(i int) string { return fmt.Sprintf("ev%d", i) }, evs)
	for _, tc := range []struct {
		name       string
		severities []string
	}{
		{"short", []string{"emerg", "alert", "crit", "err"}},
		{"long", []string{"emergency", "alert", "critical", "error"}},
		{"numbers", []string{"[0-3]"}},
		{"warn", []string{"warn", "info"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg("sev-" + tc.name)
			c.Topics = []string{"enriched.syslog", "events"}
			c.Filter = configs.SinkFilter{Severities: tc.severities}
			d := &fakeDest{}
			r := sinktest.Start(t, b, c, d)
			sinktest.Eventually(t, "16 records delivered or filtered", func() bool {
				n, _ := d.seen()
				return n+int(r.Counter("weir_sink_filtered_total", map[string]string{"sink": c.Name})) == 16
			})
			r.Stop()
			want := []string{"log0", "log1", "log2", "log3", "ev0", "ev1", "ev2", "ev3"}
			if tc.name == "warn" {
				want = []string{"log4", "log6", "ev4", "ev6"}
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			for _, k := range want {
				if d.got[k] != 1 {
					t.Errorf("%s: delivered %d times, want once (got %v)", k, d.got[k], d.got)
				}
			}
			if len(d.got) != len(want) {
				t.Errorf("delivered %v, want %v", d.got, want)
			}
		})
	}
}

// TestRejectedBatchFindsTheCulpritInFewWrites: one record a destination
// refuses (a field type conflict in InfluxDB) in a batch of 1000 is found
// by halving the batch, not by sending the 1000 records one at a time: a
// remote InfluxDB at 20 ms a request would take 20 s a batch, and a sink
// with a conflict in every batch would never catch up.
func TestRejectedBatchFindsTheCulpritInFewWrites(t *testing.T) {
	b := sinktest.Broker(t)
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, devKey, metrics(1000, func(i int) string {
		if i == 637 {
			return "bad"
		}
		return "ifTable"
	}))
	d := &fakeDest{}
	c := cfg("bisect")
	c.BatchSize = 1000
	c.FlushInterval = configs.Duration(2 * time.Second) // the 1000 records in one batch
	r := sinktest.Start(t, b, c, d)
	sinktest.Eventually(t, "999 good records", func() bool { n, _ := d.seen(); return n == 999 })
	sinktest.Eventually(t, "dead letter counted", func() bool {
		return r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "bisect", "reason": "bad_measurement"}) == 1
	})
	// Counted once each write has returned, after the destination saw
	// the records: waited for, not read at once.
	sinktest.Eventually(t, "999 records counted", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "bisect"}) == 999
	})
	if _, total := d.seen(); total != 999 {
		t.Errorf("%d records delivered, want each of the 999 once", total)
	}
	d.mu.Lock()
	writes := d.writes
	d.mu.Unlock()
	// Halving: about 2 writes per level of a 1000-record batch (10 levels).
	if writes > 40 {
		t.Errorf("%d writes to find one refused record among 1000, want at most 40", writes)
	}
	dl := sinktest.ReadAll(t, b, telemetry.TopicDeadLetter)
	if len(dl) != 1 || string(dl[0].Key) != "dev637" {
		t.Fatalf("dead letters: %+v", dl)
	}
}
