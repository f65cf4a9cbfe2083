// Package recordbatch reads and writes Kafka's RecordBatch v2 format, the unit
// the embedded log stores on disk and the Kafka wire protocol carries.
//
// Storing batches in the wire format lets the Kafka listener serve Fetch
// straight from segment bytes. The encoder and the record iterator work on
// caller-owned buffers so the hot paths allocate nothing per record.
//
// Layout of a batch (big endian, 61-byte header):
//
//	baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 |
//	magic int8 (2) | crc uint32 (CRC-32C of attributes..end) |
//	attributes int16 | lastOffsetDelta int32 | firstTimestamp int64 |
//	maxTimestamp int64 | producerId int64 | producerEpoch int16 |
//	baseSequence int32 | recordCount int32 | records...
package recordbatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Offsets of the header fields inside a batch.
const (
	offBaseOffset      = 0
	offBatchLength     = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offFirstTimestamp  = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offRecordCount     = 57

	// HeaderSize is the size of the fixed batch header.
	HeaderSize = 61
	// LengthPrefix is how many leading bytes (baseOffset, batchLength) are
	// not counted by batchLength.
	LengthPrefix = 12
)

// Attribute bits.
const (
	CompressionMask    = 0x07
	TimestampLogAppend = 0x08
	Transactional      = 0x10
	Control            = 0x20
)

// Compression codecs as stored in the attributes.
const (
	CodecNone   = 0
	CodecGzip   = 1
	CodecSnappy = 2
	CodecLZ4    = 3
	CodecZstd   = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors returned when a batch does not validate.
var (
	ErrShort       = errors.New("recordbatch: short batch")
	ErrMagic       = errors.New("recordbatch: unsupported magic (only v2 batches are accepted)")
	ErrCRC         = errors.New("recordbatch: CRC mismatch")
	ErrLength      = errors.New("recordbatch: invalid batch length")
	ErrCorrupt     = errors.New("recordbatch: corrupt records")
	ErrCompression = errors.New("recordbatch: unknown compression codec")
)

// Header is the decoded fixed header of one batch.
type Header struct {
	BaseOffset      int64
	Length          int32 // batchLength: bytes after the length field
	LeaderEpoch     int32
	Magic           int8
	CRC             uint32
	Attributes      int16
	LastOffsetDelta int32
	FirstTimestamp  int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	NumRecords      int32
}

// Size is the number of bytes the whole batch occupies.
func (h *Header) Size() int { return int(h.Length) + LengthPrefix }

// LastOffset is the offset of the batch's last record.
func (h *Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Codec is the batch's compression codec.
func (h *Header) Codec() int { return int(h.Attributes & CompressionMask) }

// IsControl reports whether the batch holds transaction markers.
func (h *Header) IsControl() bool { return h.Attributes&Control != 0 }

// ParseHeader decodes the header at the start of b. It checks the magic and
// that the declared length is sane, but not the CRC and not that the whole
// batch is present; see Validate.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, ErrShort
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[offBaseOffset:]))
	h.Length = int32(binary.BigEndian.Uint32(b[offBatchLength:]))
	h.LeaderEpoch = int32(binary.BigEndian.Uint32(b[offLeaderEpoch:]))
	h.Magic = int8(b[offMagic])
	h.CRC = binary.BigEndian.Uint32(b[offCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[offAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
	h.FirstTimestamp = int64(binary.BigEndian.Uint64(b[offFirstTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[offMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[offProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[offProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[offBaseSequence:]))
	h.NumRecords = int32(binary.BigEndian.Uint32(b[offRecordCount:]))
	if h.Magic != 2 {
		return h, ErrMagic
	}
	if int(h.Length)+LengthPrefix < HeaderSize || h.LastOffsetDelta < 0 || h.NumRecords < 0 {
		return h, ErrLength
	}
	return h, nil
}

// Validate parses the header of the batch at the start of b, checks that the
// whole batch is present and that its CRC matches. It returns the header; the
// batch is b[:h.Size()].
func Validate(b []byte) (Header, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, err
	}
	if len(b) < h.Size() {
		return h, ErrShort
	}
	if crc32.Checksum(b[offAttributes:h.Size()], castagnoli) != h.CRC {
		return h, ErrCRC
	}
	return h, nil
}

// SetBaseOffset rewrites the base offset of the batch at the start of b. The
// base offset lies outside the CRC, so the batch stays valid.
func SetBaseOffset(b []byte, offset int64) {
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(offset))
}

// SetLeaderEpoch rewrites the partition leader epoch (outside the CRC).
func SetLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(epoch))
}

// SetLogAppendTime stamps the batch with the broker's time as Kafka does for
// topics with message.timestamp.type=LogAppendTime, and recomputes the CRC.
func SetLogAppendTime(b []byte, ms int64) {
	attrs := binary.BigEndian.Uint16(b[offAttributes:]) | TimestampLogAppend
	binary.BigEndian.PutUint16(b[offAttributes:], attrs)
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(ms))
	size := int(binary.BigEndian.Uint32(b[offBatchLength:])) + LengthPrefix
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:size], castagnoli))
}

// Split walks a buffer of concatenated batches and calls fn with each
// validated batch. It stops at the first error and reports it with the byte
// position, so callers can truncate a torn tail.
func Split(b []byte, fn func(h *Header, batch []byte) error) (int, error) {
	pos := 0
	for pos < len(b) {
		h, err := Validate(b[pos:])
		if err != nil {
			return pos, fmt.Errorf("batch at byte %d: %w", pos, err)
		}
		if err := fn(&h, b[pos:pos+h.Size()]); err != nil {
			return pos, err
		}
		pos += h.Size()
	}
	return pos, nil
}
