package enrich

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

const testInventory = `
devices:
  - {name: edge1, address: 192.0.2.1, site: ams1, region: eu, role: edge, vendor: cisco_ios}
  - {name: mx1, site: fra1, role: core, vendor: junos, tags: {tier: "1"}}
  - {name: lab, cidr: 10.0.0.0/8, site: lab, role: access}
  - {name: core1.fra.example.net, site: fra2, role: core}
`

func readTopic(t *testing.T, b *embedded.Broker, topic string) []broker.Record {
	t.Helper()
	infos, err := b.DescribeTopics(context.Background(), topic)
	if err != nil {
		return nil
	}
	var out []broker.Record
	var res broker.FetchResult
	for _, p := range infos[0].Partitions {
		for off := p.LogStartOffset; off < p.HighWatermark; {
			if err := b.Fetch(context.Background(), topic, p.Partition, off, broker.FetchOptions{}, &res); err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Records {
				r.Value = append([]byte(nil), r.Value...)
				r.Key = append([]byte(nil), r.Key...)
				hs := make([]broker.Header, len(r.Headers))
				for i, h := range r.Headers {
					hs[i] = broker.Header{Key: h.Key, Value: append([]byte(nil), h.Value...)}
				}
				r.Headers = hs
				out = append(out, r)
				off = r.Offset + 1
			}
		}
	}
	return out
}

// TestWorkerCorpus runs two workers over the corpus on raw.syslog: each
// input record gives one enriched record, the corpus events come out on
// events with their object and device, inventory tags are applied.
func TestWorkerCorpus(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var p syslog.Parser
	corpus := loadCorpus(t)
	var recs []broker.Record
	for _, c := range corpus {
		var l telemetry.Log
		p.ParseCopy([]byte(c.Raw), &l)
		l.SourceAddr, l.ReceivedAt = "10.1.2.3:514", time.Now()
		if c.Host == "edge1" {
			l.SourceAddr = "192.0.2.1:514"
		}
		l.Device = l.Hostname
		if l.Device == "" {
			l.Device = "10.1.2.3"
		}
		recs = append(recs, broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, recs); err != nil {
		t.Fatal(err)
	}
	inv, err := ParseInventory([]byte(testInventory))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cls := NewClassifier()
	done := make(chan struct{}, 2)
	for range 2 {
		w := NewWorker(b, inv, cls)
		go func() { w.Run(ctx); done <- struct{}{} }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(readTopic(t, b, telemetry.TopicEnrichedSyslog)) < len(corpus) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	<-done
	enriched := readTopic(t, b, telemetry.TopicEnrichedSyslog)
	if len(enriched) != len(corpus) {
		t.Fatalf("%d enriched records for %d inputs", len(enriched), len(corpus))
	}
	byRaw := map[string]telemetry.EnrichedLog{}
	for _, r := range enriched {
		var e telemetry.EnrichedLog
		if err := json.Unmarshal(r.Value, &e); err != nil {
			t.Fatal(err)
		}
		byRaw[e.Raw] = e
	}
	// The same change reported twice (IOS-XR logs LINK and LINEPROTO
	// for one interface going down) is one event: count distinct ones.
	distinct := map[[3]string]bool{}
	for _, c := range corpus {
		e := byRaw[c.Raw]
		if e.Event != c.Event {
			t.Errorf("%.80q: event %q, want %q", c.Raw, e.Event, c.Event)
		}
		if c.Event != "" {
			distinct[[3]string{e.Device, c.Interface + c.Neighbor + c.User, c.Event}] = true
		}
	}
	wantEvents := len(distinct)
	if e := byRaw["<189>48: edge1: Nov 29 14:03:01.004 UTC: %BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up"]; e.Tags["site"] != "ams1" || e.Device != "edge1" || e.MnemonicFacility != "BGP" || e.Mnemonic != "ADJCHANGE" || e.SeverityName != "notice" {
		t.Errorf("edge1 record: %+v", e)
	}
	if e := byRaw["<13>Nov 29 14:08:10 host2 netops: hello from logger"]; e.Tags["site"] != "lab" {
		t.Errorf("CIDR match: %+v", e.Tags)
	}
	events := readTopic(t, b, telemetry.TopicEvents)
	if len(events) != wantEvents {
		t.Fatalf("%d events, want %d", len(events), wantEvents)
	}
	for _, r := range events {
		var ev telemetry.Event
		json.Unmarshal(r.Value, &ev)
		if ev.Type == "" || ev.Device == "" || ev.Cause.Topic != telemetry.TopicRawSyslog || string(r.Key) != ev.Device {
			t.Errorf("event %+v", ev)
		}
	}
	// Committed: a new worker finds nothing left to do.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	NewWorker(b, inv, cls).Run(ctx2)
	if n := len(readTopic(t, b, telemetry.TopicEnrichedSyslog)); n != len(corpus) {
		t.Fatalf("after restart %d enriched records", n)
	}
}

// receivedRecord is the raw.syslog record weir's receiver writes of a line
// from 10.1.2.3 over UDP: device named (its hostname, else the sender's
// address), listener and receive time set. Without them a benchmark
// would time naming a Kafka client's record instead (recordDevice).
func receivedRecord(p *syslog.Parser, raw string) broker.Record {
	var l telemetry.Log
	p.ParseCopy([]byte(raw), &l)
	l.SourceAddr, l.Listener = "10.1.2.3:514", "udp"
	l.ReceivedAt = time.Date(2026, 11, 29, 14, 10, 0, 123456789, time.UTC)
	l.Device = cmp.Or(l.Hostname, "10.1.2.3")
	return broker.Record{Topic: telemetry.TopicRawSyslog, Key: []byte(l.Device), Value: l.AppendJSON(nil)}
}

// BenchmarkEnrichSyslogDevices is benchEnrich as a worker runs it: the
// corpus mix from 1,000 devices, each record at an offset and a log time
// of its own (10 µs apart: a burst, as end to end), with the default de-duplication window
// and flap rules, so the detector judges every event over a thousand
// devices' objects. BenchmarkEnrichSyslog's records all have offset 0 and
// no time: after the first, the detector takes each for a redo, and a cost
// of judging (a map lookup per repeat) does not show there.
func BenchmarkEnrichSyslogDevices(b *testing.B) {
	var p syslog.Parser
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(nil, inv, NewClassifier(), WithEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow))
	w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false)
	w.out.useArenas(&w.arena, &w.evEnc.arena)
	corpus := loadCorpus(b)
	const devices, batch = 1000, 500
	recs := make([]broker.Record, devices*len(corpus))
	for i := range recs {
		var l telemetry.Log
		p.ParseCopy([]byte(corpus[i%len(corpus)].Raw), &l)
		dev := i / len(corpus) // each device's lines in turn, as a burst would not
		l.Hostname, l.Device = fmt.Sprintf("dev%04d", dev), fmt.Sprintf("dev%04d", dev)
		l.SourceAddr, l.Listener = fmt.Sprintf("10.1.%d.%d:514", dev/250, dev%250), "udp"
		l.ReceivedAt = time.Date(2026, 11, 29, 14, 10, 0, 0, time.UTC)
		recs[i] = broker.Record{Topic: telemetry.TopicRawSyslog, Key: []byte(l.Device), Value: l.AppendJSON(nil)}
	}
	t0 := time.Date(2026, 11, 29, 14, 10, 0, 0, time.UTC)
	var enriched, events []outRecord
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i += batch {
		n := min(batch, b.N-i)
		from := i % len(recs)
		n = min(n, len(recs)-from)
		chunk := recs[from : from+n]
		for j := range chunk {
			// Records read once: each pass over recs is later in the log.
			chunk[j].Offset, chunk[j].Timestamp = int64(i+j), t0.Add(time.Duration(i+j)*10*time.Microsecond)
		}
		enriched, events = w.enrichSyslogBatch(chunk, enriched[:0], events[:0])
		w.out.recycle(&w.arena, &w.evEnc.arena)
		i -= batch - n // a pass's last chunk may be short
	}
	b.StopTimer()
	reportCPU(b, cpu)
}

