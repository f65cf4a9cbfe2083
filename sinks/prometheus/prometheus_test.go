package prometheus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		ns, m, f string
		counter  bool
		want     string
	}{
		{"", "interface", "ifHCInOctets", true, "interface_if_hc_in_octets_total"},
		{"", "interface", "ifOperStatus", false, "interface_if_oper_status"},
		{"weir", "cpu-usage", "5min", false, "weir_cpu_usage_5min"},
		{"", "9x", "a.b", false, "_9x_a_b"},
		{"", "bgp", "in_total", true, "bgp_in_total"},
	} {
		if got := promsink.MetricName(tc.ns, tc.m, tc.f, tc.counter); got != tc.want {
			t.Errorf("MetricName(%q,%q,%q) = %q, want %q", tc.ns, tc.m, tc.f, got, tc.want)
		}
	}
	for in, want := range map[string]string{"ifName": "if_name", "__name__": "name", "site-id": "site_id", "0x": "_0x"} {
		if got := promsink.LabelName(in); got != want {
			t.Errorf("LabelName(%q) = %q, want %q", in, got, want)
		}
	}
}

func metric(dev, ifName string, in uint64, util float64) telemetry.Metric {
	return telemetry.Metric{V: 1, Measurement: "interface", Device: dev, Tags: map[string]string{"ifName": ifName, "site": "ams1"},
		Fields:   map[string]any{"ifHCInOctets": in, "utilisation": util, "ifOperStatus": "up", "up": true},
		Counters: []string{"ifHCInOctets"}, Time: time.Now()}
}

func scrape(t *testing.T, url string) (string, map[string]*dto) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, body)
	}
	out := map[string]*dto{}
	for name, f := range fams {
		d := &dto{typ: f.GetType().String(), values: map[string]float64{}}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			d.values[strings.Join(ls, ",")] = v
		}
		out[name] = d
	}
	return string(body), out
}

type dto struct {
	typ    string
	values map[string]float64
}

func TestExpositionAndStaleness(t *testing.T) {
	b := sinktest.Broker(t)
	clk := &clock{t: time.Now()}
	cfg := configs.Sink{Type: "prometheus", Name: "prom", Topics: []string{"enriched.metrics"}, Listen: "127.0.0.1:0",
		Staleness: configs.Duration(5 * time.Minute), FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := promsink.NewSink(cfg, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + s.Addr().String() + "/metrics"
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, []telemetry.Metric{
		metric("r0", "Ethernet1", 1000, 12.5), metric("r1", "Ethernet2", 1<<40, 0)})
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "2 metrics", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == 2
	})
	_, fams := scrape(t, url)
	in := fams["interface_if_hc_in_octets_total"]
	if in == nil || in.typ != "COUNTER" || in.values["device=r0,if_name=Ethernet1,site=ams1"] != 1000 ||
		in.values["device=r1,if_name=Ethernet2,site=ams1"] != float64(uint64(1)<<40) {
		t.Fatalf("counter family: %+v (all: %v)", in, fams)
	}
	if u := fams["interface_utilisation"]; u == nil || u.typ != "GAUGE" || u.values["device=r0,if_name=Ethernet1,site=ams1"] != 12.5 {
		t.Fatalf("gauge family: %+v", u)
	}
	if u := fams["interface_up"]; u == nil || u.values["device=r1,if_name=Ethernet2,site=ams1"] != 1 {
		t.Fatalf("bool family: %+v", u)
	}
	if _, ok := fams["interface_if_oper_status"]; ok {
		t.Fatal("string field exported")
	}
	if n := testutil.CollectAndCount(s.Collector()); n != 6 {
		t.Fatalf("%d series, want 6", n)
	}

	// Later: r0 updated, r1 not; past the staleness period r1 is gone.
	clk.add(4 * time.Minute)
	later := metric("r0", "Ethernet1", 2000, 50)
	later.Time = clk.now() // received now, by the sink's clock
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, []telemetry.Metric{later})
	sinktest.Eventually(t, "3 metrics", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == 3
	})
	clk.add(2 * time.Minute)
	_, fams = scrape(t, url)
	in = fams["interface_if_hc_in_octets_total"]
	if in == nil || len(in.values) != 1 || in.values["device=r0,if_name=Ethernet1,site=ams1"] != 2000 {
		t.Fatalf("after staleness: %+v", in)
	}
	if n := testutil.CollectAndCount(s.Collector()); n != 3 {
		t.Fatalf("%d series after staleness, want 3", n)
	}
}

