package kafkawire

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/broker/recordbatch"
)

// TestProduceRecordClaimNearInt64Refused: a gzip batch of a few dozen
// bytes whose record claims a length near 2^63 overflowed the broker's
// size check and panicked its append; with parallel appends (weir's with
// flush policy always) on a goroutine of its own, which ended the
// process. Both partitions are refused with MESSAGE_TOO_LARGE, and the
// listener serves on.
func TestProduceRecordClaimNearInt64Refused(t *testing.T) {
	b, err := embedded.Open(t.TempDir(), embedded.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, b, WithParallelAppends(8))
	t.Cleanup(func() { b.Close() })
	if err := b.CreateTopic(context.Background(), "t", broker.TopicConfig{Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	// One record, its length replaced by a claim of MaxInt64 bytes.
	plain := batch("v")
	h, err := recordbatch.Validate(plain)
	if err != nil {
		t.Fatal(err)
	}
	body := append(binary.AppendVarint(nil, math.MaxInt64), plain[recordbatch.HeaderSize:h.Size()]...)
	plain = append(append([]byte(nil), plain[:recordbatch.HeaderSize]...), body...)
	binary.BigEndian.PutUint32(plain[8:], uint32(len(plain)-12))                                          // batchLength
	binary.BigEndian.PutUint32(plain[17:], crc32.Checksum(plain[21:], crc32.MakeTable(crc32.Castagnoli))) // crc, from attributes on
	bomb, err := recordbatch.Compress(plain, recordbatch.CodecGzip)
	if err != nil {
		t.Fatal(err)
	}
	req := produceReq(9, 1, "t", 0, bomb)
	second := kmsg.NewProduceRequestTopicPartition()
	second.Partition, second.Records = 1, bomb
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, second)
	r := dialRaw(t, addr)
	resp := r.do(req).(*kmsg.ProduceResponse)
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != kerr.MessageTooLarge.Code {
			t.Errorf("partition %d: error %v, want MESSAGE_TOO_LARGE", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
	}
	if p := r.do(produceReq(9, 1, "t", 0, batch("x"))).(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 {
		t.Fatalf("a produce after: %v", kerr.ErrorForCode(p.ErrorCode))
	}
}
