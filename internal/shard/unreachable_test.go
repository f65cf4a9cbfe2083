package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/syncbuf"
)

// refusingBroker is a cluster that refuses every request, or, with hang,
// one whose requests after the first wait until their context ends.
type refusingBroker struct {
	broker.Broker
	hang  bool
	mu    sync.Mutex
	calls int
}

func (f *refusingBroker) DescribeTopics(ctx context.Context, names ...string) ([]broker.TopicInfo, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	if f.hang && n > 1 {
		<-ctx.Done()
		return nil, fmt.Errorf("kafka: list topics: %w", ctx.Err())
	}
	return nil, errors.New("kafka: list topics: dial tcp 127.0.0.1:9092: connection refused")
}

func (f *refusingBroker) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// runUntil runs a member of b, asking again a millisecond after each
// failure (tune may change the member more), until ready, then stops it and
// returns what it logged.
func runUntil(t *testing.T, b broker.Broker, what string, ready func() bool, tune func(*Member)) string {
	t.Helper()
	var logs syncbuf.Buffer
	m, err := New(Config{Broker: b, Group: "g", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	m.retryWait = time.Millisecond
	if tune != nil {
		tune(m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	waitFor(t, 30*time.Second, what, ready)
	cancel()
	<-done
	return logs.String()
}

// A weir stopping while the member asks for the coordination topic: the
// request ends with the context, which is no reason to warn that the
// topic cannot be read ("list topics: context canceled; retrying").
func TestStopWhileAskingNotWarned(t *testing.T) {
	f := &refusingBroker{hang: true}
	if logs := runUntil(t, f, "the second request", func() bool { return f.Calls() >= 2 }, nil); strings.Contains(logs, "context canceled") {
		t.Fatalf("stopping logged:\n%s", logs)
	}
}

// hangingJoinBroker answers the coordination topic, but its Consume (the
// group's join) waits until its context ends.
type hangingJoinBroker struct {
	*fakeBroker
	mu    sync.Mutex
	joins int
}

func (f *hangingJoinBroker) Consume(ctx context.Context, group string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	f.mu.Lock()
	f.joins++
	f.mu.Unlock()
	<-ctx.Done()
	return nil, fmt.Errorf("kafka: join group: %w", ctx.Err())
}

func (f *hangingJoinBroker) Joins() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.joins
}

// A weir stopping while the member joins the group: the join ends with
// the context, which is no reason to warn that the group cannot be joined
// ("cannot join the group; retrying ... context canceled"), as for the
// coordination topic above.
func TestStopWhileJoiningNotWarned(t *testing.T) {
	f := &hangingJoinBroker{fakeBroker: &fakeBroker{}}
	if logs := runUntil(t, f, "the join", func() bool { return f.Joins() >= 1 }, nil); strings.Contains(logs, "cannot join the group") {
		t.Fatalf("stopping logged:\n%s", logs)
	}
}
