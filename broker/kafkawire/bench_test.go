package kafkawire

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkKgoProduce measures franz-go producing through the listener with
// its defaults (idempotent, acks=all, snappy, 10ms linger) into the fake log.
// The client does most of the work; compare against kfake with the same
// client settings to judge the listener.
//
//	go test -run '^$' -bench Kgo -benchtime 200000x ./broker/kafkawire/
func BenchmarkKgoProduce(b *testing.B) {
	fl := newFakeLog()
	newTopic(b, fl, "bench", 6)
	_, addr := startServer(b, fl)
	ctx := context.Background()
	cl := newClient(b, addr, kgo.DefaultProduceTopic("bench"))
	value := make([]byte, 200)
	cl.ProduceSync(ctx, &kgo.Record{Value: value}) // metadata, producer id
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	for i := range b.N {
		cl.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "router-%d", i%997), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkKgoConsume measures a franz-go direct consumer reading b.N
// records produced beforehand.
func BenchmarkKgoConsume(b *testing.B) {
	fl := newFakeLog()
	newTopic(b, fl, "bench", 6)
	_, addr := startServer(b, fl)
	ctx := context.Background()
	prod := newClient(b, addr, kgo.DefaultProduceTopic("bench"))
	value := make([]byte, 200)
	for i := range b.N {
		prod.Produce(ctx, &kgo.Record{Key: fmt.Appendf(nil, "router-%d", i%997), Value: value}, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	cons := newClient(b, addr, kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < b.N; {
		fs := cons.PollFetches(ctx)
		fs.EachError(func(_ string, _ int32, err error) { b.Fatal(err) })
		got += fs.NumRecords()
	}
}
