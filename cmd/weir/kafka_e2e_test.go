package main

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

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker/recordbatch"
)

// TestPipelineOnKafkaCluster runs weir on a 3-broker Kafka cluster (kfake)
// instead of the embedded log: syslog sent with logger comes out of the
// cluster enriched, and as an event, as on the embedded broker.
func TestPipelineOnKafkaCluster(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed")
	}
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("broker:\n  compression: lz4\n  kafka:\n    brokers: ["+strings.Join(cluster.ListenAddrs(), ", ")+"]\n    replication_factor: 3\n"+
		"  topics:\n    events: {partitions: 3, retention: {time: 30d}}\n    archive: {retention: {time: -1, bytes: 10GiB}, segment: {bytes: 64MiB}}\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	if !strings.Contains(p.Logs(), "using Kafka cluster") {
		t.Fatalf("not on the cluster:\n%s", p.Logs())
	}
	// broker.topics' settings reach the topics weir creates (only their
	// partition counts did).
	admCl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	rcs, err := kadm.NewClient(admCl).DescribeTopicConfigs(context.Background(), "events", "archive")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{"events": {"retention.ms": "2592000000"},
		"archive": {"retention.ms": "-1", "retention.bytes": "10737418240", "segment.bytes": "67108864"}}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if v, ok := want[rc.Name][c.Key]; ok && (c.Value == nil || *c.Value != v) {
				t.Errorf("%s %s = %v, want %s", rc.Name, c.Key, c.MaybeValue(), v)
			}
		}
	}
	p.arista(t, "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet9, changed state to down")
	codecs := &batchCodecs{m: map[string]uint8{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("events", "enriched.syslog"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond), kgo.WithHooks(codecs))
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
		t.Fatalf("events on the cluster: %q (%v)\n%s", got["events"], err, p.Logs())
	}
	if !strings.Contains(got["enriched.syslog"], `"vendor":"arista_eos"`) {
		t.Fatalf("enriched.syslog on the cluster: %q", got["enriched.syslog"])
	}
	// The enrich group's lag, from the cluster, as on the embedded log.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		resp, err := http.Get("http://" + p.HTTPAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `weir_consumer_lag{group="enrich",partition="`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no weir_consumer_lag of group enrich on the cluster:\n%s", body)
		}
	}
	// Enrichment writes in transactions: a topic ends with a commit
	// marker, which weir consume reads past to its end (by partitions,
	// and as a group), printing the committed event once.
	for _, extra := range [][]string{nil, {"--group", "cli"}} {
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		cmd := exec.CommandContext(cctx, weirBin, append([]string{"consume", "events", "--from-beginning"}, extra...)...)
		cmd.Env = append(os.Environ(), "WEIR_BROKERS="+strings.Join(cluster.ListenAddrs(), ","))
		out, err := cmd.Output()
		ccancel()
		if err != nil {
			t.Fatalf("weir consume events %v: %v (stopped at the end?)\n%s", extra, err, out)
		}
		if n := strings.Count(string(out), `"interface_down"`); n != 1 {
			t.Fatalf("weir consume events %v printed the event %d times:\n%s", extra, n, out)
		}
	}
	// broker.compression is weir's producer's codec on a cluster too:
	// a hundred lines' records, which lz4 shrinks (franz-go sends a batch
	// compression does not shrink, a lone record's, as it is).
	_, tcp := p.SyslogAddrs(t)
	_, port, _ := strings.Cut(tcp, ":")
	logger := exec.Command("logger", "-n", "127.0.0.1", "-P", port, "-T", "--rfc3164", "-t", "Ebra")
	var lines strings.Builder
	for i := range 100 {
		fmt.Fprintf(&lines, "%%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet%d, changed state to down\n", 100+i)
	}
	logger.Stdin = strings.NewReader(lines.String())
	if out, err := logger.CombinedOutput(); err != nil {
		t.Fatalf("logger: %v %s", err, out)
	}
	lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer lcancel()
	for {
		pctx, c := context.WithTimeout(lctx, time.Second)
		cl.PollFetches(pctx)
		c()
		codecs.mu.Lock()
		lz4 := codecs.m["events"] == recordbatch.CodecLZ4 && codecs.m["enriched.syslog"] == recordbatch.CodecLZ4
		seen := fmt.Sprint(codecs.m)
		codecs.mu.Unlock()
		if lz4 {
			break
		}
		if lctx.Err() != nil {
			t.Fatalf("batches read with codecs %s, want lz4 (%d) for both topics", seen, recordbatch.CodecLZ4)
		}
	}
}

// batchCodecs notes, by topic, the codec of a compressed batch of records
// a client read, or 0 while it read none (franz-go's fetch hook).
type batchCodecs struct {
	mu sync.Mutex
	m  map[string]uint8
}

func (c *batchCodecs) OnFetchBatchRead(_ kgo.BrokerMetadata, topic string, _ int32, m kgo.FetchBatchMetrics) {
	if m.NumRecords == 0 {
		return // a transaction's marker
	}
	c.mu.Lock()
	c.m[topic] = max(c.m[topic], m.CompressionType)
	c.mu.Unlock()
}

// TestSyslogIngestKafkaVsEmbedded measures syslog ingest (TCP, one
// connection, until the records are in the log) on the embedded log and on
// a Kafka cluster (kfake, in this process) in the same run, with
// enrichment off. Run it with WEIR_BENCH=1; it prints both and the ratio.
func TestSyslogIngestKafkaVsEmbedded(t *testing.T) {
	if os.Getenv("WEIR_BENCH") == "" {
		t.Skip("set WEIR_BENCH=1 to measure")
	}
	sim := filepath.Join(t.TempDir(), "weir-sim")
	if out, err := exec.Command("go", "build", "-o", sim, "../weir-sim").CombinedOutput(); err != nil {
		t.Fatalf("build weir-sim: %v %s", err, out)
	}
	measure := func(name, yaml string, brokers func(p *weirProc) string) float64 {
		cfg := filepath.Join(t.TempDir(), "weir.yaml")
		os.WriteFile(cfg, []byte("enrich: {enabled: false}\n"+yaml), 0o644)
		p := startWeir(t, t.TempDir(), "-c", cfg)
		_, tcp := p.SyslogAddrs(t)
		out, err := exec.Command(sim, "syslog", "--target", tcp, "--protocol", "tcp", "--count", "500000",
			"--verify-brokers", brokers(p)).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: weir-sim: %v %s", name, err, out)
		}
		p.Stop(t)
		var rate float64
		for _, l := range strings.Split(string(out), "\n") {
			if i := strings.Index(l, "end to end "); i >= 0 {
				fmt.Sscanf(l[i+len("end to end "):], "%f", &rate)
			}
			if strings.Contains(l, "in the log:") && !strings.Contains(l, "lost 0,") {
				t.Errorf("%s lost records: %s", name, l)
			}
		}
		t.Logf("%s: %s", name, strings.TrimSpace(string(out)))
		return rate
	}
	embedded := measure("embedded", "", func(p *weirProc) string { return p.KafkaAddr })
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	kafka := measure("kafka", "broker:\n  kafka:\n    brokers: ["+strings.Join(cluster.ListenAddrs(), ", ")+"]\n    replication_factor: 1\n",
		func(*weirProc) string { return strings.Join(cluster.ListenAddrs(), ",") })
	fmt.Printf("\nsyslog ingest, TCP, 1 connection, 500,000 messages: embedded %.0f msg/s, Kafka (kfake) %.0f msg/s, embedded/Kafka %.2fx\n",
		embedded, kafka, embedded/kafka)
}
