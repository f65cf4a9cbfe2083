package kafkacluster

import (
	"context"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// TestFirstAssignedAlsoOfNone: a member tells when the group first gave it
// its partitions, also a member given none (a topic of one partition, two
// members); before, it says not yet. Enrichment's warm gate counts a
// worker given nothing as warm only some time after that.
func TestFirstAssignedAlsoOfNone(t *testing.T) {
	_, b := newKfake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTopic(ctx, "narrow", broker.TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	type firstAssigner interface{ FirstAssigned() (time.Time, bool) }
	var members []broker.Consumer
	for range 2 {
		c, err := b.Consume(ctx, "first", []string{"narrow"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, ok := c.(firstAssigner).FirstAssigned(); ok {
			t.Fatal("assigned before it joined")
		}
		members = append(members, c)
	}
	for _, c := range members {
		go func() {
			pctx, pcancel := context.WithTimeout(ctx, 20*time.Second)
			defer pcancel()
			c.Poll(pctx) // joins; nothing to read
		}()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		given, ok0 := len(members[0].Assigned())+len(members[1].Assigned()), true
		for _, c := range members {
			_, ok := c.(firstAssigner).FirstAssigned()
			ok0 = ok0 && ok
		}
		if given == 1 && ok0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d partitions given, first assignments told: %v", given, ok0)
		}
	}
}
