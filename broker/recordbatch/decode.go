package recordbatch

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/weirnet/weir/broker"
)

// MaxDecompressed bounds what one compressed batch may expand to.
const MaxDecompressed = 256 << 20

// What Check takes at append, though Kafka sets no such bounds. Producers
// batch by bytes, a megabyte or so before compression, and by count
// (librdkafka's batch.num.messages: 10,000, at most 1,000,000), and set a
// few headers on a record. A compressed batch far past them is a bomb:
// read back a bounded number of records at a time, a batch of 8 million
// one-byte records cost each reader 13 s of decompressing it again, and a
// record of millions of empty headers an array of 20 times its bytes.
const (
	MaxBatchRecords  = 1 << 20
	MaxRecordHeaders = 1 << 16
)

// Decoder turns batches into broker.Records. It keeps its buffers between
// calls, so decoding allocates nothing per record; the records it returns
// point into the batch (or into the Decoder's decompression buffer) and into
// a header array it owns: they are valid until the next Reset.
type Decoder struct {
	records []broker.Record
	headers []broker.Header
	plain   []byte // decompressed records of compressed batches
	interns map[string]string
	zstd    *zstd.Decoder
	gz      *gzip.Reader
	lz      *lz4.Reader

	// Check's, reading a compressed batch a record at a time.
	stream  *bufio.Reader
	bounded boundedReader
	record  []byte
	zstream *zstd.Decoder // a streaming decoder, its window bounded
	xerial  xerialReader
	// src is the batch the gzip and lz4 readers (and Check's zstd stream)
	// read, emptied by Reset: read from a reader of their own, they kept
	// the batch until the codec's next batch.
	src bytes.Reader
}

// What Reset keeps of its buffers: a compressed batch can decode to a
// quarter of a GiB of records, and a long-lived reader that kept that for
// the one batch would hold it for good. Past these, a buffer is let go and
// the next batch that needs one allocates it; that batch holds as many
// bytes of records, so the allocation is small beside decoding them.
const (
	keepPlain   = 16 << 20
	keepRecords = 1 << 16
	keepHeaders = 1 << 17
)

// Reset drops the records decoded so far, keeping the buffers unless they
// grew past what a usual fetch needs.
func (d *Decoder) Reset() {
	// The records and headers kept, even past their length, point into
	// the buffers dropped (records' Headers into the header array):
	// cleared, they no longer keep them alive.
	if cap(d.plain) > keepPlain || cap(d.headers) > keepHeaders {
		clear(d.records[:cap(d.records)])
	}
	if cap(d.plain) > keepPlain {
		clear(d.headers[:cap(d.headers)])
	}
	d.records = truncateOrDrop(d.records, keepRecords)
	d.headers = truncateOrDrop(d.headers, keepHeaders)
	d.plain = truncateOrDrop(d.plain, keepPlain)
	d.record = truncateOrDrop(d.record, keepPlain)
	d.xerial.buf = truncateOrDrop(d.xerial.buf, keepPlain)
	d.xerial.src = nil
	d.src.Reset(nil)
}

func truncateOrDrop[T any](s []T, keep int) []T {
	if cap(s) > keep {
		return nil
	}
	return s[:0]
}

// Records returns the records decoded since the last Reset.
func (d *Decoder) Records() []broker.Record { return d.records }

// HeaderCount is how many headers the records decoded since the last Reset
// hold: a compressed batch of a few KB can hold millions of empty
// headers, 40 bytes each in the Decoder's array, so readers bound them as
// they bound records (see DecodeUpTo).
func (d *Decoder) HeaderCount() int { return len(d.headers) }

// Decompressed is how many bytes of decompressed records the Decoder holds
// since the last Reset; readers stop decoding more batches past a budget,
// so a fetch of small compressed batches cannot expand without bound.
func (d *Decoder) Decompressed() int { return len(d.plain) }

// Decode appends the records of one validated batch whose offsets are at
// least minOffset. Control batches are skipped.
func (d *Decoder) Decode(topic string, partition int32, h *Header, batch []byte, minOffset int64) error {
	_, err := d.DecodeUpTo(topic, partition, h, batch, minOffset, math.MaxInt, math.MaxInt)
	return err
}

