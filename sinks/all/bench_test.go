package all_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/all"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

type nop struct{}

func (nop) Write(context.Context, []sinks.Item) error { return nil }
func (nop) Close() error                              { return nil }

// nopPoints takes metrics as Points, as the metric sinks do.
type nopPoints struct{ nop }

func (nopPoints) Points() bool { return true }

// benchSink measures records/s through a whole sink: consume from the
// embedded broker, decode, filter, encode, deliver to a destination that
// accepts at once, commit. b.N records are produced before the clock
// starts.
func benchSink(b *testing.B, c configs.Sink, schema string, values func(n int) []byte) {
	br := sinktest.Broker(b)
	recs := make([]broker.Record, 0, 10000)
	for i := 0; i < b.N; i += len(recs) {
		recs = recs[:0]
		for j := i; j < b.N && len(recs) < cap(recs); j++ {
			recs = append(recs, broker.Record{Key: fmt.Appendf(nil, "r%d", j%1000), Value: values(j),
				Headers: []broker.Header{{Key: telemetry.HeaderSchema, Value: []byte(schema)}}})
		}
		if err := br.Produce(context.Background(), c.Topics[0], recs); err != nil {
			b.Fatal(err)
		}
	}
	var d sinks.Destination = nop{}
	if c.Type == "nop-points" {
		d = nopPoints{}
	} else if c.Type != "nop" {
		var err error
		if d, err = all.Registry()[c.Type](c, sinks.Env{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	r := sinktest.Start(b, br, c, d)
	deadline := time.Now().Add(5 * time.Minute)
	for r.Counter("weir_sink_records_total", map[string]string{"sink": c.Name}) < float64(b.N) {
		if time.Now().After(deadline) {
			b.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
	el := time.Since(start)
	b.StopTimer()
	r.Stop()
	b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
	// The share of the time spent in the destination's Write (the rest is
	// polling, decoding and committing).
	if mfs, err := r.Reg.Gather(); err == nil {
		for _, mf := range mfs {
			if mf.GetName() == "weir_sink_batch_seconds" && len(mf.GetMetric()) > 0 {
				b.ReportMetric(100*mf.GetMetric()[0].GetHistogram().GetSampleSum()/el.Seconds(), "%write")
			}
		}
	}
}

func metricJSON(i int) []byte {
	return fmt.Appendf(nil, `{"v":1,"measurement":"interface","device":"r%d","tags":{"ifName":"Ethernet%d","site":"ams1","role":"edge"},`+
		`"fields":{"ifHCInOctets":%d,"ifHCOutOctets":%d,"ifInErrors":0,"ifOperStatus":1,"utilisation":12.5},`+
		`"counters":["ifHCInOctets","ifHCOutOctets","ifInErrors"],"time":"2026-11-29T12:00:00.123456789Z","received_at":"2026-11-29T12:00:00.2Z","source":"snmp"}`,
		i%1000, i%48, i*1000, i*900)
}

func eventJSON(i int) []byte {
	return fmt.Appendf(nil, `{"v":1,"type":"interface_down","device":"r%d","object":"Ethernet%d","severity":"error","message":"Interface Ethernet%d, changed state to down","tags":{"site":"ams1"},"time":"2026-11-29T12:00:00Z","cause":{"topic":"enriched.syslog","partition":1,"offset":%d}}`,
		i%1000, i%48, i%48, i)
}

func common(typ, name string) configs.Sink {
	return configs.Sink{Type: typ, Name: name, Topics: []string{"t"}, BatchSize: 5000, FlushInterval: configs.Duration(100 * time.Millisecond)}
}

func BenchmarkSinkFramework(b *testing.B) {
	benchSink(b, common("nop", "nop"), telemetry.SchemaMetric, metricJSON)
}

// BenchmarkSinkFrameworkPoints is the framework as the metric sinks use
// it: metrics decoded as Points, reused from batch to batch.
func BenchmarkSinkFrameworkPoints(b *testing.B) {
	benchSink(b, common("nop-points", "nop"), telemetry.SchemaMetric, metricJSON)
}

func BenchmarkSinkInfluxDB(b *testing.B) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(204)
	}))
	defer hs.Close()
	c := common("influxdb", "influx")
	c.URL, c.Database = hs.URL, "net"
	benchSink(b, c, telemetry.SchemaMetric, metricJSON)
}

func BenchmarkSinkPrometheus(b *testing.B) {
	c := common("prometheus", "prom")
	c.Listen = "127.0.0.1:0"
	benchSink(b, c, telemetry.SchemaMetric, metricJSON)
}

func BenchmarkSinkFile(b *testing.B) {
	c := common("file", "file")
	c.Path = filepath.Join(b.TempDir(), "out.jsonl")
	benchSink(b, c, telemetry.SchemaEvent, eventJSON)
}

func BenchmarkSinkAlertmanager(b *testing.B) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	defer hs.Close()
	c := common("webhook", "am")
	c.URL, c.Format = hs.URL, "alertmanager"
	benchSink(b, c, telemetry.SchemaEvent, eventJSON)
}

func BenchmarkSinkKafka(b *testing.B) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "t"))
	if err != nil {
		b.Fatal(err)
	}
	defer kf.Close()
	c := common("kafka", "kafka")
	c.Brokers = kf.ListenAddrs()
	benchSink(b, c, telemetry.SchemaMetric, metricJSON)
}

func BenchmarkSinkRemoteWrite(b *testing.B) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(204)
	}))
	defer hs.Close()
	c := common("prometheus_remote_write", "rw")
	c.URL = hs.URL
	benchSink(b, c, telemetry.SchemaMetric, metricJSON)
}