// TestRealPrometheus starts Debian's prometheus scraping the sink and
// checks the exposition with promtool.
func TestRealPrometheus(t *testing.T) {
	promtool := peers.Look(t, "prometheus", "promtool")
	b := sinktest.Broker(t)
	cfg := configs.Sink{Type: "prometheus", Name: "prom", Topics: []string{"enriched.metrics"}, Listen: "127.0.0.1:0",
		FlushInterval: configs.Duration(10 * time.Millisecond)}
	s, err := promsink.NewSink(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	var ms []telemetry.Metric
	for i := range 20 {
		ms = append(ms, metric(fmt.Sprintf("r%d", i), "Ethernet1", uint64(1000+i), float64(i)/2))
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, ms)
	r := sinktest.Start(t, b, cfg, s)
	sinktest.Eventually(t, "20 metrics", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "prom"}) == 20
	})
	target := s.Addr().String()
	body, _ := scrape(t, "http://"+target+"/metrics")
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}

	conf := fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: weir\n    static_configs: [{targets: [%q]}]\n", target)
	promAddr := peers.Prometheus(t, conf)
	q := "http://" + promAddr + "/api/v1/query?query=" + "interface_if_hc_in_octets_total%7Bdevice%3D%22r7%22%7D"
	if value := waitQuery(t, http.DefaultClient, q); value != "1007" {
		t.Fatalf("Prometheus value %q, want 1007", value)
	}
}

