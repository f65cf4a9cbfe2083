package recordbatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/heaptest"
)

// codecXerial stands for snappy in Java's xerial framing, which Check
// decompresses a chunk at a time, where raw snappy is decompressed whole.
const codecXerial = 100

// compressor compresses batches with codec (or codecXerial), as
// Compress does, keeping its writers: made anew for each input, they were
// most of the fuzzer's time.
type compressor struct {
	gz   *gzip.Writer
	lz   *lz4.Writer
	zstd *zstd.Encoder
	out  bytes.Buffer
}

func (c *compressor) compress(t testing.TB, batch []byte, codec int) []byte {
	t.Helper()
	h, err := Validate(batch)
	if err != nil {
		t.Fatal(err)
	}
	body := batch[HeaderSize:h.Size()]
	c.out.Reset()
	attrs := codec
	switch codec {
	case CodecGzip:
		if c.gz == nil {
			c.gz = gzip.NewWriter(nil)
		}
		c.gz.Reset(&c.out)
		c.gz.Write(body)
		c.gz.Close()
	case CodecLZ4:
		if c.lz == nil {
			c.lz = lz4.NewWriter(nil)
		}
		c.lz.Reset(&c.out)
		c.lz.Write(body)
		c.lz.Close()
	case CodecZstd:
		if c.zstd == nil {
			if c.zstd, err = zstd.NewWriter(nil); err != nil {
				t.Fatal(err)
			}
		}
		c.out.Write(c.zstd.EncodeAll(body, nil))
	case CodecSnappy:
		c.out.Write(s2.EncodeSnappy(nil, body))
	case codecXerial:
		// As Java's SnappyOutputStream frames it: the magic, two
		// versions, then chunks of 32 KB, each prefixed by its
		// compressed length.
		c.out.Write(xerialPrefix)
		c.out.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		for len(body) > 0 {
			chunk := s2.EncodeSnappy(nil, body[:min(32<<10, len(body))])
			binary.Write(&c.out, binary.BigEndian, uint32(len(chunk)))
			c.out.Write(chunk)
			body = body[min(32<<10, len(body)):]
		}
		attrs = CodecSnappy
	default:
		t.Fatalf("codec %d", codec)
	}
	nb := withBody(batch, c.out.Bytes())
	binary.BigEndian.PutUint16(nb[offAttributes:], binary.BigEndian.Uint16(nb[offAttributes:])&^CompressionMask|uint16(attrs))
	binary.BigEndian.PutUint32(nb[offCRC:], crcOf(nb))
	return nb
}

// withBody is batch with its records section replaced by body, its length
// and CRC set to match.
func withBody(batch, body []byte) []byte {
	nb := append(append([]byte(nil), batch[:HeaderSize]...), body...)
	binary.BigEndian.PutUint32(nb[offBatchLength:], uint32(len(nb)-LengthPrefix))
	binary.BigEndian.PutUint32(nb[offCRC:], crcOf(nb))
	return nb
}

func checkOf(t testing.TB, d *Decoder, batch []byte, maxRecordBytes int) error {
	t.Helper()
	h, err := Validate(batch)
	if err != nil {
		t.Fatal(err)
	}
	return d.Check(&h, batch, maxRecordBytes)
}

type namedCodec struct {
	name  string
	codec int
}

// streamedCodecs are those Check reads a record at a time; allCodecs adds
// raw snappy, which it decompresses whole.
var (
	streamedCodecs = []namedCodec{{"gzip", CodecGzip}, {"lz4", CodecLZ4}, {"zstd", CodecZstd}, {"snappy-xerial", codecXerial}}
	allCodecs      = append(slices.Clone(streamedCodecs), namedCodec{"snappy", CodecSnappy})
)

