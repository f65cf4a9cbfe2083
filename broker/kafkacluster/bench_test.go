package kafkacluster

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
)

// BenchmarkProduce is a collector's publish on the Kafka backend: calls of
// batch records (200-byte values keyed over 1,000 devices) to a
// one-broker kfake cluster, whose round trip is in the figures too.
func BenchmarkProduce(b *testing.B) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "weir.logs"))
			if err != nil {
				b.Fatal(err)
			}
			defer kf.Close()
			br, err := New(kf.ListenAddrs())
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			val := make([]byte, 200)
			for i := range val {
				val[i] = 'a' + byte(i%26)
			}
			recs := make([]broker.Record, batch)
			for i := range recs {
				recs[i] = broker.Record{Key: []byte(fmt.Sprintf("device-%04d", i%1000)), Value: val}
			}
			// A context that can end, as the collectors' do.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := br.Produce(ctx, "weir.logs", recs); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(batch * len(val)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := br.Produce(ctx, "weir.logs", recs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
