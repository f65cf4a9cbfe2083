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

// TestConsumeGroupCommitBehindAnEmptiedLog: a group whose committed offset
// retention has since passed, on a partition retention emptied (log start
// = end: an idle topic whose segments all expired), has nothing left to
// read. `weir consume --group G --from-beginning` without --follow must
// exit, not wait for ever for records that cannot come: it counted the
// partition as read only once a record past the commit was printed.
func TestConsumeGroupCommitBehindAnEmptiedLog(t *testing.T) {
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
	del.Add(kadm.Offset{Topic: "t", Partition: 0, At: 10})
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}

	runCtx, runCancel := context.WithTimeout(ctx, 15*time.Second)
	defer runCancel()
	var stdout, stderr bytes.Buffer
	err = dispatch(runCtx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--group", "g", "--from-beginning"},
		strings.NewReader(""), &stdout, &stderr)
	if runCtx.Err() != nil {
		t.Fatalf("consume --group --from-beginning still waiting after 15s on a partition with nothing to read (%v, %s)", err, stderr.String())
	}
	if err != nil || stdout.Len() != 0 {
		t.Fatalf("consume: %v, printed %q (%s)", err, stdout.String(), stderr.String())
	}
}
