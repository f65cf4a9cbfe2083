package influxdb_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/influxdb"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)

func metrics(n, from int) []telemetry.Metric {
	out := make([]telemetry.Metric, n)
	for i := range out {
		j := from + i
		out[i] = telemetry.Metric{V: 1, Measurement: "interface", Device: fmt.Sprintf("r%d", j),
			Tags:     map[string]string{"ifName": "Ethernet 1/1", "site": "ams1", "empty": ""},
			Fields:   map[string]any{"ifHCInOctets": uint64(1) << 40, "ifOperStatus": "up", "utilisation": 12.5, "ok": true, "speed": 1000},
			Counters: []string{"ifHCInOctets"}, Time: t0.Add(time.Duration(j) * time.Second)}
	}
	return out
}

// server is an InfluxDB stand-in that parses every line with the
// line-protocol/v2 decoder and checks it.
type server struct {
	t  *testing.T
	mu sync.Mutex
	// script answers the next requests in order; then 204.
	script []func(w http.ResponseWriter) bool
	got    map[string]int // device -> lines
	reqs   int
	times  []time.Time
	badErr error
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs++
	s.times = append(s.times, time.Now())
	if r.URL.Path != "/api/v2/write" || r.URL.Query().Get("org") != "net" || r.URL.Query().Get("bucket") != "tel" ||
		r.URL.Query().Get("precision") != "ns" || r.Header.Get("Authorization") != "Token s3cret" ||
		r.Header.Get("Content-Encoding") != "gzip" {
		s.badErr = fmt.Errorf("request %s %v", r.URL, r.Header)
		http.Error(w, "bad request shape", 400)
		return
	}
	if len(s.script) > 0 {
		next := s.script[0]
		s.script = s.script[1:]
		if next(w) {
			return
		}
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		s.badErr = err
		http.Error(w, err.Error(), 400)
		return
	}
	body, _ := io.ReadAll(zr)
	if strings.Contains(string(body), "bad,") {
		http.Error(w, `{"code":"invalid","message":"field type conflict"}`, 400)
		return
	}
	dec := lineprotocol.NewDecoderWithBytes(body)
	for dec.Next() {
		if err := s.check(dec); err != nil {
			s.badErr = fmt.Errorf("%w in %q", err, body)
			http.Error(w, err.Error(), 400)
			return
		}
	}
	if err := dec.Err(); err != nil {
		s.badErr = err
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) check(dec *lineprotocol.Decoder) error {
	m, err := dec.Measurement()
	if err != nil || string(m) != "interface" {
		return fmt.Errorf("measurement %q: %v", m, err)
	}
	tags := map[string]string{}
	prev := ""
	for {
		k, v, err := dec.NextTag()
		if err != nil {
			return err
		}
		if k == nil {
			break
		}
		if string(k) <= prev {
			return fmt.Errorf("tags out of order: %s after %s", k, prev)
		}
		prev = string(k)
		tags[string(k)] = string(v)
	}
	if tags["ifName"] != "Ethernet 1/1" || tags["site"] != "ams1" || tags["device"] == "" || len(tags) != 3 {
		return fmt.Errorf("tags %v", tags)
	}
	fields := map[string]lineprotocol.Value{}
	for {
		k, v, err := dec.NextField()
		if err != nil {
			return err
		}
		if k == nil {
			break
		}
		fields[string(k)] = v
	}
	if f := fields["ifHCInOctets"]; f.Kind() != lineprotocol.Int || f.IntV() != 1<<40 {
		return fmt.Errorf("counter field %v", f)
	}
	if f := fields["utilisation"]; f.Kind() != lineprotocol.Float || f.FloatV() != 12.5 {
		return fmt.Errorf("gauge field %v", f)
	}
	if f := fields["speed"]; f.Kind() != lineprotocol.Float || f.FloatV() != 1000 {
		return fmt.Errorf("integral gauge must stay a float: %v", f)
	}
	if f := fields["ifOperStatus"]; f.Kind() != lineprotocol.String || f.StringV() != "up" {
		return fmt.Errorf("string field %v", f)
	}
	if f := fields["ok"]; f.Kind() != lineprotocol.Bool || !f.BoolV() {
		return fmt.Errorf("bool field %v", f)
	}
	ts, err := dec.Time(lineprotocol.Nanosecond, time.Time{})
	if err != nil {
		return err
	}
	var j int
	fmt.Sscanf(tags["device"], "r%d", &j)
	if want := t0.Add(time.Duration(j) * time.Second); !ts.Equal(want) {
		return fmt.Errorf("time %v, want %v", ts, want)
	}
	if s.got == nil {
		s.got = map[string]int{}
	}
	s.got[tags["device"]]++
	return nil
}

func (s *server) distinct() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.badErr != nil {
		s.t.Errorf("server: %v", s.badErr)
		s.badErr = nil
	}
	return len(s.got)
}

