package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// Idempotent producer state survives restarts as Kafka's does: a snapshot
// per partition, written when the partition rolls and at a clean close,
// plus the batches appended after it, replayed at open. After a clean
// close the snapshot is complete; after a crash the batches past it are in
// the active segment, whose recovery scan replays them.

type producerState struct {
	epoch    int16
	lastSeq  int32
	lastUsed int64 // offset of its last batch, for forgetting the oldest
	// recent remembers the last batches for duplicate detection, as
	// Kafka does (max.in.flight is at most 5 for idempotent producers).
	recent [5]seqEntry
	n      int
}

type seqEntry struct {
	first, last int32
	offset      int64
}

// checkSequence applies Kafka's idempotent producer rules. It returns
// dup=true with the original offset for a retried batch.
func (p *partition) checkSequence(h *recordbatch.Header) (dup bool, offset int64, err error) {
	st, ok := p.producers[h.ProducerID]
	if !ok {
		// Unknown producer (new, or forgotten for maxProducers): accept.
		return false, 0, nil
	}
	switch {
	case h.ProducerEpoch < st.epoch:
		return false, 0, fmt.Errorf("%w: producer %d epoch %d < %d", broker.ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, st.epoch)
	case h.ProducerEpoch > st.epoch:
		if h.BaseSequence != 0 {
			return false, 0, fmt.Errorf("%w: producer %d new epoch %d starts at sequence %d", broker.ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
		return false, 0, nil
	}
	last := h.BaseSequence + h.LastOffsetDelta
	for i := 0; i < st.n; i++ {
		if e := st.recent[i]; e.first == h.BaseSequence && e.last == last {
			return true, e.offset, nil
		}
	}
	if want := nextSeq(st.lastSeq); h.BaseSequence != want {
		return false, 0, fmt.Errorf("%w: producer %d sequence %d, expected %d", broker.ErrOutOfOrderSequence, h.ProducerID, h.BaseSequence, want)
	}
	return false, 0, nil
}

func nextSeq(s int32) int32 {
	if s == 1<<31-1 {
		return 0
	}
	return s + 1
}

// maxProducers bounds the idempotent producer states a partition keeps; the
// oldest is forgotten first (and accepted as unknown if it comes back).
const maxProducers = 4096

func (p *partition) recordSequence(h *recordbatch.Header) {
	st, ok := p.producers[h.ProducerID]
	if !ok && len(p.producers) >= maxProducers {
		p.forgetOldest()
	}
	if !ok || h.ProducerEpoch != st.epoch {
		st = &producerState{epoch: h.ProducerEpoch}
		p.producers[h.ProducerID] = st
	}
	st.lastSeq = h.BaseSequence + h.LastOffsetDelta
	st.lastUsed = h.BaseOffset
	copy(st.recent[1:], st.recent[:4])
	st.recent[0] = seqEntry{first: h.BaseSequence, last: st.lastSeq, offset: h.BaseOffset}
	st.n = min(st.n+1, 5)
}

// forgetOldest drops the producer whose last batch is the oldest.
func (p *partition) forgetOldest() {
	var oldest int64 = -1
	var oldestAt int64
	for id, s := range p.producers {
		if oldest < 0 || s.lastUsed < oldestAt {
			oldest, oldestAt = id, s.lastUsed
		}
	}
	delete(p.producers, oldest)
}

// noteReplayed applies a batch read back from the log to the producer state
// if the snapshot does not already cover it.
func (p *partition) noteReplayed(h *recordbatch.Header, covered int64) {
	if h.ProducerID >= 0 && h.BaseOffset >= covered {
		p.recordSequence(h)
	}
}

// The snapshot file, beside the segments:
//
//	magic "WPS1" | covered int64 | count uint32 | count × producer | crc uint32
//	producer: id int64 | epoch int16 | lastSeq int32 | lastUsed int64 |
//	          n uint8 | n × (first int32 | last int32 | offset int64)
//
// big endian; covered is the offset below which every batch is reflected;
// crc is the CRC-32C of everything before it.
const (
	producerSnapshotName = "producers.snapshot"
	producerSnapshotHead = 4 + 8 + 4
	producerEntryMin     = 8 + 2 + 4 + 8 + 1
	seqEntrySize         = 4 + 4 + 8
)

var (
	producerSnapshotMagic = [4]byte{'W', 'P', 'S', '1'}
	castagnoli            = crc32.MakeTable(crc32.Castagnoli)
)

func encodeProducerSnapshot(covered int64, producers map[int64]*producerState) []byte {
	ids := make([]int64, 0, len(producers))
	for id := range producers {
		ids = append(ids, id)
	}
	slices.Sort(ids) // stable output for equal state
	b := make([]byte, 0, producerSnapshotHead+len(ids)*(producerEntryMin+5*seqEntrySize)+4)
	b = append(b, producerSnapshotMagic[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(covered))
	b = binary.BigEndian.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		st := producers[id]
		b = binary.BigEndian.AppendUint64(b, uint64(id))
		b = binary.BigEndian.AppendUint16(b, uint16(st.epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(st.lastSeq))
		b = binary.BigEndian.AppendUint64(b, uint64(st.lastUsed))
		b = append(b, byte(st.n))
		for _, e := range st.recent[:st.n] {
			b = binary.BigEndian.AppendUint32(b, uint32(e.first))
			b = binary.BigEndian.AppendUint32(b, uint32(e.last))
			b = binary.BigEndian.AppendUint64(b, uint64(e.offset))
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

var errBadSnapshot = errors.New("invalid producer state snapshot")

func decodeProducerSnapshot(b []byte) (int64, map[int64]*producerState, error) {
	if len(b) < producerSnapshotHead+4 {
		return -1, nil, fmt.Errorf("%w: %d bytes", errBadSnapshot, len(b))
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[len(body):]) {
		return -1, nil, fmt.Errorf("%w: CRC mismatch", errBadSnapshot)
	}
	if [4]byte(body[:4]) != producerSnapshotMagic {
		return -1, nil, fmt.Errorf("%w: magic %q", errBadSnapshot, body[:4])
	}
	covered := int64(binary.BigEndian.Uint64(body[4:]))
	count := int(binary.BigEndian.Uint32(body[12:]))
	body = body[producerSnapshotHead:]
	if covered < 0 || count > len(body)/producerEntryMin {
		return -1, nil, fmt.Errorf("%w: offset %d, %d producers in %d bytes", errBadSnapshot, covered, count, len(body))
	}
	producers := make(map[int64]*producerState, count)
	prev := int64(-1)
	for range count {
		if len(body) < producerEntryMin {
			return -1, nil, fmt.Errorf("%w: short", errBadSnapshot)
		}
		id := int64(binary.BigEndian.Uint64(body))
		st := &producerState{
			epoch:    int16(binary.BigEndian.Uint16(body[8:])),
			lastSeq:  int32(binary.BigEndian.Uint32(body[10:])),
			lastUsed: int64(binary.BigEndian.Uint64(body[14:])),
			n:        int(body[22]),
		}
		body = body[producerEntryMin:]
		// Ids are written in ascending order, so each is unique.
		if id <= prev || st.n > len(st.recent) || len(body) < st.n*seqEntrySize {
			return -1, nil, fmt.Errorf("%w: producer %d", errBadSnapshot, id)
		}
		prev = id
		for i := range st.n {
			st.recent[i] = seqEntry{
				first:  int32(binary.BigEndian.Uint32(body)),
				last:   int32(binary.BigEndian.Uint32(body[4:])),
				offset: int64(binary.BigEndian.Uint64(body[8:])),
			}
			body = body[seqEntrySize:]
		}
		producers[id] = st
	}
	if len(body) != 0 {
		return -1, nil, fmt.Errorf("%w: %d bytes after the last producer", errBadSnapshot, len(body))
	}
	return covered, producers, nil
}

// writeProducerSnapshot saves the state as covering the batches below
// covered. Holds appendMu; the log up to covered must be durable first.
func (p *partition) writeProducerSnapshot(covered int64) error {
	if err := writeFileAtomic(filepath.Join(p.dir, producerSnapshotName), encodeProducerSnapshot(covered, p.producers)); err != nil {
		return fmt.Errorf("%s: producer state snapshot: %w", p.name(), err)
	}
	return nil
}

// loadProducerSnapshot fills p.producers from the snapshot and returns the
// offset it covers, or -1 without a usable one: the caller then replays the
// whole log. A damaged snapshot never fails the open; one that cannot be
// read (no descriptor left, EIO) does: rebuilt from the log, it would lose
// the state of producers whose batches retention removed.
func (p *partition) loadProducerSnapshot() (int64, error) {
	name := filepath.Join(p.dir, producerSnapshotName)
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("%w: %s: producer state snapshot: %w", broker.ErrStorage, p.name(), err)
	}
	covered, producers, err := decodeProducerSnapshot(b)
	if err != nil {
		p.opts.logger.Warn("ignoring producer state snapshot; rebuilding it from the log",
			slog.String("partition", p.name()), slog.Any("error", err))
		return -1, nil
	}
	p.producers = producers
	for len(p.producers) > maxProducers {
		p.forgetOldest()
	}
	return covered, nil
}

// replayProducers applies the idempotent batches of s between byte
// positions pos (a batch boundary) and end to the producer state, reading
// headers only. The log is not validated here; the first header that does
// not parse ends the replay of the segment.
func (p *partition) replayProducers(s *segment, pos, end, covered int64) error {
	buf := make([]byte, 32<<10)
	bufStart, bufLen := int64(0), 0 // buf holds file[bufStart : bufStart+bufLen]
	for pos+recordbatch.HeaderSize <= end {
		if pos < bufStart || pos+recordbatch.HeaderSize > bufStart+int64(bufLen) {
			n, err := s.log.ReadAt(buf[:min(int64(len(buf)), end-pos)], pos)
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("%w: segment %d: read: %w", broker.ErrStorage, s.base, err)
			}
			bufStart, bufLen = pos, n
			if n < recordbatch.HeaderSize {
				return fmt.Errorf("segment %d: short read at byte %d", s.base, pos)
			}
		}
		h, err := recordbatch.ParseHeader(buf[pos-bufStart : bufLen])
		if err != nil {
			return fmt.Errorf("segment %d: at byte %d: %w", s.base, pos, err)
		}
		if pos+int64(h.Size()) > end {
			return fmt.Errorf("segment %d: batch at byte %d ends past %d", s.base, pos, end)
		}
		p.noteReplayed(&h, covered)
		pos += int64(h.Size())
	}
	return nil
}

// replaySealed brings the state loaded from the snapshot up to the active
// segment: normally the snapshot written at the last roll covers all sealed
// segments and nothing is read. A segment it cannot read fails it
// (ErrStorage); one whose batches do not parse is logged.
func (p *partition) replaySealed(covered int64) error {
	for _, s := range p.segments[:len(p.segments)-1] {
		if s.next.Load() <= covered {
			continue
		}
		pos := int64(0)
		if covered > s.base {
			pos = s.lookup(covered)
		}
		if err := p.replayProducers(s, pos, s.size.Load(), covered); errors.Is(err, broker.ErrStorage) {
			return fmt.Errorf("%s: producer state: %w", p.name(), err)
		} else if err != nil {
			p.opts.logger.Warn("replaying producer state", slog.String("partition", p.name()), slog.Any("error", err))
		}
	}
	return nil
}
