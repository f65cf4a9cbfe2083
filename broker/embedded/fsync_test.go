package embedded

import (
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// TestNoAckAfterFailedFsync: with flush.policy always, producers sharing a
// group commit are not acknowledged once an fsync of the partition failed:
// a second fsync may succeed after the kernel dropped the dirty pages of
// the first, which says nothing of the data.
func TestNoAckAfterFailedFsync(t *testing.T) {
	b := openTest(t, t.TempDir(), WithFlushAlways())
	if err := b.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	p, err := b.partition(ctx, "t", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	e.Append(nil, []byte("b"), nil, 1)
	p.appendMu.Lock()
	_, err = p.appendLocked(append([]byte(nil), e.Finish(0)...), b.opts.nowFunc())
	p.appendMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	// What syncTo leaves when producer A's fsync fails; B waits for
	// the same partition's fsync.
	ferr := error(broker.ErrStorage)
	p.failed.Store(&ferr)
	if err := p.afterAppend(); err == nil {
		t.Fatal("B acknowledged although the fsync covering its write failed")
	}
}
