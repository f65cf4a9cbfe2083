package kafkawire

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/broker/recordbatch"
)

// TestOwnCompressedBatchesToClients: batches the embedded broker's own
// Produce wrote with each codec (several per call, past maxBatchBytes)
// are read back whole over the wire by franz-go and, when installed, by
// kcat (librdkafka).
func TestOwnCompressedBatchesToClients(t *testing.T) {
	for _, name := range []string{"snappy", "lz4", "zstd", "gzip"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			b, err := embedded.Open(t.TempDir(), embedded.WithLogger(testLogger(t)),
				embedded.WithCompression(recordbatch.CodecNames[name]), embedded.WithMaxMessageBytes(8<<20))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			if err := b.CreateTopic(ctx, "own", broker.TopicConfig{Partitions: 1}); err != nil {
				t.Fatal(err)
			}
			// 3000 records of 1 KB: about three batches of 1 MiB in one
			// call; then a record of 3 MiB, a batch of its own, past zstd's
			// window of 1 MiB.
			const n = 3001
			pad := strings.Repeat("interface GigabitEthernet0/1 changed state to down; ", 20) + "end"
			recs := make([]broker.Record, n)
			for i := range recs {
				recs[i].Value = fmt.Appendf(nil, "%06d %s", i, pad)
			}
			recs[n-1].Value = fmt.Appendf(nil, "%06d %s", n-1, strings.Repeat(pad+" ", 3<<20/len(pad))+pad)
			if err := b.ProducePartition(ctx, "own", 0, recs); err != nil {
				t.Fatal(err)
			}
			buf, _, _, err := b.ReadBatches(nil, "own", 0, 0, 64<<20)
			if err != nil {
				t.Fatal(err)
			}
			batches := 0
			if _, err := recordbatch.Split(buf, func(h *recordbatch.Header, _ []byte) error {
				batches++
				if h.Codec() != recordbatch.CodecNames[name] {
					return fmt.Errorf("batch at %d: codec %d", h.BaseOffset, h.Codec())
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if batches < 2 {
				t.Fatalf("%d batches, want several", batches)
			}
			var res broker.FetchResult
			if err := b.Fetch(ctx, "own", 0, n-1, broker.FetchOptions{}, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Records) != 1 || !bytes.Equal(res.Records[0].Value, recs[n-1].Value) {
				t.Fatalf("Fetch of the large record: %d records", len(res.Records))
			}
			_, addr := startServer(t, b)

			cl := newClient(t, addr, kgo.ConsumeTopics("own"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			got := 0
			for got < n {
				fs := cl.PollFetches(ctx)
				if err := fs.Err(); err != nil {
					t.Fatalf("franz-go, after %d records: %v", got, err)
				}
				fs.EachRecord(func(r *kgo.Record) {
					if r.Offset != int64(got) || !bytes.Equal(r.Value, recs[got].Value) {
						t.Fatalf("franz-go: record %d: offset %d value %.10q", got, r.Offset, r.Value)
					}
					got++
				})
			}

			if _, err := exec.LookPath("kcat"); err != nil {
				t.Log("kcat not installed")
				return
			}
			out, err := exec.CommandContext(ctx, "kcat", "-b", addr, "-C", "-t", "own", "-p", "0",
				"-o", "beginning", "-e", "-q", "-f", "%o %s\n").CombinedOutput()
			if err != nil {
				t.Fatalf("kcat: %v\n%.200s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != n {
				t.Fatalf("kcat read %d records, want %d\n%.200s", len(lines), n, out)
			}
			for i, l := range lines {
				if want := fmt.Sprintf("%d %s", i, recs[i].Value); l != want {
					t.Fatalf("kcat: line %d is %.20q, want %.20q", i, l, want)
				}
			}
		})
	}
}