// BenchmarkWarmSyslog is a warm-up's work per record read back (decode
// and classify, events into the detector's state, nothing encoded): on
// the corpus mix, where three lines in four report an event, and on a mix
// of one such line in twenty among the corpus's other short lines, more
// like a network's syslog. A warm-up stalls the worker for as long as its
// records take.
func BenchmarkWarmSyslog(b *testing.B) {
	var p syslog.Parser
	var eventful, quiet, mix []broker.Record
	for _, c := range loadCorpus(b) {
		r := receivedRecord(&p, c.Raw)
		mix = append(mix, r)
		if c.Event != "" {
			eventful = append(eventful, r)
		} else if len(c.Raw) < 1024 {
			quiet = append(quiet, r) // not the 9 KB line, one in twelve here
		}
	}
	var mostlyQuiet []broker.Record
	for i := range 20 * len(eventful) {
		if i%20 == 0 {
			mostlyQuiet = append(mostlyQuiet, eventful[i/20])
		} else {
			mostlyQuiet = append(mostlyQuiet, quiet[i%len(quiet)])
		}
	}
	for _, bc := range []struct {
		name string
		recs []broker.Record
	}{{"corpus", mix}, {"events1in20", mostlyQuiet}} {
		b.Run(bc.name, func(b *testing.B) {
			inv, _ := ParseInventory([]byte(testInventory))
			w := NewWorker(nil, inv, NewClassifier())
			// Logged a second apart within the window, so that their
			// events reach the detector's flap state (each object's
			// every 45 s, past the de-duplication window).
			end := time.Now()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r := bc.recs[i%len(bc.recs)]
				r.Offset = int64(i) // each a new position, as a warm-up reads them
				r.Timestamp = end.Add(-DefaultFlapWindow + time.Duration(i%600)*time.Second)
				w.warmSyslog(&r, end)
				i++
			}
			b.StopTimer()
			if len(w.det.changes) == 0 {
				b.Fatal("no change reached the detector")
			}
		})
	}
}

// BenchmarkEnrichSyslog is the per-record work of a worker on the corpus
// mix: decode, classify, inventory lookup, encode the enriched record and
// the event. The corpus holds one 10 KB line among 45 short ones, which
// weighs on the average; BenchmarkEnrichSyslogTypical leaves it out.
func BenchmarkEnrichSyslog(b *testing.B)        { benchEnrich(b, 1<<20) }
func BenchmarkEnrichSyslogTypical(b *testing.B) { benchEnrich(b, 1024) }

