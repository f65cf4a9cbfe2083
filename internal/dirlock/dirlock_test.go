package dirlock

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestOneHolder: a second Take fails with ErrLocked naming the holder's
// pid, also from another process (flock is per open file description);
// after Release the directory can be taken again.
func TestOneHolder(t *testing.T) {
	dir := t.TempDir()
	l, err := Take(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Take(dir); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second Take: %v", err)
	}
	// flock(1) from util-linux, another process: refused while held.
	if _, lookErr := exec.LookPath("flock"); lookErr == nil {
		if err := exec.Command("flock", "-n", dir+"/.lock", "true").Run(); err == nil {
			t.Error("another process took the lock while it was held")
		}
	}
	l.Release()
	l2, err := Take(dir)
	if err != nil {
		t.Fatalf("Take after Release: %v", err)
	}
	l2.Release()
}
