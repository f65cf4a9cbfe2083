package all_test

import (
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/all"
	"github.com/weirnet/weir/sinks/internal/sinktest"
)

// The config package's list of types and the registry must agree, or
// `weir check` accepts a type `weir run` cannot build.
func TestRegistryMatchesConfigTypes(t *testing.T) {
	var keys []string
	for k := range all.Registry() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := slices.Clone(configs.SinkTypes)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Fatalf("registry %v, configs.SinkTypes %v", keys, want)
	}
}

func TestBuildFromConfig(t *testing.T) {
	cfg, err := configs.Parse([]byte(`
sinks:
  - {type: prometheus, name: prom, listen: "127.0.0.1:0", topics: [enriched.metrics]}
  - {type: influxdb, name: influx, url: "http://127.0.0.1:8086", database: net, topics: [enriched.metrics]}
  - {type: file, name: archive, path: "` + t.TempDir() + `/events.jsonl", topics: [events, enriched.syslog]}
  - {type: webhook, name: alerts, url: "http://127.0.0.1:9093/api/v2/alerts", format: alertmanager, topics: [events]}
`))
	if err != nil {
		t.Fatal(err)
	}
	b := sinktest.Broker(t)
	reg := prometheus.NewRegistry()
	ss, err := all.Build(b, cfg.Sinks, sinks.Env{Logger: slog.New(slog.DiscardHandler), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 4 {
		t.Fatalf("%d sinks", len(ss))
	}
	for _, s := range ss {
		s.Close()
	}
	cfg.Sinks = append(cfg.Sinks, cfg.Sinks[1])
	if _, err := all.Build(b, cfg.Sinks, sinks.Env{Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry()}); err == nil {
		t.Fatal("duplicate name accepted")
	}
}

// TestBuildErrorNamesTheSinkOnce: a sink that cannot start (its port
// taken) is named once in the error, by its type and name ("sink p:
// prometheus sink p: listen ..." before).
func TestBuildErrorNamesTheSinkOnce(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg, err := configs.Parse([]byte("sinks:\n  - {type: prometheus, name: p, listen: \"" + taken.Addr().String() + "\", topics: [enriched.metrics]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = all.Build(sinktest.Broker(t), cfg.Sinks, sinks.Env{Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry()})
	if err == nil || !strings.HasPrefix(err.Error(), "prometheus sink p: ") || strings.Count(err.Error(), "sink p") != 1 {
		t.Fatalf("error %v, want it to name prometheus sink p once", err)
	}
}

// TestBuildErrorNamesRemoteWriteSinkOnce: a prometheus_remote_write sink
// names itself "remote write sink NAME", not by its type: it was named
// twice ("sink rw: remote write sink rw: ...").
func TestBuildErrorNamesRemoteWriteSinkOnce(t *testing.T) {
	cfg, err := configs.Parse([]byte("sinks:\n  - {type: prometheus_remote_write, name: rw, url: \"https://127.0.0.1:1/api/v1/write\", tls: {ca_file: " +
		t.TempDir() + "/no-such-ca.pem}, topics: [enriched.metrics]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = all.Build(sinktest.Broker(t), cfg.Sinks, sinks.Env{Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry()})
	if err == nil || strings.Count(err.Error(), "sink rw") != 1 {
		t.Fatalf("error %v, want it to name sink rw once", err)
	}
}
