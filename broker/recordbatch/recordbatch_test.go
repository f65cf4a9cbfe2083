package recordbatch

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

func buildBatch(t testing.TB, n int, base int64) []byte {
	var e Encoder
	e.Reset(-1, -1, -1)
	for i := 0; i < n; i++ {
		var hdrs []broker.Header
		if i%2 == 0 {
			hdrs = []broker.Header{{Key: "source", Value: []byte("syslog")}, {Key: "schema", Value: []byte("log/1")}}
		}
		var key []byte
		if i%3 != 0 {
			key = []byte(fmt.Sprintf("dev-%d", i))
		}
		e.Append(key, []byte(fmt.Sprintf(`{"n":%d}`, i)), hdrs, 1_700_000_000_000+int64(i*10))
	}
	return append([]byte(nil), e.Finish(base)...)
}

// TestEncoderMatchesKmsg decodes our batches with franz-go's kmsg, the same
// code Kafka clients use, so a mistake in our encoding cannot hide.
func TestEncoderMatchesKmsg(t *testing.T) {
	b := buildBatch(t, 50, 1234)
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if kb.FirstOffset != 1234 || kb.NumRecords != 50 || kb.LastOffsetDelta != 49 || kb.Magic != 2 {
		t.Fatalf("header mismatch: %+v", kb)
	}
	if kb.MaxTimestamp != 1_700_000_000_000+490 {
		t.Fatalf("max timestamp %d", kb.MaxTimestamp)
	}
	// kmsg's CRC must agree with ours.
	if _, err := Validate(b); err != nil {
		t.Fatal(err)
	}
	recs := kb.Records
	for i := 0; i < 50; i++ {
		var r kmsg.Record
		if err := r.ReadFrom(recs); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		recs = recs[r.Length+int32(varintLen(int64(r.Length))):]
		if r.OffsetDelta != int32(i) || string(r.Value) != fmt.Sprintf(`{"n":%d}`, i) {
			t.Fatalf("record %d: %+v", i, r)
		}
		if (i%3 == 0) != (r.Key == nil) {
			t.Fatalf("record %d key %q", i, r.Key)
		}
		if i%2 == 0 && (len(r.Headers) != 2 || r.Headers[1].Key != "schema") {
			t.Fatalf("record %d headers %+v", i, r.Headers)
		}
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	for _, codec := range []int{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) {
			b := buildBatch(t, 20, 100)
			if codec != CodecNone {
				var err error
				if b, err = Compress(b, codec); err != nil {
					t.Fatal(err)
				}
			}
			h, err := Validate(b)
			if err != nil {
				t.Fatal(err)
			}
			var d Decoder
			if err := d.Decode("t", 3, &h, b, 105); err != nil {
				t.Fatal(err)
			}
			recs := d.Records()
			if len(recs) != 15 {
				t.Fatalf("got %d records, want 15 (offsets 105..119)", len(recs))
			}
			for i, r := range recs {
				n := i + 5
				if r.Offset != int64(100+n) || r.Partition != 3 || r.Topic != "t" {
					t.Fatalf("record %d: offset %d", i, r.Offset)
				}
				if !bytes.Equal(r.Value, []byte(fmt.Sprintf(`{"n":%d}`, n))) {
					t.Fatalf("record %d value %q", i, r.Value)
				}
				if want := time.UnixMilli(1_700_000_000_000 + int64(n*10)); !r.Timestamp.Equal(want) {
					t.Fatalf("record %d ts %v want %v", i, r.Timestamp, want)
				}
			}
		})
	}
}

func TestValidateRejects(t *testing.T) {
	b := buildBatch(t, 3, 0)
	if _, err := Validate(b[:len(b)-1]); err != ErrShort {
		t.Fatalf("truncated: %v", err)
	}
	bad := append([]byte(nil), b...)
	bad[len(bad)-1] ^= 0xff
	if _, err := Validate(bad); err != ErrCRC {
		t.Fatalf("flipped byte: %v", err)
	}
	bad = append([]byte(nil), b...)
	bad[offMagic] = 1
	if _, err := Validate(bad); err != ErrMagic {
		t.Fatalf("magic: %v", err)
	}
	// Base offset and leader epoch are outside the CRC.
	SetBaseOffset(b, 99)
	SetLeaderEpoch(b, 7)
	if h, err := Validate(b); err != nil || h.BaseOffset != 99 {
		t.Fatalf("rebased: %v %+v", err, h)
	}
}

func TestDecodeAllocs(t *testing.T) {
	b := buildBatch(t, 100, 0)
	h, _ := Validate(b)
	var d Decoder
	d.Decode("t", 0, &h, b, 0) // warm buffers
	allocs := testing.AllocsPerRun(100, func() {
		d.Reset()
		if err := d.Decode("t", 0, &h, b, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per batch of 100 records", allocs)
	}
}

func BenchmarkEncode200B(b *testing.B) {
	var e Encoder
	val := bytes.Repeat([]byte("x"), 200)
	key := []byte("edge1.ams1")
	b.SetBytes(200)
	b.ReportAllocs()
	e.Reset(-1, -1, -1)
	for i := 0; i < b.N; i++ {
		if e.Count() == 1000 {
			e.Finish(0)
			e.Reset(-1, -1, -1)
		}
		e.Append(key, val, nil, 1)
	}
}

func BenchmarkDecode200B(b *testing.B) {
	var e Encoder
	e.Reset(-1, -1, -1)
	val := bytes.Repeat([]byte("x"), 200)
	for i := 0; i < 1000; i++ {
		e.Append([]byte("edge1.ams1"), val, nil, 1)
	}
	batch := e.Finish(0)
	h, _ := Validate(batch)
	var d Decoder
	b.SetBytes(200 * 1000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		d.Reset()
		if _, err := Validate(batch); err != nil {
			b.Fatal(err)
		}
		d.Decode("t", 0, &h, batch, 0)
	}
}

// FuzzDecode feeds arbitrary bytes to the batch parser and decoder: they may
// reject the input but must never panic or loop.
func FuzzDecode(f *testing.F) {
	f.Add(buildBatch(f, 3, 0))
	gz, _ := Compress(buildBatch(f, 3, 0), CodecGzip)
	f.Add(gz)
	sn, _ := Compress(buildBatch(f, 3, 0), CodecSnappy)
	f.Add(sn)
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decoder
		Split(b, func(h *Header, batch []byte) error {
			return d.Decode("t", 0, h, batch, 0)
		})
		// Also decode without the CRC check, so mutations reach the
		// record parser.
		if h, err := ParseHeader(b); err == nil && h.Size() <= len(b) {
			d.Decode("t", 0, &h, b, 0)
		}
	})
}
