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
	"sort"
	"sync"
	"time"

	"github.com/weirnet/weir/broker"
)

// offsetStore keeps consumer groups' committed offsets in an append-only
// file of CRC-protected entries, replayed at open and compacted when it
// holds mostly superseded commits. A torn last entry (crash mid-write) is
// cut off; every complete commit survives.
//
// An offset is kept as committed, negative ones too: Kafka stores what a
// client commits (KafkaJS's admin.resetOffsets commits -2 and -1), and a
// reader takes a negative one as no position (consumer.applyAssignment,
// the lag metric). An entry of the original layout with a negative offset
// removes its key (earlier versions wrote every negative commit so); a
// committed negative offset is written with a kind byte after it (see
// appendOffsetEntry), behind a removal of its key: an earlier version,
// which skips that entry as damaged, reads the key removed, as it wrote
// it, and not at the offset committed before.
type offsetStore struct {
	mu     sync.Mutex
	path   string
	f      *os.File
	size   int64
	m      map[groupKey]int64
	always bool
	dirty  bool
	buf    []byte
	// now is the broker's clock; used says when each group last
	// committed (since the open: the file keeps no times).
	now  func() time.Time
	used map[string]time.Time
	// groups counts each group's entries in m: len(groups) is how many
	// groups have committed offsets, which commitBounded bounds.
	groups map[string]int
	logger *slog.Logger
	// compactFailing: the last rewrite failed (logged once, until one
	// succeeds).
	compactFailing bool
	// stale: the file holds offsets the store has dropped (a deleted
	// topic's, whose deletion could not be written); flush rewrites it.
	stale bool
}

type groupKey struct {
	group, topic string
	partition    int32
}

// GroupOffset is one committed offset.
type GroupOffset struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func openOffsetStore(dataDir string, always bool, now func() time.Time, logger *slog.Logger) (*offsetStore, error) {
	s := &offsetStore{path: filepath.Join(dataDir, "meta", "offsets.log"), m: make(map[groupKey]int64), always: always,
		now: now, used: make(map[string]time.Time), logger: logger}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	b, err := os.ReadFile(s.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: group offsets: %w", broker.ErrStorage, err)
	}
	good, skipped := replayOffsets(b, s.m)
	if f, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		return nil, fmt.Errorf("%w: group offsets: %w", broker.ErrStorage, err)
	} else {
		s.f = f
	}
	for _, d := range skipped {
		logger.Warn("group offsets: skipped a damaged entry; the commits before and after it are kept",
			slog.String("file", s.path), slog.Int("at_byte", d.at), slog.Int("bytes", d.n))
	}
	if good < len(b) {
		logger.Warn("group offsets: cut the file's torn or damaged tail",
			slog.String("file", s.path), slog.Int("at_byte", good), slog.Int("bytes", len(b)-good))
	}
	if len(skipped) > 0 {
		// What was skipped stays readable beside it; the file itself is
		// rewritten below with the entries that were read.
		if err := writeSynced(s.path+".damaged", b); err != nil {
			logger.Warn("group offsets: keeping a copy of the damaged file", slog.Any("error", err))
		}
	}
	if good < len(b) {
		if err := s.f.Truncate(int64(good)); err != nil {
			return nil, fmt.Errorf("%w: group offsets: %w", broker.ErrStorage, err)
		}
	}
	s.size = int64(good)
	opened := now()
	s.groups = make(map[string]int)
	for k := range s.m {
		s.used[k.group] = opened
		s.groups[k.group]++
	}
	if _, err := s.f.Seek(s.size, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%w: group offsets: %w", broker.ErrStorage, err)
	}
	if len(skipped) > 0 {
		if err := s.compact(); err != nil {
			logger.Warn("group offsets: rewriting the file without its damaged entries; it is kept as it is", slog.Any("error", err))
		}
	} else {
		s.maybeCompact()
	}
	return s, nil
}

// damagedSpan is a run of bytes replayOffsets skipped: an entry whose CRC
// or contents are wrong, with valid entries after it.
type damagedSpan struct{ at, n int }

