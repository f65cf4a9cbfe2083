package enrich

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// failingFetch is a log whose fetch number fail (from 1; 0: none) fails,
// as one may while a Kafka partition's leader moves (a rolling restart);
// it counts the fetches.
type failingFetch struct {
	*embedded.Broker
	fail, fetches int
}

func (b *failingFetch) Fetch(ctx context.Context, topic string, partition int32, offset int64, opts broker.FetchOptions, res *broker.FetchResult) error {
	b.fetches++
	if b.fetches == b.fail {
		return errors.New("NOT_LEADER_FOR_PARTITION")
	}
	return b.Broker.Fetch(ctx, topic, partition, offset, opts, res)
}

// TestReachBackRetriesFailedFetches: a reach back whose fetch fails for a
// moment tries again, as the window's reading does (warmer.read): it runs
// right after it, in the same rolling restart, and a reach back given up
// leaves the target without its last answered poll for as long as the
// worker runs. Each of its fetches fails in turn; before, any one of them
// failing lost core9's poll ("could not read back").
func TestReachBackRetriesFailedFetches(t *testing.T) {
	windowStart := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	var recs []broker.Record
	var want []int64
	add := func(value string, at time.Time) int64 {
		recs = append(recs, broker.Record{Key: []byte("a"), Value: []byte(value), Timestamp: at})
		return int64(len(recs) - 1)
	}
	filler := bytes.Repeat([]byte("x"), 1000)
	for min := 300; min > 0; min-- {
		at := windowStart.Add(-time.Duration(min) * time.Minute)
		if min == 200 {
			want = append(want, add("a answered", at), add("a answered", at))
			continue
		}
		add("a failed", at)
		for range 40 { // another device's rows: several fetches
			recs = append(recs, broker.Record{Key: []byte("other"), Value: filler, Timestamp: at})
		}
	}
	for min := range 11 {
		add("a failed", windowStart.Add(time.Duration(min)*time.Minute))
	}
	reach := func(fail int) (fed []int64, log string, fetches int) {
		b := &failingFetch{Broker: openBroker(t), fail: fail}
		if err := b.ProducePartition(context.Background(), "w", 0, recs); err != nil {
			t.Fatal(err)
		}
		var logged bytes.Buffer
		wm := newWarmer(b, 10*time.Minute, slog.New(slog.NewTextHandler(&logged, nil)))
		wm.lost = func() lostPolls {
			return lostPolls{targets: map[string]bool{"a": true}, keys: map[string]bool{"a": true},
				answered: func(r *broker.Record) (string, bool) {
					target, state, _ := strings.Cut(string(r.Value), " ")
					return target, state == "answered"
				}}
		}
		b.fetches = 0
		wm.reachBack(context.Background(), "w", 0, int64(len(recs)), windowStart, windowStart.Add(10*time.Minute), func(r *broker.Record, _ time.Time) {
			fed = append(fed, r.Offset)
		})
		return fed, logged.String(), b.fetches
	}
	fed, log, fetches := reach(0)
	if !slices.Equal(fed, want) || !strings.Contains(log, "found=1 not_found=0") {
		t.Fatalf("without a failure: fed %v, want %v; log %q", fed, want, log)
	}
	for fail := 1; fail <= fetches; fail++ {
		fed, log, _ := reach(fail)
		if !slices.Equal(fed, want) || !strings.Contains(log, "found=1 not_found=0") {
			t.Errorf("fetch %d of %d failing: fed %v, want %v; log %q", fail, fetches, fed, want, log)
		}
	}
}
