package embedded

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// partition is one partition's log: an ordered list of segments, the last
// of which is active (appended to).
type partition struct {
	topic *topic
	id    int32
	dir   string
	opts  *options

	// appendMu serializes appends, rolls and retention of this partition.
	appendMu sync.Mutex
	// rw guards segments and the published bounds; readers hold it only
	// to take a snapshot.
	rw       sync.RWMutex
	segments []*segment

	hwm      atomic.Int64 // offset the next record gets; all below are readable
	logStart atomic.Int64

	// failed is set when a write or fsync error could not be undone;
	// appends are refused until the partition is reopened (and
	// recovered): after a failed fsync the kernel may have dropped dirty
	// pages that a later fsync would not report.
	failed atomic.Pointer[error]
	// closed is set (under appendMu and rw) when the partition is closed
	// or its topic deleted; every entry point checks it, so work that
	// still holds the partition fails cleanly instead of touching freed
	// segments.
	closed atomic.Bool

	waitMu  sync.Mutex
	waiters []chan<- struct{}

	// producers holds idempotent producers' last sequences (appendMu),
	// saved in producers.snapshot (see producerstate.go).
	producers map[int64]*producerState

	// Group commit of fsyncs.
	syncMu    sync.Mutex
	syncedHWM atomic.Int64
	dirty     atomic.Bool

	stats *topicStats
}

func partitionDir(dataDir, topic string, id int32) string {
	return filepath.Join(dataDir, fmt.Sprintf("%s-%d", topic, id))
}

