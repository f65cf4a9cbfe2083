package recordbatch

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
)

// TestCompressorRoundTrip: one Compressor, reused across codecs and
// batches of other sizes, gives batches the Decoder reads back as they
// were, each marked with its codec and a valid CRC.
func TestCompressorRoundTrip(t *testing.T) {
	var c Compressor
	for round := range 3 {
		for _, name := range []string{"snappy", "lz4", "zstd", "gzip"} {
			codec := CodecNames[name]
			n := 20 + 200*round
			plain := buildBatch(t, n, 100)
			b, err := c.Compress(plain, codec)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) >= len(plain) {
				t.Fatalf("%s: %d bytes, not under the plain %d", name, len(b), len(plain))
			}
			h, err := Validate(b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if h.Codec() != codec {
				t.Fatalf("%s: codec %d in the header", name, h.Codec())
			}
			var d Decoder
			if err := d.Decode("t", 0, &h, b, 0); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(d.Records()) != n {
				t.Fatalf("%s: %d records, want %d", name, len(d.Records()), n)
			}
			for i, r := range d.Records() {
				if r.Offset != int64(100+i) || !bytes.Equal(r.Value, fmt.Appendf(nil, `{"n":%d}`, i)) {
					t.Fatalf("%s: record %d: offset %d value %q", name, i, r.Offset, r.Value)
				}
			}
			// The whole batch checks as a Kafka client's would.
			if err := new(Decoder).Check(&h, b, 1<<20); err != nil {
				t.Fatalf("%s: Check: %v", name, err)
			}
		}
	}
}

// TestCompressorKeepsWhatDoesNotShrink: records of random bytes do not
// compress; the batch is given back as it was, uncompressed.
func TestCompressorKeepsWhatDoesNotShrink(t *testing.T) {
	var e Encoder
	e.Reset(-1, -1, -1)
	for range 10 {
		v := make([]byte, 1000)
		rand.Read(v)
		e.Append(nil, v, nil, 1_700_000_000_000)
	}
	plain := e.Finish(0)
	var c Compressor
	for name, codec := range CodecNames {
		b, err := c.Compress(plain, codec)
		if err != nil {
			t.Fatal(err)
		}
		if &b[0] != &plain[0] || len(b) != len(plain) {
			t.Errorf("%s: a batch of random bytes came back changed", name)
		}
	}
	if _, err := c.Compress(plain, 7); err == nil {
		t.Error("codec 7 compressed")
	}
}