// TestCheckHoldsARecordNotTheBatch: a check decompresses a record at a
// time. Holding the whole batch decompressed, a 64 KB gzip batch cost
// each append checking it 64 MB, and a Kafka listener serves thousands of
// clients.
func TestCheckHoldsARecordNotTheBatch(t *testing.T) {
	const records, size = 16, 4 << 20
	var e Encoder
	e.Reset(-1, -1, -1)
	value := bytes.Repeat([]byte("c"), size-64)
	for range records {
		e.Append(nil, value, nil, 1_700_000_000_000)
	}
	plain := append([]byte(nil), e.Finish(0)...)
	for _, c := range streamedCodecs {
		t.Run(c.name, func(t *testing.T) {
			batch := new(compressor).compress(t, plain, c.codec)
			var d Decoder
			var err error
			a := heaptest.Allocated(func() { err = checkOf(t, &d, batch, size) })
			t.Logf("%d records of %d MB in a batch of %d KB: %d MB allocated", records, size>>20, len(batch)>>10, a>>20)
			if err != nil {
				t.Fatal(err)
			}
			// A record, the decompressor's state (zstd's window: 8 MB);
			// the whole batch is 64 MB.
			if a > 24<<20 {
				t.Errorf("checking a batch of %d MB decompressed allocated %d MB; want under 24", records*size>>20, a>>20)
			}
		})
	}
}

// TestCheckZstdWideWindowWhole: a zstd frame declaring a window past
// maxStreamWindow (a 64 MB batch compressed in one go declares its whole
// size) is checked whole, not refused.
func TestCheckZstdWideWindowWhole(t *testing.T) {
	var e Encoder
	e.Reset(-1, -1, -1)
	value := bytes.Repeat([]byte("z"), 1<<20)
	for range 16 {
		e.Append(nil, value, nil, 1_700_000_000_000)
	}
	plain := append([]byte(nil), e.Finish(0)...)
	enc, err := zstd.NewWriter(nil, zstd.WithSingleSegment(true))
	if err != nil {
		t.Fatal(err)
	}
	frame := enc.EncodeAll(plain[HeaderSize:], nil)
	var fh zstd.Header
	if err := fh.Decode(frame); err != nil || !fh.SingleSegment || fh.FrameContentSize <= maxStreamWindow {
		t.Fatalf("frame header %+v (%v): want a window (single segment: the content) over %d", fh, err, maxStreamWindow)
	}
	batch := withBody(plain, frame)
	binary.BigEndian.PutUint16(batch[offAttributes:], binary.BigEndian.Uint16(batch[offAttributes:])|CodecZstd)
	binary.BigEndian.PutUint32(batch[offCRC:], crcOf(batch))
	var d Decoder
	if err := checkOf(t, &d, batch, 2<<20); err != nil {
		t.Fatalf("a frame of window %d: %v", fh.FrameContentSize, err)
	}
	if err := checkOf(t, &d, batch, 1<<20); !errors.Is(err, broker.ErrRecordTooLarge) {
		t.Fatalf("records of 1 MB against a limit of 1 MB: %v, want ErrRecordTooLarge", err)
	}
}

// outcome is what Check says of a batch, as a class.
func outcome(err error) string {
	switch {
	case err == nil:
		return "accepted"
	case errors.Is(err, broker.ErrRecordTooLarge):
		return "too large"
	case errors.Is(err, broker.ErrInvalidRecord):
		return "invalid"
	default:
		return "corrupt"
	}
}

