package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp"
	"github.com/weirnet/weir/collectors/snmp/sim"
)

// TestShardSNMPTargetsOnKafka: three collecting weir processes on a
// 3-broker Kafka cluster (kfake) share 300 simulated SNMP targets, and a
// fourth enriches. Every target is polled exactly once per interval; one
// collector is killed with SIGKILL and its targets are polled by the two
// others within one poll interval plus the session timeout (plus a margin
// for the rebalance), with no interval polled twice; enriched.metrics
// then holds each polled record exactly once.
func TestShardSNMPTargetsOnKafka(t *testing.T) {
	t.Parallel()
	const (
		targets  = 300
		interval = 5 * time.Second
		session  = 6 * time.Second // Kafka's (and kfake's) smallest by default
		// The group notices a silent member after the session timeout,
		// then the survivors hear of it at their next heartbeat (a sixth
		// of the session) and rejoin: a few hundred ms, more on a loaded
		// machine.
		margin = 4 * time.Second
	)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	addrs := cluster.ListenAddrs()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "broker:\n  kafka:\n    brokers: [%s]\n    replication_factor: 3\n", strings.Join(addrs, ", "))
	fmt.Fprintf(&cfg, "cluster: {session_timeout: %s}\n", session)
	fmt.Fprintf(&cfg, "snmp:\n  defaults: {version: 2c, community: public, interval: %s, timeout: 2s, retries: 1, profiles: [system]}\n", interval)
	cfg.WriteString("  traps: {listen: \"off\"}\n  targets:\n")
	names := make([]string, targets)
	for i := range names {
		names[i] = fmt.Sprintf("sim%d", i)
		a, err := sim.Listen("127.0.0.1:0", sim.Options{Name: names[i], Seed: uint64(i), Interfaces: 1, Community: "public"})
		if err != nil {
			t.Fatal(err)
		}
		go a.Serve(ctx)
		fmt.Fprintf(&cfg, "    - {name: %s, address: %q}\n", names[i], a.Addr().String())
	}
	file := filepath.Join(t.TempDir(), "weir.yaml")
	if err := os.WriteFile(file, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	enricher := startWeir(t, t.TempDir(), "-c", file, "--roles", "enrich")
	var collectors []*weirProc
	for range 3 {
		collectors = append(collectors, startWeir(t, t.TempDir(), "-c", file, "--roles", "collect"))
	}
	// Wait until the three share the targets: each owns some, together
	// all, and every one has its group's assignment.
	start := time.Now()
	for {
		total, all := 0, true
		for _, p := range collectors {
			m := p.Metrics(t)
			n := int(m[`weir_shard_owned_targets{collector="snmp"}`])
			total += n
			all = all && n > 0 && m["weir_shard_member"] == 1
		}
		if all && total == targets {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the collectors do not share the targets after 30s (%d owned in all)\n%s", total, collectors[0].Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	shared := time.Now()
	t.Logf("three collectors share the %d targets %v after start", targets, shared.Sub(start).Round(time.Millisecond))

	// Two and a half intervals with three collectors, then one is killed.
	time.Sleep(interval*5/2 + time.Second)
	victim := collectors[2]
	victimTargets := ownedFromLog(t, victim, names)
	victim.Cmd.Process.Signal(syscall.SIGKILL)
	<-victim.Exited
	killed := time.Now()
	t.Logf("killed a collector owning %d targets", len(victimTargets))
	takeover := killed.Add(session + margin)
	// Every target's first slot after the takeover, and one more.
	time.Sleep(time.Until(takeover.Add(2*interval + time.Second)))
	// Intervals from the first stop on are not checked: a collector
	// polls nothing once told to stop, and the second is stopped after
	// the first has finished.
	stopped := time.Now()
	collectors[0].Stop(t)
	collectors[1].Stop(t)

	raw := readMetrics(t, addrs, "raw.snmp")
	type key struct {
		device, measurement string
		time                time.Time
	}
	polls := map[string]map[int64]int{} // target -> slot -> polls
	rawKeys := map[key]int{}
	firstAfterKill := map[string]time.Time{}
	for _, m := range raw {
		rawKeys[key{m.Device, m.Measurement, m.Time}]++
		if m.Measurement != "snmp_status" {
			continue
		}
		off := snmp.Offset(m.Device, interval)
		slot := (m.Time.UnixNano() - int64(off)) / int64(interval)
		if polls[m.Device] == nil {
			polls[m.Device] = map[int64]int{}
		}
		polls[m.Device][slot]++
		if m.Time.After(killed) && (firstAfterKill[m.Device].IsZero() || m.Time.Before(firstAfterKill[m.Device])) {
			firstAfterKill[m.Device] = m.Time
		}
	}
	// slotStart is when a target's slot k begins.
	slotStart := func(name string, k int64) time.Time {
		return time.Unix(0, k*int64(interval)+int64(snmp.Offset(name, interval)))
	}
	checked, duplicates, missing := 0, 0, 0
	for _, name := range names {
		off := int64(snmp.Offset(name, interval))
		first := (shared.UnixNano() - off) / int64(interval)
		for k := first + 1; ; k++ {
			at := slotStart(name, k)
			if at.After(stopped.Add(-time.Second)) {
				break
			}
			n := polls[name][k]
			// Around the kill the victim's last poll may be lost and
			// its targets wait for the takeover: at most once there.
			transition := at.After(killed.Add(-time.Second)) && at.Before(takeover)
			switch {
			case n > 1:
				duplicates++
				t.Errorf("%s polled %d times in the interval from %s", name, n, at.Format("15:04:05.000"))
			case n == 0 && !transition:
				missing++
				if missing <= 10 {
					t.Errorf("%s not polled in the interval from %s (killed at %s)", name, at.Format("15:04:05.000"), killed.Format("15:04:05.000"))
				}
			}
			if !transition {
				checked++
			}
		}
	}
	t.Logf("%d target intervals checked: %d missed, %d polled twice or more", checked, missing, duplicates)
	var worst time.Duration
	for _, name := range victimTargets {
		first, ok := firstAfterKill[name]
		if !ok {
			t.Errorf("%s (the killed collector's) never polled after the kill", name)
			continue
		}
		worst = max(worst, first.Sub(killed))
	}
	t.Logf("the killed collector's %d targets were polled again at most %v after the kill (bound: interval %v + session timeout %v + %v)",
		len(victimTargets), worst.Round(time.Millisecond), interval, session, margin)
	if worst > interval+session+margin {
		t.Errorf("takeover took %v, more than %v", worst, interval+session+margin)
	}

	// Enrichment: each raw record once in enriched.metrics, none lost, no
	// duplicate.
	var enriched []polled
	for deadline := time.Now().Add(30 * time.Second); ; {
		enriched = readMetrics(t, addrs, "enriched.metrics")
		if len(enriched) >= len(raw) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	enricher.Stop(t)
	got := map[key]int{}
	for _, m := range enriched {
		got[key{m.Device, m.Measurement, m.Time}]++
	}
	lost, dup := 0, 0
	for k, n := range rawKeys {
		if n != 1 {
			t.Errorf("raw.snmp holds %d records of %v", n, k)
		}
		switch e := got[k]; {
		case e == 0:
			lost++
		case e > 1:
			dup++
		}
	}
	for k := range got {
		if rawKeys[k] == 0 {
			t.Errorf("enriched.metrics has %v, which raw.snmp does not", k)
		}
	}
	t.Logf("raw.snmp: %d records; enriched.metrics: %d; lost %d, duplicated %d", len(raw), len(enriched), lost, dup)
	if lost > 0 || dup > 0 {
		t.Errorf("enrichment lost %d and duplicated %d records", lost, dup)
	}
}

var ownedRE = regexp.MustCompile(`msg="shard: assignment [^"]*".* partitions="\d+ of (\d+)" owned=(\S*)`)

// ownedFromLog returns the targets p owns by its last logged assignment.
func ownedFromLog(t *testing.T, p *weirProc, names []string) []string {
	t.Helper()
	ms := ownedRE.FindAllStringSubmatch(p.Logs(), -1)
	if len(ms) == 0 {
		t.Fatalf("no assignment logged:\n%s", p.Logs())
	}
	last := ms[len(ms)-1]
	of, _ := strconv.Atoi(last[1])
	var parts []int32
	for _, s := range strings.Split(strings.Trim(last[2], `"`), ",") {
		if n, err := strconv.Atoi(s); err == nil {
			parts = append(parts, int32(n))
		}
	}
	var out []string
	for _, n := range names {
		if slices.Contains(parts, broker.PartitionForKey([]byte(n), int32(of))) {
			out = append(out, n)
		}
	}
	return out
}

type polled struct {
	Device      string    `json:"device"`
	Measurement string    `json:"measurement"`
	Time        time.Time `json:"time"`
}

// readMetrics reads the committed records of a topic of the cluster from
// its start to its end now. It sees the transactions' markers, so that a
// partition whose last offset is one (enrichment writes in transactions)
// is read to its end.
func readMetrics(t *testing.T, addrs []string, topic string) []polled {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	var out []polled
	if len(want) == 0 {
		return out
	}
	offsets := map[int32]kgo.Offset{}
	for p := range want {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets})
	for len(want) > 0 {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %d partitions not read to the end", topic, len(want))
		}
		f.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok {
				return
			}
			if r.Offset < end && !r.Attrs.IsControl() {
				var m polled
				if err := json.Unmarshal(r.Value, &m); err != nil {
					t.Errorf("%s: %v", topic, err)
				}
				out = append(out, m)
			}
			// The last offset may hold an aborted record, which
			// read_committed skips: its marker comes after it.
			if r.Offset >= end-1 {
				delete(want, r.Partition)
			}
		})
	}
	return out
}
