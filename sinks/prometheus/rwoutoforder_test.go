package prometheus

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// outOfOrderTotal is weir_prometheus_remote_write_out_of_order_total of
// sink rw in reg.
func outOfOrderTotal(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "weir_prometheus_remote_write_out_of_order_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// toPrometheus starts Debian's prometheus with its remote write receiver
// and a broker, and gives a remote write sink "rw" of enriched.metrics to
// it, retrying quickly while it starts.
func toPrometheus(t *testing.T) (promAddr string, b *embedded.Broker, cfg configs.Sink) {
	t.Helper()
	promAddr = peers.Prometheus(t, "global: {scrape_interval: 1m}\n")
	b = sinktest.Broker(t)
	cfg = configs.Sink{Type: "prometheus_remote_write", Name: "rw", Topics: []string{"enriched.metrics"},
		URL: "http://" + promAddr + "/api/v1/write", FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(50 * time.Millisecond), Max: configs.Duration(500 * time.Millisecond)}}
	return promAddr, b, cfg
}

// TestRemoteWriteTwoSourcesOneSeriesInPrometheus: a device polled by SNMP
// and streamed by gNMI under one inventory name shares its "interface"
// series (enrich's view, one per port whichever source feeds it). The
// SNMP poll's row is stamped with the poll's start and published after
// the walk, so it can come after a gNMI sample newer than it: Prometheus
// refused the whole request ("out of order sample", 400) and weir
// dead-lettered every record of the batch, though Prometheus had stored
// the rest. Such a sample is now left out and counted; the others of the
// batch, the SNMP row's own fields among them, reach Prometheus, and
// nothing is dead-lettered.
func TestRemoteWriteTwoSourcesOneSeriesInPrometheus(t *testing.T) {
	promAddr, b, cfg := toPrometheus(t)
	reg := prometheus.NewRegistry()
	d, err := NewRemoteWrite(cfg, sinks.Env{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	view := func(at time.Time, fields map[string]any) telemetry.Metric {
		return enrichView("Ethernet1", "interface", at, fields)
	}
	gnmiView := func(at time.Time, rate float64) telemetry.Metric {
		return view(at, map[string]any{"in_octets_rate": rate, "oper_up": true})
	}
	other := func(at time.Time, x float64) telemetry.Metric {
		m := enrichView("Ethernet2", "interface", at, map[string]any{"in_octets_rate": x})
		m.Device = "leaf2"
		return m
	}
	r := sinktest.Start(t, b, cfg, d)
	produce := func(ms ...telemetry.Metric) {
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(i int) string { return ms[i].Device }, ms)
	}
	produce(gnmiView(t0, 100), gnmiView(t0.Add(10*time.Second), 110))
	sinktest.Eventually(t, "the gNMI samples accepted", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"}) == 2
	})
	// The SNMP poll of t0+5s, published after the gNMI sample of t0+10s,
	// and another device's sample, in one batch.
	snmp := view(t0.Add(5*time.Second), map[string]any{"in_octets_rate": 105.0, "oper_up": true, "speed_mbps": 1000.0})
	produce(snmp, other(t0.Add(5*time.Second), 7))
	sinktest.Eventually(t, "the SNMP row handled", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"})+
			r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}) == 4
	})
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		t.Fatalf("%v records dead-lettered", n)
	}
	if n := outOfOrderTotal(t, reg); n != 2 {
		t.Errorf("out-of-order samples counted: %v, want 2 (the SNMP row's in_octets_rate and oper_up)", n)
	}
	at := float64(t0.Add(11*time.Second).UnixMilli()) / 1000
	for q, want := range map[string]float64{
		`interface_in_octets_rate{device="spine1",interface="Ethernet1"}`: 110,
		`interface_speed_mbps{device="spine1",interface="Ethernet1"}`:     1000,
		`interface_in_octets_rate{device="leaf2",interface="Ethernet2"}`:  7,
	} {
		got := peers.Query(t, promAddr, fmt.Sprintf("%s @ %.3f", q, at))
		if len(got) != 1 || got[0].Float() != want {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
}

// TestRemoteWriteOutOfOrderLeftOutOnRetry: a batch written again (the
// endpoint down at the first try) leaves out the same samples as the
// first try, though its samples were noted as sent then: sent again,
// the batch's own newer samples would make its older ones look late, or
// the late ones go out on the retry.
func TestRemoteWriteOutOfOrderLeftOutOnRetry(t *testing.T) {
	rcv := newRWReceiver(t)
	reg := prometheus.NewRegistry()
	dst, err := NewRemoteWrite(configs.Sink{Name: "rw", URL: rcv.URL}, sinks.Env{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Millisecond)
	m := func(device string, at time.Time, x float64) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "m", Device: device, Fields: map[string]any{"a": x}, Time: at, ReceivedAt: at, Source: "enrich"}
	}
	var z itemizer
	batch := z.items(m("d1", now, 1), m("d1", now.Add(-time.Second), 2), m("d1", now.Add(time.Second), 3), m("d2", now, 4),
		m("d1", now.Add(time.Second), 5))
	values := func(got []rwSample) []float64 {
		var out []float64
		for _, s := range got {
			out = append(out, math.Float64frombits(s.bits))
		}
		return out
	}
	want := []float64{1, 3, 4}
	if err := dst.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if got := values(rcv.take(t)); !slices.Equal(got, want) {
		t.Fatalf("first try sent %v, want %v", got, want)
	}
	if err := dst.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if got := values(rcv.take(t)); !slices.Equal(got, want) {
		t.Errorf("retry sent %v, want %v, as the first try", got, want)
	}
	if n := outOfOrderTotal(t, reg); n != 2 {
		t.Errorf("out-of-order samples counted: %v, want 2 (once each)", n)
	}
	// A later batch: d1's sample older than the newest sent is left out.
	if err := dst.Write(context.Background(), z.items(m("d1", now, 6), m("d1", now.Add(2*time.Second), 7))); err != nil {
		t.Fatal(err)
	}
	if got := values(rcv.take(t)); !slices.Equal(got, []float64{7}) {
		t.Errorf("next batch sent %v, want [7]", got)
	}
}

