package snmp

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// savesOf counts, from now on, the saves of the file dir/name: each
// writes a temporary file, "."+name+"-*" (wholefile.Replace), renamed
// over it. Its creations are counted: a rename's events of one name
// may be merged by the kernel, a temporary file's names differ. Count
// reads what the kernel queued since.
func savesOf(t *testing.T, dir, name string) (count func() int) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	n := 0
	buf := make([]byte, 64<<10)
	return func() int {
		for {
			k, err := unix.Read(fd, buf)
			if err == unix.EAGAIN {
				return n
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+unix.SizeofInotifyEvent <= k; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
					t.Fatal("inotify queue overflowed")
				}
				b := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				if i := slices.Index(b, 0); i >= 0 {
					b = b[:i]
				}
				if strings.HasPrefix(string(b), "."+name+"-") {
					n++
				}
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}

// TestUntoldRemovalsShareSaves: the removals a reload could not tell (a
// failing broker) are kept in the state file by a few saves, not one
// each: 199 saves, each synced, held the reload for a second or more.
func TestUntoldRemovalsShareSaves(t *testing.T) {
	const n = 200
	p, _, state, cfgs, _ := manyPolled(t, n)
	saves := savesOf(t, filepath.Dir(state), filepath.Base(state))
	if err := p.Update(cfgs[:1]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !slices.Equal(memberNames(p), []string{cfgs[0].Name}); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reload not applied after 30 s")
		}
	}
	if got := knownNames(t, state); len(got) != n {
		t.Errorf("state file lists %d targets, want the one left and the %d removals not told", len(got), n-1)
	}
	// The reload's own save, and the removals' (failing at one deadline).
	if got := saves(); got > n/4 {
		t.Errorf("state file saved %d times for a reload and %d removals not told, want a few", got, n-1)
	} else {
		t.Logf("state file saved %d times for a reload and %d removals not told", got, n-1)
	}
}