// waitQuery waits until the instant query q returns one series labelled
// if_name=Ethernet1 and returns its value.
func waitQuery(t *testing.T, client *http.Client, q string) string {
	var value string
	sinktest.Eventually(t, "Prometheus has the series", func() bool {
		resp, err := client.Get(q)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var res struct {
			Data struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  [2]any            `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&res) != nil || len(res.Data.Result) != 1 {
			return false
		}
		value, _ = res.Data.Result[0].Value[1].(string)
		return res.Data.Result[0].Metric["if_name"] == "Ethernet1"
	})
	return value
}

// remoteWriteToPrometheus starts Debian's prometheus with its remote
// write receiver and makes a remote write sink "rw" of enriched.metrics
// to it, retrying quickly while it starts, on a broker of its own.
func remoteWriteToPrometheus(t *testing.T) (promAddr string, b *embedded.Broker, cfg configs.Sink, d sinks.Destination) {
	t.Helper()
	promAddr, b, cfg = promsink.ToPrometheus(t)
	d, err := promsink.NewRemoteWrite(cfg, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return promAddr, b, cfg, d
}

// TestRealPrometheusRemoteWrite pushes with the remote-write sink to
// Debian's prometheus and queries the samples back.
func TestRealPrometheusRemoteWrite(t *testing.T) {
	promAddr, b, cfg, d := remoteWriteToPrometheus(t)
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	var ms []telemetry.Metric
	for i := range 20 {
		ms = append(ms, metric(fmt.Sprintf("r%d", i), "Ethernet1", uint64(5000+i), float64(i)/4))
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, ms)
	// Prometheus may still be starting: the sink retries until it is up.
	r := sinktest.Start(t, b, cfg, d)
	sinktest.Eventually(t, "20 metrics pushed", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "rw"}) == 20
	})
	q := "http://" + promAddr + "/api/v1/query?query=" + "interface_if_hc_in_octets_total%7Bdevice%3D%22r9%22%7D"
	if value := waitQuery(t, http.DefaultClient, q); value != "5009" {
		t.Fatalf("Prometheus value %q, want 5009", value)
	}
	q = "http://" + promAddr + "/api/v1/query?query=" + "interface_utilisation%7Bdevice%3D%22r6%22%7D"
	if value := waitQuery(t, http.DefaultClient, q); value != "1.5" {
		t.Fatalf("Prometheus value %q, want 1.5", value)
	}
}

// TestRealPrometheusRemoteWriteMutualTLS pushes over HTTPS to a
// Prometheus that requires a client certificate from a private CA: the
// sink's tls settings (ca_file, cert_file, key_file) are used, and
// without the client certificate nothing is written.
func TestRealPrometheusRemoteWriteMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	srvCert, srvKey := ca.LeafFiles(t, "prometheus")
	cliCert, cliKey := ca.LeafFiles(t, "weir")
	web := filepath.Join(t.TempDir(), "web.yml")
	webConf := fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: %s\n",
		srvCert, srvKey, ca.File)
	if err := os.WriteFile(web, []byte(webConf), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := peers.Prometheus(t, "global: {scrape_interval: 1m}\n", "--web.config.file="+web)
	b := sinktest.Broker(t)
	ms := []telemetry.Metric{metric("tls1", "Ethernet1", 4242, 1)}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "tls1" }, ms)
	retry := configs.SinkRetry{Initial: configs.Duration(50 * time.Millisecond), Max: configs.Duration(200 * time.Millisecond)}
	sink := func(name string, tls configs.SinkTLS) configs.Sink {
		return configs.Sink{Type: "prometheus_remote_write", Name: name, Topics: []string{"enriched.metrics"},
			URL: "https://localhost" + promAddr[strings.LastIndex(promAddr, ":"):] + "/api/v1/write", TLS: tls,
			FlushInterval: configs.Duration(10 * time.Millisecond), Retry: retry}
	}

	// Without a client certificate: refused at the handshake, retried.
	noCert := sink("nocert", configs.SinkTLS{CAFile: ca.File})
	d, err := promsink.NewRemoteWrite(noCert, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	r := sinktest.Start(t, b, noCert, d)
	sinktest.Eventually(t, "the sink without a certificate to retry", func() bool {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "nocert"}) >= 2
	})
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}

	good := sink("mtls", configs.SinkTLS{CAFile: ca.File, CertFile: cliCert, KeyFile: cliKey})
	if d, err = promsink.NewRemoteWrite(good, sinks.Env{}); err != nil {
		t.Fatal(err)
	}
	r = sinktest.Start(t, b, good, d)
	sinktest.Eventually(t, "the metric pushed", func() bool {
		return r.Counter("weir_sink_records_total", map[string]string{"sink": "mtls"}) == 1
	})
	tc, err := configs.SinkTLS{CAFile: ca.File, CertFile: cliCert, KeyFile: cliKey}.Client().Config()
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	q := "https://localhost" + promAddr[strings.LastIndex(promAddr, ":"):] + "/api/v1/query?query=interface_if_hc_in_octets_total%7Bdevice%3D%22tls1%22%7D"
	if value := waitQuery(t, client, q); value != "4242" {
		t.Fatalf("Prometheus value %q, want 4242", value)
	}
}

// A listener that breaks while serving is reported at once, not when weir
// shuts down.
func TestServeFailureReturns(t *testing.T) {
	cfg := configs.Sink{Type: "prometheus", Name: "prom", Listen: "127.0.0.1:0"}
	s, err := promsink.NewSink(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- s.Run(ctx) }()
	// Serve is accepting once a scrape succeeds.
	if _, err := http.Get("http://" + s.Addr().String() + "/metrics"); err != nil {
		t.Fatal(err)
	}
	s.Close() // the listener fails under Serve
	select {
	case err := <-ran:
		if err == nil {
			t.Fatal("Run returned nil after its listener failed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run still running 5 s after its listener failed")
	}
}
