package enrich

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// TestDecodeAheadMatchesTheWorker: a poll decoded on a second goroutine
// gives the enriched records, events and counts the worker gives decoding
// each record itself, for a poll of many units whose publishing chunks do
// not end where units do, with undecodable records and devices the
// inventory does not know among them.
func TestDecodeAheadMatchesTheWorker(t *testing.T) {
	var p syslog.Parser
	corpus := loadCorpus(t)
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	var recs []broker.Record
	for i := 0; len(recs) < 3000; i++ {
		var l telemetry.Log
		p.ParseCopy([]byte(corpus[i%len(corpus)].Raw), &l)
		dev := i % 40
		switch {
		case dev < 10: // the inventory's lab cidr
			l.Hostname, l.Device, l.SourceAddr = "", fmt.Sprintf("10.0.0.%d", dev+1), fmt.Sprintf("10.0.0.%d:514", dev+1)
		default: // not in the inventory
			l.Hostname, l.Device, l.SourceAddr = fmt.Sprintf("dev%02d", dev), fmt.Sprintf("dev%02d", dev), fmt.Sprintf("198.51.100.%d:514", dev)
		}
		l.ReceivedAt = t0.Add(time.Duration(i) * time.Millisecond)
		value := l.AppendJSON(nil)
		if i%97 == 13 {
			value = []byte(`{"v":1,"message":`) // cut short
		}
		recs = append(recs, broker.Record{Topic: telemetry.TopicRawSyslog, Partition: 0, Offset: int64(len(recs)),
			Timestamp: l.ReceivedAt, Key: []byte(l.Device), Value: value})
	}
	inv, _ := ParseInventory([]byte(testInventory))
	type result struct {
		enriched, events [][]byte
		unknown, failed  float64
	}
	run := func(goroutines int) result { // 0: the worker alone
		m := NewWorkerMetrics(nil)
		w := NewWorker(nil, inv, NewClassifier(), WithWorkerMetrics(m),
			WithEventRules(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow))
		w.out = newOutputs(nil, telemetry.TopicRawSyslog, w.logger, w.m, false)
		w.out.useArenas(&w.arena, &w.evEnc.arena)
		var res result
		var enriched, events []outRecord
		var a *decodeAhead
		if goroutines > 0 {
			w.ahead.goroutines = goroutines
			if !w.ahead.start(recs, w.decodeSyslogInto) {
				t.Fatal("decodeAhead did not start on a poll of many units")
			}
			a = &w.ahead
		}
		eachChunk(recs, func(chunk []broker.Record) {
			enriched, events = w.enrichSyslogRecords(chunk, a, enriched[:0], events[:0])
			for _, o := range enriched {
				res.enriched = append(res.enriched, bytes.Clone(o.rec.Value))
			}
			for _, o := range events {
				res.events = append(res.events, bytes.Clone(o.rec.Value))
			}
		})
		res.unknown = testutil.ToFloat64(m.m.unknown)
		res.failed = testutil.ToFloat64(m.m.decodeErrors.WithLabelValues(telemetry.TopicRawSyslog, "malformed"))
		return res
	}
	serial := run(0)
	if len(serial.enriched) < 2900 || len(serial.events) == 0 || serial.unknown == 0 || serial.failed == 0 {
		t.Fatalf("the worker alone: %d enriched, %d events, %v unknown, %v undecodable: not the mix this test needs",
			len(serial.enriched), len(serial.events), serial.unknown, serial.failed)
	}
	for _, goroutines := range []int{1, 2} {
		ahead := run(goroutines)
		if len(ahead.enriched) != len(serial.enriched) || len(ahead.events) != len(serial.events) {
			t.Fatalf("decoded ahead on %d goroutines: %d enriched, %d events; the worker alone %d, %d",
				goroutines, len(ahead.enriched), len(ahead.events), len(serial.enriched), len(serial.events))
		}
		for i := range serial.enriched {
			if !bytes.Equal(ahead.enriched[i], serial.enriched[i]) {
				t.Fatalf("enriched record %d decoded ahead on %d goroutines:\n%s\nthe worker alone:\n%s", i, goroutines, ahead.enriched[i], serial.enriched[i])
			}
		}
		for i := range serial.events {
			if !bytes.Equal(ahead.events[i], serial.events[i]) {
				t.Fatalf("event %d decoded ahead on %d goroutines:\n%s\nthe worker alone:\n%s", i, goroutines, ahead.events[i], serial.events[i])
			}
		}
		if ahead.unknown != serial.unknown || ahead.failed != serial.failed {
			t.Errorf("decoded ahead on %d goroutines: %v unknown, %v undecodable; the worker alone %v, %v", goroutines, ahead.unknown, ahead.failed, serial.unknown, serial.failed)
		}
	}
}

