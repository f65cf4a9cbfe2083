package main

import (
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestClusterMetricsLeaveOutEmbeddedLog: on a Kafka cluster /metrics has
// none of the embedded log's series (README: "weir_broker_* ... do not,
// as neither runs"); an all-zero fsync histogram there reads as a log
// that never syncs.
func TestClusterMetricsLeaveOutEmbeddedLog(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("broker:\n  kafka:\n    brokers: ["+strings.Join(cluster.ListenAddrs(), ", ")+"]\n    replication_factor: 1\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	resp, err := http.Get("http://" + p.HTTPAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := regexp.MustCompile(`(?m)^weir_broker_\w+`).FindAllString(string(body), -1); len(m) > 0 {
		t.Errorf("the embedded log's metrics on a Kafka cluster: %v", m)
	}
}

// TestKafkaIdleCloseHasItsReason: weir closing a client's idle connection
// is counted as a timeout, not as the error the help says to look for in the
// log, where an idle close is a debug line only.
func TestKafkaIdleCloseHasItsReason(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := kafkaMetrics(reg)
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	// The third is an error of another reason: a frame past the size
	// limit is a protocol error, malformed (kafkawire's
	// TestMalformedClosesAreTold), which a plain error cannot stand for.
	for _, err := range []error{nil, os.ErrDeadlineExceeded, errors.New("write tcp: no buffer space available")} {
		m.ConnOpened(remote)
		m.ConnClosed(remote, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "weir_kafka_connections_closed_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			got[mt.GetLabel()[0].GetValue()] = mt.GetCounter().GetValue()
		}
	}
	if want := map[string]float64{"ok": 1, "timeout": 1, "malformed": 0, "error": 1}; !maps.Equal(got, want) {
		t.Errorf("closed by reason %v, want %v", got, want)
	}
}
