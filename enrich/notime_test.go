package enrich

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestRecordsWithoutTimeTakeTheirRecordsTime: raw records a Kafka client
// wrote with no time nor received_at are taken at their Kafka record's
// timestamp (which the log sets when the producer does not): a metric, a
// syslog line and the line's and a trap's events were published at year 1.
func TestRecordsWithoutTimeTakeTheirRecordsTime(t *testing.T) {
	b := openBroker(t)
	ctx := context.Background()
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	for topic, value := range map[string]string{
		telemetry.TopicRawSNMP:   `{"v":1,"measurement":"cpu","device":"edge1","fields":{"load":5}}`,
		telemetry.TopicRawSyslog: `{"v":1,"device":"edge1","message":"%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/7, changed state to down"}`,
		telemetry.TopicRawTraps:  `{"v":1,"device":"edge1","trap_name":"linkDown","varbinds":[{"name":"ifName.9","value":"Gi0/9"}]}`,
	} {
		if err := b.Produce(ctx, topic, []broker.Record{{Key: []byte("edge1"), Value: []byte(value), Timestamp: at}}); err != nil {
			t.Fatal(err)
		}
	}
	runMetricsWorker(t, b, func() bool { return len(readTopic(t, b, telemetry.TopicEnrichedMetrics)) == 1 })
	for _, r := range readTopic(t, b, telemetry.TopicEnrichedMetrics) {
		var m struct{ Time time.Time }
		if err := json.Unmarshal(r.Value, &m); err != nil || !m.Time.Equal(at) {
			t.Errorf("enriched metric at %v (%v), want %v: %s", m.Time, err, at, r.Value)
		}
	}
	inv, _ := ParseInventory([]byte(testInventory))
	stop := startRunner(NewWorker(b, inv, NewClassifier()))
	evs := trapEvents(t, b, 2) // the syslog worker's event and the trap worker's
	stop()
	for _, r := range readTopic(t, b, telemetry.TopicEnrichedSyslog) {
		var l telemetry.EnrichedLog
		if err := json.Unmarshal(r.Value, &l); err != nil || !l.ReceivedAt.Equal(at) {
			t.Errorf("enriched line received at %v (%v), want %v", l.ReceivedAt, err, at)
		}
	}
	if len(evs) != 2 {
		t.Fatalf("%d events, want the line's and the trap's", len(evs))
	}
	for _, ev := range evs {
		if !ev.Time.Equal(at) {
			t.Errorf("%s of %s at %v, want %v", ev.Type, ev.Object, ev.Time, at)
		}
	}
}

// TestCopiedLineWithoutReceivedAtTakesRecordsTime: a Kafka client's line
// with facility and severity but no received_at decodes to a copyable
// layout, whose bytes hold no received_at; the enriched record must still
// carry its Kafka record's time, as its event does, not none.
func TestCopiedLineWithoutReceivedAtTakesRecordsTime(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewWorker(nil, inv, NewClassifier())
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	for _, value := range []string{
		`{"v":1,"device":"edge1","facility":23,"severity":5,"message":"%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/7, changed state to down"}`,
		`{"v":1,"device":"edge1","message":"%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/7, changed state to down"}`,
	} {
		r := broker.Record{Topic: telemetry.TopicRawSyslog, Key: []byte("edge1"), Value: []byte(value), Timestamp: at}
		var d decodedSyslog
		w.decodeSyslogInto(&r, &d)
		if d.err != nil {
			t.Fatal(d.err)
		}
		out, ev := w.encodeSyslog(&r, &d)
		var l telemetry.EnrichedLog
		if err := json.Unmarshal(out.Value, &l); err != nil || !l.ReceivedAt.Equal(at) {
			t.Errorf("enriched line received at %v (%v), want %v: %s", l.ReceivedAt, err, at, out.Value)
		}
		if ev.Type == "" || !ev.Time.Equal(at) {
			t.Errorf("event %q at %v, want one at %v", ev.Type, ev.Time, at)
		}
	}
	// A line with its received_at is copied as it was.
	value := `{"v":1,"device":"edge1","facility":23,"severity":5,"message":"x","received_at":"2026-01-02T03:04:05.123456789Z"}`
	r := broker.Record{Topic: telemetry.TopicRawSyslog, Value: []byte(value), Timestamp: at}
	var d decodedSyslog
	w.decodeSyslogInto(&r, &d)
	if !d.layout.Copyable {
		t.Error("a line with received_at, facility and severity is not copied")
	}
	out, _ := w.encodeSyslog(&r, &d)
	if want := `"received_at":"2026-01-02T03:04:05.123456789Z"`; !strings.Contains(string(out.Value), want) {
		t.Errorf("enriched line %s, want %s", out.Value, want)
	}
}
