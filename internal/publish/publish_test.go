package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/internal/throttle"
)

const topic = "t"

// openLog opens an embedded log in a temp dir with topic on one partition,
// so records read back in the order they were taken.
func openLog(t *testing.T, opts ...embedded.Option) *embedded.Broker {
	t.Helper()
	b, err := embedded.Open(t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.CreateTopic(context.Background(), topic, broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	return b
}

// values reads back the values of everything in topic.
func values(t *testing.T, b broker.Broker) []string {
	t.Helper()
	var res broker.FetchResult
	if err := b.Fetch(context.Background(), topic, 0, 0, broker.FetchOptions{}, &res); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Records {
		out = append(out, string(r.Value))
	}
	return out
}

func batch(vals ...string) []broker.Record {
	recs := make([]broker.Record, len(vals))
	for i, v := range vals {
		recs[i] = broker.Record{Key: []byte("k"), Value: []byte(v)}
	}
	return recs
}

var errDiskFull = errors.New("injected: no space left on device")

// flaky fails the first failures produces (a full disk), then passes
// them to the broker it wraps; fail, if set, decides instead.
type flaky struct {
	broker.Broker
	failures int
	fail     func(recs []broker.Record) error

	mu    sync.Mutex
	calls int
}

func (f *flaky) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(recs); err != nil {
			return err
		}
	} else if n <= f.failures {
		return errDiskFull
	}
	return f.Broker.Produce(ctx, topic, recs)
}

func (f *flaky) attempts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// drops records what OnDrop is told.
type drops struct {
	mu  sync.Mutex
	got []string
}

func (d *drops) hook(reason Reason, i, n int, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, fmt.Sprintf("%v %d+%d: %v", reason, i, n, err))
}

func (d *drops) String() string { return strings.Join(d.got, "; ") }

func TestRetriesUntilTheBrokerTakesTheBatch(t *testing.T) {
	b := openLog(t)
	f := &flaky{Broker: b, failures: 3}
	var retries []error
	var d drops
	p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Millisecond,
		OnRetry: func(err error, _ time.Duration) { retries = append(retries, err) }, OnDrop: d.hook}
	res, err := p.Publish(context.Background(), batch("a", "b", "c"))
	if err != nil || res != (Result{Published: 3}) {
		t.Fatalf("Publish = %+v, %v; want all 3 published", res, err)
	}
	if f.attempts() != 4 || len(retries) != 3 || !errors.Is(retries[0], errDiskFull) {
		t.Errorf("%d attempts, retries %v; want 4 attempts, 3 retries of the broker's error", f.attempts(), retries)
	}
	if got := strings.Join(values(t, b), ","); got != "a,b,c" {
		t.Errorf("log holds %q, want a,b,c once", got)
	}
	if d.String() != "" {
		t.Errorf("drops: %s", d.String())
	}
}

func TestBackoffGrowsToItsCap(t *testing.T) {
	f := &flaky{Broker: openLog(t), failures: 8}
	var waits []time.Duration
	p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Millisecond, MaxBackoff: 8 * time.Millisecond,
		OnRetry: func(_ error, wait time.Duration) { waits = append(waits, wait) }}
	if _, err := p.Publish(context.Background(), batch("a")); err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	want := []time.Duration{ms, 2 * ms, 4 * ms, 8 * ms, 8 * ms, 8 * ms, 8 * ms, 8 * ms}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
}

func TestBackoffDefaults(t *testing.T) {
	f := &flaky{Broker: openLog(t), failures: 1}
	var waits []time.Duration
	p := &Publisher{Broker: f, Topic: topic, OnRetry: func(_ error, wait time.Duration) { waits = append(waits, wait) }}
	start := time.Now()
	if _, err := p.Publish(context.Background(), batch("a")); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] != DefaultMinBackoff || time.Since(start) < DefaultMinBackoff {
		t.Errorf("waits %v in %v, want one of %v", waits, time.Since(start), DefaultMinBackoff)
	}
}

