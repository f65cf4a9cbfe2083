package enrich

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
)

// partialAppend appends the first keep records of its first
// ProducePartition call and fails the rest, as the embedded log does when
// a call's records take more than one batch (over 1 MiB) and the disk
// fills, or the process is killed, between two of them: the records of
// the batches before are in the log (their Offset set), the others not
// (Offset -1). Then it ends the context, as a SIGTERM during the retries
// of a full disk would. With topic set, only that topic's first call is
// cut (the events after a record's change).
type partialAppend struct {
	*embedded.Broker
	topic  string // the topic whose first call is cut ("": any)
	keep   int
	cancel context.CancelFunc
	mu     sync.Mutex
	done   bool
}

func (p *partialAppend) ProducePartition(ctx context.Context, topic string, part int32, recs []broker.Record) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || p.topic != "" && topic != p.topic {
		return p.Broker.ProducePartition(ctx, topic, part, recs)
	}
	p.done = true
	if err := p.Broker.ProducePartition(ctx, topic, part, recs[:p.keep]); err != nil {
		return err
	}
	for i := range recs[p.keep:] {
		recs[p.keep+i].Offset = -1
	}
	p.cancel()
	return fmt.Errorf("%w: write: no space left on device", broker.ErrStorage)
}

// TestRestartAfterAPartialAppendKeepsEveryOutputOfARecord: a metrics row
// gives two records to enriched.metrics (the row and its interface view),
// published in one ProducePartition call with the rest of the chunk. A
// call the log appends only in part (the batches before a full disk or a
// kill) can end between a row and its view. The worker restarted from its
// committed offset read the row's src_offset as the partition's last and
// skipped the whole record: its view was never published. An output too
// large for the log, left out, is not taken for one the log holds.
func TestRestartAfterAPartialAppendKeepsEveryOutputOfARecord(t *testing.T) {
	for _, tc := range []struct {
		name  string
		huge  string // the output too large for the log, if any
		keep  int    // records the first run's call appends
		wantN int
	}{
		{"cut after 1's row", "", 3, 6},
		{"0's row too large, cut after 1's row", "0/row", 2, 5},
		{"1's row too large, cut after 1's view", "1/row", 3, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eb := tailLog(t, "raw.snmp", "enriched.metrics")
			t0 := time.Now().Add(-time.Minute)
			var in []broker.Record
			for i := range 3 {
				in = append(in, broker.Record{Key: []byte("edge1"), Value: []byte("row"), Timestamp: t0.Add(time.Duration(i) * time.Second)})
			}
			if err := eb.Produce(context.Background(), "raw.snmp", in); err != nil {
				t.Fatal(err)
			}
			// Each input record's outputs: its row and its view.
			outs := func() []outRecord {
				var outs []outRecord
				for src := range int64(3) {
					for _, kind := range []string{"row", "view"} {
						o := outFrom(src)
						o.rec.Value = fmt.Appendf(nil, "%d/%s", src, kind)
						if string(o.rec.Value) == tc.huge {
							o.rec.Value = append(o.rec.Value, make([]byte, embedded.DefaultMaxMessageBytes)...)
						}
						o.rec.Timestamp = t0.Add(time.Duration(src) * time.Second)
						outs = append(outs, o)
					}
				}
				return outs
			}
			assigned := []broker.TopicPartition{{Topic: "raw.snmp", Partition: 0}}

			// The first run: the call appends its first records, then the
			// worker stops, nothing committed.
			ctx, cancel := context.WithCancel(context.Background())
			b := &partialAppend{Broker: eb, keep: tc.keep, cancel: cancel}
			first := alignedOutputs(t, b, "raw.snmp", "enriched.metrics")
			first.track(ctx, assigned, polledAt(0, 1, 2))
			if first.publishRetrying(ctx, outBatch{"enriched.metrics", outs()}) {
				t.Fatal("published in full; want the partial append")
			}

			// The restart enriches 0 to 2 again from the committed offset (0).
			ctx = context.Background()
			again := alignedOutputs(t, eb, "raw.snmp", "enriched.metrics")
			again.track(ctx, assigned, polledAt(0, 1, 2))
			if !again.publishRetrying(ctx, outBatch{"enriched.metrics", outs()}) {
				t.Fatal("not published")
			}
			got := map[string]int{}
			recs := readTopic(t, eb, "enriched.metrics")
			for _, r := range recs {
				got[string(r.Value)]++
			}
			for src := range 3 {
				for _, kind := range []string{"row", "view"} {
					v, want := fmt.Sprintf("%d/%s", src, kind), 1
					if v == tc.huge {
						want = 0
					}
					if got[v] != want {
						t.Errorf("%s: %d in the log, want %d", v, got[v], want)
					}
				}
			}
			if len(recs) != tc.wantN {
				t.Errorf("%d records in the log, want %d", len(recs), tc.wantN)
			}
		})
	}
}
