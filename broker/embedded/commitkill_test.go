package embedded

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

const commitKillEnv = "WEIR_COMMIT_KILL_DIR"

// TestCommitKillChild produces and consumes in group "g", committing after
// every poll, and prints each committed offset once Commit has returned.
func TestCommitKillChild(t *testing.T) {
	dir := os.Getenv(commitKillEnv)
	if dir == "" {
		t.Skip("run by TestCommittedOffsetsSurviveSIGKILL")
	}
	b, err := Open(dir, WithTopicDefaults(broker.TopicConfig{Partitions: 3, SegmentBytes: 16 << 10}))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	c, err := b.Consume(ctx, "g", []string{"k"})
	if err != nil {
		fmt.Println("consume:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		if err := b.Produce(ctx, "k", makeRecords(1+rand.IntN(30), i)); err != nil {
			fmt.Println("produce:", err)
			os.Exit(3)
		}
		if _, err := c.Poll(ctx); err != nil {
			fmt.Println("poll:", err)
			os.Exit(3)
		}
		if err := c.Commit(ctx); err != nil {
			fmt.Println("commit:", err)
			os.Exit(3)
		}
		for _, o := range b.offsets.groupOffsets("g") {
			fmt.Fprintf(out, "%d %d\n", o.Partition, o.Offset)
		}
		out.Flush()
	}
}

// TestCommittedOffsetsSurviveSIGKILL kills the child at random points and
// checks that no committed offset went back.
func TestCommittedOffsetsSurviveSIGKILL(t *testing.T) {
	dir := t.TempDir()
	last := map[int32]int64{}
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCommitKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), commitKillEnv+"="+dir)
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		var killAt <-chan time.Time
		lines := make(chan string, 1024)
		go func() {
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
	loop:
		for {
			select {
			case <-killAt:
				cmd.Process.Signal(syscall.SIGKILL)
				break loop
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("child exited: %v", cmd.Wait())
				}
				var p int32
				var o int64
				if _, err := fmt.Sscanf(l, "%d %d", &p, &o); err != nil {
					t.Fatalf("child: %s", l)
				}
				last[p] = max(last[p], o)
				if killAt == nil {
					killAt = time.After(time.Duration(rand.IntN(300)) * time.Millisecond)
				}
			}
		}
		for l := range lines {
			var p int32
			var o int64
			if _, err := fmt.Sscanf(l, "%d %d", &p, &o); err == nil {
				last[p] = max(last[p], o)
			}
		}
		cmd.Wait()
		b, err := Open(dir)
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		for p, want := range last {
			if got, _ := b.offsets.committed("g", "k", p); got < want {
				t.Errorf("round %d: partition %d committed %d after SIGKILL, %d was committed", round, p, got, want)
			}
		}
		b.Close()
	}
	if len(last) == 0 {
		t.Fatal("nothing committed")
	}
}