// TestStopsWhenTheContextEnds: a broker that keeps failing is retried
// until ctx ends, not after; the whole batch is reported unsent, with the
// broker's error.
func TestStopsWhenTheContextEnds(t *testing.T) {
	b := openLog(t)
	f := &flaky{Broker: b, failures: 1 << 30}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	retries := 0
	var d drops
	p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Millisecond, MaxBackoff: time.Hour, OnDrop: d.hook,
		OnRetry: func(error, time.Duration) {
			if retries++; retries == 3 {
				cancel() // during the third wait, which is long
			}
		}}
	done := make(chan struct{})
	var res Result
	var err error
	go func() {
		defer close(done)
		res, err = p.Publish(ctx, batch("a", "b"))
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish went on after its context ended")
	}
	if res != (Result{Unsent: 2}) || !errors.Is(err, errDiskFull) {
		t.Errorf("Publish = %+v, %v; want 2 unsent and the broker's error", res, err)
	}
	if f.attempts() != 3 {
		t.Errorf("%d attempts, want 3 (none after the context ended)", f.attempts())
	}
	if want := "unsent 0+2: " + errDiskFull.Error(); d.String() != want {
		t.Errorf("drops %q, want %q", d.String(), want)
	}
	if n := len(values(t, b)); n != 0 {
		t.Errorf("%d records in the log", n)
	}
}

// TestDoneContextGetsOneAttempt: a broker that answers at once still
// takes a batch published after ctx ended; one that fails is not retried.
func TestDoneContextGetsOneAttempt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := openLog(t)
	p := &Publisher{Broker: b, Topic: topic}
	if res, err := p.Publish(ctx, batch("a")); err != nil || res.Published != 1 {
		t.Errorf("Publish = %+v, %v; want it published", res, err)
	}
	f := &flaky{Broker: b, failures: 1 << 30}
	p.Broker = f
	retries := 0
	p.OnRetry = func(error, time.Duration) { retries++ }
	if res, err := p.Publish(ctx, batch("b")); !errors.Is(err, errDiskFull) || res.Unsent != 1 || f.attempts() != 1 || retries != 0 {
		t.Errorf("Publish = %+v, %v after %d attempts, %d retries; want one attempt, unsent, no retry", res, err, f.attempts(), retries)
	}
}

// TestRefusedBatchIsSplit: a batch the broker refuses for two records over
// its size limit is sent record by record; the others are published, in
// order, and only the two are dropped, each reported with its reason and
// logged.
func TestRefusedBatchIsSplit(t *testing.T) {
	b := openLog(t, embedded.WithMaxMessageBytes(1024))
	big := strings.Repeat("x", 4096)
	var d drops
	var logs bytes.Buffer
	p := &Publisher{Broker: b, Topic: topic, Name: "test", OnDrop: d.hook,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)).With(slog.String("listener", "l1"))}
	res, err := p.Publish(context.Background(), batch("a", big, "c", big, "e"))
	if err != nil || res != (Result{Published: 3, Refused: 2}) {
		t.Fatalf("Publish = %+v, %v; want 3 published, 2 refused", res, err)
	}
	if got := strings.Join(values(t, b), ","); got != "a,c,e" {
		t.Errorf("log holds %q, want a,c,e", got)
	}
	if len(d.got) != 2 || !strings.HasPrefix(d.got[0], "refused 1+1: ") || !strings.HasPrefix(d.got[1], "refused 3+1: ") {
		t.Errorf("drops %q, want records 1 and 3 refused", d.String())
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], `msg="test record refused by the broker; dropped"`) ||
		!strings.Contains(lines[0], "listener=l1") || !strings.Contains(lines[0], "bytes=4096") {
		t.Errorf("logs:\n%s", logs.String())
	}
	// A batch of one refused record is dropped after one attempt.
	f := &flaky{Broker: b}
	p.Broker = f
	if res, err := p.Publish(context.Background(), batch(big)); err != nil || res != (Result{Refused: 1}) || f.attempts() != 1 {
		t.Errorf("Publish = %+v, %v after %d attempts; want refused after one", res, err, f.attempts())
	}
}

