package recordbatch

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/weirnet/weir/broker"
)

// maxStreamWindow is the largest zstd window Check decompresses as a
// stream; a frame declaring more is checked whole. Producers' frames stay
// under it: librdkafka pledges the batch's size, and Java's default level
// (3) declares 2 MiB; only levels 20-22 declare more.
const maxStreamWindow = 8 << 20

// Check decodes a validated batch and verifies its records against the
// header, as Kafka's log validator does before appending: exactly
// NumRecords records, offset deltas 0..n-1, nothing left over. A batch that
// passes the CRC but lies about its records would otherwise poison every
// reader of the partition. No record may be over maxRecordBytes
// decompressed (broker.ErrRecordTooLarge): Kafka's producers check a
// record's size before compressing, and a limit on compressed batches
// alone lets a 100 KB gzip batch carry a 100 MB record to every reader.
// Nor may a batch have more than MaxBatchRecords records, nor a record
// more than MaxRecordHeaders headers (broker.ErrInvalidRecord), nor
// decompress to more than MaxDecompressed bytes.
//
// A compressed batch is checked as it decompresses, a record at a time, so
// a check holds its largest record, not the batch: a gzip batch of 64 KB
// can decompress to 64 MB, and a Kafka listener serves thousands of
// clients. Raw snappy blocks (no streaming form; at most 22 times their
// size) and zstd frames with windows over maxStreamWindow are decompressed
// whole first.
// The Decoder is reset.
func (d *Decoder) Check(h *Header, batch []byte, maxRecordBytes int) error {
	if h.NumRecords > MaxBatchRecords {
		return fmt.Errorf("%w: a batch of %d records, more than %d", broker.ErrInvalidRecord, h.NumRecords, MaxBatchRecords)
	}
	d.Reset()
	defer d.Reset()
	body := batch[HeaderSize:h.Size()]
	codec := h.Codec()
	if codec == CodecNone {
		return d.checkRecords(h, body, maxRecordBytes)
	}
	r, err := d.decompressor(codec, body)
	if r != nil && err == nil {
		err = d.checkStream(h, r, maxRecordBytes)
	}
	if (r != nil || err != nil) && !wideZstd(err) {
		return err
	}
	if codec == CodecSnappy {
		d.plain, err = strictSnappy(d.plain, body)
	} else {
		d.plain, err = d.decompress(codec, d.plain, body)
	}
	if err != nil {
		return err
	}
	return d.checkRecords(h, d.plain, maxRecordBytes)
}

// checkRecords is Check on the decompressed records of a batch.
func (d *Decoder) checkRecords(h *Header, body []byte, maxRecordBytes int) error {
	for i := int32(0); i < h.NumRecords; i++ {
		// Its size is checked before it is decoded: decoding an
		// oversized record of empty headers grew a header array of
		// 20 times its bytes to refuse it.
		if length, n := binary.Varint(body); n > 0 && length >= 0 && length <= int64(len(body)-n) {
			if err := checkSize(i, n, length, maxRecordBytes); err != nil {
				return err
			}
		}
		var err error
		if body, err = d.checkRecord(i, h, body); err != nil {
			return err
		}
	}
	if len(body) != 0 {
		return fmt.Errorf("%d bytes after the last record: %w", len(body), ErrCorrupt)
	}
	return nil
}