// openPartition opens (or creates) a partition directory and recovers it.
// clean says whether the last shutdown was clean; if not, the active
// segment is scanned in full and a torn tail truncated.
func openPartition(t *topic, id int32, opts *options, clean bool) (*partition, error) {
	p := &partition{
		topic:     t,
		id:        id,
		dir:       partitionDir(opts.dataDir, t.name, id),
		opts:      opts,
		producers: make(map[int64]*producerState),
		stats:     t.stats,
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	var bases []int64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		base, err := strconv.ParseInt(strings.TrimSuffix(name, ".log"), 10, 64)
		if err != nil {
			continue
		}
		bases = append(bases, base)
	}
	slices.Sort(bases)
	if len(bases) == 0 {
		s, err := createSegment(p.dir, 0)
		if err != nil {
			return nil, err
		}
		if err := syncDir(p.dir); err != nil {
			s.log.Close()
			return nil, err
		}
		p.segments = []*segment{s}
		return p, nil
	}
	for i, base := range bases {
		s, err := openSegment(p.dir, base)
		if err != nil {
			p.closeFiles()
			return nil, err
		}
		p.segments = append(p.segments, s)
		if i < len(bases)-1 {
			if err := p.openSealed(s, bases[i+1]); err != nil {
				p.closeFiles()
				return nil, err
			}
		}
	}
	covered, err := p.loadProducerSnapshot()
	if err == nil {
		err = p.replaySealed(covered)
	}
	if err != nil {
		p.closeFiles()
		return nil, err
	}
	active := p.segments[len(p.segments)-1]
	if err := p.recoverActive(active, clean, covered); err != nil {
		p.closeFiles()
		return nil, err
	}
	if covered > active.next.Load() {
		// The snapshot is ahead of the log (data it saw is gone), so
		// its state may name batches that are not there: rebuild.
		p.opts.logger.Warn("producer state snapshot is past the end of the log; rebuilding it",
			slog.String("partition", p.name()), slog.Int64("snapshot", covered), slog.Int64("end", active.next.Load()))
		clear(p.producers)
		err := p.replaySealed(-1)
		if err == nil {
			err = p.replayProducers(active, 0, active.size.Load(), -1)
		}
		if errors.Is(err, broker.ErrStorage) {
			// Not rebuilt: the stale file is left for an open that can read the log.
			p.closeFiles()
			return nil, fmt.Errorf("%s: producer state: %w", p.name(), err)
		} else if err != nil {
			p.opts.logger.Warn("replaying producer state", slog.String("partition", p.name()), slog.Any("error", err))
		}
		// The stale file must go: once the log grows past it, an open
		// after a crash would trust it. Without one, that open replays
		// the whole log; the next roll or close writes a new one.
		if err := os.Remove(filepath.Join(p.dir, producerSnapshotName)); err == nil {
			if err := syncDir(p.dir); err != nil {
				p.opts.logger.Warn("removing stale producer state snapshot", slog.String("partition", p.name()), slog.Any("error", err))
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			p.opts.logger.Warn("removing stale producer state snapshot", slog.String("partition", p.name()), slog.Any("error", err))
		}
	}
	p.logStart.Store(p.segments[0].base)
	p.hwm.Store(active.next.Load())
	p.syncedHWM.Store(active.next.Load())
	return p, nil
}

// openSealed opens sealed segment s, followed by the segment at nextBase,
// and says what it found wrong.
func (p *partition) openSealed(s *segment, nextBase int64) error {
	res, err := s.openSealed(p.opts.indexInterval)
	if err != nil {
		return fmt.Errorf("open %s segment %d: %w", p.name(), s.base, err)
	}
	if res.unreadable > 0 {
		p.opts.logger.Warn("the end of a sealed segment cannot be read; its bytes are left on disk, unread",
			slog.String("partition", p.name()), slog.Int64("base", s.base), slog.Int64("at_byte", s.size.Load()),
			slog.Int64("bytes", res.unreadable), slog.Any("reason", res.reason))
	}
	if res.damaged > 0 {
		p.opts.logger.Warn("batches of a sealed segment fail their CRC; reads of them fail, the batches around them are read",
			slog.String("partition", p.name()), slog.Int64("base", s.base), slog.Int("batches", res.damaged), slog.Any("first", res.damage))
	}
	if res.rebuilt != "" {
		p.opts.logger.Warn("rewrote the index files of a segment", slog.String("partition", p.name()),
			slog.Int64("base", s.base), slog.String("reason", res.rebuilt))
	}
	switch end := s.next.Load(); {
	case end < nextBase:
		p.opts.logger.Warn("offsets missing from the log: a segment ends before the next begins; readers skip them",
			slog.String("partition", p.name()), slog.Int64("from", end), slog.Int64("to", nextBase-1))
	case end > nextBase:
		// The next segment's base is its file's name; this segment's
		// end is its last batch's header, which bit rot may have
		// changed (a CRC-failing last batch). Segments do not overlap:
		// offsets from nextBase on are the next segment's.
		p.opts.logger.Warn("a segment's last batch says it ends past the next segment's base; offsets from that base are read from the next segment",
			slog.String("partition", p.name()), slog.Int64("base", s.base), slog.Int64("end", end), slog.Int64("next_base", nextBase))
		s.next.Store(nextBase)
	}
	return nil
}

// recoverActive recovers the active segment and brings the producer state,
// which covers the batches below covered, up to its end.
func (p *partition) recoverActive(s *segment, clean bool, covered int64) error {
	from, next := int64(0), s.base
	if clean {
		// Trust the index written at shutdown: resume the scan from its
		// last entry, so a clean open reads a few KiB, not the segment.
		idx, tidx, err := readIndexFiles(p.dir, s.base)
		if err != nil {
			return fmt.Errorf("recover %s: %w", p.name(), err)
		}
		if len(idx) > 0 {
			fits, err := p.indexFits(s, idx, tidx)
			if err != nil {
				return fmt.Errorf("recover %s: %w", p.name(), err)
			}
			if !fits {
				idx = nil // scan the segment; its index files are written anew
			}
		}
		if len(idx) > 0 {
			last := idx[len(idx)-1]
			from, next = int64(last.pos), s.base+int64(last.rel)
			s.index, s.timeIndex = idx, tidx
			s.flushedIndex, s.flushedTime = len(idx), len(tidx)
			if len(tidx) > 0 {
				s.maxTS.Store(tidx[len(tidx)-1].ts)
			}
		}
	}
	if covered < next && from > 0 {
		// The snapshot is older than where the scan resumes (written by
		// a roll, not the close; or none): replay the headers between.
		pos := int64(0)
		if covered > s.base {
			pos = s.lookup(covered)
		}
		if err := p.replayProducers(s, pos, from, covered); errors.Is(err, broker.ErrStorage) {
			return fmt.Errorf("recover %s: producer state: %w", p.name(), err)
		} else if err != nil {
			p.opts.logger.Warn("replaying producer state", slog.String("partition", p.name()), slog.Any("error", err))
		}
	}
	res, err := s.recoverSegment(from, next, p.opts.indexInterval, func(h *recordbatch.Header) {
		p.noteReplayed(h, covered)
	})
	if err != nil {
		return fmt.Errorf("recover %s: %w", p.name(), err)
	}
	if st, err := s.log.Stat(); err == nil {
		s.lastAppend.Store(st.ModTime().UnixMilli())
	}
	s.firstAppend.Store(s.firstWritten())
	if res.truncated > 0 {
		p.opts.logger.Warn("truncated torn tail of segment",
			slog.String("partition", p.name()), slog.Int64("base", s.base),
			slog.Int64("bytes", res.truncated), slog.Any("reason", res.reason))
	}
	if !clean || from == 0 || res.truncated > 0 {
		// Not fatal: the in-memory index serves, and the files are
		// written again at the next flush.
		if err := s.rewriteIndexes(); err != nil {
			p.opts.logger.Warn("rewriting index", slog.String("partition", p.name()), slog.Any("error", err))
		}
	}
	return nil
}

// indexFits checks the index files of the active segment s before a clean
// open trusts them: entries in order, within the log, the last one at a
// batch of its offset. It logs why not. A log it cannot read is an error,
// not a mismatch.
func (p *partition) indexFits(s *segment, idx []indexEntry, tidx []timeEntry) (bool, error) {
	st, err := s.log.Stat()
	if err != nil {
		return false, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	last := idx[len(idx)-1]
	lastFits, err := s.batchAt(int64(last.pos), s.base+int64(last.rel), st.Size())
	if err != nil {
		return false, err
	}
	why := ""
	switch {
	case len(tidx) != len(idx) || tidx[len(tidx)-1].rel != last.rel:
		why = "the time index does not match the offset index"
	case !slices.IsSortedFunc(idx, func(a, b indexEntry) int { return cmp.Or(cmp.Compare(a.rel, b.rel), cmp.Compare(a.pos, b.pos)) }):
		why = "its entries are out of order"
	case !lastFits:
		why = fmt.Sprintf("its last entry (offset %d at byte %d) points at no batch of that offset", s.base+int64(last.rel), last.pos)
	default:
		return true, nil
	}
	p.opts.logger.Warn("offset index of a segment does not match its log; scanning the segment",
		slog.String("partition", p.name()), slog.Int64("base", s.base), slog.String("reason", why))
	return false, nil
}

// readIndexFiles loads a segment's index files, ignoring a torn last entry.
// A missing file has no entries; one that cannot be read (no descriptor
// left, EIO) is an error: taken for missing, it would be rewritten.
func readIndexFiles(dir string, base int64) ([]indexEntry, []timeEntry, error) {
	read := func(ext string) ([]byte, error) {
		b, err := os.ReadFile(segmentName(dir, base, ext))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: index: %w", broker.ErrStorage, err)
		}
		return b, nil
	}
	b, err := read(".index")
	if err != nil {
		return nil, nil, err
	}
	var idx []indexEntry
	for i := 0; i+indexEntrySize <= len(b); i += indexEntrySize {
		idx = append(idx, indexEntry{rel: binary.BigEndian.Uint32(b[i:]), pos: binary.BigEndian.Uint32(b[i+4:])})
	}
	if b, err = read(".timeindex"); err != nil {
		return nil, nil, err
	}
	var tidx []timeEntry
	for i := 0; i+timeEntrySize <= len(b); i += timeEntrySize {
		tidx = append(tidx, timeEntry{ts: int64(binary.BigEndian.Uint64(b[i:])), rel: binary.BigEndian.Uint32(b[i+8:])})
	}
	return idx, tidx, nil
}

func (p *partition) name() string { return fmt.Sprintf("%s-%d", p.topic.name, p.id) }

// appendBatches appends producer batches (already validated) and returns the
// base offset of the first. batches are modified in place (offsets).
func (p *partition) appendBatches(batches []byte, now time.Time) (int64, error) {
	p.appendMu.Lock()
	before := p.hwm.Load()
	base, err := p.appendLocked(batches, now)
	wrote := p.hwm.Load() != before
	p.appendMu.Unlock()
	if wrote {
		// Batches before a failing one are in the log: make them
		// durable and visible even though the call fails.
		if serr := p.afterAppend(); err == nil {
			err = serr
		}
	}
	if err != nil {
		return -1, err
	}
	return base, nil
}

func (p *partition) appendLocked(batches []byte, now time.Time) (int64, error) {
	if p.closed.Load() {
		return -1, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, p.name())
	}
	if errp := p.failed.Load(); errp != nil {
		return -1, fmt.Errorf("%s: partition failed earlier: %w", p.name(), *errp)
	}
	first := int64(-1)
	nowMs := now.UnixMilli()
	for len(batches) > 0 {
		h, err := recordbatch.ParseHeader(batches)
		if err != nil {
			return -1, fmt.Errorf("%w: %w", broker.ErrCorruptBatch, err)
		}
		batch := batches[:h.Size()]
		batches = batches[h.Size():]
		if h.ProducerID >= 0 {
			dup, off, err := p.checkSequence(&h)
			if err != nil {
				return -1, err
			}
			if dup {
				if first < 0 {
					first = off
				}
				continue
			}
		}
		if err := p.maybeRoll(len(batch), h.LastOffsetDelta, nowMs); err != nil {
			return -1, err
		}
		off := p.hwm.Load()
		recordbatch.SetBaseOffset(batch, off)
		// Kafka stamps the leader epoch on append; ours is always 0,
		// matching what Metadata reports.
		recordbatch.SetLeaderEpoch(batch, 0)
		h.BaseOffset = off
		active := p.segments[len(p.segments)-1]
		if err := p.writeBatch(active, batch, &h, nowMs); err != nil {
			return -1, err
		}
		if h.ProducerID >= 0 {
			p.recordSequence(&h)
		}
		if first < 0 {
			first = off
		}
	}
	return first, nil
}