// TestStopsWhileSplitting: when ctx ends while a refused batch is sent
// record by record, what went before is reported published or refused
// and only the rest unsent.
func TestStopsWhileSplitting(t *testing.T) {
	b := openLog(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &flaky{Broker: b, fail: func(recs []broker.Record) error {
		switch {
		case len(recs) > 1, string(recs[0].Value) == "refused":
			return broker.ErrRecordTooLarge
		case string(recs[0].Value) == "stuck":
			return errDiskFull
		}
		return nil
	}}
	var d drops
	p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Hour, OnDrop: d.hook,
		OnRetry: func(error, time.Duration) { cancel() }}
	res, err := p.Publish(ctx, batch("a", "refused", "stuck", "d"))
	if !errors.Is(err, errDiskFull) || res != (Result{Published: 1, Refused: 1, Unsent: 2}) {
		t.Fatalf("Publish = %+v, %v; want 1 published, 1 refused, 2 unsent", res, err)
	}
	if len(d.got) != 2 || !strings.HasPrefix(d.got[0], "refused 1+1") || !strings.HasPrefix(d.got[1], "unsent 2+2") {
		t.Errorf("drops %q", d.String())
	}
	if got := strings.Join(values(t, b), ","); got != "a" {
		t.Errorf("log holds %q, want a", got)
	}
}

func TestPublishAllocatesNothing(t *testing.T) {
	p := &Publisher{Broker: nopBroker{}, Topic: topic}
	recs := batch("a", "b")
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _, _ = p.Publish(ctx, recs) }); n != 0 {
		t.Errorf("%v allocations per Publish", n)
	}
}

type nopBroker struct{ broker.Broker }

func (nopBroker) Produce(context.Context, string, []broker.Record) error { return nil }

func TestGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g, stop := Grace(ctx, 100*time.Millisecond)
	defer stop()
	cancel()
	select {
	case <-g.Done():
		t.Fatal("the grace context ended with its parent")
	case <-time.After(50 * time.Millisecond):
	}
	select {
	case <-g.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the grace context outlived its parent by far more than its grace")
	}
	// One made after its parent ended ends the grace after now; stop
	// ends it at once.
	g, stop = Grace(ctx, time.Hour)
	if g.Err() != nil {
		t.Fatal("ended at once")
	}
	stop()
	if g.Err() == nil {
		t.Fatal("stop did not end it")
	}
}

// partial appends some of a call's records through the log it wraps and
// then fails the call, as the embedded log does when the disk fills up
// after some partitions were written: those it appended have their Offset
// set. takes picks them by value; after failures calls it passes calls
// through.
type partial struct {
	broker.Broker
	takes    func(v string) bool
	failures int
	calls    int
	err      error // errDiskFull if nil
}

func (p *partial) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	p.calls++
	if p.calls > p.failures {
		return p.Broker.Produce(ctx, topic, recs)
	}
	for i := range recs {
		recs[i].Offset = -1
		if p.takes(string(recs[i].Value)) {
			if err := p.Broker.Produce(ctx, topic, recs[i:i+1]); err != nil {
				return err
			}
		}
	}
	if p.err != nil {
		return p.err
	}
	return errDiskFull
}

// What a failed call appended is not sent again: each record is in the
// log once, and every record's offset is set.
func TestPartialFailureNotSentTwice(t *testing.T) {
	b := openLog(t)
	f := &partial{Broker: b, takes: func(v string) bool { return v == "0" || v == "3" || v == "6" }, failures: 2}
	p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Millisecond}
	recs := batch("0", "1", "2", "3", "4", "5", "6", "7")
	res, err := p.Publish(context.Background(), recs)
	if err != nil || res != (Result{Published: 8}) {
		t.Fatalf("Publish: %+v, %v", res, err)
	}
	got := values(t, b)
	slices.Sort(got)
	if want := []string{"0", "1", "2", "3", "4", "5", "6", "7"}; !slices.Equal(got, want) {
		t.Fatalf("the log holds %q, want each record once: %q", got, want)
	}
	for i, r := range recs {
		if r.Offset < 0 {
			t.Errorf("record %d: offset %d", i, r.Offset)
		}
	}
}