// FuzzCheckStreamedAgrees: a batch's records, compressed with any codec,
// get what they get uncompressed: accepted, or refused for the same
// reason. Check reads an uncompressed batch in place and a compressed one
// as a stream.
func FuzzCheckStreamedAgrees(f *testing.F) {
	good := buildBatch(f, 5, 0)
	body := good[HeaderSize:]
	f.Add(body, int32(5), 1<<20)
	f.Add(body, int32(4), 1<<20)                               // a record after the last
	f.Add(body, int32(6), 1<<20)                               // one missing
	f.Add(body[:len(body)-3], int32(5), 1<<20)                 // truncated
	f.Add(body, int32(5), 12)                                  // records over the limit
	f.Add(append(bytes.Clone(body), 0, 0, 0), int32(5), 1<<20) // bytes after the last
	// A length whose sum with its varint's overflows int64.
	f.Add(append(binary.AppendVarint(nil, math.MaxInt64), body...), int32(5), 1<<20)
	var compressors compressor
	f.Fuzz(func(t *testing.T, body []byte, n int32, maxRecordBytes int) {
		if n < 0 || n > 1000 || len(body) > 1<<16 {
			return
		}
		batch := withBody(good, body)
		binary.BigEndian.PutUint32(batch[offRecordCount:], uint32(n))
		binary.BigEndian.PutUint32(batch[offLastOffsetDelta:], uint32(n-1))
		binary.BigEndian.PutUint32(batch[offCRC:], crcOf(batch))
		if _, err := Validate(batch); err != nil {
			return // a header Validate refuses is not checked
		}
		var d Decoder
		want := checkOf(t, &d, batch, maxRecordBytes)
		c := &compressors
		for _, codec := range allCodecs {
			got := checkOf(t, &d, c.compress(t, batch, codec.codec), maxRecordBytes)
			if outcome(got) == outcome(want) {
				continue
			}
			// A record claiming more bytes than follow is corrupt
			// uncompressed, but a stream cannot know what follows
			// before reading it: it refuses a claim past the limit.
			if outcome(want) == "corrupt" && outcome(got) == "too large" {
				continue
			}
			t.Fatalf("%s: %v; uncompressed: %v", codec.name, got, want)
		}
	})
}

func ExampleDecoder_Check() {
	var e Encoder
	e.Reset(-1, -1, -1)
	e.Append(nil, bytes.Repeat([]byte("x"), 2000), nil, 1_700_000_000_000)
	batch, _ := Compress(e.Finish(0), CodecGzip)
	h, _ := Validate(batch)
	var d Decoder
	fmt.Println(d.Check(&h, batch, 1<<20))
	fmt.Println(d.Check(&h, batch, 1000))
	// Output:
	// <nil>
	// record too large: record 0 is 2009 bytes decompressed, over the limit of 1000
}