func (p *partition) writeBatch(s *segment, batch []byte, h *recordbatch.Header, nowMs int64) error {
	// Readers snapshot size under rw, so publish the new bounds under it;
	// the write itself happens outside, readers never look past size.
	pos := s.size.Load()
	if pos+int64(len(batch)) > maxSegmentBytes {
		return fmt.Errorf("%w: segment full", broker.ErrStorage)
	}
	if n, err := s.log.Write(batch); err != nil || n != len(batch) {
		if err == nil {
			err = io.ErrShortWrite
		}
		if terr := s.log.Truncate(pos); terr != nil {
			ferr := fmt.Errorf("%w: %s: write: %w; truncate back: %v", broker.ErrStorage, p.name(), err, terr)
			p.failed.Store(&ferr)
			return ferr
		}
		return fmt.Errorf("%w: %s: write: %w", broker.ErrStorage, p.name(), err)
	}
	p.rw.Lock()
	s.noteBatch(h, pos, len(batch), p.opts.indexInterval)
	if s.firstAppend.Load() == 0 {
		s.firstAppend.Store(nowMs)
	}
	s.lastAppend.Store(nowMs)
	p.hwm.Store(h.LastOffset() + 1)
	p.rw.Unlock()
	p.dirty.Store(true)
	p.stats.recordsIn.Add(int64(h.NumRecords))
	p.stats.bytesIn.Add(int64(len(batch)))
	return nil
}

