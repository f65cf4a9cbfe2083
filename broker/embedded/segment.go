package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// A segment is one log file of a partition with its sparse offset index and
// time index, named by the offset of its first record as Kafka names them.
//
// The log file holds RecordBatch v2 batches back to back. The offset index
// maps a record offset (relative to the base) to the byte position of the
// batch that starts there, one entry per IndexInterval bytes. The time index
// maps the largest timestamp seen so far to the batch offset at the same
// points, so a timestamp lookup can skip to the right place.
type segment struct {
	base int64
	dir  string
	log  *os.File

	// size is the byte length of the complete batches in the log file;
	// readers never read past it. Written under partition.rw.
	size atomic.Int64
	// next is the offset after the segment's last record.
	next atomic.Int64
	// maxTS is the largest batch max timestamp in the segment (ms).
	maxTS atomic.Int64
	// firstAppend is when the first batch was appended (ms), for roll by
	// age; 0 while empty. After a restart it is estimated (firstWritten).
	firstAppend atomic.Int64
	// lastAppend is when the segment was last written (ms; the file's
	// modification time after a restart). Retention by time counts from
	// it, not from record timestamps, so a producer whose clock is
	// years behind cannot get fresh data deleted.
	lastAppend atomic.Int64

	// In-memory indexes of the active segment; sealed segments are looked
	// up in their files so memory does not grow with retained data.
	index     []indexEntry
	timeIndex []timeEntry
	// flushedIndex counts index entries already written to the files.
	flushedIndex, flushedTime int
	bytesSinceIndex           int
	sealed                    bool

	// refs counts readers plus one for being in the partition's list; the
	// file is closed when it drops to zero after removal.
	refs    atomic.Int32
	deleted atomic.Bool
	// badIndex: a read found the offset index pointing at no batch, so
	// lookups scan from the segment's start until the index is mended.
	badIndex atomic.Bool
}

type indexEntry struct {
	rel uint32 // offset - base
	pos uint32 // byte position of the batch
}

type timeEntry struct {
	ts  int64
	rel uint32
}

const (
	indexEntrySize = 8
	timeEntrySize  = 12
)

func segmentName(dir string, base int64, ext string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext))
}

// createSegment creates an empty segment file at base.
func createSegment(dir string, base int64) (*segment, error) {
	f, err := os.OpenFile(segmentName(dir, base, ".log"), os.O_RDWR|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: create segment: %w", broker.ErrStorage, err)
	}
	s := &segment{base: base, dir: dir, log: f}
	s.next.Store(base)
	s.maxTS.Store(-1)
	s.refs.Store(1)
	return s, nil
}

// openSegment opens an existing segment without reading it; recover or
// loadSealed fills in its state.
func openSegment(dir string, base int64) (*segment, error) {
	f, err := os.OpenFile(segmentName(dir, base, ".log"), os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: open segment: %w", broker.ErrStorage, err)
	}
	s := &segment{base: base, dir: dir, log: f}
	s.next.Store(base)
	s.maxTS.Store(-1)
	s.refs.Store(1)
	return s, nil
}

// noteBatch updates indexes and bounds for a batch now at pos. The caller
// holds the partition's write lock (or owns the segment during recovery).
func (s *segment) noteBatch(h *recordbatch.Header, pos int64, size int, indexInterval int) {
	if s.bytesSinceIndex >= indexInterval && pos > 0 {
		rel := uint32(h.BaseOffset - s.base)
		s.index = append(s.index, indexEntry{rel: rel, pos: uint32(pos)})
		s.timeIndex = append(s.timeIndex, timeEntry{ts: s.maxTS.Load(), rel: rel})
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += size
	if h.MaxTimestamp > s.maxTS.Load() {
		s.maxTS.Store(h.MaxTimestamp)
	}
	s.size.Store(pos + int64(size))
	s.next.Store(h.LastOffset() + 1)
}

// flushIndexes appends the not yet written index entries to the index files.
// If that fails (disk full) the files are removed, so they are never wrong:
// a missing index only costs a scan, and the next flush writes them whole.
func (s *segment) flushIndexes(sync bool) error {
	err := s.appendIndexes(sync)
	if err != nil {
		os.Remove(segmentName(s.dir, s.base, ".index"))
		os.Remove(segmentName(s.dir, s.base, ".timeindex"))
		s.flushedIndex, s.flushedTime = 0, 0
	}
	return err
}

func (s *segment) appendIndexes(sync bool) error {
	if err := appendEntries(segmentName(s.dir, s.base, ".index"), len(s.index)-s.flushedIndex, sync, func(b []byte) []byte {
		for _, e := range s.index[s.flushedIndex:] {
			b = binary.BigEndian.AppendUint32(b, e.rel)
			b = binary.BigEndian.AppendUint32(b, e.pos)
		}
		return b
	}); err != nil {
		return err
	}
	s.flushedIndex = len(s.index)
	if err := appendEntries(segmentName(s.dir, s.base, ".timeindex"), len(s.timeIndex)-s.flushedTime, sync, func(b []byte) []byte {
		for _, e := range s.timeIndex[s.flushedTime:] {
			b = binary.BigEndian.AppendUint64(b, uint64(e.ts))
			b = binary.BigEndian.AppendUint32(b, e.rel)
		}
		return b
	}); err != nil {
		return err
	}
	s.flushedTime = len(s.timeIndex)
	return nil
}

func appendEntries(name string, n int, sync bool, fill func([]byte) []byte) error {
	if n == 0 && !sync {
		return nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%w: index: %w", broker.ErrStorage, err)
	}
	if n > 0 {
		if _, err := f.Write(fill(make([]byte, 0, n*timeEntrySize))); err != nil {
			f.Close()
			return fmt.Errorf("%w: index: %w", broker.ErrStorage, err)
		}
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("%w: index sync: %w", broker.ErrStorage, err)
		}
	}
	return f.Close()
}

