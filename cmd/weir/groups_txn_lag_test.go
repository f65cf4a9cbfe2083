package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGroupsLagSkipsTransactionMarkers: on a Kafka cluster, a group that
// has read and committed everything of a topic written in transactions
// (enrichment's events and enriched.*, which weir's sinks read) commits
// the offset where the commit marker sits. `weir groups` shows it caught
// up, lag 0, as weir_consumer_lag does, not 1 per partition for good.
func TestGroupsLagSkipsTransactionMarkers(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	seeds := cluster.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID("t"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "out", Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// A record outside a transaction after an aborted one: the lag of
	// partition 1 is that record, which stays counted.
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "out", Partition: 1, Value: []byte("aborted")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := prod.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup("sink"), kgo.ConsumeTopics("out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	for n := 0; n < 2; {
		f := cons.PollFetches(ctx)
		if err := f.Err0(); err != nil {
			t.Fatal(err)
		}
		n += f.NumRecords()
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	plain, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.ProduceSync(ctx, &kgo.Record{Topic: "out", Partition: 1, Value: []byte("new")}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		if err := groupsCmd(ctx, append(args, "--brokers", strings.Join(seeds, ",")), &out, &errs); err != nil {
			t.Fatalf("groups %v: %v\n%s%s", args, err, out.String(), errs.String())
		}
		return out.String()
	}
	lags := map[string]string{}
	for _, line := range strings.Split(run("describe", "sink"), "\n") {
		if f := strings.Fields(line); len(f) == 6 && f[0] == "out" {
			lags[f[1]] = f[4]
		}
	}
	if lags["0"] != "0" || lags["1"] != "1" {
		t.Errorf("groups describe: lag of partition 0 %q (only a commit marker after the commit), of 1 %q (an aborted record, a marker and a record); want 0 and 1", lags["0"], lags["1"])
	}
	for _, line := range strings.Split(run("list"), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "sink" && f[3] != "1" {
			t.Errorf("groups list: %q, want a lag of 1", line)
		}
	}
}
