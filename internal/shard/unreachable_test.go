package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
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

// syncBuffer is a log destination the member's goroutine and the test
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A cluster that refuses weir (a wrong password, ACLs) while the member
// waits for the coordination topic: the member tried again every 2 s and
// logged each try, a warning every few seconds for as long as it lasted;
// now the line comes at most every 10 s, with how many tries it stands
// for.
func TestUnreachableClusterLoggedThrottled(t *testing.T) {
	f := &refusingBroker{}
	var logs syncBuffer
	r := start(t, Config{Broker: f, Group: "g", Logger: slog.New(slog.NewTextHandler(&logs, nil)), retry: time.Millisecond})
	began := time.Now()
	waitFor(t, 30*time.Second, "50 tries", func() bool { return f.Calls() >= 50 })
	r.halt()
	elapsed := time.Since(began)
	n := strings.Count(logs.String(), "cannot read or create the coordination topic")
	if most := 1 + int(elapsed/(10*time.Second)); n == 0 || n > most {
		t.Fatalf("%d warnings for %d tries in %v, want 1 to %d:\n%s", n, f.Calls(), elapsed, most, logs.String())
	}
	if !strings.Contains(logs.String(), "connection refused") {
		t.Fatalf("the warning does not say why:\n%s", logs.String())
	}
}

// A weir stopping while the member asks for the coordination topic: the
// request ends with the context, which is no reason to warn that the
// topic cannot be read ("list topics: context canceled; retrying").
func TestStopWhileAskingNotWarned(t *testing.T) {
	f := &refusingBroker{hang: true}
	var logs syncBuffer
	r := start(t, Config{Broker: f, Group: "g", Logger: slog.New(slog.NewTextHandler(&logs, nil)), retry: time.Millisecond})
	waitFor(t, 30*time.Second, "the second request", func() bool { return f.Calls() >= 2 })
	r.halt()
	if strings.Contains(logs.String(), "context canceled") {
		t.Fatalf("stopping logged:\n%s", logs.String())
	}
}
