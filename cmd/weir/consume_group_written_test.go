package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// backlog writes n records of about 200 bytes to partition 0 of "t",
// more than a pipe holds (64 KiB) once encoded.
func backlog(ctx context.Context, t *testing.T, cl *kgo.Client, n int) {
	t.Helper()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "t", Partition: 0, Value: fmt.Appendf(nil, `{"n":%d,"pad":"%0200d"}`, i, 0)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// committedAt is group's committed offset of "t"/0, -1 for none.
func committedAt(ctx context.Context, t *testing.T, cl *kgo.Client, group string) int64 {
	t.Helper()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("t", 0); ok {
		return o.At
	}
	return -1
}

// TestConsumeGroupCommitsWhatWasWritten: a consume --group whose output
// failed partway through a poll's records (a full disk) committed none of
// that poll's records, those it had written whole included, so the next
// run printed them again. It commits the records written whole, and
// nothing after them.
func TestConsumeGroupCommitsWhatWasWritten(t *testing.T) {
	ctx := context.Background()
	c, cl := kfakeTopic(t, 1)
	backlog(ctx, t, cl, 2000)
	out := &fullWriter{n: 10_000}
	args := []string{"t", "--from-beginning", "--group", "g", "--brokers", c.ListenAddrs()[0]}
	if err := consumeCmd(ctx, args, out, &strings.Builder{}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("consume %v to a full disk: %v, want ENOSPC", args, err)
	}
	written := int64(strings.Count(out.String(), "\n"))
	if written == 0 {
		t.Fatal("no record was written whole; the test needs some")
	}
	if at := committedAt(ctx, t, cl, "g"); at != written {
		t.Errorf("group g committed offset %d; want %d, the records written whole", at, written)
	}
}

// TestConsumeGroupReaderGoneWithBacklog: `weir consume T --group G
// --from-beginning --follow | head -1` on a topic holding more than a pipe
// takes committed nothing (the write after head exited failed, and with it
// the whole poll's commit), so the next run printed the same records
// again. What reached the pipe is committed, as when it all fits.
func TestConsumeGroupReaderGoneWithBacklog(t *testing.T) {
	ctx := context.Background()
	c, cl := kfakeTopic(t, 1)
	backlog(ctx, t, cl, 3000)
	args := []string{"consume", "t", "--group", "g", "--from-beginning", "--follow", "--brokers", c.ListenAddrs()[0]}
	readerGoes(t, args)
	if at := committedAt(ctx, t, cl, "g"); at < 1 {
		t.Errorf("group g committed offset %d for t/0; want at least the record printed", at)
	}
}