// benchEnrich measures a worker's whole per-record path short of the
// broker: decode, classify, inventory, encode, event detection and event
// encoding, in batches as Poll returns them. Every event passes (no
// de-duplication window), as the corpus repeats.
func benchEnrich(b *testing.B, maxLen int) {
	var p syslog.Parser
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(nil, inv, NewClassifier(), WithEventRules(0, DefaultFlapThreshold, DefaultFlapWindow))
	w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false) // as Run makes it
	w.out.useArenas(&w.arena, &w.evEnc.arena)
	var recs []broker.Record
	for _, c := range loadCorpus(b) {
		if len(c.Raw) > maxLen {
			continue
		}
		recs = append(recs, receivedRecord(&p, c.Raw))
	}
	const batch = 500
	var batchRecs []broker.Record
	for len(batchRecs) < batch {
		batchRecs = append(batchRecs, recs...)
	}
	batchRecs = batchRecs[:batch]
	var enriched, events []outRecord
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for i := 0; i < b.N; i += batch {
		n := min(batch, b.N-i)
		enriched, events = w.enrichSyslogBatch(batchRecs[:n], enriched[:0], events[:0])
		w.out.recycle(&w.arena, &w.evEnc.arena) // as Run does once they are delivered
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if len(enriched) == 0 || len(events) == 0 {
		b.Fatal("nothing enriched or no events")
	}
}

// processCPU is the CPU time the process has used (user and system, all
// threads, so the garbage collector's share counts).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ns/op: on a shared machine the CPU a record costs is
// steadier than the wall time ns/op measures.
func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(processCPU()-since)/float64(b.N), "cpu-ns/op")
}

// TestLongLineEnrichedInTheArena: an enriched record past the 2 KiB the
// arena's start leaves (the corpus's 9 KB line) is written into a chunk,
// not into allocations of its own that append grows.
func TestLongLineEnrichedInTheArena(t *testing.T) {
	var p syslog.Parser
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(nil, inv, NewClassifier())
	w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false) // as Run makes it
	w.out.useArenas(&w.arena, &w.evEnc.arena)
	rec := receivedRecord(&p, "<13>"+strings.Repeat("A", 9000))
	d, ok := w.decodeSyslog(&rec)
	if !ok {
		t.Fatal("not decoded")
	}
	var out broker.Record
	if a := testing.AllocsPerRun(20, func() {
		for range 20 { // past a chunk's end: one whose rest it outgrows
			out, _ = w.encodeSyslog(&rec, d)
		}
		w.out.recycle(&w.arena, &w.evEnc.arena) // as Run does once they are delivered
	}); a != 0 {
		t.Errorf("%v allocations for 20 records, want 0", a)
	}
	if len(out.Value) < 9000 {
		t.Fatalf("enriched record of %d bytes", len(out.Value))
	}
}

// BenchmarkEnrichSyslogLongLine is benchEnrich's path for the corpus's
// 9 KB line alone, whose enriched record is past the arena's 2 KiB start.
func BenchmarkEnrichSyslogLongLine(b *testing.B) {
	var p syslog.Parser
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(nil, inv, NewClassifier(), WithEventRules(0, DefaultFlapThreshold, DefaultFlapWindow))
	w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false) // as Run makes it
	w.out.useArenas(&w.arena, &w.evEnc.arena)
	recs := slices.Repeat([]broker.Record{receivedRecord(&p, "<13>"+strings.Repeat("A", 9000))}, 100)
	var enriched, events []outRecord
	b.ReportAllocs()
	for i := 0; i < b.N; i += len(recs) {
		enriched, events = w.enrichSyslogBatch(recs[:min(len(recs), b.N-i)], enriched[:0], events[:0])
		w.out.recycle(&w.arena, &w.evEnc.arena) // as Run does once they are delivered
	}
}