// afterAppend makes the append durable per the flush policy and wakes
// waiting consumers. It runs without appendMu so concurrent producers
// share one fsync (group commit).
func (p *partition) afterAppend() error {
	if p.opts.flushAlways {
		if err := p.syncTo(p.hwm.Load()); err != nil {
			return err
		}
	}
	p.wake()
	return nil
}

// syncTo fsyncs the active segment unless another caller already synced
// past target while we waited for the lock.
func (p *partition) syncTo(target int64) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	if p.syncedHWM.Load() >= target {
		return nil
	}
	if errp := p.failed.Load(); errp != nil {
		// An fsync failed (perhaps another producer's, in this group
		// commit): the kernel may have dropped the dirty pages, and a
		// later fsync that succeeds says nothing of them. Nothing past
		// the last good fsync is acknowledged.
		return fmt.Errorf("%s: partition failed earlier: %w", p.name(), *errp)
	}
	p.rw.RLock()
	if p.closed.Load() {
		p.rw.RUnlock()
		return fmt.Errorf("%w: %s", broker.ErrUnknownTopic, p.name())
	}
	s := p.segments[len(p.segments)-1]
	s.acquire()
	upTo := p.hwm.Load()
	p.rw.RUnlock()
	defer s.release()
	start := time.Now()
	if err := s.log.Sync(); err != nil {
		ferr := fmt.Errorf("%w: %s: fsync: %w", broker.ErrStorage, p.name(), err)
		p.failed.Store(&ferr)
		return ferr
	}
	p.opts.observeFsync(time.Since(start))
	p.syncedHWM.Store(upTo)
	return nil
}

// flush writes pending index entries and fsyncs the active segment; the
// interval flusher calls it.
func (p *partition) flush() error {
	if !p.dirty.Swap(false) {
		return nil
	}
	p.appendMu.Lock()
	if p.closed.Load() {
		p.appendMu.Unlock()
		return nil
	}
	s := p.segments[len(p.segments)-1]
	err := s.flushIndexes(false)
	p.appendMu.Unlock()
	if err == nil {
		err = p.syncTo(p.hwm.Load())
	}
	if err != nil {
		p.dirty.Store(true)
	}
	return err
}

func (p *partition) wake() {
	p.waitMu.Lock()
	for _, w := range p.waiters {
		select {
		case w <- struct{}{}:
		default:
		}
	}
	p.waitMu.Unlock()
}

