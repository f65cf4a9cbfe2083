package kafkawire

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// TestKadmCommitsNegativeOffsets: an admin commit of -2 and -1 (what
// KafkaJS's resetOffsets sends for earliest and latest) is stored as
// given, as Kafka stores it: fetched back, also after a restart, the group
// Empty rather than gone; a franz-go member takes it as no commit and
// starts at its reset offset; and the group can be deleted.
func TestKadmCommitsNegativeOffsets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	open := func() (*embedded.Broker, *kadm.Client, string) {
		b, err := embedded.Open(dir, embedded.WithLogger(testLogger(t)))
		if err != nil {
			t.Fatal(err)
		}
		_, addr := startServer(t, b)
		t.Cleanup(func() { b.Close() })
		return b, kadm.NewClient(newClient(t, addr)), addr
	}
	b, adm, _ := open()
	if err := b.CreateTopic(ctx, "neg", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	produceN(t, ctx, b, "neg", 0, 20)

	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "neg", Partition: 0, At: -2, LeaderEpoch: -1})
	offs.Add(kadm.Offset{Topic: "neg", Partition: 1, At: -1, LeaderEpoch: -1})
	resp, err := adm.CommitOffsets(ctx, "neg-g", offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit -2 and -1: %v", err)
	}
	check := func(adm *kadm.Client, when string) {
		t.Helper()
		fetched, err := adm.FetchOffsets(ctx, "neg-g")
		if err == nil {
			err = fetched.Error()
		}
		if err != nil {
			t.Fatalf("%s: fetch: %v", when, err)
		}
		for p, want := range map[int32]int64{0: -2, 1: -1} {
			if o, ok := fetched.Lookup("neg", p); !ok || o.At != want {
				t.Errorf("%s: partition %d fetched %+v (%v), want %d", when, p, o, ok, want)
			}
		}
		described, err := adm.DescribeGroups(ctx, "neg-g")
		if err != nil {
			t.Fatalf("%s: describe: %v", when, err)
		}
		if g := described["neg-g"]; g.Err != nil || g.State != "Empty" {
			t.Fatalf("%s: described %q (%v), want Empty", when, g.State, g.Err)
		}
	}
	check(adm, "after the commit")
	b.Close()
	_, adm, addr := open()
	check(adm, "after a restart")

	// franz-go takes a negative commit as none: it starts at its reset
	// offset, the log start here, on both partitions.
	cl := newClient(t, addr, kgo.ConsumerGroup("neg-g"), kgo.ConsumeTopics("neg"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	got := 0
	for got < 20 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll after %d records: %v", got, err)
		}
		got += fs.NumRecords()
	}
	cl.Close()

	deleted, err := adm.DeleteGroup(ctx, "neg-g")
	if err == nil {
		err = deleted.Err
	}
	if err != nil {
		t.Fatalf("delete the group: %v", err)
	}
	fetched, err := adm.FetchOffsets(ctx, "neg-g")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(fetched.Offsets()); n != 0 {
		t.Fatalf("after the delete: %d offsets fetched: %+v", n, fetched)
	}
}