// DecodeUpTo is Decode stopping after maxRecords records, or once the
// records it decoded hold maxHeaders headers (at least one record). It
// returns the offset to continue from: after the batch, or after the last
// record decoded when it stopped early. A compressed batch may hold
// millions of records, or of headers; readers bound what one read returns
// with it, and read the rest of the batch from that offset.
func (d *Decoder) DecodeUpTo(topic string, partition int32, h *Header, batch []byte, minOffset int64, maxRecords, maxHeaders int) (int64, error) {
	if h.IsControl() || h.LastOffset() < minOffset {
		return h.LastOffset() + 1, nil
	}
	body := batch[HeaderSize:h.Size()]
	// A batch decodes whole or not at all: on an error, none of its
	// records stay.
	n0, h0 := len(d.records), len(d.headers)
	if codec := h.Codec(); codec != CodecNone {
		start := len(d.plain)
		var err error
		d.plain, err = d.decompress(codec, d.plain, body)
		if err != nil {
			return -1, fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
		}
		body = d.plain[start:]
	}
	logAppend := h.Attributes&TimestampLogAppend != 0
	for i := int32(0); i < h.NumRecords; i++ {
		var r broker.Record
		var err error
		hl := len(d.headers)
		body, err = d.decodeRecord(body, h, &r, math.MaxInt64)
		if err != nil {
			d.records, d.headers = d.records[:n0], d.headers[:h0]
			return -1, fmt.Errorf("batch at offset %d, record %d: %w", h.BaseOffset, i, err)
		}
		if r.Offset < minOffset {
			// Nor its headers: a read resumed within a batch would
			// hold those of all the records before.
			d.headers = d.headers[:hl]
			continue
		}
		if logAppend {
			r.Timestamp = millisTime(h.MaxTimestamp)
		}
		r.Topic, r.Partition = topic, partition
		d.records = append(d.records, r)
		if (len(d.records)-n0 >= maxRecords || len(d.headers)-h0 >= maxHeaders) && i < h.NumRecords-1 {
			return r.Offset + 1, nil
		}
	}
	return h.LastOffset() + 1, nil
}

// Scan calls fn with each record of a validated batch whose offset is at
// least minOffset, in order, until fn returns false. Unlike Decode, it
// keeps no records: the one fn is given (with its headers) is valid only
// during the call. A compressed batch of 100 KB may hold millions of
// records; a reader looking for one (ListOffsets' scan for a time) reads
// them in the memory of the batch's decompressed bytes, not of a record
// array of hundreds of MB. Control batches are skipped. The Decoder's
// records and headers are left as they were; its decompression buffer
// holds the batch until the next Reset.
func (d *Decoder) Scan(h *Header, batch []byte, minOffset int64, fn func(*broker.Record) bool) error {
	if h.IsControl() || h.LastOffset() < minOffset {
		return nil
	}
	body := batch[HeaderSize:h.Size()]
	if codec := h.Codec(); codec != CodecNone {
		start := len(d.plain)
		var err error
		d.plain, err = d.decompress(codec, d.plain, body)
		if err != nil {
			return fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
		}
		body = d.plain[start:]
	}
	logAppend := h.Attributes&TimestampLogAppend != 0
	h0 := len(d.headers)
	defer func() { d.headers = d.headers[:h0] }()
	var r broker.Record // one for all: fn's pointer makes it escape
	for i := int32(0); i < h.NumRecords; i++ {
		d.headers = d.headers[:h0]
		r = broker.Record{}
		var err error
		body, err = d.decodeRecord(body, h, &r, math.MaxInt64)
		if err != nil {
			return fmt.Errorf("batch at offset %d, record %d: %w", h.BaseOffset, i, err)
		}
		if r.Offset < minOffset {
			continue
		}
		if logAppend {
			r.Timestamp = millisTime(h.MaxTimestamp)
		}
		if !fn(&r) {
			return nil
		}
	}
	return nil
}

func (d *Decoder) decodeRecord(b []byte, h *Header, r *broker.Record, maxHeaders int64) ([]byte, error) {
	length, n := binary.Varint(b)
	if n <= 0 || length < 0 || int64(len(b)-n) < length {
		return nil, ErrCorrupt
	}
	rec := b[n : n+int(length)]
	rest := b[n+int(length):]
	if len(rec) < 1 {
		return nil, ErrCorrupt
	}
	rec = rec[1:] // attributes
	tsDelta, n := binary.Varint(rec)
	if n <= 0 {
		return nil, ErrCorrupt
	}
	rec = rec[n:]
	offDelta, n := binary.Varint(rec)
	if n <= 0 {
		return nil, ErrCorrupt
	}
	rec = rec[n:]
	var ok bool
	if r.Key, rec, ok = readBytes(rec); !ok {
		return nil, ErrCorrupt
	}
	if r.Value, rec, ok = readBytes(rec); !ok {
		return nil, ErrCorrupt
	}
	nh, n := binary.Varint(rec)
	// A header is two bytes at least (a key's length, a value's).
	if n <= 0 || nh < 0 || nh > int64(len(rec)-n)/2 {
		return nil, ErrCorrupt
	}
	if nh > maxHeaders {
		return nil, fmt.Errorf("%w: %d headers, more than %d", broker.ErrInvalidRecord, nh, maxHeaders)
	}
	rec = rec[n:]
	if nh > 0 {
		// Grown once for the record, not by append's quarter at a
		// time: a record may have half a million headers.
		d.headers = slices.Grow(d.headers, int(nh))
		start := len(d.headers)
		for j := int64(0); j < nh; j++ {
			var k, v []byte
			if k, rec, ok = readBytes(rec); !ok || k == nil {
				return nil, ErrCorrupt
			}
			if v, rec, ok = readBytes(rec); !ok {
				return nil, ErrCorrupt
			}
			d.headers = append(d.headers, broker.Header{Key: d.intern(k), Value: v})
		}
		r.Headers = d.headers[start:len(d.headers):len(d.headers)]
	}
	r.Offset = h.BaseOffset + offDelta
	r.Timestamp = millisTime(h.FirstTimestamp + tsDelta)
	return rest, nil
}