func (p *partition) subscribe(w chan<- struct{}) func() {
	p.waitMu.Lock()
	p.waiters = append(p.waiters, w)
	p.waitMu.Unlock()
	return func() {
		p.waitMu.Lock()
		for i, x := range p.waiters {
			if x == w {
				p.waiters = slices.Delete(p.waiters, i, i+1)
				break
			}
		}
		p.waitMu.Unlock()
	}
}

// maybeRoll starts a new segment when the next batch would overflow the
// active one (in bytes or in relative offsets) or it is older than the
// segment age. Holds appendMu.
func (p *partition) maybeRoll(next int, lastDelta int32, nowMs int64) error {
	active := p.segments[len(p.segments)-1]
	size := active.size.Load()
	if size == 0 {
		return nil
	}
	cfg := p.topic.config()
	// Index entries hold offsets relative to the base in 31 bits.
	offsetsFull := p.hwm.Load()+int64(lastDelta)-active.base >= 1<<31-1
	full := offsetsFull || size+int64(next) > cfg.SegmentBytes
	old := cfg.SegmentAge > 0 && nowMs-active.firstAppend.Load() > cfg.SegmentAge.Milliseconds()
	if !full && !old {
		return nil
	}
	return p.roll()
}

func (p *partition) roll() (err error) {
	active := p.segments[len(p.segments)-1]
	p.rw.Lock()
	entries := len(active.timeIndex)
	active.addFinalTimeEntry()
	p.rw.Unlock()
	defer func() {
		if err != nil {
			p.unrollTimeIndex(active, entries)
		}
	}()
	if err := active.syncAll(); err != nil {
		return err
	}
	// With a snapshot at every roll, an open replays at most the active
	// segment. Failing to write one is not fatal: the open then replays
	// from the previous one. After a failure the state may be ahead of
	// the durable log, so the previous one stays.
	if p.failed.Load() == nil {
		if err := p.writeProducerSnapshot(active.next.Load()); err != nil {
			p.opts.logger.Warn("rolling segment", slog.Any("error", err))
		}
	}
	s, err := createSegment(p.dir, active.next.Load())
	if err != nil {
		return err
	}
	if err := syncDir(p.dir); err != nil {
		s.remove()
		return err
	}
	p.rw.Lock()
	active.index, active.timeIndex, active.sealed = nil, nil, true
	p.segments = append(p.segments, s)
	p.rw.Unlock()
	return nil
}

// unrollTimeIndex takes back the final time index entry a roll that failed
// gave the segment, which stays active: batches appended to it later add
// their entries after it, and the time index would have one entry more
// than the offset index (which the next open takes for damage and scans
// the segment). entries is how many it had before. If the entry was
// written already, the index files go, to be written whole at the next
// flush, as after a failed index write.
func (p *partition) unrollTimeIndex(s *segment, entries int) {
	p.rw.Lock()
	defer p.rw.Unlock()
	if len(s.timeIndex) <= entries {
		return
	}
	s.timeIndex = s.timeIndex[:entries]
	if s.flushedTime > entries {
		s.removeIndexFiles()
		s.flushedIndex, s.flushedTime = 0, 0
	}
}

// read appends whole batches starting with the one that holds offset, up to
// maxBytes (at least one batch), to dst, and counts them read
// (weir_broker_bytes_out_total).
func (p *partition) read(dst []byte, offset int64, maxBytes int) ([]byte, int64, int64, error) {
	out, hwm, start, err := p.readUncounted(dst, offset, maxBytes)
	if err == nil {
		p.stats.bytesOut.Add(int64(len(out) - len(dst)))
	}
	return out, hwm, start, err
}

