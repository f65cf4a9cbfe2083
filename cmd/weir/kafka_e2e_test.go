package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPipelineOnKafkaCluster runs weir on a 3-broker Kafka cluster (kfake)
// instead of the embedded log: syslog sent with logger comes out of the
// cluster enriched, and as an event, as on the embedded broker.
func TestPipelineOnKafkaCluster(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed")
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("broker:\n  kafka:\n    brokers: ["+strings.Join(cluster.ListenAddrs(), ", ")+"]\n    replication_factor: 3\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	if !strings.Contains(p.logs(), "using Kafka cluster") {
		t.Fatalf("not on the cluster:\n%s", p.logs())
	}
	_, tcp := p.syslogAddrs(t)
	_, port, _ := strings.Cut(tcp, ":")
	if out, err := exec.Command("logger", "-n", "127.0.0.1", "-P", port, "-T", "--rfc3164", "-t", "Ebra",
		"%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet9, changed state to down").CombinedOutput(); err != nil {
		t.Fatalf("logger: %v %s", err, out)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("events", "enriched.syslog"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := map[string]string{}
	for len(got) < 2 && ctx.Err() == nil {
		pctx, c := context.WithTimeout(ctx, time.Second)
		f := cl.PollFetches(pctx)
		c()
		f.EachRecord(func(r *kgo.Record) { got[r.Topic] = string(r.Value) })
		cl.ForceMetadataRefresh()
	}
	var ev struct{ Type, Object string }
	if err := json.Unmarshal([]byte(got["events"]), &ev); err != nil || ev.Type != "interface_down" || ev.Object != "Ethernet9" {
		t.Fatalf("events on the cluster: %q (%v)\n%s", got["events"], err, p.logs())
	}
	if !strings.Contains(got["enriched.syslog"], `"vendor":"arista_eos"`) {
		t.Fatalf("enriched.syslog on the cluster: %q", got["enriched.syslog"])
	}
}
