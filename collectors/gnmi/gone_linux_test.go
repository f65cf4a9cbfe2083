package gnmi

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
// each: 199 saves, each synced, held the reload (and Update, waiting on
// the collector's lock) 0.8 s here, seconds on a slow disk.
func TestUntoldRemovalsShareSaves(t *testing.T) {
	const n = 200
	c, _, state, cfgs, _ := manyDown(t, n)
	saves := savesOf(t, filepath.Dir(state), filepath.Base(state))
	if err := c.Update(cfgs[:1]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the reload applied", func() bool { return slices.Equal(memberNames(c), []string{cfgs[0].Name}) })
	known, err := readKnown(state)
	if err != nil {
		t.Fatal(err)
	}
	if len(known) != n {
		t.Errorf("state file lists %d targets, want the one left and the %d removals not told", len(known), n-1)
	}
	// The reload's own save, and the removals' (failing within moments of
	// each other).
	if got := saves(); got > n/4 {
		t.Errorf("state file saved %d times for a reload and %d removals not told, want a few", got, n-1)
	} else {
		t.Logf("state file saved %d times for a reload and %d removals not told", got, n-1)
	}
}