// TestOutputsIntactWithChunkReuse: on the embedded log a worker reuses its
// output chunks after each delivered batch; every enriched record of many
// batches is still whole and is its own input's.
func TestOutputsIntactWithChunkReuse(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var p syslog.Parser
	corpus := loadCorpus(t)
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(b, inv, NewClassifier())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	const batches, perBatch = 40, 100
	want := map[string]bool{}
	for i := range batches {
		var recs []broker.Record
		for j := range perBatch {
			c := corpus[(i*perBatch+j)%len(corpus)]
			if len(c.Raw) > 1024 {
				c = corpus[0]
			}
			var l telemetry.Log
			p.ParseCopy([]byte(c.Raw), &l)
			l.Message += fmt.Sprintf(" #%d", i*perBatch+j) // each input its own
			l.Raw += fmt.Sprintf(" #%d", i*perBatch+j)
			l.SourceAddr, l.ReceivedAt, l.Device = "10.1.2.3:514", time.Now(), "dev"+fmt.Sprint(j%7)
			want[l.Raw] = true
			recs = append(recs, broker.Record{Key: []byte(l.Device), Value: l.AppendJSON(nil)})
		}
		if err := b.Produce(ctx, telemetry.TopicRawSyslog, recs); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // several polls, several deliveries
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(readTopic(t, b, telemetry.TopicEnrichedSyslog)) < batches*perBatch && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := readTopic(t, b, telemetry.TopicEnrichedSyslog)
	if len(got) != batches*perBatch {
		t.Fatalf("%d enriched records of %d", len(got), batches*perBatch)
	}
	for _, r := range got {
		var e telemetry.EnrichedLog
		if err := json.Unmarshal(r.Value, &e); err != nil {
			t.Fatalf("enriched record not whole: %v: %.200s", err, r.Value)
		}
		if !want[e.Raw] || !strings.HasSuffix(e.Message, e.Raw[strings.LastIndex(e.Raw, " #"):]) || string(r.Key) != e.Device {
			t.Fatalf("enriched record not its input's: key %q, %+v", r.Key, e)
		}
		delete(want, e.Raw)
	}
	for _, r := range readTopic(t, b, telemetry.TopicEvents) {
		var ev telemetry.Event
		err := json.Unmarshal(r.Value, &ev)
		// A flapping event has its own message; the others carry their
		// input's mark.
		flapping := strings.HasSuffix(ev.Type, "_flapping") && strings.HasPrefix(ev.Message, "state changed ")
		if err != nil || !strings.Contains(ev.Message, " #") && !flapping {
			t.Fatalf("event not whole: %v: %.200s", err, r.Value)
		}
	}
}

// flakyDescribe fails DescribeTopics of one topic on its 2nd to 4th call.
type flakyDescribe struct {
	*embedded.Broker
	topic string
	calls atomic.Int32
}

func (f *flakyDescribe) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	if len(names) == 1 && names[0] == f.topic {
		if n := f.calls.Add(1); n >= 2 && n <= 4 {
			return nil, errors.New("flaky describe")
		}
	}
	return f.Broker.DescribeTopics(ctx, names...)
}

