package recordbatch

import (
	"bytes"
	"fmt"
	"math"
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
			checkAgreesWithKmsg(t, &h, b[:h.Size()])
		}
	})
}

// checkAgreesWithKmsg: an uncompressed batch that Check accepts decodes
// to the records franz-go's kmsg reads from it, as far as kmsg reads them.
func checkAgreesWithKmsg(t *testing.T, h *Header, b []byte) {
	var d Decoder
	if h.Codec() != CodecNone || h.IsControl() || d.Check(h, b, math.MaxInt) != nil {
		return
	}
	// All of them: a batch's offsets may be negative.
	if err := d.Decode("t", 0, h, b, math.MinInt64); err != nil {
		t.Fatalf("Check accepts, Decode refuses: %v", err)
	}
	got := d.Records()
	if len(got) != int(h.NumRecords) {
		t.Fatalf("Check accepts %d records, Decode gives %d", h.NumRecords, len(got))
	}
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(b); err != nil {
		t.Fatalf("Check accepts, kmsg refuses: %v", err)
	}
	recs := kb.Records
	for i, r := range got {
		var kr kmsg.Record
		if err := kr.ReadFrom(recs); err != nil {
			// kmsg takes only -1 for a null key or value; Kafka
			// (DefaultRecord.readFrom), and so this decoder, any
			// negative length.
			return
		}
		recs = recs[kr.Length+int32(varintLen(int64(kr.Length))):]
		ts := kb.FirstTimestamp + kr.TimestampDelta64
		if h.Attributes&TimestampLogAppend != 0 {
			ts = kb.MaxTimestamp // the broker's time for every record
		}
		if r.Offset != h.BaseOffset+int64(kr.OffsetDelta) || r.Timestamp.UnixMilli() != ts ||
			!bytes.Equal(r.Key, kr.Key) || (r.Key == nil) != (kr.Key == nil) ||
			!bytes.Equal(r.Value, kr.Value) || (r.Value == nil) != (kr.Value == nil) || len(r.Headers) != len(kr.Headers) {
			t.Fatalf("record %d: %+v, kmsg %+v", i, r, kr)
		}
		for j, hd := range r.Headers {
			if hd.Key != kr.Headers[j].Key || !bytes.Equal(hd.Value, kr.Headers[j].Value) || (hd.Value == nil) != (kr.Headers[j].Value == nil) {
				t.Fatalf("record %d header %d: %+v, kmsg %+v", i, j, hd, kr.Headers[j])
			}
		}
	}
}

