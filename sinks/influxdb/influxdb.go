// Package influxdb is the InfluxDB sink: metrics as line protocol over HTTP,
// to the v2 API (/api/v2/write with org, bucket and token) or the v1 API
// (/write with database, retention policy, username and password),
// gzipped, in batches.
package influxdb

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/klauspost/compress/gzip"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/httpx"
	"github.com/weirnet/weir/telemetry"
)

// DefaultTimeout bounds one write request.
const DefaultTimeout = 10 * time.Second

// Sink writes metrics to InfluxDB.
type Sink struct {
	writeURL string
	token    string
	user     string
	password string
	gzip     bool
	headers  map[string]string
	client   *http.Client

	enc  lineprotocol.Encoder
	body bytes.Buffer
	zw   *gzip.Writer
	keys []string
}

// New builds the InfluxDB sink of cfg.
func New(cfg configs.Sink, _ sinks.Env) (sinks.Destination, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("influxdb sink: url %q: %v", cfg.URL, err)
	}
	q := url.Values{}
	switch cfg.InfluxVersion() {
	case 2:
		u = u.JoinPath("/api/v2/write")
		q.Set("org", cfg.Org)
		q.Set("bucket", cfg.Bucket)
		q.Set("precision", "ns")
	default:
		u = u.JoinPath("/write")
		q.Set("db", cfg.Database)
		if cfg.RetentionPolicy != "" {
			q.Set("rp", cfg.RetentionPolicy)
		}
		q.Set("precision", "n")
	}
	u.RawQuery = q.Encode()
	timeout := cfg.Timeout.Std()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	s := &Sink{writeURL: u.String(), token: cfg.Token, user: cfg.Username, password: cfg.Password,
		gzip: cfg.Gzip == nil || *cfg.Gzip, headers: cfg.Headers, client: &http.Client{Timeout: timeout}}
	s.enc.SetPrecision(lineprotocol.Nanosecond)
	// Fastest level: line protocol compresses well anyway, and the sink's
	// throughput is worth more than a few percent of bytes.
	s.zw, _ = gzip.NewWriterLevel(&s.body, gzip.BestSpeed)
	return s, nil
}

// Accepts takes metrics only: line protocol is the metric model.
func (s *Sink) Accepts(schema string) bool { return schema == telemetry.SchemaMetric }

// Write sends the batch as one request.
func (s *Sink) Write(ctx context.Context, items []sinks.Item) error {
	s.enc.Reset()
	for i := range items {
		if err := s.encode(items[i].Metric); err != nil {
			// One bad metric: reject the batch so the framework sends the
			// records one by one and dead-letters only this one.
			return &sinks.RejectedError{Reason: "encode", Err: fmt.Errorf("influxdb sink: %s/%d@%d: %w",
				items[i].Record.Topic, items[i].Record.Partition, items[i].Record.Offset, err)}
		}
	}
	lines := s.enc.Bytes()
	if len(lines) == 0 {
		return nil // only metrics without fields
	}
	s.body.Reset()
	if s.gzip {
		s.zw.Reset(&s.body)
		s.zw.Write(lines)
		if err := s.zw.Close(); err != nil {
			return fmt.Errorf("influxdb sink: gzip: %w", err)
		}
	} else {
		s.body.Write(lines)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.writeURL, bytes.NewReader(s.body.Bytes()))
	if err != nil {
		return &sinks.RejectedError{Reason: "request", Err: err}
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	if s.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Token "+s.token)
	} else if s.user != "" {
		req.SetBasicAuth(s.user, s.password)
	}
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return httpx.Transport("influxdb sink", err)
	}
	return httpx.Classify("influxdb sink", resp, time.Now())
}

// encode appends one metric as a line: measurement, tags sorted (line
// protocol wants them in key order) with the device as tag "device", fields
// typed, the device's time (else the receive time) in nanoseconds. A
// metric without fields has no line.
func (s *Sink) encode(m *telemetry.Metric) error {
	if len(m.Fields) == 0 {
		return nil
	}
	s.enc.StartLine(m.Measurement)
	s.keys = s.keys[:0]
	for k, v := range m.Tags {
		// Line protocol has no empty tag values; an absent tag means
		// the same to InfluxDB.
		if v != "" {
			s.keys = append(s.keys, k)
		}
	}
	if _, ok := m.Tags["device"]; !ok && m.Device != "" {
		s.keys = append(s.keys, "device")
	}
	slices.Sort(s.keys)
	for _, k := range s.keys {
		v, ok := m.Tags[k]
		if !ok {
			v = m.Device
		}
		s.enc.AddTag(k, v)
	}
	s.keys = s.keys[:0]
	for k := range m.Fields {
		s.keys = append(s.keys, k)
	}
	slices.Sort(s.keys) // stable output, easier to read and test
	for _, k := range s.keys {
		v, ok := fieldValue(m.Fields[k])
		if !ok {
			s.enc.ClearErr()
			return fmt.Errorf("field %q: value %v (%T) has no line-protocol type", k, m.Fields[k], m.Fields[k])
		}
		s.enc.AddField(k, v)
	}
	t := m.Time
	if t.IsZero() {
		t = m.ReceivedAt
	}
	s.enc.EndLine(t)
	if err := s.enc.Err(); err != nil {
		s.enc.ClearErr()
		return err
	}
	return nil
}

func fieldValue(v any) (lineprotocol.Value, bool) {
	switch x := v.(type) {
	case string:
		// Line protocol strings are UTF-8; keep what we can.
		return lineprotocol.StringValue(strings.ToValidUTF8(x, "\uFFFD"))
	case float64:
		return lineprotocol.FloatValue(x) // NaN and Inf have no encoding
	}
	return lineprotocol.NewValue(v)
}

// Close releases idle connections.
func (s *Sink) Close() error {
	s.client.CloseIdleConnections()
	return nil
}

var _ sinks.SchemaFilter = (*Sink)(nil)
