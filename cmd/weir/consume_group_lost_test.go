package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumeGroupSaysRetentionPassedItsCommit: a group that stopped
// behind (its commit at 5) while retention deleted the records up to 8 goes
// on from the log start, and `weir consume --group` says on stderr which
// records it never got (`lost records ...`), as the README promises: it
// said nothing, franz-go resetting such a partition without a data-loss
// notice, so the reader could not tell the gap from a quiet topic.
func TestConsumeGroupSaysRetentionPassedItsCommit(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 0, Value: []byte{'0' + byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	var commit kadm.Offsets
	commit.Add(kadm.Offset{Topic: "t", Partition: 0, At: 5, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "g", commit); err != nil {
		t.Fatal(err)
	}
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: "t", Partition: 0, At: 8})
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}

	for _, follow := range []bool{false, true} {
		if follow {
			// The first run committed the end (10): lose 10..11 too.
			for i := range 4 {
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 0, Value: []byte{'a' + byte(i)}}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			del = kadm.Offsets{}
			del.Add(kadm.Offset{Topic: "t", Partition: 0, At: 12})
			if _, err := adm.DeleteRecords(ctx, del); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--group", "g", "--from-beginning"}
		want, lost := `"value":9`, "lost records at offsets 5 to 7"
		if follow {
			args = append(args, "--follow", "--max", "2")
			want, lost = `"value":"d"`, "lost records at offsets 10 to 11"
		}
		runCtx, runCancel := context.WithTimeout(ctx, 15*time.Second)
		var stdout, stderr bytes.Buffer
		err = dispatch(runCtx, args, strings.NewReader(""), &stdout, &stderr)
		runCancel()
		if err != nil || !strings.Contains(stdout.String(), want) {
			t.Fatalf("follow=%v: consume: %v, printed %q (%s)", follow, err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stderr.String(), lost) || !strings.Contains(stderr.String(), "(reading on)") {
			t.Errorf("follow=%v: stderr does not say %q ... (reading on): %q", follow, lost, stderr.String())
		}
	}
}