// readUncounted is read without counting the bytes read: a Poll or a Fetch
// that decodes only some of them (decodeBatches' budget) counts those, as
// the rest are read again by the next.
func (p *partition) readUncounted(dst []byte, offset int64, maxBytes int) ([]byte, int64, int64, error) {
	p.rw.RLock()
	if p.closed.Load() {
		p.rw.RUnlock()
		return dst, -1, -1, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, p.name())
	}
	hwm, start := p.hwm.Load(), p.logStart.Load()
	if offset == hwm {
		p.rw.RUnlock()
		return dst, hwm, start, nil
	}
	if offset < start || offset > hwm {
		p.rw.RUnlock()
		return dst, hwm, start, fmt.Errorf("%w: %s offset %d not in [%d, %d]", broker.ErrOffsetOutOfRange, p.name(), offset, start, hwm)
	}
	i, _ := slices.BinarySearchFunc(p.segments, offset, func(s *segment, off int64) int {
		switch {
		case s.next.Load() <= off:
			return -1
		case s.base > off:
			return 1
		}
		return 0
	})
	if i >= len(p.segments) {
		p.rw.RUnlock()
		return dst, hwm, start, nil
	}
	s := p.segments[i]
	s.acquire()
	size, sealed := s.size.Load(), s.sealed
	// An offset below the segment's base lies in a gap a damaged log
	// left (see openSealed): the read starts at the next record.
	pos := s.lookup(offset)
	p.rw.RUnlock()
	defer s.release()
	out, err := readFrom(dst, s, pos, size, offset, maxBytes)
	if pos > 0 && (errors.Is(err, broker.ErrCorruptBatch) || err == nil && startsPast(out[len(dst):], offset)) {
		p.indexMiss(s, sealed, size, pos, offset)
		out, err = readFrom(dst, s, 0, size, offset, maxBytes)
	}
	if err != nil {
		return dst, hwm, start, fmt.Errorf("%s: %w", p.name(), err)
	}
	return out, hwm, start, nil
}

// segmentEnd is where the segment holding offset off ends: the next
// segment's base, or the log's end for the last segment.
func (p *partition) segmentEnd(off int64) int64 {
	p.rw.RLock()
	defer p.rw.RUnlock()
	for _, s := range p.segments {
		if s.base > off {
			return s.base
		}
	}
	return p.hwm.Load()
}

// startsPast reports whether batches, read from where the offset index
// said offset is, begin after it: the index entry was wrong.
func startsPast(batches []byte, offset int64) bool {
	h, err := recordbatch.ParseHeader(batches)
	return err == nil && h.BaseOffset > offset
}

// indexMiss handles an offset index entry that pointed at no batch, or past
// the one holding offset: reads of s scan from its start, and a sealed
// segment's index files are written again.
func (p *partition) indexMiss(s *segment, sealed bool, size, pos, offset int64) {
	if !s.badIndex.CompareAndSwap(false, true) {
		return
	}
	p.opts.logger.Warn("offset index of a segment points at no batch of the offset read; reading the segment from its start",
		slog.String("partition", p.name()), slog.Int64("base", s.base), slog.Int64("offset", offset), slog.Int64("at_byte", pos))
	if !sealed {
		return // the next open scans it (close leaves no index behind)
	}
	// Under appendMu, which retention and topic deletion hold to remove
	// segments: files written for a segment gone would stay for ever.
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if s.deleted.Load() || p.closed.Load() {
		return
	}
	if err := s.rebuildIndexFiles(size, p.opts.indexInterval); err != nil {
		p.opts.logger.Warn("rewriting the index files of a segment", slog.String("partition", p.name()),
			slog.Int64("base", s.base), slog.Any("error", err))
		return
	}
	s.badIndex.Store(false)
}

// readFrom reads batches of s from byte pos (a batch boundary at or before
// the batch holding offset) up to the segment's size.
func readFrom(dst []byte, s *segment, pos, size, offset int64, maxBytes int) ([]byte, error) {
	var hdr [recordbatch.HeaderSize]byte
	// Skip whole batches before offset by reading headers only.
	for pos < size {
		if _, err := s.log.ReadAt(hdr[:], pos); err != nil {
			return dst, fmt.Errorf("%w: read: %w", broker.ErrStorage, err)
		}
		h, err := recordbatch.ParseHeader(hdr[:])
		if err != nil {
			return dst, fmt.Errorf("%w: at byte %d of segment %d: %w", broker.ErrCorruptBatch, pos, s.base, err)
		}
		if h.LastOffset() >= offset {
			break
		}
		pos += int64(h.Size())
	}
	if pos >= size {
		return dst, nil
	}
	want := min(int64(maxBytes), size-pos)
	if want < recordbatch.HeaderSize {
		want = min(recordbatch.HeaderSize, size-pos)
	}
	start := len(dst)
	dst = slices.Grow(dst, int(want))[:start+int(want)]
	n, err := s.log.ReadAt(dst[start:], pos)
	if err != nil && !errors.Is(err, io.EOF) {
		return dst[:start], fmt.Errorf("%w: read: %w", broker.ErrStorage, err)
	}
	dst = dst[:start+n]
	// Keep whole batches only; if the first batch is bigger than
	// maxBytes, return it whole anyway so the consumer makes progress.
	end := start
	for end+recordbatch.HeaderSize <= len(dst) {
		h, err := recordbatch.ParseHeader(dst[end:])
		if err != nil {
			return dst[:start], fmt.Errorf("%w: at byte %d of segment %d: %w", broker.ErrCorruptBatch, pos+int64(end-start), s.base, err)
		}
		if end+h.Size() > len(dst) {
			if end == start {
				// First batch larger than maxBytes: read it whole.
				dst = slices.Grow(dst[:start], h.Size())[:start+h.Size()]
				if _, err := s.log.ReadAt(dst[start:], pos); err != nil && !errors.Is(err, io.EOF) {
					return dst[:start], fmt.Errorf("%w: read: %w", broker.ErrStorage, err)
				}
				end = start + h.Size()
			}
			break
		}
		end += h.Size()
	}
	return dst[:end], nil
}