// TestDecodeAheadLeavesOneUnitToTheWorker: a poll under decodeAheadBytes is
// the worker's to decode, with no goroutine or hand-over.
func TestDecodeAheadLeavesOneUnitToTheWorker(t *testing.T) {
	var a decodeAhead
	small := []broker.Record{{Value: make([]byte, decodeAheadBytes/4)}, {Value: make([]byte, decodeAheadBytes/4)}}
	if a.start(small, func(*broker.Record, *decodedSyslog) { t.Error("decoded a poll of one unit") }) {
		t.Fatal("started on a poll of one unit")
	}
	if a.start(nil, nil) {
		t.Fatal("started on an empty poll")
	}
}

// TestDecodeAheadMemoryIsBounded: a 1 MiB poll of the shortest lines (37
// bytes, about 28,000 records) is decoded ahead into a bounded number of
// slots, not one kept per record of the largest poll seen (672 bytes and a
// map each: 26 MiB a syslog worker held for good). Each record still gets
// its own decoding, in order, with the worker slow enough at times for the
// decoding goroutine to go round the slots (run with -race).
func TestDecodeAheadMemoryIsBounded(t *testing.T) {
	line := []byte(`{"v":1,"hostname":"a","message":"x"}`)
	recs := make([]broker.Record, (1<<20)/len(line))
	for i := range recs {
		recs[i] = broker.Record{Offset: int64(i), Value: line}
	}
	decode := func(r *broker.Record, d *decodedSyslog) {
		*d = decodedSyslog{fields: d.fields}
		d.sev = int(r.Offset)
	}
	for _, goroutines := range []int{1, 2} {
		a := decodeAhead{goroutines: goroutines}
		for poll := range 2 {
			if !a.start(recs, decode) {
				t.Fatal("decodeAhead did not start on a poll of many units")
			}
			for i := range recs {
				if i%5000 == 0 {
					time.Sleep(2 * time.Millisecond) // the other goroutines go ahead
				}
				if d := a.next(); d.sev != i {
					t.Fatalf("%d goroutines, poll %d: record %d took the decoding of record %d", goroutines, poll, i, d.sev)
				}
			}
		}
		if n := len(a.slots); n > 1<<12 {
			t.Errorf("%d goroutines: %d slots kept for a poll of %d records: want at most %d", goroutines, n, len(recs), 1<<12)
		}
	}
}

// BenchmarkDecodeSyslog is the decode-ahead goroutine's work per record
// on the end-to-end figure's mix (internal/enrichbench): the record
// decoded (log) and also classified and named (record), which the figure's
// profile found heavier than the worker's goroutine.
func BenchmarkDecodeSyslog(b *testing.B) {
	var p syslog.Parser
	lines := loadCorpus(b)
	const n, devices = 20_000, 1000
	recs := make([]broker.Record, n)
	for i := range recs {
		var l telemetry.Log
		p.ParseCopy([]byte(lines[i%len(lines)].Raw), &l)
		l.Device = fmt.Sprintf("dev%04d", i%devices)
		l.SourceAddr, l.Listener = fmt.Sprintf("10.1.%d.%d:514", i%devices/250, i%250), "udp"
		l.ReceivedAt = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
		recs[i] = broker.Record{Topic: telemetry.TopicRawSyslog, Key: []byte(l.Device), Value: l.AppendJSON(nil)}
	}
	b.Run("log", func(b *testing.B) {
		var l telemetry.Log
		var t time.Time
		var buf []byte
		b.ReportAllocs()
		cpu := processCPU()
		for i := 0; b.Loop(); i++ {
			if _, err := telemetry.DecodeLogLayoutShared(recs[i%n].Value, &l, &t, &buf); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("record", func(b *testing.B) {
		inv, _ := ParseInventory([]byte(testInventory))
		w := NewWorker(nil, inv, NewClassifier())
		var d decodedSyslog
		b.ReportAllocs()
		cpu := processCPU()
		for i := 0; b.Loop(); i++ {
			if w.decodeSyslogInto(&recs[i%n], &d); d.err != nil {
				b.Fatal(d.err)
			}
		}
		reportCPU(b, cpu)
	})
}

// TestSlotKeepsNoLongLinesRoom: a slot keeps the room it unescaped a
// record's strings in for the next record, but not a long line's, which
// each of a decodeAhead's thousand slots would keep.
func TestSlotKeepsNoLongLinesRoom(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(nil, inv, NewClassifier())
	var d decodedSyslog
	decode := func(msg string) {
		l := telemetry.Log{V: 1, Device: "fw1", Format: "malformed", Facility: 23, Severity: 5, Message: msg, Raw: msg}
		w.decodeSyslogInto(&broker.Record{Value: l.AppendJSON(nil)}, &d)
		if d.err != nil || d.log.Message != msg {
			t.Fatalf("decoded %q, %v", d.log.Message, d.err)
		}
	}
	decode(`user="admin" action="login"`)
	if cap(d.unescaped) == 0 {
		t.Fatal("unescaped strings not in the slot's room")
	}
	decode(strings.Repeat(`k="v" `, 2000))
	decode(`user="admin"`)
	if cap(d.unescaped) > maxKeptUnescaped {
		t.Errorf("slot keeps %d bytes of room", cap(d.unescaped))
	}
}
