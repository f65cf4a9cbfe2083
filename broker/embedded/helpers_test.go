package embedded

import (
	"context"
	"fmt"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// plainBatches writes weir's own batches uncompressed, for tests that size,
// roll or damage a log by its records' bytes.
var plainBatches = WithCompression(recordbatch.CodecNone)

func openTest(t testing.TB, dir string, opts ...Option) *Broker {
	t.Helper()
	b, err := Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func makeRecords(n, start int) []broker.Record {
	recs := make([]broker.Record, n)
	for i := range recs {
		recs[i] = broker.Record{
			Key:   []byte(fmt.Sprintf("dev-%d", (start+i)%37)),
			Value: []byte(fmt.Sprintf(`{"seq":%d}`, start+i)),
		}
	}
	return recs
}

// ownRecord is r with copies of its bytes: a fetch's or poll's records
// share buffers the next one reuses.
func ownRecord(r broker.Record) broker.Record {
	r.Key = append([]byte(nil), r.Key...)
	r.Value = append([]byte(nil), r.Value...)
	hs := make([]broker.Header, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = broker.Header{Key: h.Key, Value: append([]byte(nil), h.Value...)}
	}
	r.Headers = hs
	return r
}

// readAll fetches every record of a partition from the log start.
func readAll(t testing.TB, b *Broker, topic string, partition int32) []broker.Record {
	t.Helper()
	var res broker.FetchResult
	var out []broker.Record
	infos, err := b.DescribeTopics(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	off := infos[0].Partitions[partition].LogStartOffset
	for {
		if err := b.Fetch(context.Background(), topic, partition, off, broker.FetchOptions{MaxBytes: 64 << 10}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Records) == 0 {
			return out
		}
		for _, r := range res.Records {
			out = append(out, ownRecord(r))
		}
		off = res.Records[len(res.Records)-1].Offset + 1
	}
}