// TestWorkerOutlivesPublishErrors: a failure to look up where an output
// partition stands is retried; the worker neither stops nor loses the
// batch.
func TestWorkerOutlivesPublishErrors(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	b := &flakyDescribe{Broker: eb, topic: telemetry.TopicEnrichedSyslog}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, topic := range []string{telemetry.TopicRawSyslog, telemetry.TopicEnrichedSyslog, telemetry.TopicEvents} {
		// Existing, so that the worker's start looks the output up once.
		if err := eb.CreateTopic(ctx, topic, broker.TopicConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Format: "rfc3164", Facility: 23, Severity: 3,
		Message: "%LINK-3-UPDOWN: Interface Gi0/1, changed state to down", SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
	if err := eb.Produce(ctx, telemetry.TopicRawSyslog, []broker.Record{{Key: []byte("edge1"), Value: l.AppendJSON(nil)}}); err != nil {
		t.Fatal(err)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(b, inv, NewClassifier())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	deadline := time.After(10 * time.Second)
	for len(readTopic(t, eb, telemetry.TopicEnrichedSyslog)) == 0 {
		select {
		case err := <-done:
			t.Fatalf("worker stopped (%v) before publishing", err)
		case <-deadline:
			t.Fatal("nothing published")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if b.calls.Load() < 4 {
		t.Fatalf("%d lookups: the failures were not met", b.calls.Load())
	}
}

// partialOnce fails its first produce to topic after appending the first
// half of the records through the log it wraps, as the embedded log does
// when the disk fills after the first batches (their offsets set).
type partialOnce struct {
	broker.Broker
	topic string
	done  atomic.Bool
}

func (p *partialOnce) ProducePartition(ctx context.Context, topic string, part int32, recs []broker.Record) error {
	if topic != p.topic || len(recs) < 2 || p.done.Swap(true) {
		return p.Broker.ProducePartition(ctx, topic, part, recs)
	}
	half := len(recs) / 2
	if err := p.Broker.ProducePartition(ctx, topic, part, recs[:half]); err != nil {
		return err
	}
	for i := half; i < len(recs); i++ {
		recs[i].Offset = -1
	}
	return fmt.Errorf("%w: injected: no space left on device", broker.ErrStorage)
}

// TestWorkerPartialPublishNotDuplicated: the records a failed publish
// appended all the same are not published again with the retry.
func TestWorkerPartialPublishNotDuplicated(t *testing.T) {
	eb, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	b := &partialOnce{Broker: eb, topic: telemetry.TopicEnrichedSyslog}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recs []broker.Record
	for i := range 10 {
		l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Format: "rfc3164", Facility: 23, Severity: 6,
			Message: fmt.Sprintf("message %d", i), SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
		recs = append(recs, broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)})
	}
	if err := eb.Produce(ctx, telemetry.TopicRawSyslog, recs); err != nil {
		t.Fatal(err)
	}
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(b, inv, NewClassifier())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); len(readTopic(t, eb, telemetry.TopicEnrichedSyslog)) < 10 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // a duplicate would follow
	cancel()
	<-done
	seen := map[string]int{}
	for _, r := range readTopic(t, eb, telemetry.TopicEnrichedSyslog) {
		for _, h := range r.Headers {
			if h.Key == headerSrcOffset {
				seen[string(h.Value)]++
			}
		}
	}
	if len(seen) != 10 {
		t.Fatalf("%d distinct inputs enriched, want 10: %v", len(seen), seen)
	}
	for src, n := range seen {
		if n != 1 {
			t.Errorf("input %s enriched %d times", src, n)
		}
	}
	if !b.done.Load() {
		t.Fatal("the partial failure was never met")
	}
}

// must is v, for a call that cannot fail here.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestInventoryMatchAndUnknown: each worker finds a record's device by its
// hostname or sysName before its address, by its address before a CIDR,
// and names it as the inventory does; a device the inventory does not
// know is tagged unknown, and syslog, metric and trap records of one are
// counted (weir_enrich_unknown_devices_total).
func TestInventoryMatchAndUnknown(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	for _, tc := range []struct {
		name, addr string
		device     string // as published
		site       string // "" for unknown
	}{
		{"mx1", "10.1.2.3", "mx1", "fra1"},          // by name, though its address is in lab's CIDR
		{"MX1", "198.51.100.7", "mx1", "fra1"},      // by name, case ignored
		{"192.0.2.1", "192.0.2.1", "edge1", "ams1"}, // by address
		{"host9", "10.9.9.9", "host9", "lab"},       // by CIDR: the name is kept
		{"stranger", "198.51.100.7", "stranger", ""},
	} {
		unknown := tc.site == ""
		check := func(path, device string, tags map[string]string, counted float64) {
			t.Helper()
			if device != tc.device || tags["site"] != tc.site || (tags["unknown"] == "true") != unknown {
				t.Errorf("%s %s/%s: device %q, tags %v; want %q, site %q, unknown %v", path, tc.name, tc.addr, device, tags, tc.device, tc.site, unknown)
			}
			if want := map[bool]float64{true: 1}[unknown]; counted != want {
				t.Errorf("%s %s/%s: counted %v unknown, want %v", path, tc.name, tc.addr, counted, want)
			}
		}

		m := NewWorkerMetrics(nil)
		w := NewWorker(nil, inv, NewClassifier(), WithWorkerMetrics(m))
		l := telemetry.Log{V: 1, Hostname: tc.name, Device: tc.name, SourceAddr: tc.addr + ":514", Message: "hello", ReceivedAt: time.Now(), Severity: 5, Facility: 1}
		out, _, _, ok := w.enrichSyslog(&broker.Record{Topic: telemetry.TopicRawSyslog, Value: l.AppendJSON(nil)})
		var e telemetry.EnrichedLog
		if err := json.Unmarshal(out.Value, &e); !ok || err != nil {
			t.Fatalf("syslog %s: %v %v", tc.name, ok, err)
		}
		if string(out.Key) != e.Device {
			t.Errorf("syslog %s: key %q for device %q", tc.name, out.Key, e.Device)
		}
		check("syslog", e.Device, e.Tags, testutil.ToFloat64(m.m.unknown))

		m = NewWorkerMetrics(nil)
		mw := NewMetricsWorker(nil, inv, WithWorkerMetrics(m))
		mt := telemetry.Metric{V: 1, Measurement: "snmp_status", Device: tc.name, Tags: map[string]string{"agent": tc.addr},
			Fields: map[string]any{"snmp_up": int64(1)}, Time: time.Now(), Source: "snmp"}
		v, _ := json.Marshal(&mt)
		if _, ok := mw.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Value: v}); !ok {
			t.Fatalf("metric %s: not enriched", tc.name)
		}
		check("metric", mw.row.Device, tagMap(mw.row.Tags), testutil.ToFloat64(m.m.unknown))

		m = NewWorkerMetrics(nil)
		tw := NewTrapWorker(nil, inv, WithWorkerMetrics(m))
		tr := telemetry.Trap{V: 1, Device: tc.name, TrapName: "coldStart", SourceAddr: tc.addr + ":50000", ReceivedAt: time.Now()}
		ev, ok := tw.eventOf(&tr, &broker.Record{Topic: telemetry.TopicRawTraps})
		if !ok {
			t.Fatalf("trap %s: no event", tc.name)
		}
		check("trap", ev.Device, ev.Tags, testutil.ToFloat64(m.m.unknown))
		tw.warm(&broker.Record{Topic: telemetry.TopicRawTraps, Value: must(json.Marshal(&tr))}, time.Now())
		if got, want := testutil.ToFloat64(m.m.unknown), map[bool]float64{true: 1}[tc.site == ""]; got != want {
			t.Errorf("trap %s: counted %v unknown after a warm-up read it again, want %v", tc.name, got, want)
		}
	}
}

