package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/weirnet/weir/broker"
)

// ErrLocked is returned by Open when another process has the data directory.
var ErrLocked = errors.New("data directory is in use by another process")

// dirLock is an exclusive flock on DATA/.lock; the kernel drops it when the
// process dies, so a crash never leaves a stale lock.
type dirLock struct{ f *os.File }

func lockDir(dir string) (*dirLock, error) {
	name := filepath.Join(dir, ".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(name)
		f.Close()
		holder := strings.TrimSpace(string(b))
		if holder != "" {
			holder = " (pid " + holder + ")"
		}
		return nil, fmt.Errorf("%w: %s%s", ErrLocked, dir, holder)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() {
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}

// producerIDs hands out idempotent producer ids that are never reused, also
// across restarts: a block of ids is reserved on disk before any is used.
type producerIDs struct {
	mu        sync.Mutex
	file      string
	next, end int64
}

const producerIDBlock = 1000

func openProducerIDs(dataDir string) (*producerIDs, error) {
	p := &producerIDs{file: filepath.Join(dataDir, "meta", "producer-ids")}
	b, err := os.ReadFile(p.file)
	switch {
	case err == nil && len(b) == 8:
		p.next = int64(binary.BigEndian.Uint64(b))
	case err == nil || errors.Is(err, os.ErrNotExist):
		p.next = 1
	default:
		return nil, fmt.Errorf("%w: %w", broker.ErrStorage, err)
	}
	p.end = p.next
	return p, nil
}

func (p *producerIDs) allocate() (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next == p.end {
		end := p.end + producerIDBlock
		if err := writeFileAtomic(p.file, binary.BigEndian.AppendUint64(nil, uint64(end))); err != nil {
			return -1, err
		}
		p.end = end
	}
	id := p.next
	p.next++
	return id, nil
}