// A refused call may have appended some records too: a Kafka cluster
// refuses one partition's batch for its size (MESSAGE_TOO_LARGE, the
// topic's limit lowered or not learned, its configs not to be described)
// and takes the others'. Publish sent the whole call again record by
// record to find the refused ones, so the records the cluster had taken
// were written twice.
func TestRefusedAfterPartialNotSentTwice(t *testing.T) {
	b := openLog(t)
	f := &partial{Broker: b, takes: func(v string) bool { return v == "1" || v == "3" }, failures: 1,
		err: fmt.Errorf("kafka: produce t: %w: MESSAGE_TOO_LARGE", broker.ErrRecordTooLarge)}
	p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Millisecond}
	recs := batch("0", "1", "2", "3", "4")
	res, err := p.Publish(context.Background(), recs)
	if err != nil || res != (Result{Published: 5}) {
		t.Fatalf("Publish: %+v, %v", res, err)
	}
	got := values(t, b)
	slices.Sort(got)
	if want := []string{"0", "1", "2", "3", "4"}; !slices.Equal(got, want) {
		t.Fatalf("the log holds %q, want each record once: %q", got, want)
	}
	for i, r := range recs {
		if r.Offset < 0 {
			t.Errorf("record %d: offset %d", i, r.Offset)
		}
	}
}

// When the context ends after a partial failure, what was not taken is
// reported as unsent, one call per run of records.
func TestPartialFailureUnsentRuns(t *testing.T) {
	b := openLog(t)
	f := &partial{Broker: b, takes: func(v string) bool { return v == "0" || v == "3" || v == "4" }, failures: 1 << 30}
	var runs []string
	p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Millisecond,
		OnDrop: func(r Reason, i, n int, _ error) { runs = append(runs, fmt.Sprintf("%s %d+%d", r, i, n)) }}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := p.Publish(ctx, batch("0", "1", "2", "3", "4", "5", "6"))
	if !errors.Is(err, errDiskFull) || res != (Result{Published: 3, Unsent: 4}) {
		t.Fatalf("Publish: %+v, %v", res, err)
	}
	if want := []string{"unsent 1+2", "unsent 5+2"}; !slices.Equal(runs, want) {
		t.Fatalf("drops %q, want %q", runs, want)
	}
	if got := values(t, b); !slices.Equal(got, []string{"0", "3", "4"}) {
		t.Fatalf("the log holds %q", got)
	}
}

// waiting is a broker whose Produce waits until release is closed (a
// Kafka cluster away), then takes the records.
type waiting struct {
	broker.Broker
	release chan struct{}
	calls   atomic.Int32
}

func (w *waiting) ProduceMayWait() bool { return true }

func (w *waiting) Produce(ctx context.Context, _ string, recs []broker.Record) error {
	w.calls.Add(1)
	select {
	case <-w.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	for i := range recs {
		recs[i].Offset = int64(i)
	}
	return nil
}

// TestStalledAttemptReported: an attempt waiting on a broker that waits
// rather than fails is reported each StallAfter (OnRetry with a
// *StalledError, a warning) while it waits, and not sent again: the
// records are taken once, when the broker answers.
func TestStalledAttemptReported(t *testing.T) {
	b := &waiting{release: make(chan struct{})}
	var stalls atomic.Int32
	var logs syncbuf.Buffer
	p := Publisher{Broker: b, Topic: "t", Name: "test", StallAfter: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnRetry: func(err error, wait time.Duration) {
			var se *StalledError
			if errors.As(err, &se) && wait == 0 {
				stalls.Add(1)
			}
		}}
	go func() {
		for stalls.Load() < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		close(b.release)
	}()
	res, err := p.Publish(context.Background(), make([]broker.Record, 4))
	if err != nil || res.Published != 4 {
		t.Fatalf("%+v, %v", res, err)
	}
	if b.calls.Load() != 1 {
		t.Fatalf("%d attempts: a stalled attempt was sent again", b.calls.Load())
	}
	if !strings.Contains(logs.String(), "test publish waiting for the broker") {
		t.Fatalf("no warning: %s", logs.String())
	}
}

type waitingWithCause struct {
	*waiting
	cause error
}

func (w waitingWithCause) WaitCause() error { return w.cause }

// TestStalledAttemptSaysWhy: the warning for an attempt that waits names
// the broker's reason where it knows one (the Kafka backend's last failed
// connection): "still waiting" alone left the operator guessing.
func TestStalledAttemptSaysWhy(t *testing.T) {
	b := waitingWithCause{&waiting{release: make(chan struct{})}, errors.New("dial tcp 127.0.0.1:9092: connect: connection refused")}
	var logs syncbuf.Buffer
	var stalled atomic.Pointer[StalledError]
	p := Publisher{Broker: b, Topic: "t", Name: "test", StallAfter: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnRetry: func(err error, _ time.Duration) {
			var se *StalledError
			if errors.As(err, &se) && stalled.CompareAndSwap(nil, se) {
				close(b.release)
			}
		}}
	if _, err := p.Publish(context.Background(), make([]broker.Record, 1)); err != nil {
		t.Fatal(err)
	}
	if se := stalled.Load(); se == nil || !errors.Is(se, b.cause) {
		t.Errorf("StalledError %v does not carry the cause", se)
	}
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("the warning does not say why: %s", logs.String())
	}
}