// FuzzRoundTrip: records the Encoder writes, compressed with any codec or
// not, pass Validate and Check and decode to what was appended; and
// franz-go's kmsg, the code Kafka clients use, reads the same records.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("dev-1"), []byte(`{"n":1}`), "source", []byte("syslog"), int64(1_700_000_000_000), int64(10), uint8(3), uint8(0), uint8(7))
	f.Add([]byte{}, []byte{}, "", []byte(nil), int64(-1), int64(-1<<62), uint8(0), uint8(4), uint8(0))
	f.Fuzz(func(t *testing.T, key, value []byte, hkey string, hval []byte, ts, dts int64, n, codec, flags uint8) {
		type rec struct {
			key, value []byte
			headers    []broker.Header
			ts         int64
		}
		var want []rec
		for i := range int(n%8) + 1 {
			r := rec{key: key, value: value, ts: ts + int64(i)*dts}
			if flags&1 != 0 && i%2 == 1 {
				r.key = nil
			}
			if flags&2 != 0 && i%2 == 0 {
				r.value = nil
			}
			if flags&4 != 0 {
				r.headers = []broker.Header{{Key: hkey, Value: hval}, {Key: "schema", Value: nil}}
			}
			want = append(want, r)
		}
		var e Encoder
		e.Reset(-1, -1, -1)
		for _, r := range want {
			e.Append(r.key, r.value, r.headers, r.ts)
		}
		b := append([]byte(nil), e.Finish(ts)...)
		if c := int(codec % 5); c != CodecNone {
			var err error
			if b, err = Compress(b, c); err != nil {
				t.Fatal(err)
			}
		}
		h, err := Validate(b)
		if err != nil {
			t.Fatalf("validate: %v", err)
		}
		if h.Size() != len(b) || h.NumRecords != int32(len(want)) || h.LastOffsetDelta != int32(len(want)-1) {
			t.Fatalf("header %+v for %d records in %d bytes", h, len(want), len(b))
		}
		var d Decoder
		if err := d.Check(&h, b, math.MaxInt); err != nil {
			t.Fatalf("check: %v", err)
		}
		if err := d.Decode("t", 1, &h, b, ts); err != nil {
			t.Fatalf("decode: %v", err)
		}
		got := d.Records()
		if len(got) != len(want) {
			t.Fatalf("%d records, want %d", len(got), len(want))
		}
		sameBytes := func(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }
		for i, r := range got {
			w := want[i]
			if r.Offset != ts+int64(i) || r.Topic != "t" || r.Partition != 1 || r.Timestamp.UnixMilli() != w.ts ||
				!sameBytes(r.Key, w.key) || !sameBytes(r.Value, w.value) || len(r.Headers) != len(w.headers) {
				t.Fatalf("record %d: %+v, want %+v", i, r, w)
			}
			for j, hd := range r.Headers {
				if hd.Key != w.headers[j].Key || !sameBytes(hd.Value, w.headers[j].Value) {
					t.Fatalf("record %d header %d: %+v, want %+v", i, j, hd, w.headers[j])
				}
			}
		}
		if codec%5 != CodecNone {
			return
		}
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(b); err != nil {
			t.Fatalf("kmsg: %v", err)
		}
		recs := kb.Records
		for i, w := range want {
			var kr kmsg.Record
			if err := kr.ReadFrom(recs); err != nil {
				t.Fatalf("kmsg record %d: %v", i, err)
			}
			recs = recs[kr.Length+int32(varintLen(int64(kr.Length))):]
			if kr.OffsetDelta != int32(i) || kb.FirstTimestamp+kr.TimestampDelta64 != w.ts ||
				!sameBytes(kr.Key, w.key) || !sameBytes(kr.Value, w.value) || len(kr.Headers) != len(w.headers) {
				t.Fatalf("kmsg record %d: %+v, want %+v", i, kr, w)
			}
		}
	})
}

// TestDecodeUpToResumes reads a batch a few records at a time, each read
// from the offset the one before returned, as readers bounding their
// records do.
func TestDecodeUpToResumes(t *testing.T) {
	plain := buildBatch(t, 10, 100)
	gz, err := Compress(plain, CodecGzip)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"plain": plain, "gzip": gz} {
		h, err := Validate(b)
		if err != nil {
			t.Fatal(err)
		}
		var d Decoder
		var got []int64
		var nexts []int64
		for off := int64(100); off < 110; {
			d.Reset()
			next, err := d.DecodeUpTo("t", 0, &h, b, off, 3, math.MaxInt)
			if err != nil {
				t.Fatal(name, err)
			}
			for _, r := range d.Records() {
				got = append(got, r.Offset)
			}
			nexts = append(nexts, next)
			off = next
		}
		if fmt.Sprint(got) != "[100 101 102 103 104 105 106 107 108 109]" || fmt.Sprint(nexts) != "[103 106 109 110]" {
			t.Errorf("%s: offsets %v, reads ending at %v", name, got, nexts)
		}
		d.Reset()
		if next, err := d.DecodeUpTo("t", 0, &h, b, 105, 0, math.MaxInt); err != nil || next != 106 || len(d.Records()) != 1 {
			t.Errorf("%s: a bound of 0 decodes %d records and ends at %d (%v); want one, ending at 106", name, len(d.Records()), next, err)
		}
	}
}