// replayOffsets applies the entries of b to m. It returns the end of the
// last valid entry (what follows is a torn tail) and the damaged spans it
// skipped before it: each entry has its own length and CRC, so one bad
// entry does not take the commits written after it along.
func replayOffsets(b []byte, m map[groupKey]int64) (int, []damagedSpan) {
	var skipped []damagedSpan
	pos, end := 0, 0
	for pos+8 <= len(b) {
		n, ok := applyOffsetEntry(b[pos:], m)
		if ok {
			pos += n
			end = pos
			continue
		}
		// Resynchronise past the damaged entry. Its length, when it
		// fits, says where it ends: nothing inside it is read (a group
		// ID may hold bytes that look like a whole entry). An entry
		// running past the file's end is its torn tail.
		n = int(binary.BigEndian.Uint32(b[pos:]))
		if n >= 14 && pos+8+n > len(b) {
			break
		}
		next := -1
		if n >= 14 {
			next = pos + 8 + n
		} else {
			// The length itself is damaged: the next valid entry, if
			// any (a chance match of a CRC-32C over a well-formed
			// entry is one in 2^32).
			for q := pos + 1; q+8 <= len(b); q++ {
				if validOffsetEntry(b[q:]) {
					next = q
					break
				}
			}
		}
		if next < 0 || next >= len(b) {
			break
		}
		skipped = append(skipped, damagedSpan{pos, next - pos})
		pos = next
	}
	return end, skipped
}

// applyOffsetEntry applies the entry at the start of b to m and returns its
// length, or false if it is not a whole, valid entry.
func applyOffsetEntry(b []byte, m map[groupKey]int64) (int, bool) {
	k, off, del, n, ok := parseOffsetEntry(b)
	if !ok {
		return 0, false
	}
	if del {
		delete(m, k)
	} else {
		m[k] = off
	}
	return n, true
}

// validOffsetEntry reports whether b starts with a whole entry whose CRC
// matches and whose contents decode.
func validOffsetEntry(b []byte) bool {
	_, _, _, _, ok := parseOffsetEntry(b)
	return ok
}

// parseOffsetEntry decodes the entry at the start of b, checking its
// length and CRC, and returns its length; del says it removes its key.
func parseOffsetEntry(b []byte) (k groupKey, off int64, del bool, n int, ok bool) {
	if len(b) < 8 {
		return k, 0, false, 0, false
	}
	n = int(binary.BigEndian.Uint32(b))
	if n < 14 || 8+n > len(b) {
		return k, 0, false, 0, false
	}
	e := b[8 : 8+n]
	if crc32.Checksum(e, crcTable) != binary.BigEndian.Uint32(b[4:]) {
		return k, 0, false, 0, false
	}
	k, off, del, ok = decodeOffsetEntry(e)
	return k, off, del, 8 + n, ok
}

// entryCommitted is the kind byte of an entry that keeps its offset
// whatever its sign.
const entryCommitted = 1

func decodeOffsetEntry(e []byte) (k groupKey, off int64, del bool, ok bool) {
	gl := int(binary.BigEndian.Uint16(e))
	if 2+gl+2 > len(e) {
		return k, 0, false, false
	}
	k.group = string(e[2 : 2+gl])
	e = e[2+gl:]
	tl := int(binary.BigEndian.Uint16(e))
	switch {
	case 2+tl+12 == len(e):
		// The original layout: a negative offset removes the key.
	case 2+tl+13 == len(e) && e[len(e)-1] == entryCommitted:
	default:
		return k, 0, false, false
	}
	k.topic = string(e[2 : 2+tl])
	e = e[2+tl:]
	k.partition = int32(binary.BigEndian.Uint32(e))
	off = int64(binary.BigEndian.Uint64(e[4:]))
	return k, off, off < 0 && len(e) == 12, true
}

// appendOffsetEntry appends an entry committing off. A non-negative offset
// has the original layout, which every weir version reads; a negative
// one, which that layout would take as removing the key, has the kind
// byte after it.
func appendOffsetEntry(b []byte, k groupKey, off int64) []byte {
	return appendEntry(b, k, off, off < 0)
}

// appendOffsetRemoval appends an entry that removes k: the original
// layout's -1, as earlier versions wrote it.
func appendOffsetRemoval(b []byte, k groupKey) []byte {
	return appendEntry(b, k, -1, false)
}

