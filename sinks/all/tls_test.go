package all_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/all"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// Every HTTP sink reaches an HTTPS endpoint that has a private CA and
// requires a client certificate, with the sink's tls settings from YAML.
func TestHTTPSinksMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "weir test CA")
	srvCert, srvKey := ca.LeafFiles(t, "localhost")
	cliCert, cliKey := ca.LeafFiles(t, "weir")
	var mu sync.Mutex
	paths := map[string]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusForbidden)
			return
		}
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	tc, err := tlsconf.Server(srvCert, srvKey, ca.File)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = tc
	srv.StartTLS()
	defer srv.Close()
	base := "https://localhost:" + srv.Listener.Addr().String()[len("127.0.0.1:"):]
	tlsYAML := fmt.Sprintf("{ca_file: %s, cert_file: %s, key_file: %s}", ca.File, cliCert, cliKey)
	cfg, err := configs.Parse([]byte(`
sinks:
  - {type: influxdb, name: influx, url: "` + base + `", database: net, topics: [enriched.metrics], flush_interval: 10ms, tls: ` + tlsYAML + `}
  - {type: prometheus_remote_write, name: rw, url: "` + base + `/api/v1/write", topics: [enriched.metrics], flush_interval: 10ms, tls: ` + tlsYAML + `}
  - {type: webhook, name: hook, url: "` + base + `/hook", topics: [enriched.metrics], flush_interval: 10ms, tls: ` + tlsYAML + `}
`))
	if err != nil {
		t.Fatal(err)
	}
	b := sinktest.Broker(t)
	m := telemetry.Metric{V: telemetry.Version, Measurement: "interface", Device: "r1", Time: time.Now(),
		Tags: map[string]string{"if_name": "Ethernet1"}, Fields: map[string]any{"if_hc_in_octets": uint64(1)}}
	sinktest.Produce(t, b, telemetry.TopicEnrichedMetrics, telemetry.SchemaMetric, func(int) string { return "r1" }, []telemetry.Metric{m})
	var running []*sinktest.Running
	for _, c := range cfg.Sinks {
		dest, err := all.Registry()[c.Type](c, sinks.Env{})
		if err != nil {
			t.Fatal(err)
		}
		running = append(running, sinktest.Start(t, b, c, dest))
	}
	for i, r := range running {
		sinktest.Eventually(t, cfg.Sinks[i].Name+" to deliver", func() bool {
			return r.Counter("weir_sink_records_total", nil) == 1
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if paths["/write"] != 1 || paths["/api/v1/write"] != 1 || paths["/hook"] != 1 {
		t.Fatalf("requests by path: %v", paths)
	}
}