// TestOutputTooLargeIsLeftOut: a raw record the log took whose enriched
// form is over the broker's size limit (a syslog line near the limit
// grows with its fields and tags) is left out and counted once; the
// worker goes on with the records after it, rather than retrying it for
// ever. Its event, whose message is cut, is published. On the embedded
// log and on a Kafka cluster (kfake), where the worker writes in
// transactions and the limit is the producer's.
//
// On a Kafka cluster the limit is the producer's (kafka) or, lower, the
// output topics' max.message.bytes (kafka-topic), with small records
// enough to fill batches past it.
func TestOutputTooLargeIsLeftOut(t *testing.T) {
	const limit = 64 << 10
	const small = 150 // lines of no event, 1.5 KiB each when enriched
	for _, backend := range []string{"embedded", "kafka", "kafka-topic"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			var b broker.Broker
			create := func(topic string) error { return b.CreateTopic(ctx, topic, broker.TopicConfig{Partitions: 1}) }
			if backend == "embedded" {
				eb, err := embedded.Open(t.TempDir(), embedded.WithMaxMessageBytes(limit))
				if err != nil {
					t.Fatal(err)
				}
				defer eb.Close()
				b = eb
			} else {
				cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
				if err != nil {
					t.Fatal(err)
				}
				defer cluster.Close()
				var opts []kafkacluster.Option
				if backend == "kafka" {
					opts = append(opts, kafkacluster.WithClientOpts(kgo.ProducerBatchMaxBytes(limit)))
				} else {
					admin, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
					if err != nil {
						t.Fatal(err)
					}
					defer admin.Close()
					create = func(topic string) error {
						var cfg map[string]*string
						if topic != telemetry.TopicRawSyslog {
							v := fmt.Sprint(limit)
							cfg = map[string]*string{"max.message.bytes": &v}
						}
						resp, err := kadm.NewClient(admin).CreateTopic(ctx, 1, 1, cfg, topic)
						if err == nil {
							err = resp.Err
						}
						return err
					}
				}
				kb, err := kafkacluster.New(cluster.ListenAddrs(), opts...)
				if err != nil {
					t.Fatal(err)
				}
				defer kb.Close()
				b = kb
			}
			line := func(msg string) broker.Record {
				l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 3, Format: "rfc3164",
					Message: msg, SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
				return broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)}
			}
			big := line("%LINK-3-UPDOWN: Interface Gi0/1, changed state to down " + strings.Repeat("A", limit-600))
			for _, topic := range []string{telemetry.TopicRawSyslog, telemetry.TopicEnrichedSyslog, telemetry.TopicEvents} {
				if err := create(topic); err != nil {
					t.Fatal(err)
				}
			}
			raw := []broker.Record{big, line("%LINK-3-UPDOWN: Interface Gi0/2, changed state to down")}
			noise := make([]byte, 500) // letters snappy cannot shrink, as the cluster counts compressed bytes
			for i, x := 0, uint32(1); i < small; i++ {
				for j := range noise {
					x = x*1664525 + 1013904223
					noise[j] = 'a' + byte(x>>24)%26
				}
				raw = append(raw, line(fmt.Sprintf("%%SEC-6-IPACCESSLOGP: list 101 denied tcp 10.1.%d.1(1234) -> 10.2.0.1(22), 1 packet %s", i, noise)))
			}
			if err := b.Produce(ctx, telemetry.TopicRawSyslog, raw); err != nil {
				t.Fatalf("the raw record must fit: %v", err)
			}
			inv, _ := ParseInventory([]byte(testInventory))
			m := NewWorkerMetrics(nil)
			w := NewWorker(b, inv, NewClassifier(), WithWorkerMetrics(m))
			ctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { w.Run(ctx); close(done) }()
			defer func() { cancel(); <-done }()
			out := func(topic string) float64 { return testutil.ToFloat64(m.m.out.WithLabelValues(topic)) }
			for deadline := time.Now().Add(20 * time.Second); out(telemetry.TopicEvents) < 2; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the worker did not get past the record: %v events published", out(telemetry.TopicEvents))
				}
			}
			time.Sleep(200 * time.Millisecond) // nothing more may come
			for deadline := time.Now().Add(20 * time.Second); out(telemetry.TopicEnrichedSyslog) < 1+small; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%v records in enriched.syslog, want %d", out(telemetry.TopicEnrichedSyslog), 1+small)
				}
			}
			if n, d := out(telemetry.TopicEnrichedSyslog), testutil.ToFloat64(m.m.dropped.WithLabelValues(telemetry.TopicEnrichedSyslog, "too_large")); n != 1+small || d != 1 {
				t.Fatalf("enriched.syslog: %v published, %v left out; want %d and 1", n, d, 1+small)
			}
			if n := testutil.ToFloat64(m.m.publishErrors.WithLabelValues(telemetry.TopicEnrichedSyslog)); n != 0 {
				t.Errorf("%v failed publish attempts", n)
			}
			if n := out(telemetry.TopicEvents); n != 2 {
				t.Errorf("%v events, want both links'", n)
			}
			var res broker.FetchResult
			if err := b.Fetch(ctx, telemetry.TopicEnrichedSyslog, 0, 0, broker.FetchOptions{MaxBytes: 1 << 20}, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Records) < 1 || !strings.Contains(string(res.Records[0].Value), "Gi0/2") {
				t.Fatalf("enriched.syslog begins with %d records, want the small link line first", len(res.Records))
			}
			if err := b.Fetch(ctx, telemetry.TopicEvents, 0, 0, broker.FetchOptions{MaxBytes: 1 << 20}, &res); err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Records {
				var ev telemetry.Event
				json.Unmarshal(r.Value, &ev)
				if len(ev.Message) > maxEventMessage {
					t.Errorf("an event message of %d bytes", len(ev.Message))
				}
			}
		})
	}
}

