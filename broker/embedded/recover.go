package embedded

import (
	"errors"
	"fmt"
	"io"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// recoverResult says what recovery found in a segment.
type recoverResult struct {
	batches   int
	truncated int64 // bytes cut from a torn or corrupt tail
	reason    error // why the tail was cut (or, keeping damage, the first damaged batch)
	damaged   int   // batches kept although their CRC fails (keepDamaged)
	damage    error // the first of them
}

// recoverSegment scans the segment from position from (a batch boundary whose
// state the caller already knows, usually 0), checking every batch's CRC and
// that offsets are dense. At the first batch that is torn, corrupt or out of
// sequence it truncates the file: everything before is kept, nothing after
// can be trusted. It rebuilds the in-memory indexes for the scanned part and
// passes each batch it keeps to onBatch, if set. It is for the active
// segment, whose tail a crash may have torn.
func (s *segment) recoverSegment(from int64, expectNext int64, indexInterval int, onBatch func(*recordbatch.Header)) (recoverResult, error) {
	res, fileSize, err := s.scanBatches(from, expectNext, indexInterval, onBatch, false)
	if err != nil {
		return res, err
	}
	if pos := s.size.Load(); pos < fileSize {
		res.truncated = fileSize - pos
		if err := s.log.Truncate(pos); err != nil {
			return res, fmt.Errorf("%w: truncate torn tail: %w", broker.ErrStorage, err)
		}
	}
	return res, nil
}

// scanBatches is recoverSegment's scan, without the truncation: the
// segment's size and next offset are those of the valid batches from
// from on, up to the first that is torn, unparseable or out of sequence
// (res.reason); it returns the file's size. keepDamaged, for a sealed
// segment (never torn by a crash, so damage is bit rot, not a write cut
// short): a batch whose header is sound but whose CRC fails is counted
// (res.damaged) and kept, so the intact batches after it stay readable;
// a read of it fails on its CRC.
func (s *segment) scanBatches(from, expectNext int64, indexInterval int, onBatch func(*recordbatch.Header), keepDamaged bool) (recoverResult, int64, error) {
	var res recoverResult
	st, err := s.log.Stat()
	if err != nil {
		return res, 0, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	fileSize := st.Size()
	pos := from
	s.next.Store(expectNext)
	// Up to 1 MiB at a time, less for a short tail (an open reads the
	// tail of every sealed segment).
	buf := make([]byte, max(min(1<<20, fileSize-from), recordbatch.HeaderSize))
	bufStart, bufLen := int64(0), 0 // buf holds file[bufStart : bufStart+bufLen]
	for pos < fileSize {
		// Make sure the header is in the buffer.
		if pos+recordbatch.HeaderSize > bufStart+int64(bufLen) || pos < bufStart {
			n, err := s.log.ReadAt(buf, pos)
			if err != nil && !errors.Is(err, io.EOF) {
				return res, 0, fmt.Errorf("%w: read segment: %w", broker.ErrStorage, err)
			}
			bufStart, bufLen = pos, n
		}
		hdr := buf[pos-bufStart : bufLen]
		h, err := recordbatch.ParseHeader(hdr)
		if err != nil {
			res.reason = err
			break
		}
		size := int64(h.Size())
		if pos+size > fileSize {
			res.reason = recordbatch.ErrShort
			break
		}
		var batch []byte
		if pos+size <= bufStart+int64(bufLen) {
			batch = buf[pos-bufStart : pos-bufStart+size]
		} else {
			if int(size) > len(buf) {
				buf = make([]byte, size)
			}
			n, err := s.log.ReadAt(buf, pos)
			if err != nil && !errors.Is(err, io.EOF) {
				return res, 0, fmt.Errorf("%w: read segment: %w", broker.ErrStorage, err)
			}
			bufStart, bufLen = pos, n
			if int64(n) < size {
				res.reason = recordbatch.ErrShort
				break
			}
			batch = buf[:size]
		}
		if _, err := recordbatch.Validate(batch); err != nil {
			if !keepDamaged || h.BaseOffset != s.next.Load() {
				res.reason = err
				break
			}
			if res.damaged++; res.damage == nil {
				res.damage = fmt.Errorf("batch at byte %d (offsets %d to %d): %w", pos, h.BaseOffset, h.LastOffset(), err)
			}
		}
		if h.BaseOffset != s.next.Load() {
			res.reason = fmt.Errorf("batch at byte %d has offset %d, want %d", pos, h.BaseOffset, s.next.Load())
			break
		}
		s.noteBatch(&h, pos, int(size), indexInterval)
		if onBatch != nil {
			onBatch(&h)
		}
		res.batches++
		pos += size
	}
	s.size.Store(pos)
	return res, fileSize, nil
}