// checkStream is Check reading the records from a decompressing reader.
func (d *Decoder) checkStream(h *Header, r io.Reader, maxRecordBytes int) error {
	d.bounded = boundedReader{r: r, left: MaxDecompressed}
	if d.stream == nil {
		d.stream = bufio.NewReaderSize(&d.bounded, 32<<10)
	} else {
		d.stream.Reset(&d.bounded)
	}
	defer func() { d.bounded.r = nil }() // nor keeps the batch
	for i := int32(0); i < h.NumRecords; i++ {
		length, err := d.readLength()
		if err != nil {
			return fmt.Errorf("record %d: %w", i, truncated(err))
		}
		if length < 0 {
			return fmt.Errorf("record %d: %w", i, ErrCorrupt)
		}
		n := len(d.record)
		// Checked before it is read, so a check holds no more.
		if err := checkSize(i, n, length, maxRecordBytes); err != nil {
			return err
		}
		if err := d.readRecord(length); err != nil {
			return fmt.Errorf("record %d: %w", i, truncated(err))
		}
		if _, err := d.checkRecord(i, h, d.record); err != nil {
			return err
		}
	}
	rest, err := io.Copy(io.Discard, d.stream)
	if err != nil {
		return err
	}
	if rest != 0 {
		return fmt.Errorf("%d bytes after the last record: %w", rest, ErrCorrupt)
	}
	return nil
}

// readLength reads a record's length from the stream into d.record, as
// written: its size counts the varint's bytes as sent (an uncompressed
// batch's do), which may be more than its shortest form.
func (d *Decoder) readLength() (int64, error) {
	d.record = d.record[:0]
	for {
		c, err := d.stream.ReadByte()
		if err != nil {
			if err == io.EOF && len(d.record) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		d.record = append(d.record, c)
		if c < 0x80 {
			break
		}
		if len(d.record) == binary.MaxVarintLen64 {
			return 0, fmt.Errorf("a length of more than %d bytes: %w", binary.MaxVarintLen64, ErrCorrupt)
		}
	}
	length, n := binary.Varint(d.record)
	if n <= 0 {
		return 0, fmt.Errorf("a length overflowing 64 bits: %w", ErrCorrupt)
	}
	return length, nil
}

// readRecordStep is the least a record's buffer grows by (else it doubles):
// a record of up to a megabyte (Kafka's default max.message.bytes) is read
// into one allocation, and a claim of more costs a megabyte until its
// bytes come.
const readRecordStep = 1 << 20

// readRecord reads length bytes from the stream onto d.record. Its buffer
// grows as they come, not by the length, which is a claim: a batch of a few
// dozen bytes claiming a record of 512 MB (under a max_message_bytes of
// 1 GiB) had that allocated before its end was found.
func (d *Decoder) readRecord(length int64) error {
	if length > MaxDecompressed {
		// No batch holds it: it would be refused once MaxDecompressed
		// bytes were read.
		return fmt.Errorf("a record of %d bytes, more than a batch decompresses to (%d): %w", length, MaxDecompressed, ErrCorrupt)
	}
	end := len(d.record) + int(length)
	for len(d.record) < end {
		if len(d.record) == cap(d.record) {
			d.record = slices.Grow(d.record, min(end-len(d.record), max(len(d.record), readRecordStep)))
		}
		n, err := io.ReadFull(d.stream, d.record[len(d.record):min(cap(d.record), end)])
		d.record = d.record[:len(d.record)+n]
		if err != nil {
			return err
		}
	}
	return nil
}

// maxSnappyRatio bounds what a snappy block expands to: its largest copy,
// 3 bytes, writes 64.
const maxSnappyRatio = 22

// strictSnappy decompresses a raw snappy block into dst's array, for
// Check. Only standard snappy, as Kafka's clients write it: s2.Decode,
// which readers use, also takes S2's extensions, and 28 bytes of those
// declared and filled 64 MB. A block declaring more than snappy can expand
// it to is refused before its buffer is made.
func strictSnappy(dst, src []byte) ([]byte, error) {
	l, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if l > MaxDecompressed {
		return nil, fmt.Errorf("snappy: %d bytes decompressed exceeds %d", l, MaxDecompressed)
	}
	if l > maxSnappyRatio*len(src) {
		return nil, fmt.Errorf("snappy: a block of %d bytes declares %d decompressed, more than snappy expands to: %w", len(src), l, ErrCorrupt)
	}
	out, err := snappy.DecodeStrict(dst[:0], src)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	return out, nil
}

// wideZstd reports whether err is a zstd stream's refusal of a window past
// maxStreamWindow (a single-segment frame's window is its content).
func wideZstd(err error) bool {
	return errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded)
}