// rewriteIndexes replaces the index files with the in-memory entries, after
// recovery rebuilt them.
func (s *segment) rewriteIndexes() error {
	if err := s.removeIndexFiles(); err != nil {
		return err
	}
	s.flushedIndex, s.flushedTime = 0, 0
	return s.flushIndexes(true)
}

// removeIndexFiles removes both index files, if there; the first error.
func (s *segment) removeIndexFiles() error {
	var first error
	for _, ext := range []string{".index", ".timeindex"} {
		if err := os.Remove(segmentName(s.dir, s.base, ext)); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = fmt.Errorf("%w: %w", broker.ErrStorage, err)
		}
	}
	return first
}

// addFinalTimeEntry records the segment's max timestamp as a last time index
// entry before sealing, so retention and time lookups need not scan a sealed
// segment. The caller holds the partition's rw lock.
func (s *segment) addFinalTimeEntry() {
	if s.size.Load() == 0 {
		return
	}
	last := uint32(s.next.Load() - 1 - s.base)
	if n := len(s.timeIndex); n == 0 || s.timeIndex[n-1].ts != s.maxTS.Load() {
		s.timeIndex = append(s.timeIndex, timeEntry{ts: s.maxTS.Load(), rel: last})
	}
}

// firstWritten estimates, at open, when the segment's first batch was
// appended, for roll by age; 0 while empty. That is its first record's
// timestamp, but no later than the file's last write (lastAppend): a
// producer whose clock is ahead must not keep the segment from ever
// rolling. One whose clock is behind rolls it at the next append, which
// costs a segment, not data.
func (s *segment) firstWritten() int64 {
	if s.size.Load() < recordbatch.HeaderSize {
		return 0
	}
	var hdr [recordbatch.HeaderSize]byte
	last := max(s.lastAppend.Load(), 1)
	if _, err := s.log.ReadAt(hdr[:], 0); err != nil {
		return last
	}
	h, err := recordbatch.ParseHeader(hdr[:])
	if err != nil || h.FirstTimestamp <= 0 {
		return last
	}
	return min(h.FirstTimestamp, last)
}

// syncAll writes the pending index entries and fsyncs the segment.
func (s *segment) syncAll() error {
	if err := s.flushIndexes(true); err != nil {
		return err
	}
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("%w: sync segment: %w", broker.ErrStorage, err)
	}
	return nil
}

// sealedOpen says what openSealed found.
type sealedOpen struct {
	rebuilt string // why both index files were written again ("": they were not)
	// unreadable are the bytes past the last batch that parses: left
	// on disk, not read; reason says why the scan stopped there.
	unreadable int64
	reason     error
	damaged    int   // batches kept whose CRC fails: a read of one fails
	damage     error // the first of them
}

