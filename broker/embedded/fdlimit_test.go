package embedded

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/weirnet/weir/broker"
)

// The descriptor tests lower RLIMIT_NOFILE in a child process: lowered
// here, it would fail the other tests of this process.
const fdLimitEnv = "WEIR_FDLIMIT_CHILD_DIR"

// openFDs counts the descriptors the process holds.
func openFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents) - 1 // the one ReadDir had open
}

// lowerFDLimit leaves the process room for free more descriptors.
func lowerFDLimit(t testing.TB, free int) {
	t.Helper()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = uint64(openFDs(t) + free)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
}

// runFDChild runs test name of this binary in a child, with dir in its
// environment, and returns its failure, with its output.
func runFDChild(name, dir string) error {
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fdLimitEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("child %s: %w\n%s", name, err, out)
	}
	return nil
}

// TestCreateOutOfDescriptorsChild: see TestCreateOutOfDescriptorsLeavesNothing.
func TestCreateOutOfDescriptorsChild(t *testing.T) {
	dir := os.Getenv(fdLimitEnv)
	if dir == "" {
		t.Skip("run by TestCreateOutOfDescriptorsLeavesNothing")
	}
	b := openTest(t, dir)
	before := openFDs(t)
	lowerFDLimit(t, 40)
	err := b.CreateTopic(ctx, "many", broker.TopicConfig{Partitions: 200})
	if !errors.Is(err, syscall.EMFILE) || !errors.Is(err, broker.ErrStorage) {
		t.Fatalf("create of 200 partitions with 40 descriptors free: %v, want a storage error, EMFILE", err)
	}
	if n := openFDs(t); n != before {
		t.Errorf("%d descriptors open after the failed create, %d before", n, before)
	}
	fmt.Println("create failed:", err)
}

// TestCreateOutOfDescriptorsLeavesNothing: a create that runs out of
// descriptors midway leaves no partition directory and no meta. It left
// NAME-0: the partitions were closed and removed one by one, and closing
// the first freed one descriptor where removing a directory takes two. And
// a partition whose directory could not be synced kept its segment open.
func TestCreateOutOfDescriptorsLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	childErr := runFDChild("TestCreateOutOfDescriptorsChild", dir)
	left, _ := filepath.Glob(filepath.Join(dir, "many-*"))
	if meta := filepath.Join(dir, "meta", "topics", "many.json"); exists(meta) {
		left = append(left, meta)
	}
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if childErr != nil {
		t.Error(childErr)
	}
}