// maxInternKey bounds the header keys intern keeps: the map lives as long
// as the Decoder, and a key may be as long as a record (a megabyte), so
// 1024 distinct long ones would hold a GiB for good.
const maxInternKey = 128

// intern returns a string for a header key without allocating for keys seen
// before; header keys come from a small vocabulary.
func (d *Decoder) intern(k []byte) string {
	if s, ok := d.interns[string(k)]; ok {
		return s
	}
	s := string(k)
	if len(k) > maxInternKey {
		return s
	}
	if d.interns == nil {
		d.interns = make(map[string]string)
	}
	if len(d.interns) < 1024 {
		d.interns[s] = s
	}
	return s
}

func readBytes(b []byte) (v, rest []byte, ok bool) {
	l, n := binary.Varint(b)
	if n <= 0 {
		return nil, nil, false
	}
	b = b[n:]
	if l < 0 {
		return nil, b, true
	}
	if l > int64(len(b)) {
		return nil, nil, false
	}
	return b[:l:l], b[l:], true
}

var xerialPrefix = []byte{130, 83, 78, 65, 80, 80, 89, 0}

func (d *Decoder) decompress(codec int, dst, src []byte) ([]byte, error) {
	switch codec {
	case CodecGzip:
		if d.gz == nil {
			d.gz = new(gzip.Reader)
		}
		d.src.Reset(src)
		if err := d.gz.Reset(&d.src); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return readAllBounded(dst, len(dst), d.gz)
	case CodecSnappy:
		if len(src) > 16 && bytes.HasPrefix(src, xerialPrefix) {
			return xerialDecode(dst, len(dst), src[16:])
		}
		return snappyAppend(dst, src)
	case CodecLZ4:
		if d.lz == nil {
			d.lz = lz4.NewReader(nil)
		}
		d.src.Reset(src)
		d.lz.Reset(&d.src)
		return readAllBounded(dst, len(dst), d.lz)
	case CodecZstd:
		if d.zstd == nil {
			z, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxDecompressed))
			if err != nil {
				return nil, err
			}
			d.zstd = z
		}
		return d.zstd.DecodeAll(src, dst)
	}
	return nil, ErrCompression
}

func snappyAppend(dst, src []byte) ([]byte, error) {
	l, err := s2.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if l > MaxDecompressed {
		return nil, fmt.Errorf("snappy: %d bytes decompressed exceeds %d", l, MaxDecompressed)
	}
	start := len(dst)
	dst = grow(dst, l)
	if _, err := s2.Decode(dst[start:start+l], src); err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	return dst[:start+l], nil
}

func xerialDecode(dst []byte, start int, src []byte) ([]byte, error) {
	for len(src) > 0 {
		chunk, rest, err := xerialChunk(src)
		if err != nil {
			return nil, err
		}
		if dst, err = snappyAppend(dst, chunk); err != nil {
			return nil, err
		}
		if len(dst)-start > MaxDecompressed {
			return nil, fmt.Errorf("snappy: decompressed size exceeds %d", MaxDecompressed)
		}
		src = rest
	}
	return dst, nil
}

// xerialChunk splits the next chunk of Java's xerial snappy framing (a
// 4-byte length, then the snappy block) off src, which is not empty.
func xerialChunk(src []byte) (chunk, rest []byte, err error) {
	if len(src) < 4 {
		return nil, nil, fmt.Errorf("snappy: malformed xerial framing")
	}
	size := int(binary.BigEndian.Uint32(src))
	src = src[4:]
	if size < 0 || size > len(src) {
		return nil, nil, fmt.Errorf("snappy: malformed xerial framing")
	}
	return src[:size], src[size:], nil
}

func readAllBounded(dst []byte, start int, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = grow(dst, 32<<10)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > MaxDecompressed {
			return nil, fmt.Errorf("decompressed size exceeds %d", MaxDecompressed)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// grow returns dst with room for n more bytes, its length extended by n.
// Earlier records may point into dst, so growth copies into a new array and
// never reuses the old one.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	nb := make([]byte, len(dst)+n, 2*cap(dst)+n)
	copy(nb, dst)
	return nb
}

// Compress compresses the records section of an uncompressed batch with codec,
// returning a new batch with the CRC recomputed, even when it is not
// smaller. It is for tests and tools; Compressor is for the hot path.
func Compress(batch []byte, codec int) ([]byte, error) {
	if _, err := Validate(batch); err != nil {
		return nil, err
	}
	out, err := new(Compressor).compress(batch, codec, true)
	return bytes.Clone(out), err
}

func crcOf(b []byte) uint32 {
	return crc32Checksum(b[offAttributes:])
}

func crc32Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func millisTime(ms int64) time.Time { return time.UnixMilli(ms) }