// openSealed reads what a sealed segment needs in memory: its size, its max
// timestamp and its end. The end comes from a scan of the batches after the
// last offset index entry (a few KiB), so a segment cut short shows as a
// gap before the next segment, which readers then skip, rather than as
// offsets no read gets past. An index entry that points at no batch, or a
// missing index file, costs a scan of the whole segment, and both index
// files are written again. Damage is reported, never cut: the bytes past
// a batch that does not parse are left on disk, unread.
func (s *segment) openSealed(indexInterval int) (sealedOpen, error) {
	var res sealedOpen
	st, err := s.log.Stat()
	if err != nil {
		return res, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	size := st.Size()
	s.lastAppend.Store(st.ModTime().UnixMilli())
	from, next := int64(0), s.base
	// Only a missing file or wrong contents are damage: an index file
	// that cannot be read (no descriptor left, EIO) fails the open, so
	// it is not rewritten, nor removed by a rewrite that fails alike.
	last, haveIdx, idxErr := s.lastIndexEntry()
	if idxErr != nil && !errors.Is(idxErr, fs.ErrNotExist) {
		return res, fmt.Errorf("%w: %w", broker.ErrStorage, idxErr)
	}
	ts, tsRel, haveTS, err := s.lastTimeEntry()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	lastFits := false
	if haveIdx && size > 0 {
		if lastFits, err = s.batchAt(int64(last.pos), s.base+int64(last.rel), size); err != nil {
			return res, err
		}
	}
	switch {
	case size == 0:
	case !haveTS:
		res.rebuilt = "no time index"
	case idxErr != nil:
		res.rebuilt = "no offset index"
	case haveIdx && !lastFits:
		res.rebuilt = fmt.Sprintf("its last offset index entry (offset %d at byte %d) points at no batch of that offset", s.base+int64(last.rel), last.pos)
	case haveIdx:
		from, next = int64(last.pos), s.base+int64(last.rel)
		s.maxTS.Store(ts)
	default:
		s.maxTS.Store(ts) // a segment smaller than the index interval
	}
	// Never truncated: a sealed segment is not torn by a crash, and what
	// follows a damaged batch may be intact.
	scan, fileSize, err := s.scanBatches(from, next, indexInterval, nil, true)
	if err != nil {
		return res, err
	}
	if res.rebuilt == "" && (fileSize > s.size.Load() || len(s.index) > 0 || haveTS && s.base+int64(tsRel) >= s.next.Load()) {
		// The index may name what cannot be read, or lack entries,
		// or the time index offsets past the end (its max timestamp
		// is not the segment's): write them again from a scan of the
		// whole segment.
		res.rebuilt = "its batches did not end where the index says"
		s.index, s.timeIndex, s.bytesSinceIndex = nil, nil, 0
		s.maxTS.Store(-1)
		if scan, fileSize, err = s.scanBatches(0, s.base, indexInterval, nil, true); err != nil {
			return res, err
		}
	}
	if fileSize > s.size.Load() {
		res.unreadable, res.reason = fileSize-s.size.Load(), scan.reason
	}
	res.damaged, res.damage = scan.damaged, scan.damage
	if res.rebuilt != "" {
		s.addFinalTimeEntry()
		err = s.rewriteIndexes()
	}
	s.index, s.timeIndex, s.sealed = nil, nil, true
	return res, err
}

// rebuildIndexFiles writes the index files of a sealed segment again from
// its batch headers, below size. Readers meanwhile see a prefix of the new
// entries, or none: positions at or before the one they look up, still right.
func (s *segment) rebuildIndexFiles(size int64, indexInterval int) error {
	t := &segment{base: s.base, dir: s.dir, log: s.log}
	t.next.Store(s.base)
	t.maxTS.Store(-1)
	var hdr [recordbatch.HeaderSize]byte
	for pos := int64(0); pos < size; {
		if _, err := s.log.ReadAt(hdr[:], pos); err != nil {
			return fmt.Errorf("%w: read: %w", broker.ErrStorage, err)
		}
		h, err := recordbatch.ParseHeader(hdr[:])
		if err != nil {
			return fmt.Errorf("%w: at byte %d of segment %d: %w", broker.ErrCorruptBatch, pos, s.base, err)
		}
		t.noteBatch(&h, pos, h.Size(), indexInterval)
		pos += int64(h.Size())
	}
	t.addFinalTimeEntry()
	return t.rewriteIndexes()
}

// scanMaxTimestamp reads a sealed segment's largest timestamp from its
// batch headers, up to the first that does not parse.
func (s *segment) scanMaxTimestamp() (int64, error) {
	maxTS := int64(-1)
	var hdr [recordbatch.HeaderSize]byte
	size := s.size.Load()
	for pos := int64(0); pos+recordbatch.HeaderSize <= size; {
		if _, err := s.log.ReadAt(hdr[:], pos); err != nil {
			return -1, fmt.Errorf("%w: read: %w", broker.ErrStorage, err)
		}
		h, err := recordbatch.ParseHeader(hdr[:])
		if err != nil {
			break
		}
		maxTS = max(maxTS, h.MaxTimestamp)
		pos += int64(h.Size())
	}
	return maxTS, nil
}

// batchAt reports whether a batch of offset off, whole within size, starts
// at byte pos of the log: an index entry read from disk is checked so
// before it is trusted. A read that fails (not one cut short) is an error,
// not a mismatch.
func (s *segment) batchAt(pos, off, size int64) (bool, error) {
	if pos < 0 || pos+recordbatch.HeaderSize > size {
		return false, nil
	}
	var hdr [recordbatch.HeaderSize]byte
	if _, err := s.log.ReadAt(hdr[:], pos); errors.Is(err, io.EOF) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("%w: segment %d: %w", broker.ErrStorage, s.base, err) // err names the file
	}
	h, err := recordbatch.ParseHeader(hdr[:])
	return err == nil && h.BaseOffset == off && pos+int64(h.Size()) <= size, nil
}

