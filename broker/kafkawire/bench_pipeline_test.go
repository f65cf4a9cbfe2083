package kafkawire

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// discardLog accepts every batch without keeping it, so that a benchmark
// measures the connection loop rather than the fake log.
type discardLog struct{ *fakeLog }

func (discardLog) AppendBatches(context.Context, string, int32, []byte) (int64, error) { return 0, nil }

func benchPipelined(b *testing.B, frame []byte) {
	fl := newFakeLog()
	newTopic(b, fl, "t", 1)
	_, addr := startServer(b, discardLog{fl})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	// Pre-encode a run of frames and write them in big chunks, as a
	// pipelining client (librdkafka) does.
	const per = 64
	chunk := make([]byte, 0, per*len(frame))
	for range per {
		chunk = append(chunk, frame...)
	}
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	go func() {
		for sent := 0; sent < b.N; sent += per {
			n := min(per, b.N-sent)
			if _, err := c.Write(chunk[:n*len(frame)]); err != nil {
				return
			}
		}
	}()
	var hdr [4]byte
	body := make([]byte, 1<<20)
	for range b.N {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			b.Fatal(err)
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if _, err := io.ReadFull(c, body[:n]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPipelinedProduce(b *testing.B) {
	for _, size := range []int{200, 3000, 8 << 10, 48 << 10} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			v := make([]byte, size)
			req := produceReq(7, 1, "t", 0, batch(string(v)))
			frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 1)
			benchPipelined(b, frame)
		})
	}
}

func BenchmarkPipelinedMetadata(b *testing.B) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 9
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("t")}}
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 1)
	benchPipelined(b, frame)
}

// BenchmarkLargeFetch: one client fetching ~8 MiB per response.
func BenchmarkLargeFetch(b *testing.B) {
	fl := newFakeLog()
	newTopic(b, fl, "t", 1)
	v := string(make([]byte, 256<<10))
	for range 40 {
		if _, err := fl.AppendBatches(context.Background(), "t", 0, batch(v)); err != nil {
			b.Fatal(err)
		}
	}
	_, addr := startServer(b, fl)
	rc := dialRaw(b, addr)
	req := fetchReq(11, 0, 0, "t", 0, 0)
	req.MaxBytes = 50 << 20
	req.Topics[0].Partitions[0].PartitionMaxBytes = 10 << 20
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 1)
	b.SetBytes(40 * 256 << 10)
	b.ResetTimer()
	for range b.N {
		if _, err := rc.c.Write(frame); err != nil {
			b.Fatal(err)
		}
		body, err := rc.readFrame()
		if err != nil {
			b.Fatal(err)
		}
		if len(body) < 8<<20 {
			b.Fatalf("fetched %d bytes", len(body))
		}
	}
}