// listOffset implements ListOffsets for a timestamp (see kafkawire.Log).
func (p *partition) listOffset(ts int64) (int64, int64, error) {
	switch ts {
	case -1:
		return p.hwm.Load(), -1, nil
	case -2:
		return p.logStart.Load(), -1, nil
	}
	var d recordbatch.Decoder
	if ts != -3 {
		return p.offsetForTime(&d, ts)
	}
	// The record with the largest timestamp: the segment with the
	// largest max timestamp holds it, unless that came from a damaged
	// time index; the segment's own is then put in its place, and the
	// search made again.
	for {
		var sealed bool
		seg, maxTS, err := p.holdSegment(func(segs []*segment) (*segment, int64) {
			var seg *segment
			for _, s := range segs {
				if s.size.Load() > 0 && (seg == nil || s.maxTS.Load() > seg.maxTS.Load()) {
					seg = s
				}
			}
			if seg == nil {
				return nil, 0
			}
			sealed = seg.sealed
			return seg, seg.maxTS.Load()
		})
		if err != nil || seg == nil {
			return -1, -1, err
		}
		off, found, err := scanForTimestamp(&d, p, seg, 0, maxTS, true)
		if err == nil && off < 0 && sealed {
			var actual int64
			if actual, err = seg.scanMaxTimestamp(); err == nil && actual != maxTS {
				seg.maxTS.CompareAndSwap(maxTS, actual)
				seg.release()
				continue
			}
		}
		seg.release()
		return off, found, err
	}
}

// offsetForTime finds the first record at or after ts: in the first
// segment whose max timestamp reaches ts, or, if that holds none (its max
// timestamp came from a damaged time index), in the next such segment.
func (p *partition) offsetForTime(d *recordbatch.Decoder, ts int64) (int64, int64, error) {
	after := int64(-1) // the base of the segment last searched
	for {
		seg, pos, err := p.holdSegment(func(segs []*segment) (*segment, int64) {
			for _, s := range segs {
				if s.base > after && s.size.Load() > 0 && s.maxTS.Load() >= ts {
					return s, s.timeLookup(ts)
				}
			}
			return nil, 0
		})
		if err != nil || seg == nil {
			return -1, -1, err
		}
		off, found, err := scanForTimestamp(d, p, seg, pos, ts, false)
		seg.release()
		if err != nil || off >= 0 {
			return off, found, err
		}
		after = seg.base
	}
}

// holdSegment acquires the segment pick chooses among the partition's
// (under its read lock), with the position pick gives with it; nil when
// pick chooses none. The caller releases it.
func (p *partition) holdSegment(pick func([]*segment) (*segment, int64)) (*segment, int64, error) {
	p.rw.RLock()
	defer p.rw.RUnlock()
	if p.closed.Load() {
		return nil, 0, fmt.Errorf("%w: %s", broker.ErrUnknownTopic, p.name())
	}
	seg, pos := pick(p.segments)
	if seg != nil {
		seg.acquire()
	}
	return seg, pos, nil
}

func scanForTimestamp(d *recordbatch.Decoder, p *partition, s *segment, pos, ts int64, exact bool) (int64, int64, error) {
	size := s.size.Load()
	var buf []byte
	fromIndex := pos > 0
	for pos < size {
		var err error
		buf, err = readFrom(buf[:0], s, pos, size, 0, 1<<20)
		if fromIndex && errors.Is(err, broker.ErrCorruptBatch) {
			pos, fromIndex = 0, false // the time index pointed at no batch: scan
			continue
		}
		fromIndex = false
		if err != nil {
			return -1, -1, err
		}
		if len(buf) == 0 {
			break
		}
		_, err = recordbatch.Split(buf, func(h *recordbatch.Header, batch []byte) error {
			pos += int64(h.Size())
			if h.MaxTimestamp < ts {
				return nil
			}
			// Scanned, not decoded whole: a compressed batch may hold
			// millions of records (see recordbatch.Decoder.Scan).
			d.Reset()
			found := foundOffset{offset: -1}
			if err := d.Scan(h, batch, 0, func(r *broker.Record) bool {
				rts := r.Timestamp.UnixMilli()
				if (exact && rts == ts) || (!exact && rts >= ts) {
					found = foundOffset{r.Offset, rts}
					return false
				}
				return true
			}); err != nil {
				return err
			}
			if found.offset >= 0 {
				return found
			}
			return nil
		})
		var f foundOffset
		if errors.As(err, &f) {
			return f.offset, f.ts, nil
		}
		if err != nil {
			return -1, -1, err
		}
	}
	return -1, -1, nil
}

