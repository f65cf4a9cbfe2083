package enrich

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// countingFetches is a log that counts the records its fetches of more
// than one byte (reads, not WindowStart's probes) gave.
type countingFetches struct {
	*embedded.Broker
	records int
}

func (b *countingFetches) Fetch(ctx context.Context, topic string, partition int32, offset int64, opts broker.FetchOptions, res *broker.FetchResult) error {
	err := b.Broker.Fetch(ctx, topic, partition, offset, opts, res)
	if opts.MaxBytes > 1 {
		b.records += len(res.Records)
	}
	return err
}

// TestReachBackReadsThePartitionOnce: a target down for good costs a
// reach back through its partition, whose reads add up to less than 1.5
// times it (the README's word). Once a read started at the log's start,
// each wider cutoff read the whole partition again, for the records the
// one before left out: 2.25 times a partition of 7 hours (a quarter of a
// million records, ten a second).
func TestReachBackReadsThePartitionOnce(t *testing.T) {
	b := &countingFetches{Broker: openBroker(t)}
	const n = 1 << 18
	windowStart := time.Now().Add(-time.Hour)
	value := bytes.Repeat([]byte("x"), 100)
	recs := make([]broker.Record, 0, 1<<14)
	for i := range n {
		recs = append(recs, broker.Record{Key: []byte("other"), Value: value, Timestamp: windowStart.Add(-time.Duration(n-i) * 100 * time.Millisecond)})
		if len(recs) == cap(recs) {
			if err := b.ProducePartition(context.Background(), "w", 0, recs); err != nil {
				t.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	wm := newWarmer(b, 10*time.Minute, slog.New(slog.DiscardHandler))
	wm.lost = func() lostPolls {
		return lostPolls{targets: map[string]bool{"down": true}, keys: map[string]bool{"down": true},
			answered: func(*broker.Record) (string, bool) { return "", false }}
	}
	wm.reachBack(context.Background(), "w", 0, n, windowStart, windowStart.Add(10*time.Minute), func(*broker.Record, time.Time) {})
	if read := float64(b.records) / n; read > 1.5 {
		t.Errorf("the reach back read %d records, %.2f times the partition", b.records, read)
	}
}