func appendEntry(b []byte, k groupKey, off int64, kind bool) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.group)))
	b = append(b, k.group...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(k.topic)))
	b = append(b, k.topic...)
	b = binary.BigEndian.AppendUint32(b, uint32(k.partition))
	b = binary.BigEndian.AppendUint64(b, uint64(off))
	if kind {
		b = append(b, entryCommitted)
	}
	e := b[start+8:]
	binary.BigEndian.PutUint32(b[start:], uint32(len(e)))
	binary.BigEndian.PutUint32(b[start+4:], crc32.Checksum(e, crcTable))
	return b
}

// commit stores offsets atomically: one write holds all of them, and a torn
// write is cut at the next open (entries are independent, so a partial
// commit keeps the complete entries; each is a valid committed position,
// or the removal before a negative one, which readers take alike).
func (s *offsetStore) commit(offs []GroupOffset) error {
	return s.write(offs, false, 0)
}

// errTooManyGroups: a commit would add a group past commitBounded's bound.
var errTooManyGroups = errors.New("too many groups with committed offsets")

// commitBounded is commit, refused with errTooManyGroups if it would add
// a group with offsets when maxGroups (0: no bound) already have some.
func (s *offsetStore) commitBounded(offs []GroupOffset, maxGroups int) error {
	return s.write(offs, false, maxGroups)
}

// remove deletes the offsets of offs' keys (their Offset is not read).
func (s *offsetStore) remove(offs []GroupOffset) error {
	return s.write(offs, true, 0)
}

// write commits offs, or removes their keys if del, in one write.
func (s *offsetStore) write(offs []GroupOffset, del bool, maxGroups int) error {
	if len(offs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !del && maxGroups > 0 && len(s.groups) >= maxGroups {
		for _, o := range offs {
			if s.groups[o.Group] == 0 {
				return errTooManyGroups
			}
		}
	}
	s.buf = s.buf[:0]
	for _, o := range offs {
		if len(o.Group) > 1<<15 || len(o.Topic) > 1<<15 {
			return fmt.Errorf("group or topic name too long")
		}
		k := groupKey{o.Group, o.Topic, o.Partition}
		if del || o.Offset < 0 {
			// Before a negative commit, the removal earlier versions
			// wrote for it: going back to one, which skips the kind
			// byte's entry as damaged, the key is removed as it then
			// was, and the offset committed before does not come back.
			s.buf = appendOffsetRemoval(s.buf, k)
		}
		if !del {
			s.buf = appendOffsetEntry(s.buf, k, o.Offset)
		}
	}
	if _, err := s.f.Write(s.buf); err != nil {
		s.f.Truncate(s.size)
		s.f.Seek(s.size, io.SeekStart)
		return fmt.Errorf("%w: commit offsets: %w", broker.ErrStorage, err)
	}
	s.size += int64(len(s.buf))
	if s.always {
		// Durable before visible: a commit that failed to reach the disk
		// must not be served as committed.
		if err := s.f.Sync(); err != nil {
			return fmt.Errorf("%w: commit offsets: %w", broker.ErrStorage, err)
		}
	} else {
		s.dirty = true
	}
	at := s.now()
	for _, o := range offs {
		k := groupKey{o.Group, o.Topic, o.Partition}
		if del {
			s.forget(k)
		} else {
			if _, ok := s.m[k]; !ok {
				s.groups[o.Group]++
			}
			s.m[k] = o.Offset
			s.used[o.Group] = at
		}
	}
	s.maybeCompact()
	return nil
}

// forget drops k from m, and its group from groups with its last entry.
// Holds s.mu.
func (s *offsetStore) forget(k groupKey) {
	if _, ok := s.m[k]; !ok {
		return
	}
	delete(s.m, k)
	if s.groups[k.group]--; s.groups[k.group] <= 0 {
		delete(s.groups, k.group)
	}
}

// unusedSince returns the groups with offsets that have not committed
// since before cutoff (nor since the store opened, if later).
func (s *offsetStore) unusedSince(cutoff time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	seen := make(map[string]bool)
	for k := range s.m {
		if seen[k.group] {
			continue
		}
		seen[k.group] = true
		if at, ok := s.used[k.group]; ok && at.Before(cutoff) {
			out = append(out, k.group)
		}
	}
	return out
}

func (s *offsetStore) committed(group, topic string, partition int32) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off, ok := s.m[groupKey{group, topic, partition}]
	return off, ok
}

// all returns every committed offset, sorted.
func (s *offsetStore) all() []GroupOffset {
	s.mu.Lock()
	out := make([]GroupOffset, 0, len(s.m))
	for k, v := range s.m {
		out = append(out, GroupOffset{k.group, k.topic, k.partition, v})
	}
	s.mu.Unlock()
	sortOffsets(out)
	return out
}

