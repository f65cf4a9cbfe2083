package enrich

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestDecodeErrorsCountedByTopicAndReason: an input record a worker
// skips is counted in weir_enrich_decode_errors_total by its topic and
// why (malformed: not JSON, or not of its record's shape; version: of
// another schema version; incomplete: no device, nor anything to name
// it by, a metric with no measurement, or a trap with neither trap_oid
// nor trap_name, which would pass through unseen: a Kafka client's
// {"v":1,"device":"d"} on raw.traps), at 0 from the start, so an
// alert can tell a producer of the wrong records from one of junk.
func TestDecodeErrorsCountedByTopicAndReason(t *testing.T) {
	for _, tc := range []struct {
		topic   string
		decode  func(w *testWorkers, r *broker.Record) bool // the topic's worker's decoding
		records []string
		want    string
	}{
		{telemetry.TopicRawSyslog, func(w *testWorkers, r *broker.Record) bool { _, ok := w.syslog.decodeSyslog(r); return ok },
			[]string{`junk`, `{"v":1,"message":"x","facility":"a"}`, `{"v":2,"device":"d","message":"x"}`, `{"v":1,"message":"x"}`, `{"v":1,"device":"d","message":"x"}`},
			"reason=incomplete,topic=raw.syslog 1;reason=malformed,topic=raw.syslog 2;reason=version,topic=raw.syslog 1"},
		{telemetry.TopicRawTraps, func(w *testWorkers, r *broker.Record) bool { _, ok := w.traps.decode(r); return ok },
			[]string{`junk`, `{"v":1,"device":"d","varbinds":{}}`, `{"v":2,"device":"d"}`, `{"v":1,"trap_name":"coldStart"}`,
				`{"v":1,"device":"d","source_addr":"192.0.2.1:162"}`, `{"v":1,"device":"d","trap_name":"coldStart"}`},
			"reason=incomplete,topic=raw.traps 2;reason=malformed,topic=raw.traps 2;reason=version,topic=raw.traps 1"},
		{telemetry.TopicRawSNMP, func(w *testWorkers, r *broker.Record) bool { _, ok := w.metrics.enrich(r); return ok },
			[]string{`junk`, `{"v":1,"measurement":"m","device":"d","fields":{"x":{}}}`, `{"v":2,"measurement":"m","device":"d","fields":{"x":1}}`,
				`{"v":1,"device":"d","fields":{"x":1}}`, `{"v":1,"measurement":"m","fields":{"x":1}}`, `{"v":1,"measurement":"m","device":"d","fields":{"x":1}}`},
			"reason=incomplete,topic=raw.snmp 2;reason=malformed,topic=raw.snmp 2;reason=version,topic=raw.snmp 1"},
	} {
		w := newTestWorkers(t)
		for i, v := range tc.records {
			r := broker.Record{Topic: tc.topic, Offset: int64(i), Value: []byte(v)}
			if ok := tc.decode(w, &r); ok != (i == len(tc.records)-1) {
				t.Errorf("%s: %s: decoded %v", tc.topic, v, ok)
			}
		}
		var got []string
		for _, s := range strings.Split(gathered(t, w.reg, "weir_enrich_decode_errors_total"), ";") {
			if strings.HasSuffix(strings.Fields(s)[0], "topic="+tc.topic) {
				got = append(got, s)
			}
		}
		if got := strings.Join(got, ";"); got != tc.want {
			t.Errorf("%s: weir_enrich_decode_errors_total\n%s\nwant\n%s", tc.topic, got, tc.want)
		}
	}
}

// testWorkers are a syslog, a trap and a metrics worker sharing one
// registry, as weir's are.
type testWorkers struct {
	reg     *prometheus.Registry
	syslog  *Worker
	traps   *TrapWorker
	metrics *MetricsWorker
}

func newTestWorkers(t *testing.T) *testWorkers {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	inv, _ := ParseInventory([]byte(testInventory))
	m := WithWorkerMetrics(NewWorkerMetrics(reg))
	w := &testWorkers{reg: reg, syslog: NewWorker(nil, inv, NewClassifier(), m), traps: NewTrapWorker(nil, inv, m), metrics: NewMetricsWorker(nil, inv, m)}
	w.metrics.out = newOutputs(nil, telemetry.TopicRawSNMP, w.metrics.logger, w.metrics.m, false)
	return w
}

// decodeErrorsOf is how many of topic's input records m counted as
// skipped, for every reason.
func decodeErrorsOf(m *workerMetrics, topic string) float64 {
	var n float64
	for _, reason := range decodeReasons {
		n += testutil.ToFloat64(m.decodeErrors.WithLabelValues(topic, reason))
	}
	return n
}
