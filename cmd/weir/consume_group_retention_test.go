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
	c, _ := groupBehindRetention(t, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	runCtx, runCancel := context.WithTimeout(ctx, 15*time.Second)
	defer runCancel()
	var stdout, stderr bytes.Buffer
	err := dispatch(runCtx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--group", "g", "--from-beginning"},
		strings.NewReader(""), &stdout, &stderr)
	if runCtx.Err() != nil {
		t.Fatalf("consume --group --from-beginning still waiting after 15s on a partition with nothing to read (%v, %s)", err, stderr.String())
	}
	if err != nil || stdout.Len() != 0 {
		t.Fatalf("consume: %v, printed %q (%s)", err, stdout.String(), stderr.String())
	}
}

// groupBehindRetention is a kfake cluster whose topic "t" (one partition)
// had ten records "0".."9", group g committed at 5, and retention deleted
// the records below deleteTo: a group that stopped behind while retention
// passed its commit.
func groupBehindRetention(t *testing.T, deleteTo int64) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c, cl := kfakeTopic(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produceTo(ctx, t, cl, 0, values('0', 10)...)
	var commit kadm.Offsets
	commit.Add(kadm.Offset{Topic: "t", Partition: 0, At: 5, LeaderEpoch: -1})
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, "g", commit); err != nil {
		t.Fatal(err)
	}
	deleteBelow(ctx, t, cl, 0, deleteTo)
	return c, cl
}
