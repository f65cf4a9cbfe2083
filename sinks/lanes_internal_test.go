package sinks

import (
	"context"
	"fmt"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
)

// okLanes is a raw Concurrent destination taking everything.
type okLanes struct{}

func (okLanes) Lanes() int                                   { return 4 }
func (okLanes) RawRecords() bool                             { return true }
func (okLanes) Write(context.Context, []Item) error          { return nil }
func (okLanes) WriteLane(context.Context, int, []Item) error { return nil }
func (okLanes) Close() error                                 { return nil }

// heldLanes is a Concurrent destination whose writes wait for the end of
// their context.
type heldLanes struct{ okLanes }

func (heldLanes) WriteLane(ctx context.Context, _ int, items []Item) error {
	<-ctx.Done()
	return &PartialError{Done: 0, Err: ctx.Err()}
}

// TestHandDoesNotAllocate: queueing a record of a key already queued (or
// written) allocates nothing, with a key or without one.
func TestHandDoesNotAllocate(t *testing.T) {
	s, err := New(nil, configs.Sink{Name: "allocs", BatchSize: 1000}, heldLanes{})
	if err != nil {
		t.Fatal(err)
	}
	l := s.startLanes(context.Background(), heldLanes{})
	defer l.halt()
	// A key longer than the 32 bytes a string converted on the stack has.
	for _, key := range []string{"core-router-17.fra1.example.net/Ethernet1/1", ""} {
		it := Item{Record: broker.Record{Topic: "t", Partition: 2, Key: []byte(key), Value: []byte("{}")}}
		// The key's first record (taken by a lane, held), and room
		// made for the rest.
		for range 300 {
			if !l.enqueue(&it) {
				t.Fatal("no room")
			}
		}
		if n := testing.AllocsPerRun(200, func() { l.enqueue(&it) }); n != 0 {
			t.Errorf("key %q: %v allocations a record queued", key, n)
		}
	}
}

// TestKeysDroppedWhenDone: once every record is delivered, no key is
// kept (a sink sees new devices all its life), and what is kept for
// reuse is bounded.
func TestKeysDroppedWhenDone(t *testing.T) {
	s, err := New(nil, configs.Sink{Name: "keys", BatchSize: 10}, okLanes{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := s.startLanes(ctx, okLanes{})
	defer l.halt()
	for i := range 5000 {
		r := broker.Record{Topic: "t", Offset: int64(i), Key: fmt.Appendf(nil, "edge%d", i%1000), Value: []byte("{}")}
		if i%7 == 0 {
			r.Key = nil // by partition
		}
		l.admit(&r, admitHand)
		if err := l.hand(ctx, &Item{Record: r}, func() {}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.drain(ctx, func() {}); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.keys) != 0 || l.queued != 0 {
		t.Errorf("%d keys and %d records kept once all is delivered", len(l.keys), l.queued)
	}
	if len(l.free) > keepKeys {
		t.Errorf("%d keys kept for reuse, want at most %d", len(l.free), keepKeys)
	}
}
