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

// TestGroupsDeleteWithMembersSaysWhy: deleting a group that has members
// fails, as Kafka's tool does, with what to do (stop them first) rather
// than only the broker's NON_EMPTY_GROUP "The group is not empty.", which
// a user reads as "it has committed offsets", the very thing to delete.
func TestGroupsDeleteWithMembersSaysWhy(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	member, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	for ctx.Err() == nil {
		if err := member.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		n := len(member.PollFetches(pctx).Records())
		pcancel()
		if n > 0 {
			break
		}
	}
	var stdout, stderr bytes.Buffer
	err = dispatch(ctx, []string{"groups", "delete", "g", "--brokers", c.ListenAddrs()[0]}, strings.NewReader(""), &stdout, &stderr)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "NON_EMPTY_GROUP") || !strings.Contains(err.Error(), "stop them first") {
		t.Fatalf("groups delete of a group with a member: %v (exit %d); want NON_EMPTY_GROUP and what to do", err, exitCode(err))
	}
}