// TestRefusedLogThrottled: with RefusedLog, records refused batch after
// batch log one line per throttle.Every, while OnDrop and the Result
// count each.
func TestRefusedLogThrottled(t *testing.T) {
	b := openLog(t, embedded.WithMaxMessageBytes(1024))
	big := strings.Repeat("x", 4096)
	var d drops
	var logs bytes.Buffer
	var every throttle.Shared
	p := Publisher{Broker: b, Topic: topic, OnDrop: d.hook, Logger: slog.New(slog.NewTextHandler(&logs, nil)), RefusedLog: &every}
	refused := 0
	for range 5 {
		q := p // a copy per batch, as the collectors make, shares the throttle
		res, err := q.Publish(context.Background(), batch("a", big, big))
		if err != nil {
			t.Fatal(err)
		}
		refused += res.Refused
	}
	if refused != 10 || len(d.got) != 10 {
		t.Errorf("refused %d, %d drops reported; want 10", refused, len(d.got))
	}
	if n := strings.Count(logs.String(), "record refused by the broker"); n != 1 || !strings.Contains(logs.String(), "times=1") {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestRetryLogThrottled: a broker that fails every attempt (a Kafka
// cluster refusing weir's topic settings) logged a warning per attempt,
// eight in the first seconds of back-off from 10 ms. The first failure is
// logged, then one line per throttle.Every with the attempts since;
// OnRetry still hears of each.
func TestRetryLogThrottled(t *testing.T) {
	b := openLog(t)
	f := &flaky{Broker: b, failures: 8}
	var logs bytes.Buffer
	retries := 0
	p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnRetry: func(error, time.Duration) { retries++ }}
	res, err := p.Publish(context.Background(), batch("a"))
	if err != nil || res.Published != 1 {
		t.Fatalf("Publish = %+v, %v", res, err)
	}
	if retries != 8 {
		t.Errorf("OnRetry called %d times, want 8", retries)
	}
	// One line unless the retries took more than a throttle interval
	// (10 s; they wait 0.3 s in all): fewer lines than failures.
	if n := strings.Count(logs.String(), "publish failed, retrying"); n == 0 || n >= 8 || !strings.Contains(logs.String(), "attempts=1") {
		t.Errorf("logged %d retries, want fewer than the 8 failures, the first with attempts=1:\n%s", n, logs.String())
	}
}

// TestRetryLogShared: publishers sharing RetryLog (the gNMI collector's
// targets) log a broker that fails them all once, not once each: 40
// targets in a broker outage logged 40 lines every 10 s. The shared
// throttle has just let a line through (an hour ahead, so that no clock
// makes another due): each failed attempt of all three is counted in it,
// and none logs a line of its own.
func TestRetryLogShared(t *testing.T) {
	b := openLog(t)
	var logs bytes.Buffer
	var every throttle.Shared
	later := time.Now().Add(time.Hour)
	every.Due(later)
	for range 3 {
		f := &flaky{Broker: b, failures: 2}
		p := &Publisher{Broker: f, Topic: topic, MinBackoff: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil)), RetryLog: &every}
		if res, err := p.Publish(context.Background(), batch("a")); err != nil || res.Published != 1 {
			t.Fatalf("Publish = %+v, %v", res, err)
		}
	}
	if n := strings.Count(logs.String(), "publish failed, retrying"); n != 0 {
		t.Errorf("logged %d lines for 3 publishers failing within the shared interval, want none:\n%s", n, logs.String())
	}
	if n, due := every.Due(later.Add(throttle.Every)); !due || n != 7 {
		t.Errorf("the shared line's next count: %d (due %v), want the 6 failed attempts and this one", n, due)
	}
}
