package embedded

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// withAdminStep runs f just before each durable step of a topic change.
func withAdminStep(f func(step string)) Option { return func(o *options) { o.adminStep = f } }

// TestTopicChangesDoNotStallOtherTopics: creating, altering and deleting
// a topic write and sync files; produces and fetches of every other topic
// go on meanwhile (they once waited for those syncs behind the broker's
// topic-map lock).
func TestTopicChangesDoNotStallOtherTopics(t *testing.T) {
	var (
		blocked = make(chan struct{})
		release = make(chan struct{})
		armed   atomic.Bool
		b       atomic.Pointer[Broker]
		locked  atomic.Value // a step taken holding mu
	)
	hook := func(step string) {
		if bk := b.Load(); bk != nil {
			if !bk.mu.TryRLock() {
				locked.Store(step)
			} else {
				bk.mu.RUnlock()
			}
		}
		if !armed.Load() {
			return
		}
		blocked <- struct{}{}
		<-release
	}
	bk := openTest(t, t.TempDir(), withAdminStep(hook))
	b.Store(bk)
	if err := bk.CreateTopic(ctx, "busy", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := bk.CreateTopic(ctx, "victim", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	changes := []struct {
		name string
		run  func() error
	}{
		{"create", func() error { return bk.CreateTopic(ctx, "fresh", broker.TopicConfig{Partitions: 1}) }},
		{"alter", func() error {
			return bk.AlterTopicConfig(ctx, "victim", broker.TopicConfigChange{Set: broker.TopicConfig{RetentionTime: time.Hour}}, false)
		}},
		{"delete", func() error { return bk.DeleteTopic(ctx, "victim") }},
	}
	seq := 0
	for _, c := range changes {
		armed.Store(true)
		done := make(chan error, 1)
		go func() { done <- c.run() }()
		<-blocked // the change is about to write and sync
		armed.Store(false)

		produced := make(chan error, 1)
		go func() {
			err := bk.Produce(ctx, "busy", makeRecords(1, seq))
			if err == nil {
				_, err = bk.DescribeTopics(ctx, "busy")
			}
			produced <- err
		}()
		select {
		case err := <-produced:
			if err != nil {
				t.Fatalf("%s: produce to another topic: %v", c.name, err)
			}
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatalf("%s: a produce to another topic waited for the change's sync", c.name)
		}
		seq++
		release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	if step := locked.Load(); step != nil {
		t.Errorf("a topic change took step %q holding the topic-map lock", step)
	}
	if got := len(readAll(t, bk, "busy", 0)); got != seq {
		t.Fatalf("busy holds %d records, want %d", got, seq)
	}
	if _, err := bk.DescribeTopics(ctx, "victim"); err == nil {
		t.Fatal("victim not deleted")
	}
	if _, err := bk.DescribeTopics(ctx, "fresh"); err != nil {
		t.Fatal(err)
	}
}

// TestTopicChangeSteps: a topic's partition directories are synced into
// the data directory before its meta file makes it exist, and a deletion
// syncs the meta file's removal, then the renames of its partitions to
// ".deleted" (which the next start removes).
func TestTopicChangeSteps(t *testing.T) {
	var steps []string
	bk := openTest(t, t.TempDir(), withAdminStep(func(step string) { steps = append(steps, step) }))
	if err := bk.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if want := []string{adminSyncDataDir, adminWriteMeta}; !slices.Equal(steps, want) {
		t.Errorf("create: %q, want %q", steps, want)
	}
	steps = nil
	if err := bk.DeleteTopic(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if want := []string{adminSyncMetaDir, adminSyncDataDir, adminRemoveData, adminRemoveData}; !slices.Equal(steps, want) {
		t.Errorf("delete: %q, want %q", steps, want)
	}
}

// TestTopicDataRemovedOutsideAdminLock: a deleted topic's data, which may
// be large, is removed with adminMu released, so other topic changes (a
// producer's auto-creation of a topic) do not wait for it.
func TestTopicDataRemovedOutsideAdminLock(t *testing.T) {
	var (
		b       atomic.Pointer[Broker]
		removed atomic.Int32
		held    atomic.Int32
	)
	bk := openTest(t, t.TempDir(), withAdminStep(func(step string) {
		if step != adminRemoveData {
			return
		}
		removed.Add(1)
		if bk := b.Load(); !bk.adminMu.TryLock() {
			held.Add(1)
		} else {
			bk.adminMu.Unlock()
		}
	}))
	b.Store(bk)
	if err := bk.CreateTopic(ctx, "t", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	if err := bk.DeleteTopic(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if removed.Load() != 2 {
		t.Fatalf("%d partitions' data removed, want 2", removed.Load())
	}
	if n := held.Load(); n > 0 {
		t.Errorf("%d of the deleted topic's partitions removed holding adminMu", n)
	}
}
