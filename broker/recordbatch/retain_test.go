package recordbatch

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/heaptest"
)

// TestInternKeepsNoLongKeys: header keys are interned, up to 1024 of them,
// for as long as the Decoder lives. A record may be max_message_bytes, and
// so may a header key: a reader given 1024 records with distinct megabyte
// keys would hold a GiB for good. Long keys are not interned.
func TestInternKeepsNoLongKeys(t *testing.T) {
	const n, size = 48, 1 << 20
	var d Decoder
	base := heaptest.Live()
	for i := range n {
		key := make([]byte, size)
		copy(key, fmt.Sprintf("key-%d-", i))
		var e Encoder
		e.Reset(-1, -1, -1)
		e.Append(nil, []byte("v"), []broker.Header{{Key: string(key), Value: []byte("x")}}, 1_700_000_000_000)
		b := append([]byte(nil), e.Finish(int64(i))...)
		h, err := Validate(b)
		if err != nil {
			t.Fatal(err)
		}
		d.Reset()
		if err := d.Decode("t", 0, &h, b, 0); err != nil {
			t.Fatal(err)
		}
		if got := d.Records()[0].Headers[0].Key; len(got) != size || got[:8] != string(key[:8]) {
			t.Fatalf("record %d: key of %d bytes %.10q", i, len(got), got)
		}
	}
	d.Reset()
	held := heaptest.Live() - base
	runtime.KeepAlive(&d)
	if held > 8<<20 {
		t.Errorf("after %d records with distinct %d-byte header keys, the reset decoder holds %d MB", n, size, held>>20)
	}
}

// TestResetKeepsNoDroppedHeaderArray: Reset drops a header array past
// keepHeaders, but the record array it keeps still has the records'
// Headers pointing into the dropped one (and their values into the
// batch), which keeps both alive.
func TestResetKeepsNoDroppedHeaderArray(t *testing.T) {
	var d Decoder
	base := heaptest.Live()
	func() {
		var e Encoder
		e.Reset(-1, -1, -1)
		hdrs := make([]broker.Header, 40_000)
		for i := range hdrs {
			hdrs[i] = broker.Header{Key: "k", Value: []byte("v")}
		}
		for range 5 { // 200,000 headers, over keepHeaders; 5 records, under keepRecords
			e.Append(nil, []byte("v"), hdrs, 1_700_000_000_000)
		}
		b := append([]byte(nil), e.Finish(0)...)
		h, err := Validate(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Decode("t", 0, &h, b, 0); err != nil {
			t.Fatal(err)
		}
		if len(d.Records()) != 5 || len(d.Records()[4].Headers) != 40_000 {
			t.Fatalf("%d records", len(d.Records()))
		}
	}()
	d.Reset()
	held := heaptest.Live() - base
	runtime.KeepAlive(&d)
	if held > 2<<20 {
		t.Errorf("the reset decoder holds %d KB after a batch of 200,000 headers", held>>10)
	}
}

// TestScanMatchesDecode: Scan gives the records Decode does, from
// minOffset on, and stops when told.
func TestScanMatchesDecode(t *testing.T) {
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
		if err := d.Decode("t", 0, &h, b, 103); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, r := range d.Records() {
			want = append(want, fmt.Sprint(r.Offset, r.Timestamp.UnixMilli(), string(r.Key), string(r.Value), r.Headers))
		}
		var s Decoder
		var got []string
		if err := s.Scan(&h, b, 103, func(r *broker.Record) bool {
			got = append(got, fmt.Sprint(r.Offset, r.Timestamp.UnixMilli(), string(r.Key), string(r.Value), r.Headers))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: scan\n%v\ndecode\n%v", name, got, want)
		}
		n := 0
		if err := s.Scan(&h, b, 0, func(*broker.Record) bool { n++; return n < 4 }); err != nil || n != 4 {
			t.Errorf("%s: a scan told to stop at the fourth record called fn %d times (%v)", name, n, err)
		}
		if len(s.Records()) != 0 || len(s.headers) != 0 {
			t.Errorf("%s: the scan kept %d records, %d headers", name, len(s.Records()), len(s.headers))
		}
	}
}

// TestDecodeUpToBoundsHeaders: a read stops once the records it decoded
// hold maxHeaders headers, and holds no headers of the records before
// minOffset it skipped.
func TestDecodeUpToBoundsHeaders(t *testing.T) {
	b := buildBatch(t, 10, 100) // records 100, 102, ... have 2 headers each
	h, err := Validate(b)
	if err != nil {
		t.Fatal(err)
	}
	var d Decoder
	next, err := d.DecodeUpTo("t", 0, &h, b, 105, 1<<20, 1<<20)
	if err != nil || next != 110 || len(d.Records()) != 5 || d.HeaderCount() != 4 {
		t.Errorf("from 105: %d records, %d headers held, next %d (%v); want 5, 4 (of 106 and 108), 110", len(d.Records()), d.HeaderCount(), next, err)
	}
	d.Reset()
	next, err = d.DecodeUpTo("t", 0, &h, b, 100, 1<<20, 3)
	if err != nil || next != 103 || len(d.Records()) != 3 || d.HeaderCount() != 4 {
		t.Errorf("3 headers at most: %d records, %d headers, next %d (%v); want 3, 4, 103", len(d.Records()), d.HeaderCount(), next, err)
	}
	for i, r := range d.Records() {
		if want := []int{2, 0, 2}[i]; len(r.Headers) != want || (want > 0 && r.Headers[1].Key != "schema") {
			t.Errorf("record %d: headers %v", r.Offset, r.Headers)
		}
	}
}
