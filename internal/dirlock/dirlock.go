// Package dirlock keeps a data directory to one process: an exclusive
// flock on DIR/.lock, which the kernel drops when the process dies, so a
// crash never leaves a stale lock. The file holds the holder's pid, for
// the error the next process gets.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is returned by Take when another process holds the directory.
var ErrLocked = errors.New("data directory is in use by another process")

// Lock is a held directory lock.
type Lock struct{ f *os.File }

// Take locks dir, which must exist; the error wraps ErrLocked, with the
// holder's pid, when another process holds it.
func Take(dir string) (*Lock, error) {
	name := filepath.Join(dir, ".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", name, err) // no flock here (some network file systems)
		}
		b, _ := os.ReadFile(name)
		holder := strings.TrimSpace(string(b))
		if holder != "" {
			holder = " (pid " + holder + ")"
		}
		return nil, fmt.Errorf("%w: %s%s", ErrLocked, dir, holder)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Release unlocks the directory.
func (l *Lock) Release() {
	l.f.Truncate(0)
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}
