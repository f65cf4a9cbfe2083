package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