// syslogLineEvents runs syslog lines, as a device sends them, from
// 192.0.2.1 through a syslog worker's whole per-record path, one record
// every gap of weir's clock, and returns the events it publishes.
func syslogLineEvents(t *testing.T, gap time.Duration, lines ...string) []telemetry.Event {
	t.Helper()
	_, evs := syslogLineRecords(t, gap, lines...)
	return evs
}

// syslogLineRecords is syslogLineEvents with the enriched records too.
func syslogLineRecords(t *testing.T, gap time.Duration, lines ...string) ([]telemetry.EnrichedLog, []telemetry.Event) {
	t.Helper()
	var p syslog.Parser
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(nil, inv, NewClassifier())
	w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false)
	w.out.useArenas(&w.arena, &w.evEnc.arena)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var recs []broker.Record
	for i, line := range lines {
		var l telemetry.Log
		p.ParseCopy([]byte(line), &l)
		l.SourceAddr, l.ReceivedAt = "192.0.2.1:514", t0.Add(time.Duration(i)*gap)
		recs = append(recs, broker.Record{Topic: telemetry.TopicRawSyslog, Offset: int64(i),
			Timestamp: t0.Add(time.Duration(i) * gap), Value: l.AppendJSON(nil)})
	}
	enriched, events := w.enrichSyslogBatch(recs, nil, nil)
	var els []telemetry.EnrichedLog
	for _, r := range enriched {
		var el telemetry.EnrichedLog
		if err := json.Unmarshal(r.rec.Value, &el); err != nil {
			t.Fatal(err)
		}
		els = append(els, el)
	}
	var evs []telemetry.Event
	for _, r := range events {
		var ev telemetry.Event
		if err := json.Unmarshal(r.rec.Value, &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return els, evs
}

// TestBGPSessionsInTwoVRFs: a PE's sessions to one address in two VRFs
// (customers whose addressing overlaps) are two objects: both going down
// is two events, named with their VRF; the default VRF's is named by the
// address alone, as traps name it.
func TestBGPSessionsInTwoVRFs(t *testing.T) {
	for _, lines := range [][]string{
		{ // IOS / IOS-XE
			"<189>101: edge1: *Nov 29 14:00:00.000: %BGP-5-ADJCHANGE: neighbor 10.255.0.1 vpn vrf CUST-A Down BGP Notification sent",
			"<189>102: edge1: *Nov 29 14:00:01.000: %BGP-5-ADJCHANGE: neighbor 10.255.0.1 vpn vrf CUST-B Down BGP Notification sent",
			"<189>103: edge1: *Nov 29 14:00:02.000: %BGP-5-ADJCHANGE: neighbor 10.255.0.1 Down BGP Notification sent",
		},
		{ // IOS-XR
			"<189>101: edge1 RP/0/RSP0/CPU0:Nov 29 14:00:00.000 : bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 10.255.0.1 Down - Peer closing down the session (VRF: CUST-A) (AS: 65001)",
			"<189>102: edge1 RP/0/RSP0/CPU0:Nov 29 14:00:01.000 : bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 10.255.0.1 Down - Peer closing down the session (VRF: CUST-B) (AS: 65002)",
			"<189>103: edge1 RP/0/RSP0/CPU0:Nov 29 14:00:02.000 : bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 10.255.0.1 Down - Peer closing down the session (VRF: default) (AS: 65003)",
		},
	} {
		evs := syslogLineEvents(t, time.Second, lines...)
		var got []string
		for _, ev := range evs {
			got = append(got, ev.Type+" "+ev.Object)
		}
		want := []string{"bgp_peer_down 10.255.0.1 vrf CUST-A", "bgp_peer_down 10.255.0.1 vrf CUST-B", "bgp_peer_down 10.255.0.1"}
		if !slices.Equal(got, want) {
			t.Errorf("events %q, want %q:\n%s", got, want, strings.Join(lines, "\n"))
		}
	}
	// The same session, one way spelt in capitals: one object.
	if a, b := objectID(telemetry.Event{Type: "bgp_peer_down", Object: "2001:DB8::1 vrf CUST-A"}), objectID(telemetry.Event{Type: "bgp_peer_up", Object: "2001:db8::1 vrf CUST-A"}); a != b {
		t.Errorf("objects %q and %q", a, b)
	}
}

// unreachableAtFirst is a log whose DescribeTopics fails its first calls,
// as a Kafka cluster not reachable yet when weir starts.
type unreachableAtFirst struct {
	*embedded.Broker
	fails atomic.Int32
}

func (u *unreachableAtFirst) DescribeTopics(ctx context.Context, topics ...string) ([]broker.TopicInfo, error) {
	if u.fails.Add(-1) >= 0 {
		return nil, errors.New("dial tcp 127.0.0.1:9092: connect: connection refused")
	}
	return u.Broker.DescribeTopics(ctx, topics...)
}

// TestWorkerWaitsForAnUnreachableBroker: a worker that cannot describe its
// input when it starts (a cluster not reachable yet) logs, waits and tries
// again, then enriches, rather than returning an error, which stopped
// weir within a tenth of a second of its start.
func TestWorkerWaitsForAnUnreachableBroker(t *testing.T) {
	b, inv := openLog(t)
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/3, changed state to down")
	u := &unreachableAtFirst{Broker: b}
	u.fails.Store(2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewWorker(u, inv, NewClassifier()).Run(ctx) }()
	for deadline := time.Now().Add(15 * time.Second); committedInput(b, telemetry.TopicRawSyslog) != 1; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-done:
			cancel()
			t.Fatalf("the worker stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatal("the line was not enriched")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestWorkerInputTopicRecreated: raw.syslog deleted (weir topics delete)
// and made again while weir runs. The new topic's offsets start at 0 again,
// and the worker, taking its partitions over, read the output partitions'
// last src_offset, that of the old topic's records, and skipped as already
// published as many of the new topic's records as the old one had.
func TestWorkerInputTopicRecreated(t *testing.T) {
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	produce := func(from, n int) {
		t.Helper()
		var recs []broker.Record
		for i := from; i < from+n; i++ {
			l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Format: "rfc3164", Facility: 23, Severity: 6,
				Message: fmt.Sprintf("message %d", i), SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
			recs = append(recs, broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)})
		}
		if err := b.Produce(ctx, telemetry.TopicRawSyslog, recs); err != nil {
			t.Fatal(err)
		}
	}
	waitEnriched := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(readTopic(t, b, telemetry.TopicEnrichedSyslog)) < n && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // a duplicate would follow
		if got := len(readTopic(t, b, telemetry.TopicEnrichedSyslog)); got != n {
			t.Fatalf("%d records enriched, want %d", got, n)
		}
	}
	produce(0, 10)
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(b, inv, NewClassifier())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	waitEnriched(10)

	if err := b.DeleteTopic(ctx, telemetry.TopicRawSyslog); err != nil {
		t.Fatal(err)
	}
	produce(10, 5) // made again by the producer, offsets from 0
	waitEnriched(15)
	cancel()
	<-done

	// A restart reads the tails again: nothing of the new topic twice.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	w = NewWorker(b, inv, NewClassifier())
	go func() { done <- w.Run(ctx) }()
	produce(15, 2)
	waitEnriched(17)
	cancel()
	<-done
}

