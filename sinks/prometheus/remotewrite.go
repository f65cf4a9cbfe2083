package prometheus

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/httpx"
	"github.com/weirnet/weir/telemetry"
)

// RemoteWrite is the prometheus_remote_write sink: every numeric field as a
// sample, pushed with the Remote Write 1.0 protocol (protobuf WriteRequest,
// snappy) to Prometheus (--web.enable-remote-write-receiver), Mimir,
// Thanos or VictoriaMetrics. Names and labels are those of the exposition
// sink.
//
// The message is encoded with protowire by hand: client_golang's
// exp/api/remote speaks only Remote Write 2.0, which the Prometheus 2.x
// servers in use (Debian's 2.42) do not accept, and prompb would pull in the
// whole Prometheus server module for three small messages.
type RemoteWrite struct {
	url       string
	namespace string
	headers   map[string]string
	client    *http.Client

	body, ts, compressed []byte
	names                map[nameKey]string
	labels               map[string]string
	keys                 []string
}

// NewRemoteWrite builds the remote-write sink of cfg.
func NewRemoteWrite(cfg configs.Sink, _ sinks.Env) (sinks.Destination, error) {
	timeout := cfg.Timeout.Std()
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &RemoteWrite{url: cfg.URL, namespace: cfg.Namespace, headers: cfg.Headers, client: &http.Client{Timeout: timeout},
		names: map[nameKey]string{}, labels: map[string]string{}}, nil
}

// Accepts takes metrics only.
func (r *RemoteWrite) Accepts(schema string) bool { return schema == telemetry.SchemaMetric }

// Write pushes the batch as one request.
func (r *RemoteWrite) Write(ctx context.Context, items []sinks.Item) error {
	r.body = r.body[:0]
	for i := range items {
		r.appendMetric(items[i].Metric)
	}
	if len(r.body) == 0 {
		return nil
	}
	r.compressed = snappy.Encode(r.compressed[:cap(r.compressed)], r.body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(r.compressed))
	if err != nil {
		return &sinks.RejectedError{Reason: "request", Err: err}
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	req.Header.Set("User-Agent", "weir")
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return httpx.Transport("remote write sink", err)
	}
	return httpx.Classify("remote write sink", resp, time.Now())
}

// appendMetric appends one TimeSeries (field 1 of WriteRequest) per numeric
// field: labels (name 1, value 2) sorted by name with __name__ first, as the
// protocol requires, and one sample (value 1 double, timestamp 2 ms).
func (r *RemoteWrite) appendMetric(m *telemetry.Metric) {
	t := m.Time
	if t.IsZero() {
		t = m.ReceivedAt
	}
	if t.IsZero() {
		t = time.Now()
	}
	ms := t.UnixMilli()
	// Label names, sanitised once per distinct tag key.
	lv := make(map[string]string, len(m.Tags)+1)
	for k, v := range m.Tags {
		if v == "" {
			continue
		}
		ln, ok := r.labels[k]
		if !ok {
			ln = LabelName(k)
			r.labels[k] = ln
		}
		lv[ln] = strings.ToValidUTF8(v, "\uFFFD")
	}
	if _, ok := lv["device"]; !ok && m.Device != "" {
		lv["device"] = strings.ToValidUTF8(m.Device, "\uFFFD")
	}
	r.keys = r.keys[:0]
	for k := range lv {
		r.keys = append(r.keys, k)
	}
	slices.Sort(r.keys)
	for field, v := range m.Fields {
		x, ok := number(v)
		if !ok {
			continue
		}
		counter := slices.Contains(m.Counters, field)
		nk := nameKey{m.Measurement, field, counter}
		name, ok := r.names[nk]
		if !ok {
			name = MetricName(r.namespace, m.Measurement, field, counter)
			r.names[nk] = name
		}
		// Labels sorted by name, __name__ included: a sanitised label
		// such as "_1x" sorts before it, and receivers (Mimir, Cortex)
		// refuse out-of-order label names.
		ts := r.ts[:0]
		named := false
		for _, k := range r.keys {
			if !named && k > "__name__" {
				ts = appendLabel(ts, "__name__", name)
				named = true
			}
			ts = appendLabel(ts, k, lv[k])
		}
		if !named {
			ts = appendLabel(ts, "__name__", name)
		}
		var sample []byte
		sample = protowire.AppendTag(sample, 1, protowire.Fixed64Type)
		sample = protowire.AppendFixed64(sample, math.Float64bits(x))
		sample = protowire.AppendTag(sample, 2, protowire.VarintType)
		sample = protowire.AppendVarint(sample, uint64(ms))
		ts = protowire.AppendTag(ts, 2, protowire.BytesType)
		ts = protowire.AppendBytes(ts, sample)
		r.ts = ts
		r.body = protowire.AppendTag(r.body, 1, protowire.BytesType)
		r.body = protowire.AppendBytes(r.body, ts)
	}
}

func appendLabel(b []byte, name, value string) []byte {
	var l []byte
	l = protowire.AppendTag(l, 1, protowire.BytesType)
	l = protowire.AppendString(l, name)
	l = protowire.AppendTag(l, 2, protowire.BytesType)
	l = protowire.AppendString(l, value)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendBytes(b, l)
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case uint64:
		return float64(v), true
	case int:
		return float64(v), true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Close releases idle connections.
func (r *RemoteWrite) Close() error {
	r.client.CloseIdleConnections()
	return nil
}
