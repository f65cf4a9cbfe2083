package sinks

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/weirnet/weir/broker"
)

// laneSplit is a batch split into the lanes of a Concurrent destination,
// its storage reused from batch to batch.
type laneSplit struct {
	items [][]Item // by lane, in batch order
	of    []int    // by index in the batch: its lane
}

// laneOutcome is what one lane's delivery came to.
type laneOutcome struct {
	done     int  // its first records delivered or dead-lettered
	failed   bool // an attempt failed on the way
	attempts int  // of its last write that went through
	err      error
}

// deliverLanes delivers a batch to a Concurrent destination: each lane is
// sent (retried, its refused records dead-lettered) on its own goroutine,
// so a record being retried holds up its lane alone; the batch is done
// when every lane is. Stopped part way, done holds per partition the
// offset up to the first record not delivered, whatever lane it is in.
func (s *Sink) deliverLanes(ctx context.Context, items []Item) (done map[broker.TopicPartition]int64, err error) {
	cd := s.dest.(Concurrent)
	sp := &s.split
	sp.fill(items, s.lanes)
	defer sp.reset()
	out := make([]laneOutcome, s.lanes)
	var wg sync.WaitGroup
	for k, lane := range sp.items {
		if len(lane) == 0 {
			continue
		}
		o := &out[k]
		write := func(ctx context.Context, items []Item) error { return cd.WriteLane(ctx, k, items) }
		wg.Go(func() { o.done, o.err = s.send(ctx, write, lane, o) })
	}
	wg.Wait()
	failed, attempts := false, 0
	var errs []error
	for _, o := range out {
		failed, attempts = failed || o.failed, max(attempts, o.attempts)
		if o.err != nil {
			errs = append(errs, o.err)
		}
	}
	if len(errs) > 0 {
		return sp.doneEnd(items, out), errors.Join(errs...)
	}
	// Once per batch, not per lane: a lane that went through clean while
	// another was retrying is no recovery (a receiver failing one post in
	// ten would log one after nearly every failure).
	s.wentThrough(len(items), attempts, failed)
	return nil, nil
}

// fill splits items into n lanes: records of one key in one lane, and
// records without a key by partition (Kafka orders a partition, not
// records without a key across partitions).
func (sp *laneSplit) fill(items []Item, n int) {
	if len(sp.items) != n {
		sp.items = make([][]Item, n)
	}
	sp.of = slices.Grow(sp.of[:0], len(items))[:len(items)]
	for i := range items {
		k := sp.laneOf(&items[i].Record, n)
		sp.of[i] = k
		sp.items[k] = append(sp.items[k], items[i])
	}
}

// laneOf is the lane of r among n: the same for every record of its key
// (a fixed hash, not a seeded one: a key's lane is the same from run to
// run, so what a test or an operator sees repeats).
func (sp *laneSplit) laneOf(r *broker.Record, n int) int {
	h := uint64(fnvOffset)
	if len(r.Key) > 0 {
		for _, b := range r.Key {
			h = fnvByte(h, b)
		}
	} else {
		for i := range len(r.Topic) {
			h = fnvByte(h, r.Topic[i])
		}
		for i := range 4 {
			h = fnvByte(h, byte(r.Partition>>(8*i)))
		}
	}
	// FNV's low bits depend on the bytes' low bits alone: mixed, as
	// MurmurHash3 ends, so that keys differing higher up spread too.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int(h % uint64(n))
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

// reset empties the lanes, not holding the batch's records.
func (sp *laneSplit) reset() {
	for k := range sp.items {
		clear(sp.items[k])
		sp.items[k] = sp.items[k][:0]
	}
}

// doneEnd is, per partition of items, the offset after its last record
// before the first that out says is not done (a partition whose first
// record is not done is left out: nothing of it to commit).
func (sp *laneSplit) doneEnd(items []Item, out []laneOutcome) map[broker.TopicPartition]int64 {
	end := map[broker.TopicPartition]int64{}
	blocked := map[broker.TopicPartition]bool{}
	nth := make([]int, len(out)) // by lane: how many of its records were seen
	for i := range items {
		k := sp.of[i]
		done := nth[k] < out[k].done
		nth[k]++
		r := &items[i].Record
		tp := broker.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		switch {
		case blocked[tp]:
		case done:
			end[tp] = r.Offset + 1
		default:
			blocked[tp] = true
		}
	}
	return end
}