// TestWorkerOutputTopicRecreated: enriched.syslog deleted (weir topics
// delete) while weir runs, its input raw.syslog having more partitions
// than the broker's default. The worker's next record made the topic
// again with the default count, and the worker, still routing input
// partition P to output partition P, retried "unknown partition" for ever:
// what came on the input's last partitions was never enriched, until a
// restart.
func TestWorkerOutputTopicRecreated(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithTopicDefaults(broker.TopicConfig{Partitions: 1}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := b.CreateTopic(ctx, telemetry.TopicRawSyslog, broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	produce := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Format: "rfc3164", Facility: 23, Severity: 6,
				Message: fmt.Sprintf("message %d", i), SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
			rec := broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)}
			if err := b.ProducePartition(ctx, telemetry.TopicRawSyslog, int32(i%2), []broker.Record{rec}); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitEnriched := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(readTopic(t, b, telemetry.TopicEnrichedSyslog)) < n && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // a duplicate would follow
		if got := len(readTopic(t, b, telemetry.TopicEnrichedSyslog)); got != n {
			t.Fatalf("%d records enriched, want %d", got, n)
		}
	}
	produce(0, 10)
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(b, inv, NewClassifier())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	waitEnriched(10)

	if err := b.DeleteTopic(ctx, telemetry.TopicEnrichedSyslog); err != nil {
		t.Fatal(err)
	}
	produce(10, 6) // both input partitions
	waitEnriched(6)
	cancel()
	<-done
}

// TestIOSLoginReportedTwiceIsOneEvent: with "ip ssh logging events" IOS
// logs one SSH login twice, as SSH2_USERAUTH and as LOGIN_SUCCESS; both
// name the user, so the second is a repeat within the de-duplication
// window. Another user's login, or the same user's after the window, is
// another event.
func TestIOSLoginReportedTwiceIsOneEvent(t *testing.T) {
	lines := []string{
		"<189>101: edge1: *Nov 29 14:00:00.000: %SSH-5-SSH2_USERAUTH: User 'netops' authentication for SSH2 Session from 10.34.195.36 (tty = 0) using crypto cipher 'aes256-ctr', hmac 'hmac-sha2-256' Succeeded",
		"<189>102: edge1: *Nov 29 14:00:00.100: %SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: netops] [Source: 10.34.195.36] [localport: 22] at 14:00:00 UTC Sun Nov 29 2026",
		"<189>103: edge1: *Nov 29 14:00:01.000: %SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: admin] [Source: 10.34.195.37] [localport: 22] at 14:00:01 UTC Sun Nov 29 2026",
	}
	var got []string
	for _, ev := range syslogLineEvents(t, time.Second, lines...) {
		got = append(got, ev.Type+" "+ev.Object)
	}
	want := []string{"login_succeeded netops", "login_succeeded admin"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	// An hour later (past the window) the same user logging in again is
	// a new login.
	late := syslogLineEvents(t, time.Hour, lines[0], lines[1])
	if len(late) != 2 {
		t.Errorf("the same login an hour apart: %d events, want 2", len(late))
	}
}
