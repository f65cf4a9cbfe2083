package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestConsumeGroupSaysRetentionPassedItsCommit: a group that stopped
// behind (its commit at 5) while retention deleted the records up to 8 goes
// on from the log start, and `weir consume --group` says on stderr which
// records it never got (`lost records ...`), as the README promises: it
// said nothing, franz-go resetting such a partition without a data-loss
// notice, so the reader could not tell the gap from a quiet topic.
func TestConsumeGroupSaysRetentionPassedItsCommit(t *testing.T) {
	c, cl := groupBehindRetention(t, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, follow := range []bool{false, true} {
		if follow {
			// The first run committed the end (10): lose 10..11 too.
			produceTo(ctx, t, cl, 0, values('a', 4)...)
			deleteBelow(ctx, t, cl, 0, 12)
		}
		args := []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--group", "g", "--from-beginning"}
		want, lost := `"value":9`, "lost records at offsets 5 to 7"
		if follow {
			args = append(args, "--follow", "--max", "2")
			want, lost = `"value":"d"`, "lost records at offsets 10 to 11"
		}
		runCtx, runCancel := context.WithTimeout(ctx, 15*time.Second)
		var stdout, stderr bytes.Buffer
		err := dispatch(runCtx, args, strings.NewReader(""), &stdout, &stderr)
		runCancel()
		if err != nil || !strings.Contains(stdout.String(), want) {
			t.Fatalf("follow=%v: consume: %v, printed %q (%s)", follow, err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stderr.String(), lost) || !strings.Contains(stderr.String(), "(reading on)") {
			t.Errorf("follow=%v: stderr does not say %q ... (reading on): %q", follow, lost, stderr.String())
		}
	}
}

// TestConsumeGroupNoLossAfterAPartitionCameBack: a partition that moved to
// another member of the group, which read it on and committed, and came
// back starts at that commit; records retention deleted meanwhile behind
// the commit were read by the other member, not lost. The records printed
// before it moved away are no measure of what was read since: the stderr
// said "lost records" of records the other member had printed.
func TestConsumeGroupNoLossAfterAPartitionCameBack(t *testing.T) {
	c, cl := kfakeTopic(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	produce := func(p int32, n int) { produceTo(ctx, t, cl, p, slices.Repeat([]string{"x"}, n)...) }
	produce(0, 3)
	produce(1, 3)

	var stdout, stderr syncbuf.Buffer
	runCtx, runCancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- dispatch(runCtx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--group", "g", "--from-beginning", "--follow"},
			strings.NewReader(""), &stdout, &stderr)
	}()
	defer func() { runCancel(); <-done }()
	waitText(t, &stdout, `"partition":0,"offset":2`)
	waitText(t, &stdout, `"partition":1,"offset":2`)

	// Another member takes one of the partitions, reads 3..6 of it and
	// commits 7.
	assigned := make(chan int32, 2)
	other, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			for _, p := range a["t"] {
				assigned <- p
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	var q int32
	select {
	case q = <-assigned:
	case <-ctx.Done():
		t.Fatal("the other member got no partition")
	}
	produce(q, 4)
	for got := 0; got < 4; {
		fs := other.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("the other member read %d of 4 records", got)
		}
		got += fs.NumRecords()
	}
	if err := other.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	// Retention deletes behind the other member's commit, past what
	// weir consume printed of the partition.
	deleteBelow(ctx, t, cl, q, 5)
	other.Close() // leaves the group: the partition comes back
	produce(q, 1)
	want := fmt.Sprintf(`"partition":%d,"offset":7`, q)
	waitText(t, &stdout, want)
	if strings.Contains(stderr.String(), "lost records") {
		t.Errorf("records the other member read reported lost: %q", stderr.String())
	}
}