// checkSize refuses record i, of a length varint of n bytes and the length
// it gives, past maxRecordBytes. The length is compared, not their sum: a
// stream's length is a claim not yet read, and one near 2^63 overflowed
// the sum, which passed.
func checkSize(i int32, n int, length int64, maxRecordBytes int) error {
	if length > int64(maxRecordBytes)-int64(n) {
		size := uint64(length) + uint64(n) // a claim may be past MaxInt64 with its varint
		return fmt.Errorf("%w: record %d is %d bytes decompressed, over the limit of %d", broker.ErrRecordTooLarge, i, size, maxRecordBytes)
	}
	return nil
}

// checkRecord decodes record i from the front of b, keeping neither it nor
// its headers (kept, a batch of millions of empty headers, two bytes each,
// grew an array of GBs), and returns what follows it.
func (d *Decoder) checkRecord(i int32, h *Header, b []byte) ([]byte, error) {
	d.headers = d.headers[:0]
	var r broker.Record
	rest, err := d.decodeRecord(b, h, &r, MaxRecordHeaders)
	if err != nil {
		return nil, fmt.Errorf("record %d: %w", i, err)
	}
	if r.Offset != h.BaseOffset+int64(i) {
		return nil, fmt.Errorf("record %d has offset delta %d: %w", i, r.Offset-h.BaseOffset, ErrCorrupt)
	}
	return rest, nil
}

// truncated maps the end of the decompressed records mid-record to
// ErrCorrupt, as a batch whose records end early is; a decompressor's own
// errors pass.
func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return ErrCorrupt
	}
	return err
}

// decompressor returns a reader of body's records decompressed, or nil
// for a codec Check decompresses whole.
func (d *Decoder) decompressor(codec int, body []byte) (io.Reader, error) {
	switch codec {
	case CodecGzip:
		if d.gz == nil {
			d.gz = new(gzip.Reader)
		}
		d.src.Reset(body)
		if err := d.gz.Reset(&d.src); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return d.gz, nil
	case CodecSnappy:
		if len(body) > 16 && bytes.HasPrefix(body, xerialPrefix) {
			d.xerial = xerialReader{src: body[16:], buf: d.xerial.buf[:0]}
			return &d.xerial, nil
		}
	case CodecLZ4:
		if d.lz == nil {
			d.lz = lz4.NewReader(nil)
		}
		d.src.Reset(body)
		d.lz.Reset(&d.src)
		return d.lz, nil
	case CodecZstd:
		if d.zstream == nil {
			z, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxStreamWindow))
			if err != nil {
				return nil, err
			}
			d.zstream = z
		}
		d.src.Reset(body)
		if err := d.zstream.Reset(&d.src); err != nil {
			return nil, err
		}
		return d.zstream, nil
	}
	return nil, nil
}

// boundedReader fails once more than left bytes are read: a batch may
// decompress to MaxDecompressed bytes at most, as readers decompress it.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return n, fmt.Errorf("decompressed size exceeds %d", MaxDecompressed)
	}
	return n, err
}

// xerialReader decompresses snappy in Java's xerial framing a chunk at a
// time.
type xerialReader struct {
	src []byte // chunks not yet decompressed
	buf []byte // the current chunk's, from off
	off int
}

func (x *xerialReader) Read(p []byte) (int, error) {
	for x.off == len(x.buf) {
		if len(x.src) == 0 {
			return 0, io.EOF
		}
		chunk, rest, err := xerialChunk(x.src)
		if err != nil {
			return 0, err
		}
		if x.buf, err = strictSnappy(x.buf, chunk); err != nil {
			return 0, err
		}
		x.src, x.off = rest, 0
	}
	n := copy(p, x.buf[x.off:])
	x.off += n
	return n, nil
}
