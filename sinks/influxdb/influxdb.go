// Package influxdb is the InfluxDB sink: metrics as line protocol over HTTP,
// to the v2 API (/api/v2/write with org, bucket and token) or the v1 API
// (/write with database, retention policy, username and password),
// gzipped, in batches.
package influxdb

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/httpx"
	"github.com/weirnet/weir/sinks/internal/par"
	"github.com/weirnet/weir/sinks/internal/shrink"
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

	workers  []*worker
	body     []byte
	bodyKeep shrink.Tracker // body's uses (letGo)
}

// worker encodes (and compresses) one chunk of a batch: the chunks of a
// large batch are encoded at once, on every core.
type worker struct {
	lines []byte
	zw    *flate.Writer
	z     bytes.Buffer
	err   error
	// linesKeep and zKeep follow lines' and z's uses (Sink.letGo).
	linesKeep, zKeep shrink.Tracker
}

// minChunk is the least metrics a worker takes.
const minChunk = 512

// New builds the InfluxDB sink of cfg.
func New(cfg configs.Sink, _ sinks.Env) (sinks.Destination, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" {
		// Not the URL itself: its user info or query may hold a password.
		return nil, fmt.Errorf("influxdb sink %s: url is no http:// or https:// URL with a host", cfg.Name)
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
	client, err := httpx.NewClient(timeout, cfg.TLS.Client())
	if err != nil {
		return nil, fmt.Errorf("influxdb sink %s: %w", cfg.Name, err)
	}
	s := &Sink{writeURL: u.String(), token: cfg.Token, user: cfg.Username, password: cfg.Password,
		gzip: cfg.Gzip == nil || *cfg.Gzip, headers: cfg.Headers, client: client}
	return s, nil
}

// Accepts takes metrics only: line protocol is the metric model.
func (s *Sink) Accepts(schema string) bool { return schema == telemetry.SchemaMetric }

// Points: metrics come as telemetry.Point, walked in key order without maps.
func (s *Sink) Points() bool { return true }

// Write sends the batch as one request.
func (s *Sink) Write(ctx context.Context, items []sinks.Item) error {
	k := par.Chunks(len(items), minChunk)
	for len(s.workers) < k {
		w := &worker{}
		// Fastest level: line protocol compresses well anyway, and the
		// sink's throughput is worth more than a few percent of bytes.
		w.zw, _ = flate.NewWriter(nil, flate.BestSpeed)
		s.workers = append(s.workers, w)
	}
	workers := s.workers[:k]
	defer s.letGo(k) // after the request lets go of body (deferred below)
	par.Do(len(items), minChunk, func(w, lo, hi int) { workers[w].run(items[lo:hi], s.gzip, w == k-1) })
	n := 0
	for _, w := range workers {
		if w.err != nil {
			return w.err
		}
		n += len(w.lines)
	}
	if n == 0 {
		return nil // only metrics without fields
	}
	b := s.body[:0]
	if s.gzip {
		// One gzip member: the chunks' deflate streams one after the
		// other (each but the last ended by a sync flush, so the next
		// starts on a byte), then the CRC and size of all the lines.
		b = append(b, gzipHeader...)
		crc := uint32(0)
		for _, w := range workers {
			b = append(b, w.z.Bytes()...)
			crc = crc32.Update(crc, crc32.IEEETable, w.lines)
		}
		b = binary.LittleEndian.AppendUint32(b, crc)
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
	} else {
		for _, w := range workers {
			b = append(b, w.lines...)
		}
	}
	s.body = b
	req, rb, err := httpx.NewRequest(ctx, s.writeURL, s.body)
	if err != nil {
		return &sinks.RejectedError{Reason: "request", Err: err}
	}
	defer func() {
		if !rb.Released(httpx.ReleaseWait) {
			s.body = nil // still being read: the next batch takes a new one
		}
	}()
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

// letGo lets go of the buffers a backlog's large batches grew (up to
// batch_size lines, megabytes), once the batches after it have used a
// fraction of them for a while (shrink), as the remote write sink does.
// used is how many workers this write took.
func (s *Sink) letGo(used int) {
	s.body = s.bodyKeep.Keep(s.body)
	for i, w := range s.workers {
		if i >= used {
			w.lines = w.lines[:0]
			w.z.Reset()
		}
		w.lines = w.linesKeep.Keep(w.lines)
		if w.zKeep.Keep(w.z.Bytes()) == nil {
			w.z = bytes.Buffer{}
		}
	}
}

// gzipHeader starts a gzip member: deflate, no name nor time, fastest
// level, unknown OS (what gzip.Writer writes at BestSpeed).
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255}

// run encodes items as lines and, with gz, compresses them, ending the
// stream if last or flushing it to a byte boundary if not.
func (w *worker) run(items []sinks.Item, gz, last bool) {
	w.lines = w.lines[:0]
	w.err = nil
	for i := range items {
		p := items[i].MetricPoint() // a metric: the sink takes no other schema
		var err error
		if w.lines, err = appendLine(w.lines, p); err != nil {
			// One bad metric: reject the batch so the framework sends the
			// records one by one and dead-letters only this one.
			w.err = &sinks.RejectedError{Reason: "encode", Err: fmt.Errorf("influxdb sink: %s/%d@%d: %w",
				items[i].Record.Topic, items[i].Record.Partition, items[i].Record.Offset, err)}
			return
		}
	}
	if !gz {
		return
	}
	w.z.Reset()
	w.zw.Reset(&w.z)
	w.zw.Write(w.lines)
	if last {
		w.zw.Close()
	} else {
		w.zw.Flush()
	}
}

// validUTF8 is s with invalid bytes replaced, without a copy when there
// are none (always, for what the sink decoded).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Close releases idle connections.
func (s *Sink) Close() error {
	s.client.CloseIdleConnections()
	return nil
}

var _ sinks.SchemaFilter = (*Sink)(nil)