func sortOffsets(out []GroupOffset) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
}

// groupOffsets returns one group's committed offsets, sorted by topic and
// partition.
func (s *offsetStore) groupOffsets(group string) []GroupOffset {
	var out []GroupOffset
	s.mu.Lock()
	for k, v := range s.m {
		if k.group == group {
			out = append(out, GroupOffset{k.group, k.topic, k.partition, v})
		}
	}
	s.mu.Unlock()
	sortOffsets(out)
	return out
}

// groupCount is how many groups have committed offsets.
func (s *offsetStore) groupCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.groups)
}

// groupNames returns the groups that have committed offsets, unsorted.
func (s *offsetStore) groupNames() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make(map[string]bool)
	for k := range s.m {
		names[k.group] = true
	}
	return names
}

// deleteGroup removes every committed offset of group.
func (s *offsetStore) deleteGroup(group string) error {
	if err := s.remove(s.groupOffsets(group)); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.used, group)
	s.mu.Unlock()
	return nil
}

func (s *offsetStore) deleteTopic(topic string) {
	var dels []GroupOffset
	s.mu.Lock()
	for k := range s.m {
		if k.topic == topic {
			dels = append(dels, GroupOffset{k.group, k.topic, k.partition, -1})
		}
	}
	s.mu.Unlock()
	if err := s.remove(dels); err != nil {
		// A full disk, most likely: freeing one is why topics get
		// deleted. The offsets go all the same, or a topic made again
		// under the name would be read from them; the file, which
		// still holds them, is rewritten at the next flush.
		s.mu.Lock()
		for _, o := range dels {
			s.forget(groupKey{o.Group, o.Topic, o.Partition})
		}
		s.stale = true
		s.mu.Unlock()
		s.logger.Warn("group offsets: the deleted topic's offsets could not be written off; the file is rewritten without them once it can be",
			slog.String("topic", topic), slog.Any("error", err))
	}
}

func (s *offsetStore) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stale {
		if err := s.compact(); err != nil {
			return fmt.Errorf("rewriting without a deleted topic's offsets: %w", err)
		}
		s.logger.Info("group offsets: file rewritten without the deleted topic's offsets")
	}
	if !s.dirty {
		return nil
	}
	s.dirty = false
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("%w: group offsets: %w", broker.ErrStorage, err)
	}
	return nil
}

// maybeCompact rewrites the file with only the live entries once it is
// mostly superseded commits. Holds s.mu (or runs before the store is shared).
// A rewrite that fails (a full disk) fails no commit, each being in the
// file already: the file stays as it was, and the next commit tries again.
func (s *offsetStore) maybeCompact() {
	live := int64(len(s.m)) * 64
	if s.size < DefaultOffsetsCompactSize/16 || s.size < 4*live {
		return
	}
	err := s.compact()
	switch {
	case err != nil && !s.compactFailing:
		s.logger.Warn("group offsets: rewriting the file without superseded commits failed; it is kept as it is, and the rewrite tried at every commit", slog.Any("error", err))
	case err == nil && s.compactFailing:
		s.logger.Info("group offsets: file rewritten without superseded commits")
	}
	s.compactFailing = err != nil
}

// compact writes the live entries to a new file and puts it in the old
// one's place. The new file is opened before it takes the name, so the
// store never writes on to the replaced file, whose commits a restart
// would not see.
func (s *offsetStore) compact() error {
	var b []byte
	for k, v := range s.m {
		b = appendOffsetEntry(b, k, v)
	}
	tmp := s.path + ".tmp"
	if err := writeSynced(tmp, b); err != nil {
		os.Remove(tmp) // a full disk leaves no half-written file behind
		return fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	f, err := os.OpenFile(tmp, os.O_RDWR, 0o644)
	if err == nil {
		_, err = f.Seek(0, io.SeekEnd)
		if err == nil {
			err = os.Rename(tmp, s.path)
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	s.f.Close()
	s.f, s.size, s.dirty, s.stale = f, int64(len(b)), false, false
	return syncDir(filepath.Dir(s.path))
}

func (s *offsetStore) close() error {
	if err := s.flush(); err != nil {
		s.f.Close()
		return err
	}
	return s.f.Close()
}
