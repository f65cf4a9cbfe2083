package recordbatch

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// CodecNames are the codecs by their Kafka names (compression.type), with
// "none" for no compression.
var CodecNames = map[string]int{"none": CodecNone, "gzip": CodecGzip, "snappy": CodecSnappy, "lz4": CodecLZ4, "zstd": CodecZstd}

// Compressor compresses the records of batches, keeping its buffer and
// its codecs' state from one batch to the next: a gzip, lz4 or zstd writer
// made per batch costs more than compressing a small one. The zero value
// is ready. It is not safe for concurrent use.
type Compressor struct {
	out  []byte
	buf  bytes.Buffer // gzip's and lz4's output
	gz   *gzip.Writer
	lz   *lz4.Writer
	zstd *zstd.Encoder
}

// Compress returns batch, an uncompressed batch as Encoder.Finish gives
// it, with its records compressed by codec and its CRC recomputed. The
// result is in c's buffer, valid until the next call. When compressing
// does not make the batch smaller (random bytes), or codec is CodecNone,
// it returns batch itself.
func (c *Compressor) Compress(batch []byte, codec int) ([]byte, error) {
	if codec == CodecNone {
		return batch, nil
	}
	return c.compress(batch, codec, false)
}

// compress is Compress; always: return the compressed batch even when it
// is not smaller. The batch's CRC is not checked: the caller has just
// built it, and checking would read it all once more on the produce path.
func (c *Compressor) compress(batch []byte, codec int, always bool) ([]byte, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return nil, err
	}
	if len(batch) < h.Size() {
		return nil, ErrShort
	}
	if h.Codec() != CodecNone {
		return nil, fmt.Errorf("recordbatch: compress: the batch is compressed already (codec %d)", h.Codec())
	}
	body := batch[HeaderSize:h.Size()]
	out := append(c.out[:0], batch[:HeaderSize]...)
	switch codec {
	case CodecSnappy:
		// Kafka's snappy is the raw block format (or xerial's framing of
		// it); EncodeSnappy writes into out's room when it has enough.
		n := s2.MaxEncodedLen(len(body))
		if n < 0 {
			return nil, fmt.Errorf("recordbatch: compress: %d bytes are too many for snappy", len(body))
		}
		out = grow(out, n)
		enc := s2.EncodeSnappy(out[HeaderSize:], body)
		out = out[:HeaderSize+len(enc)]
	case CodecZstd:
		if c.zstd == nil {
			// One goroutine, and a window no larger than a batch's
			// records need: the default's 8 MiB would be kept per
			// Compressor for nothing.
			z, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
			if err != nil {
				return nil, fmt.Errorf("recordbatch: compress: zstd: %w", err)
			}
			c.zstd = z
		}
		out = c.zstd.EncodeAll(body, out)
	case CodecGzip, CodecLZ4:
		c.buf.Reset()
		var w interface {
			Write([]byte) (int, error)
			Close() error
		}
		if codec == CodecGzip {
			if c.gz == nil {
				c.gz = gzip.NewWriter(&c.buf)
			}
			c.gz.Reset(&c.buf)
			w = c.gz
		} else {
			if c.lz == nil {
				c.lz = lz4.NewWriter(&c.buf)
			}
			c.lz.Reset(&c.buf)
			w = c.lz
		}
		if _, err := w.Write(body); err != nil {
			return nil, fmt.Errorf("recordbatch: compress: codec %d: %w", codec, err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("recordbatch: compress: codec %d: %w", codec, err)
		}
		out = append(out, c.buf.Bytes()...)
	default:
		return nil, fmt.Errorf("%w: codec %d", ErrCompression, codec)
	}
	c.out = out
	if !always && len(out) >= len(batch) {
		return batch, nil
	}
	binary.BigEndian.PutUint32(out[offBatchLength:], uint32(len(out)-LengthPrefix))
	attrs := binary.BigEndian.Uint16(out[offAttributes:])&^CompressionMask | uint16(codec)
	binary.BigEndian.PutUint16(out[offAttributes:], attrs)
	binary.BigEndian.PutUint32(out[offCRC:], crcOf(out))
	return out, nil
}
