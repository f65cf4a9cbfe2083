package prometheus

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// TestRemoteWriteSharedNameValueSent: two fields whose names sanitise to
// one metric name (a-b and a_b) are one series, and the encoder sends the
// first's value; the series' value was noted as the second's. The same
// record again (at-least-once: a duplicate at another offset) then had its
// first field left out as another value at the series' time, and its
// second sent: a value other than the one Prometheus has at that time,
// which it refuses with the request ("duplicate sample for timestamp").
func TestRemoteWriteSharedNameValueSent(t *testing.T) {
	rcv := newRWReceiver(t)
	dst, err := NewRemoteWrite(configs.Sink{URL: rcv.URL}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Truncate(time.Millisecond)
	m := telemetry.Metric{V: 1, Measurement: "m", Device: "d1", Fields: map[string]any{"a-b": 1.0, "a_b": 2.0}, Time: at, ReceivedAt: at, Source: "enrich"}
	var z itemizer
	var sent []float64
	for range 2 {
		if err := dst.Write(context.Background(), z.items(m)); err != nil {
			t.Fatal(err)
		}
		for _, s := range rcv.take(t) {
			sent = append(sent, math.Float64frombits(s.bits))
		}
	}
	for _, x := range sent {
		if x != sent[0] {
			t.Errorf("m_a_b{device=d1} sent %v at one time: Prometheus refuses the second value", sent)
			break
		}
	}
}

// TestRemoteWriteSharedNameInPrometheus is it against a real Prometheus.
func TestRemoteWriteSharedNameInPrometheus(t *testing.T) {
	promAddr := peers.Prometheus(t, "global: {scrape_interval: 1m}\n")
	peers.WaitHTTP(t, "prometheus", "http://"+promAddr+"/-/ready", 200)
	dst, err := NewRemoteWrite(configs.Sink{URL: "http://" + promAddr + "/api/v1/write"}, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	m := telemetry.Metric{V: 1, Measurement: "m", Device: "d1", Fields: map[string]any{"a-b": 1.0, "a_b": 2.0}, Time: at, ReceivedAt: at, Source: "enrich"}
	var z itemizer
	for i := range 2 {
		if err := dst.Write(context.Background(), z.items(m)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
}
