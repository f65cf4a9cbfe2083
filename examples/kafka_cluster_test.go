package examples_test

import (
	"bufio"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/weirproc"
)

// TestExampleKafkaCluster runs examples/kafka-cluster on kfake: the first
// example's config with kafka.yaml appended (the README's cat line), two
// processes started as the README starts them. They share the 60
// coordination partitions, the three targets and the enrich group; the
// file gets rates of every switch; and after a kill -9 of one, the other
// takes all three targets.
func TestExampleKafkaCluster(t *testing.T) {
	t.Parallel() // each waits on poll and scrape intervals, on ports of its own
	const dir = "kafka-cluster/"
	commands(t, "curl", "jq", "logger")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	out := t.TempDir()
	shell(t, moved(t, "the README's cat line", readmeLine(t, dir+"README.md", "examples/kafka-cluster/kafka.yaml >"),
		"/tmp/weir-examples/kafka-cluster", out))
	base := freePorts(t, "udp", 3)
	sim(t, "snmp", "--agents", "3", "--interfaces", "8", "--base-port", fmt.Sprint(base))
	cfg := filepath.Join(out, "weir.yaml")
	refused := peers.FreeAddr(t) // no InfluxDB: its sink retries, the others carry on
	moveFile(t, cfg,
		"[127.0.0.1:9092]", "["+strings.Join(cluster.ListenAddrs(), ", ")+"]",
		"127.0.0.1:16100", fmt.Sprintf("127.0.0.1:%d", base),
		"127.0.0.1:16101", fmt.Sprintf("127.0.0.1:%d", base+1),
		"127.0.0.1:16102", fmt.Sprintf("127.0.0.1:%d", base+2),
		"127.0.0.1:9273", peers.FreeAddr(t),
		"http://127.0.0.1:8086", "http://"+refused,
		"/tmp/weir-examples/one-poll-three-systems", out)

	// The README's two processes, with free ports for theirs.
	a := weirproc.Start(t, weirBin, root, "-c", cfg, "--data-dir", filepath.Join(out, "a"), "--http-listen", "127.0.0.1:0", "--syslog-listen", "127.0.0.1:0")
	b := weirproc.Start(t, weirBin, root, "-c", cfg, "--data-dir", filepath.Join(out, "b"),
		"--roles", "collect,enrich", "--http-listen", "127.0.0.1:0", "--syslog-listen", "127.0.0.1:0")

	share := func(p *weirproc.Proc) (partitions, targets int) {
		m := p.Metrics(t)
		return int(m["weir_shard_partitions"]), int(m[`weir_shard_owned_targets{collector="snmp"}`])
	}
	peers.Within(t, time.Minute, "the two processes to share the partitions and the targets", func() bool {
		a.Running(t)
		b.Running(t)
		pa, ta := share(a)
		pb, tb := share(b)
		return pa == 30 && pb == 30 && ta+tb == 3
	})
	// The README's logger line to the first process, and its event on
	// the cluster.
	brokers := strings.Join(cluster.ListenAddrs(), ",")
	client := func(line string) string {
		return moved(t, "a README line", line, "WEIR_BROKERS=127.0.0.1:9092 bin/weir ", "WEIR_BROKERS="+brokers+" "+weirBin+" ")
	}
	_, tcp := a.SyslogAddrs(t)
	shell(t, moved(t, "the README's logger line", readmeLine(t, dir+"README.md", "logger -n"), "-P 5514", "-P "+tcp[strings.LastIndex(tcp, ":")+1:]))
	consume := client(readmeLine(t, dir+"README.md", "consume events"))
	var event string
	peers.Within(t, time.Minute, "the event on the cluster", func() bool {
		event, _ = try(consume) // no such topic until enrichment made it
		return strings.Contains(event, `"type":"interface_down"`) && strings.Contains(event, `"object":"Ethernet7"`)
	})

	// The README's groups describe line.
	describe := client(readmeLine(t, dir+"README.md", "groups describe enrich"))
	members := regexp.MustCompile(`members (\d+)`)
	var described string
	defer func() {
		if t.Failed() {
			t.Logf("%s:\n%s", describe, described)
		}
	}()
	peers.Within(t, time.Minute, "8 members of the enrich group", func() bool {
		described, _ = try(describe)
		m := members.FindStringSubmatch(described)
		return m != nil && m[1] == "8"
	})

	// Every switch's rates reach the file, whichever process polled and
	// enriched them (the README's jq line).
	rates := strings.ReplaceAll(readmeLine(t, dir+"README.md", "select(.measurement == \"interface\""),
		"/tmp/weir-examples/one-poll-three-systems", out)
	rates = strings.TrimSuffix(strings.TrimSpace(rates), "| tail -3")
	ratesOf := func() map[string]bool {
		o, err := try(rates)
		seen := map[string]bool{}
		if err != nil {
			return seen
		}
		sc := bufio.NewScanner(strings.NewReader(o))
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"in_bps":`) && !strings.Contains(sc.Text(), `"in_bps":null`) {
				seen[strings.Split(strings.Split(sc.Text(), `"device":"`)[1], `"`)[0]] = true
			}
		}
		return seen
	}
	peers.Within(t, time.Minute, "rates of sw1, sw2 and sw3 in the file", func() bool {
		s := ratesOf()
		return s["sw1"] && s["sw2"] && s["sw3"]
	})
	if o := shell(t, rates); strings.Contains(o, "error") { // jq's errors go to stderr, which shell keeps
		t.Fatalf("the README's jq line: %s", o)
	}

	// kill -9 the second: the first takes everything over.
	if err := b.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.Exited
	start := time.Now()
	peers.Within(t, time.Minute, "the survivor to own all partitions and targets", func() bool {
		a.Running(t)
		pa, ta := share(a)
		return pa == 60 && ta == 3
	})
	t.Logf("the survivor owned every target %v after the kill", time.Since(start).Round(time.Second))
}
