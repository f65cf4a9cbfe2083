package wholefiletest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Saves counts, from now on, the saves of the file at path: each writes a
// temporary file, "."+name+"-*" (wholefile.Replace), renamed over it. Its
// creations are counted: a rename's events of one name may be merged by
// the kernel, a temporary file's names differ. count reads what the
// kernel queued since (inotify: Linux only).
func Saves(t testing.TB, path string) (count func() int) {
	t.Helper()
	dir, name := filepath.Dir(path), filepath.Base(path)
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
