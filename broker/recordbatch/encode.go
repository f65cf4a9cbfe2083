package recordbatch

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/weirnet/weir/broker"
)

// Encoder builds one uncompressed batch in a reusable buffer. A zero Encoder
// is ready; Reset starts a batch, Append adds records, Finish seals it.
type Encoder struct {
	buf      []byte
	n        int32
	firstTS  int64
	maxTS    int64
	hasFirst bool
}

// Reset starts a new batch with the given producer identity (use -1, -1, -1
// for a non-idempotent producer).
func (e *Encoder) Reset(producerID int64, producerEpoch int16, baseSequence int32) {
	if cap(e.buf) < HeaderSize {
		e.buf = make([]byte, HeaderSize, 64<<10)
	}
	e.buf = e.buf[:HeaderSize]
	clear(e.buf)
	e.buf[offMagic] = 2
	binary.BigEndian.PutUint32(e.buf[offLeaderEpoch:], 0xffffffff)
	binary.BigEndian.PutUint64(e.buf[offProducerID:], uint64(producerID))
	binary.BigEndian.PutUint16(e.buf[offProducerEpoch:], uint16(producerEpoch))
	binary.BigEndian.PutUint32(e.buf[offBaseSequence:], uint32(baseSequence))
	e.n, e.hasFirst = 0, false
}

// Len is the size the batch has so far.
func (e *Encoder) Len() int { return len(e.buf) }

// Count is the number of records appended.
func (e *Encoder) Count() int { return int(e.n) }

// Append adds one record with timestamp tsMillis. Records must be appended in
// offset order; timestamps may go backwards (deltas are signed).
func (e *Encoder) Append(key, value []byte, headers []broker.Header, tsMillis int64) {
	if !e.hasFirst {
		e.firstTS, e.maxTS, e.hasFirst = tsMillis, tsMillis, true
	}
	if tsMillis > e.maxTS {
		e.maxTS = tsMillis
	}
	tsDelta := tsMillis - e.firstTS
	offDelta := int64(e.n)

	bodyLen := 1 + varintLen(tsDelta) + varintLen(offDelta) + bytesLen(key) + bytesLen(value) + varintLen(int64(len(headers)))
	for i := range headers {
		bodyLen += varintLen(int64(len(headers[i].Key))) + len(headers[i].Key) + bytesLen(headers[i].Value)
	}
	b := e.buf
	b = binary.AppendVarint(b, int64(bodyLen))
	b = append(b, 0) // record attributes, unused
	b = binary.AppendVarint(b, tsDelta)
	b = binary.AppendVarint(b, offDelta)
	b = appendBytes(b, key)
	b = appendBytes(b, value)
	b = binary.AppendVarint(b, int64(len(headers)))
	for i := range headers {
		b = binary.AppendVarint(b, int64(len(headers[i].Key)))
		b = append(b, headers[i].Key...)
		b = appendBytes(b, headers[i].Value)
	}
	e.buf = b
	e.n++
}

// Finish fills in the header, computes the CRC and returns the batch. The
// slice is the Encoder's buffer: valid until the next Reset. A batch needs
// at least one record; an empty one does not parse.
func (e *Encoder) Finish(baseOffset int64) []byte {
	b := e.buf
	binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(baseOffset))
	binary.BigEndian.PutUint32(b[offBatchLength:], uint32(len(b)-LengthPrefix))
	binary.BigEndian.PutUint32(b[offLastOffsetDelta:], uint32(e.n-1))
	binary.BigEndian.PutUint64(b[offFirstTimestamp:], uint64(e.firstTS))
	binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(e.maxTS))
	binary.BigEndian.PutUint32(b[offRecordCount:], uint32(e.n))
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	return b
}

// RecordSize is an upper bound of the encoded size of one record, for
// splitting records into batches before encoding.
func RecordSize(key, value []byte, headers []broker.Header) int {
	n := 5 + 1 + 10 + 5 + bytesLen(key) + bytesLen(value) + 5
	for i := range headers {
		n += 5 + len(headers[i].Key) + bytesLen(headers[i].Value)
	}
	return n
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

func bytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