// lastEntry reads the last whole entry of index file name into b (entries
// are len(b) bytes): nil if it has none; an error (fs.ErrNotExist: no
// file) if it cannot be read.
func lastEntry(name string, b []byte) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	n := int64(len(b))
	if st.Size() < n {
		return nil, nil
	}
	if _, err := f.ReadAt(b, st.Size()/n*n-n); err != nil {
		return nil, err // a *fs.PathError: it names the file
	}
	return b, nil
}

// lastIndexEntry reads the last entry of the offset index file: false if it
// has none, an error if there is no file (fs.ErrNotExist) or it cannot be
// read.
func (s *segment) lastIndexEntry() (indexEntry, bool, error) {
	b, err := lastEntry(segmentName(s.dir, s.base, ".index"), make([]byte, indexEntrySize))
	if err != nil || b == nil {
		return indexEntry{}, false, err
	}
	return indexEntry{rel: binary.BigEndian.Uint32(b), pos: binary.BigEndian.Uint32(b[4:])}, true, nil
}

// lastTimeEntry reads the last entry of the time index file: its max
// timestamp and the offset (relative) it was written at; false if it has
// none, an error as lastIndexEntry's.
func (s *segment) lastTimeEntry() (int64, uint32, bool, error) {
	b, err := lastEntry(segmentName(s.dir, s.base, ".timeindex"), make([]byte, timeEntrySize))
	if err != nil || b == nil {
		return 0, 0, false, err
	}
	return int64(binary.BigEndian.Uint64(b)), binary.BigEndian.Uint32(b[8:]), true, nil
}

// lookup returns a byte position at or before the batch holding offset.
func (s *segment) lookup(offset int64) int64 {
	if s.badIndex.Load() || offset <= s.base {
		return 0
	}
	rel := uint32(offset - s.base)
	if !s.sealed {
		i := sort.Search(len(s.index), func(i int) bool { return s.index[i].rel > rel })
		if i == 0 {
			return 0
		}
		return int64(s.index[i-1].pos)
	}
	return s.lookupFile(rel)
}

// lookupFile binary-searches the offset index file of a sealed segment.
func (s *segment) lookupFile(rel uint32) int64 {
	f, err := os.Open(segmentName(s.dir, s.base, ".index"))
	if err != nil {
		return 0 // no index: scan from the start, still correct
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	n := int(st.Size() / indexEntrySize)
	var b [indexEntrySize]byte
	var found int64
	bad := false
	i := sort.Search(n, func(i int) bool {
		if _, err := f.ReadAt(b[:], int64(i)*indexEntrySize); err != nil {
			bad = true
			return true
		}
		return binary.BigEndian.Uint32(b[:4]) > rel
	})
	if bad || i == 0 {
		return 0
	}
	if _, err := f.ReadAt(b[:], int64(i-1)*indexEntrySize); err != nil {
		return 0
	}
	found = int64(binary.BigEndian.Uint32(b[4:]))
	if found > s.size.Load() {
		return 0
	}
	return found
}

// timeLookup returns a byte position at or before the first batch that may
// hold a timestamp >= ts.
func (s *segment) timeLookup(ts int64) int64 {
	var rel uint32
	var ok bool
	if !s.sealed {
		for _, e := range s.timeIndex {
			if e.ts >= ts {
				break
			}
			rel, ok = e.rel, true
		}
	} else if b, err := os.ReadFile(segmentName(s.dir, s.base, ".timeindex")); err == nil {
		for i := 0; i+timeEntrySize <= len(b); i += timeEntrySize {
			if int64(binary.BigEndian.Uint64(b[i:])) >= ts {
				break
			}
			rel, ok = binary.BigEndian.Uint32(b[i+8:]), true
		}
	}
	if !ok {
		return 0
	}
	return s.lookup(s.base + int64(rel))
}

func (s *segment) acquire() { s.refs.Add(1) }

func (s *segment) release() {
	if s.refs.Add(-1) == 0 {
		s.log.Close()
	}
}

// remove unlinks the segment's files; the file handle closes once the last
// reader releases it.
func (s *segment) remove() error {
	if !s.deleted.CompareAndSwap(false, true) {
		return nil
	}
	var first error
	for _, ext := range []string{".log", ".index", ".timeindex"} {
		if err := os.Remove(segmentName(s.dir, s.base, ext)); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	s.release()
	return first
}

// maxSegmentBytes keeps positions within the 32-bit index entries.
const maxSegmentBytes = 1<<31 - 1