// TestRemoteWriteSampleBeforeMarkerAfterRestartInPrometheus: a gNMI
// delete ends the interface's series with a staleness marker, and an SNMP
// row of that interface stamped before the delete (its poll began before
// it, and was published after the walk) is then left out, as older than
// the marker. A sink restarted between the two (an upgrade, SIGTERM, a
// partition given in a rebalance) reads the delete back at the start
// without sending its markers again, and did not note their time: it sent
// the SNMP row's samples, older than the markers Prometheus held, which
// refused them and the request ("out of order sample", 400), and the
// record went to dead.letter with its own fields (speed_mbps).
func TestRemoteWriteSampleBeforeMarkerAfterRestartInPrometheus(t *testing.T) {
	promAddr, b, cfg := toPrometheus(t)
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	byDevice := func(int) string { return "spine1" }
	run := func(ms []telemetry.Metric) (*sinktest.Running, *prometheus.Registry) {
		t.Helper()
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, byDevice, ms)
		reg := prometheus.NewRegistry()
		d, err := NewRemoteWrite(cfg, sinks.Env{Registerer: reg})
		if err != nil {
			t.Fatal(err)
		}
		r := sinktest.Start(t, b, cfg, d)
		sinktest.Eventually(t, "every record handled", func() bool {
			return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"})+
				r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}) == float64(len(ms))
		})
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		return r, reg
	}
	// The gNMI sample, and the interface's delete at t0+10s: markers at
	// t0+10s-1ms.
	r, _ := run([]telemetry.Metric{
		enrichView("Ethernet1", "interface", t0, map[string]any{"in_octets_rate": 100.0, "oper_up": true}),
		enrichView("Ethernet1", "interface", t0.Add(10*time.Second), map[string]any{"deleted": true}),
	})
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		t.Fatalf("%v records dead-lettered before the restart", n)
	}
	// Restarted: the SNMP row of the poll of t0+5s.
	r, reg := run([]telemetry.Metric{enrichView("Ethernet1", "interface", t0.Add(5*time.Second),
		map[string]any{"in_octets_rate": 105.0, "oper_up": true, "speed_mbps": 1000.0})})
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		t.Errorf("%v records dead-lettered after the restart", n)
	}
	if n := outOfOrderTotal(t, reg); n != 2 {
		t.Errorf("out-of-order samples counted: %v, want 2 (the SNMP row's in_octets_rate and oper_up, older than their markers)", n)
	}
	at := float64(t0.Add(6*time.Second).UnixMilli()) / 1000
	q := `interface_speed_mbps{device="spine1",interface="Ethernet1"}`
	if got := peers.Query(t, promAddr, fmt.Sprintf("%s @ %.3f", q, at)); len(got) != 1 || got[0].Float() != 1000 {
		t.Errorf("%s: %v, want 1000", q, got)
	}
}