func status(code int, hdr ...string) func(w http.ResponseWriter) bool {
	return func(w http.ResponseWriter) bool {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		http.Error(w, http.StatusText(code), code)
		return true
	}
}

func cfg(url string) configs.Sink {
	return configs.Sink{Type: "influxdb", Name: "influx", Topics: []string{"enriched.metrics"}, URL: url,
		Org: "net", Bucket: "tel", Token: "s3cret", BatchSize: 100, FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(10 * time.Millisecond), Max: configs.Duration(50 * time.Millisecond)}}
}

func start(t *testing.T, c configs.Sink) *sinktest.Running {
	b := sinktest.Broker(t)
	d, err := influxdb.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, metrics(500, 0))
	// A log on the same topic: not a metric, skipped.
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaLog, key, []telemetry.EnrichedLog{{}})
	return sinktest.Start(t, b, c, d)
}

func TestV2RetriesOn503NothingLost(t *testing.T) {
	srv := &server{t: t, script: []func(http.ResponseWriter) bool{status(503), status(503), status(502)}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	r := start(t, cfg(hs.URL))
	sinktest.Eventually(t, "500 metrics", func() bool { return srv.distinct() == 500 })
	if got := r.Counter("weir_sink_retries_total", map[string]string{"sink": "influx"}); got != 3 {
		t.Errorf("retries %v, want 3", got)
	}
	for reason, want := range map[string]float64{"http_503": 2, "http_502": 1} {
		if got := r.Counter("weir_sink_retries_total", map[string]string{"sink": "influx", "reason": reason}); got != want {
			t.Errorf("retries for %s: %v, want %v", reason, got, want)
		}
	}
	if got := r.Counter("weir_sink_errors_total", map[string]string{"sink": "influx", "kind": "retryable"}); got != 3 {
		t.Errorf("errors %v, want 3", got)
	}
	sinktest.Eventually(t, "log skipped", func() bool {
		return r.Counter("weir_sink_filtered_total", map[string]string{"sink": "influx"}) == 1
	})
}

func TestV2HonoursRetryAfter(t *testing.T) {
	srv := &server{t: t, script: []func(http.ResponseWriter) bool{status(429, "Retry-After", "1")}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	r := start(t, cfg(hs.URL))
	sinktest.Eventually(t, "500 metrics", func() bool { return srv.distinct() == 500 })
	srv.mu.Lock()
	gap := srv.times[1].Sub(srv.times[0])
	srv.mu.Unlock()
	if gap < 900*time.Millisecond {
		t.Errorf("retried after %v, Retry-After said 1s", gap)
	}
	if got := r.Counter("weir_sink_retries_total", map[string]string{"sink": "influx"}); got != 1 {
		t.Errorf("retries %v", got)
	}
}

func TestV2BadRequestDeadLettersAndMovesOn(t *testing.T) {
	srv := &server{t: t}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	b := sinktest.Broker(t)
	d, _ := influxdb.New(cfg(hs.URL), sinks.Env{})
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	ms := metrics(50, 0)
	ms[17].Measurement = "bad"
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, ms)
	r := sinktest.Start(t, b, cfg(hs.URL), d)
	sinktest.Eventually(t, "49 metrics", func() bool { return srv.distinct() == 49 })
	sinktest.Eventually(t, "one dead letter", func() bool {
		return r.Counter("weir_sink_dead_letters_total", map[string]string{"sink": "influx", "reason": "http_400"}) == 1
	})
	dl := sinktest.ReadAll(t, b, telemetry.TopicDeadLetter)
	if len(dl) != 1 || string(dl[0].Key) != "r17" || !strings.Contains(sinktest.Header(dl[0], sinks.HeaderDeadLetterReason), "field type conflict") {
		t.Fatalf("dead letters %+v", dl)
	}
	// It moved on: later records arrive.
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(i int) string { return fmt.Sprintf("r%d", 100+i) }, metrics(5, 100))
	sinktest.Eventually(t, "54 metrics", func() bool { return srv.distinct() == 54 })
}

func TestDestinationDownThenBack(t *testing.T) {
	srv := &server{t: t}
	// A listener that is closed: connection refused until the server is
	// started on the same address.
	hs := httptest.NewUnstartedServer(srv)
	addr := hs.Listener.Addr().String()
	hs.Listener.Close()
	c := cfg("http://" + addr)
	r := start(t, c)
	sinktest.Eventually(t, "retries while down", func() bool {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "influx"}) >= 3
	})
	hs2 := httptest.NewUnstartedServer(srv)
	l, err := listenRetry(addr)
	if err != nil {
		t.Skipf("cannot rebind %s: %v", addr, err)
	}
	hs2.Listener = l
	hs2.Start()
	defer hs2.Close()
	sinktest.Eventually(t, "500 metrics after the outage", func() bool { return srv.distinct() == 500 })
}
