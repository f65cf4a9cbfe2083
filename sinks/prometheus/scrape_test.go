package prometheus_test

import (
	"strings"

	"context"
	"fmt"
	gpb "github.com/openconfig/gnmi/proto/gnmi"
	gnmic "github.com/weirnet/weir/collectors/gnmi"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// TestOldRecordsNotServedAsLive: a prometheus sink added to a running
// weir (a new group starts at the log start, up to 7 days back), or one
// catching up after an outage, replays old records. A record whose own
// time is older than staleness says nothing about now: serving it makes a
// device removed an hour ago (here "gone", snmp_up 1) look alive, with
// its hour-old values, for a whole staleness period.
func TestOldRecordsNotServedAsLive(t *testing.T) {
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "prometheus", Name: "prom", Topics: []string{"enriched.metrics"}, Listen: "127.0.0.1:0",
		Staleness: configs.Duration(5 * time.Minute), FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := promsink.NewSink(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	gone := telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "gone", Fields: map[string]any{"snmp_up": 1.0},
		Time: old, ReceivedAt: old}
	live := telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "live", Fields: map[string]any{"snmp_up": 1.0},
		Time: time.Now(), ReceivedAt: time.Now()}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(i int) string { return []string{"gone", "live"}[i] },
		[]telemetry.Metric{gone, live})
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "2 metrics", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == 2
	})
	body, fams := scrape(t, "http://"+s.Addr().String()+"/metrics")
	up := fams["snmp_status_snmp_up"]
	if up == nil || up.values["device=live"] != 1 {
		t.Fatalf("live device missing:\n%s", body)
	}
	if _, ok := up.values["device=gone"]; ok {
		t.Fatalf("a record an hour old (past staleness, 5m) is served as a live series:\n%s", body)
	}
}

// TestScrapeGzip: Prometheus always asks for gzip (Accept-Encoding: gzip);
// client_golang's promhttp answers compressed. The sink's exposition,
// about 200 bytes a series (20 MB a scrape at 100k series), goes
// uncompressed.
func TestScrapeGzip(t *testing.T) {
	cfg := configs.Sink{Type: "prometheus", Name: "prom", Listen: "127.0.0.1:0"}
	s, err := promsink.NewSink(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		s.Collector().Update(&telemetry.Metric{Measurement: "interface", Device: "r1",
			Tags: map[string]string{"ifName": fmt.Sprintf("Ethernet%d", i)}, Fields: map[string]any{"in_octets_rate": 1.5}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	req, _ := http.NewRequest("GET", "http://"+s.Addr().String()+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip") // as Prometheus sends it
	tr := &http.Transport{DisableCompression: true}
	var resp *http.Response
	sinktest.Eventually(t, "the endpoint", func() bool { resp, err = tr.RoundTrip(req); return err == nil })
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("scrape with Accept-Encoding: gzip answered uncompressed (%d bytes, Content-Encoding %q)", len(body), resp.Header.Get("Content-Encoding"))
	}
}

// TestMetricsPathCheckedNotPanicking: a metrics_path the config check
// accepts (it starts with /) but net/http's ServeMux refuses as a pattern
// ("/metrics " quoted with a trailing space, "/metrics{", "/v1/{x")
// panics in Run when weir starts, instead of being a config error.
func TestMetricsPathCheckedNotPanicking(t *testing.T) {
	for _, p := range []string{"/metrics ", "/metrics{", "/v1/{x"} {
		c, checkErr := configs.Parse([]byte(fmt.Sprintf("sinks:\n  - {type: prometheus, name: prom, listen: \"127.0.0.1:0\", topics: [enriched.metrics], metrics_path: %q}\n", p)))
		if checkErr != nil {
			continue // refused by weir check: fine
		}
		s, err := promsink.NewSink(c.Sinks[0], time.Now)
		if err != nil {
			continue // refused at start: fine
		}
		ctx, cancel := context.WithCancel(context.Background())
		var panicked any
		func() {
			defer func() { panicked = recover() }()
			go func() { time.Sleep(200 * time.Millisecond); cancel() }()
			s.Run(ctx)
		}()
		cancel()
		s.Close()
		if panicked != nil {
			t.Errorf("metrics_path %q: accepted by the config check, and Run panics: %v", p, panicked)
		}
	}
}

// TestGNMIDeleteRemovesSeries: a gNMI target that removes an interface (or
// a BGP neighbor) sends a delete for its path; the collector publishes it
// as one record with the single field deleted=true (collectors/gnmi
// README). The sink takes that for a number: it serves a new gauge
// interfaces_interface_deleted 1 and keeps every series of the deleted
// path, as if the interface were there, until staleness (5m).
func TestGNMIDeleteRemovesSeries(t *testing.T) {
	iface := []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "Ethernet9"}}}
	path := func(more ...string) *gpb.Path {
		p := &gpb.Path{Elem: append([]*gpb.PathElem{}, iface...)}
		for _, m := range more {
			p.Elem = append(p.Elem, &gpb.PathElem{Name: m})
		}
		return p
	}
	now := time.Now()
	upd := &gpb.Notification{Timestamp: now.UnixNano(), Update: []*gpb.Update{
		{Path: path("state", "counters", "in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 5}}}}}
	del := &gpb.Notification{Timestamp: now.Add(time.Second).UnixNano(), Delete: []*gpb.Path{path()}}
	var ms []telemetry.Metric
	ms = append(ms, gnmic.Flatten("spine1", upd, now)...)
	ms = append(ms, gnmic.Flatten("spine1", del, now.Add(time.Second))...)

	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "prometheus", Name: "prom", Topics: []string{"enriched.metrics"}, Listen: "127.0.0.1:0",
		FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := promsink.NewSink(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "spine1" }, ms)
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "both records", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == float64(len(ms))
	})
	body, fams := scrape(t, "http://"+s.Addr().String()+"/metrics")
	for name := range fams {
		if strings.HasSuffix(name, "_deleted") {
			t.Errorf("the delete is served as a gauge %s", name)
		}
	}
	if _, ok := fams["interfaces_interface_state_counters_in_octets_total"]; ok {
		t.Errorf("the deleted interface's series are still served")
	}
	if t.Failed() {
		t.Logf("exposition after the delete:\n%s", body)
	}
}

// TestReloadTakesDefaultStaleness: a reload that polls the targets less
// often gives the sink a longer default staleness while it runs: a series
// updated 6 minutes ago stays served at 20m, as it would not at 5m.
func TestReloadTakesDefaultStaleness(t *testing.T) {
	now := time.Now()
	clk := func() time.Time { return now }
	cfg := configs.Sink{Type: "prometheus", Name: "prom", Listen: "127.0.0.1:0", DefaultStaleness: configs.Duration(5 * time.Minute)}
	s, err := promsink.NewSink(cfg, clk)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Collector().Update(&telemetry.Metric{Measurement: "interface", Device: "r1", Fields: map[string]any{"x": 1.0}, ReceivedAt: now})
	now = now.Add(6 * time.Minute)
	cfg.DefaultStaleness = configs.Duration(20 * time.Minute)
	s.Reload(cfg)
	var b strings.Builder
	s.Collector().WriteText(&b)
	if !strings.Contains(b.String(), "interface_x") {
		t.Fatalf("series 6 minutes old dropped after a reload to 20m staleness:\n%s", b.String())
	}
}