// BenchmarkCheckCompressed: checking a producer's batch of 100 records of
// 200 bytes, compressed.
func BenchmarkCheckCompressed(b *testing.B) {
	var e Encoder
	e.Reset(-1, -1, -1)
	for i := range 100 {
		e.Append([]byte(fmt.Sprintf("dev-%d", i)), bytes.Repeat([]byte(fmt.Sprintf("%03d", i)), 66), nil, 1_700_000_000_000)
	}
	plain := append([]byte(nil), e.Finish(0)...)
	for _, c := range allCodecs {
		b.Run(c.name, func(b *testing.B) {
			batch := new(compressor).compress(b, plain, c.codec)
			h, err := Validate(batch)
			if err != nil {
				b.Fatal(err)
			}
			var d Decoder
			b.ReportAllocs()
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				if err := d.Check(&h, batch, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCheckSnappyBombRefused: a raw snappy block is decompressed whole, so
// what it may declare is bounded by what snappy can expand to. S2's
// extensions, which s2.Decode also takes, filled 64 MB from 28 bytes.
func TestCheckSnappyBombRefused(t *testing.T) {
	var e Encoder
	e.Reset(-1, -1, -1)
	e.Append(nil, []byte("v"), nil, 1_700_000_000_000)
	plain := append([]byte(nil), e.Finish(0)...)
	for _, c := range []struct {
		name  string
		block []byte
	}{
		{"s2 extensions", s2.Encode(nil, make([]byte, 64<<20))},
		// A standard block declaring 64 MB, holding one literal.
		{"declared past its size", append(binary.AppendUvarint(nil, 64<<20), 0, 'x')},
	} {
		t.Run(c.name, func(t *testing.T) {
			batch := withBody(plain, c.block)
			binary.BigEndian.PutUint16(batch[offAttributes:], binary.BigEndian.Uint16(batch[offAttributes:])|CodecSnappy)
			binary.BigEndian.PutUint32(batch[offCRC:], crcOf(batch))
			var d Decoder
			var err error
			a := heaptest.Allocated(func() { err = checkOf(t, &d, batch, 1<<20) })
			t.Logf("a block of %d bytes: %v; %d KB allocated", len(c.block), err, a>>10)
			if err == nil {
				t.Fatal("accepted")
			}
			if a > 1<<20 {
				t.Errorf("refusing it allocated %d MB", a>>20)
			}
		})
	}
}

// TestCheckStreamHugeClaimRefused: a streamed record's length is a claim,
// checked against the limit before it is read. Its varint plus a claim
// near 2^63 overflowed the sum checked, which passed, and the record's
// buffer was sliced to a negative length: a panic in the produce path
// (on a goroutine of its own with parallel appends, the process's end)
// from a batch of a few dozen bytes.
func TestCheckStreamHugeClaimRefused(t *testing.T) {
	for _, claim := range []int64{math.MaxInt64, math.MaxInt64 - 9, math.MaxInt64 - 10, 1 << 62} {
		var e Encoder
		e.Reset(-1, -1, -1)
		e.Append(nil, []byte("v"), nil, 1_700_000_000_000)
		plain := append([]byte(nil), e.Finish(0)...)
		plain = withBody(plain, append(binary.AppendVarint(nil, claim), make([]byte, 20)...))
		for _, c := range streamedCodecs {
			t.Run(fmt.Sprintf("%s/%d", c.name, claim), func(t *testing.T) {
				var d Decoder
				batch := new(compressor).compress(t, plain, c.codec)
				err := checkOf(t, &d, batch, 1<<20)
				if !errors.Is(err, broker.ErrRecordTooLarge) {
					t.Fatalf("a record claiming %d bytes: %v, want ErrRecordTooLarge", claim, err)
				}
			})
		}
	}
}

// TestCheckStreamClaimAllocatesWhatIsRead: a streamed record under the
// limit was given a buffer of its claimed length before a byte of it was
// read. max_message_bytes may be 1 GiB: a gzip batch of a few dozen bytes
// claiming a record of 512 MB allocated 512 MB per check (past
// MaxDecompressed, which it can never be), and with no limit (math.MaxInt,
// as tools check) a claim near 2^63 panicked in make.
func TestCheckStreamClaimAllocatesWhatIsRead(t *testing.T) {
	for _, c := range []struct {
		claim          int64
		maxRecordBytes int
	}{{512 << 20, 1 << 30}, {MaxDecompressed - 100, 1 << 30}, {math.MaxInt64 - 20, math.MaxInt}} {
		var e Encoder
		e.Reset(-1, -1, -1)
		e.Append(nil, []byte("v"), nil, 1_700_000_000_000)
		plain := append([]byte(nil), e.Finish(0)...)
		plain = withBody(plain, append(binary.AppendVarint(nil, c.claim), make([]byte, 20)...))
		for _, codec := range streamedCodecs {
			t.Run(fmt.Sprintf("%s/%d", codec.name, c.claim), func(t *testing.T) {
				batch := new(compressor).compress(t, plain, codec.codec)
				var d Decoder
				var err error
				a := heaptest.Allocated(func() { err = checkOf(t, &d, batch, c.maxRecordBytes) })
				if outcome(err) != "corrupt" {
					t.Fatalf("a record claiming %d bytes, 20 following: %v, want it corrupt", c.claim, err)
				}
				if a > 16<<20 {
					t.Errorf("refusing a claim of %d MB with 20 bytes allocated %d MB", c.claim>>20, a>>20)
				}
			})
		}
	}
}

// TestCheckKeepsNoBatch: a Check's Decoder, pooled for the next append,
// keeps nothing of the batch it checked. Its gzip, lz4 and zstd readers
// kept reading the batch (a Produce request's records, up to
// max_message_bytes) until the next check of the codec.
func TestCheckKeepsNoBatch(t *testing.T) {
	wantNoBatchKept(t, "checked", func(t *testing.T, d *Decoder, batch []byte) {
		if err := checkOf(t, d, batch, 1<<20); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDecodeResetKeepsNoBatch: nor does a reader's Decoder keep the last
// compressed batch it decoded once Reset: its gzip and lz4 readers read
// the batch through a reader of their own, kept until the codec's next
// batch, as Check's did.
func TestDecodeResetKeepsNoBatch(t *testing.T) {
	wantNoBatchKept(t, "decoded", func(t *testing.T, d *Decoder, batch []byte) {
		h, err := Validate(batch)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Decode("t", 0, &h, batch, 0); err != nil {
			t.Fatal(err)
		}
		d.Reset()
	})
}

// wantNoBatchKept checks, for each codec, that a Decoder use had a batch
// of keeps nothing of it after.
func wantNoBatchKept(t *testing.T, used string, use func(t *testing.T, d *Decoder, batch []byte)) {
	plain := buildBatch(t, 50, 0)
	for _, c := range allCodecs {
		t.Run(c.name, func(t *testing.T) {
			d := new(Decoder)
			batch := new(compressor).compress(t, plain, c.codec)
			use(t, d, batch)
			kept := weak.Make(&batch[0])
			batch = nil
			runtime.GC()
			if kept.Value() != nil {
				t.Errorf("the Decoder keeps the %s batch it %s", c.name, used)
			}
			runtime.KeepAlive(d)
		})
	}
}

// TestCheckStreamSizesTheVarintAsSent: a record's size is its length's
// varint as the producer wrote it plus the length, streamed or not. The
// stream re-encoded the varint it read, minimally: a record whose length
// was written in 4 bytes (Go's and Java's readers take any form) counted 3
// bytes less streamed, and a record refused uncompressed was accepted
// compressed.
func TestCheckStreamSizesTheVarintAsSent(t *testing.T) {
	var e Encoder
	e.Reset(-1, -1, -1)
	e.Append(nil, []byte("v"), nil, 1_700_000_000_000)
	plain := append([]byte(nil), e.Finish(0)...)
	h, err := Validate(plain)
	if err != nil {
		t.Fatal(err)
	}
	rec := plain[HeaderSize:h.Size()]
	length, n := binary.Varint(rec)
	// The length's zigzag form in 4 bytes, where 1 does.
	zz := uint64(length) << 1
	if zz >= 0x80 || n != 1 {
		t.Fatalf("a record of %d bytes: its length is not in one byte", length)
	}
	padded := append([]byte{byte(zz) | 0x80, 0x80, 0x80, 0x00}, rec[n:]...)
	if l, m := binary.Varint(padded); l != length || m != 4 {
		t.Fatalf("padded varint reads %d in %d bytes", l, m)
	}
	plain = withBody(plain, padded)
	limit := int(length) + 2 // over it with the 4 bytes sent, under with 1
	var d Decoder
	want := checkOf(t, &d, plain, limit)
	if !errors.Is(want, broker.ErrRecordTooLarge) {
		t.Fatalf("uncompressed: %v, want ErrRecordTooLarge", want)
	}
	if err := checkOf(t, &d, plain, limit+2); err != nil {
		t.Fatalf("uncompressed under the limit: %v", err)
	}
	for _, c := range streamedCodecs {
		batch := new(compressor).compress(t, plain, c.codec)
		if err := checkOf(t, &d, batch, limit); !errors.Is(err, broker.ErrRecordTooLarge) {
			t.Errorf("%s: %v, want ErrRecordTooLarge as uncompressed", c.name, err)
		}
		if err := checkOf(t, &d, batch, limit+2); err != nil {
			t.Errorf("%s: under the limit: %v", c.name, err)
		}
	}
}