// TestRemoteWriteSampleBeforeMarkerOfOnlySeriesInPrometheus: a sample
// older than a delete's staleness marker is left out, as one older than
// a sample is, also when the deleted series were the only ones of their
// names (one interface, or the only one with a field): the names' series
// were looked up by their family, which the delete dropped with its last
// series, so the sample was sent and Prometheus refused it ("out of
// order sample", 400), dead-lettering the record and its other fields.
func TestRemoteWriteSampleBeforeMarkerOfOnlySeriesInPrometheus(t *testing.T) {
	promAddr, b, cfg := toPrometheus(t)
	reg := prometheus.NewRegistry()
	d, err := NewRemoteWrite(cfg, sinks.Env{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, cfg, d)
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Millisecond)
	handled := 0
	produce := func(ms ...telemetry.Metric) {
		t.Helper()
		sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "spine1" }, ms)
		handled += len(ms)
		sinktest.Eventually(t, "the records handled", func() bool {
			return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"})+
				r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}) == float64(handled)
		})
	}
	produce(enrichView("Ethernet1", "interface", t0, map[string]any{"in_octets_rate": 100.0, "oper_up": true}),
		enrichView("Ethernet1", "interface", t0.Add(10*time.Second), map[string]any{"deleted": true}))
	produce(enrichView("Ethernet1", "interface", t0.Add(5*time.Second),
		map[string]any{"in_octets_rate": 105.0, "oper_up": true, "speed_mbps": 1000.0}))
	if n := r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "rw"}); n != 0 {
		t.Errorf("%v records dead-lettered", n)
	}
	if n := outOfOrderTotal(t, reg); n != 2 {
		t.Errorf("out-of-order samples counted: %v, want 2 (in_octets_rate and oper_up, older than their markers)", n)
	}
	// The interface back: a sample after the markers is sent.
	produce(enrichView("Ethernet1", "interface", t0.Add(15*time.Second), map[string]any{"in_octets_rate": 115.0, "oper_up": true}))
	for q, want := range map[string]float64{
		fmt.Sprintf(`interface_speed_mbps{device="spine1",interface="Ethernet1"} @ %.3f`, float64(t0.Add(6*time.Second).UnixMilli())/1000):      1000,
		fmt.Sprintf(`interface_in_octets_rate{device="spine1",interface="Ethernet1"} @ %.3f`, float64(t0.Add(16*time.Second).UnixMilli())/1000): 115,
	} {
		if got := peers.Query(t, promAddr, q); len(got) != 1 || got[0].Float() != want {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
}

// TestRemoteWriteOutOfOrderSaidWithCount: the samples left out are said
// once a minute at most, with how many, not once each (a device polled by
// SNMP and streamed by gNMI under one name has some every poll).
func TestRemoteWriteOutOfOrderSaidWithCount(t *testing.T) {
	rcv := newRWReceiver(t)
	var buf bytes.Buffer
	dst, err := NewRemoteWrite(configs.Sink{Name: "rw", URL: rcv.URL}, sinks.Env{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Millisecond)
	m := func(at time.Time, x float64) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "m", Device: "d1", Fields: map[string]any{"a": x, "b": x}, Time: at, ReceivedAt: at, Source: "enrich"}
	}
	var z itemizer
	if err := dst.Write(context.Background(), z.items(m(now, 1), m(now.Add(-time.Second), 2))); err != nil {
		t.Fatal(err)
	}
	if err := dst.Write(context.Background(), z.items(m(now.Add(-2*time.Second), 3))); err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	if n := strings.Count(log, "\n"); n != 1 || !strings.Contains(log, "samples=2") || !strings.Contains(log, "device=d1") {
		t.Errorf("want one line saying 2 samples of d1, got %q", log)
	}
}