type foundOffset struct{ offset, ts int64 }

func (foundOffset) Error() string { return "found" }

// applyRetention deletes whole old segments: those whose newest record is
// older than the retention time, and the oldest while the partition is
// larger than the retention bytes. The active segment is rolled first when
// all of it has expired, so an idle topic's data goes too.
func (p *partition) applyRetention(now time.Time) (deleted int, err error) {
	cfg := p.topic.config()
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if p.closed.Load() {
		return 0, nil
	}
	expired := func(s *segment) bool {
		return cfg.RetentionTime >= 0 && s.size.Load() > 0 && s.lastAppend.Load() < now.Add(-cfg.RetentionTime).UnixMilli()
	}
	// A roll that fails (a full disk) keeps the active segment; the
	// sealed ones that expired go all the same, which is what frees the
	// disk.
	var rollErr error
	if active := p.segments[len(p.segments)-1]; expired(active) {
		rollErr = p.roll()
	}
	var total int64
	for _, s := range p.segments {
		total += s.size.Load()
	}
	var drop []*segment
	for len(p.segments)-len(drop) > 1 {
		s := p.segments[len(drop)]
		tooBig := cfg.RetentionBytes >= 0 && total-s.size.Load() >= cfg.RetentionBytes
		if !expired(s) && !tooBig {
			break
		}
		total -= s.size.Load()
		drop = append(drop, s)
	}
	if len(drop) == 0 {
		return 0, rollErr
	}
	p.rw.Lock()
	p.segments = slices.Delete(p.segments, 0, len(drop))
	p.logStart.Store(p.segments[0].base)
	p.rw.Unlock()
	for _, s := range drop {
		if err := s.remove(); err != nil {
			p.opts.logger.Warn("removing expired segment", slog.String("partition", p.name()), slog.Any("error", err))
		}
	}
	return len(drop), rollErr
}

// info describes the partition.
func (p *partition) info() broker.PartitionInfo {
	p.rw.RLock()
	defer p.rw.RUnlock()
	var size int64
	for _, s := range p.segments {
		size += s.size.Load()
	}
	return broker.PartitionInfo{
		Partition:      p.id,
		LogStartOffset: p.logStart.Load(),
		HighWatermark:  p.hwm.Load(),
		Bytes:          size,
		Segments:       len(p.segments),
	}
}

// close seals nothing (the active segment stays active) but flushes its
// indexes, data and producer state so the next open is clean.
func (p *partition) close() error {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if p.closed.Load() {
		return nil
	}
	var first error
	if len(p.segments) > 0 {
		s := p.segments[len(p.segments)-1]
		if s.badIndex.Load() {
			// A read found it wrong: the next open scans the segment
			// and writes it anew.
			first = s.removeIndexFiles()
		} else if err := s.flushIndexes(true); err != nil {
			first = err
		}
		if err := s.log.Sync(); err != nil && first == nil {
			first = fmt.Errorf("%w: %w", broker.ErrStorage, err)
		}
		// The next open trusts this snapshot to be complete; after a
		// failure the log may not hold what the state says, so the
		// previous snapshot stays and the open replays from it.
		if first == nil && p.failed.Load() == nil {
			first = p.writeProducerSnapshot(p.hwm.Load())
		}
	}
	p.closeFiles()
	return first
}

// closeDeleted closes a partition whose topic is being deleted, without
// flushing anything: appends in progress finish first (appendMu), later
// ones fail as on an unknown topic.
func (p *partition) closeDeleted() {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	if !p.closed.Load() {
		p.closeFiles()
	}
}

func (p *partition) closeFiles() {
	p.rw.Lock()
	p.closed.Store(true)
	segs := p.segments
	p.segments = nil
	p.rw.Unlock()
	for _, s := range segs {
		s.release()
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%w: sync dir: %w", broker.ErrStorage, err)
	}
	return nil
}
