package embedded

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

const crashChildEnv = "WEIR_CRASH_CHILD_DIR"

// TestCrashChild is the producer the crash test kills; it does nothing in a
// normal test run. It appends with fsync before acknowledgement and prints
// one line per acknowledged record: partition, offset, value.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("run by TestCrashRecovery")
	}
	b, err := Open(dir, WithFlushAlways(), WithTopicDefaults(broker.TopicConfig{Partitions: 3, SegmentBytes: 64 << 10}))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	start, _ := strconv.Atoi(os.Getenv("WEIR_CRASH_START"))
	out := bufio.NewWriter(os.Stdout)
	for seq := start; ; {
		n := 1 + rand.IntN(40)
		recs := make([]broker.Record, n)
		for i := range recs {
			recs[i] = broker.Record{Key: []byte(fmt.Sprintf("dev-%d", rand.IntN(50))), Value: []byte(fmt.Sprintf("seq-%d-%s", seq, strings.Repeat("x", rand.IntN(300))))}
			seq++
		}
		if err := b.Produce(ctx, "crash", recs); err != nil {
			fmt.Fprintln(out, "error:", err)
			out.Flush()
			os.Exit(3)
		}
		for _, r := range recs {
			fmt.Fprintf(out, "%d %d %s ok\n", r.Partition, r.Offset, r.Value)
		}
		out.Flush()
	}
}

// TestCrashRecovery kills a producing child with SIGKILL at random points
// while it produces and checks, after every kill, that every acknowledged
// record is present, intact and in order and that offsets are dense.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	dir := t.TempDir()
	acked := map[[2]int64]string{} // (partition, offset) -> value
	seq := 0
	rounds := 20
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, "WEIR_CRASH_START="+strconv.Itoa(seq))
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// The kill comes at a random point after the first
		// acknowledgement, so that every round interrupts producing,
		// however long the child (a -race build) takes to start.
		var killAt <-chan time.Time
		started := time.After(time.Minute)
		killed := false
		for !killed {
			select {
			case <-started:
				t.Fatalf("round %d: no acknowledgement within a minute", round)
			case <-killAt:
				cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("child exited early: %v", cmd.Wait())
				}
				recordAck(t, l, acked, &seq)
				if killAt == nil {
					started = nil
					killAt = time.After(time.Duration(rand.IntN(150)) * time.Millisecond)
				}
			}
		}
		for l := range lines {
			recordAck(t, l, acked, &seq)
		}
		cmd.Wait()

		b, err := Open(dir)
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		verifyAcked(t, b, acked, round)
		b.Close()
	}
	if len(acked) < 100 {
		t.Fatalf("only %d records acknowledged over %d rounds", len(acked), rounds)
	}
	t.Logf("%d acknowledged records survived %d kills", len(acked), rounds)
}

func recordAck(t *testing.T, line string, acked map[[2]int64]string, seq *int) {
	var p, off int64
	var val, end string
	if !strings.HasSuffix(line, " ok") {
		return // cut short by the kill: the write of the line was torn
	}
	if _, err := fmt.Sscanf(line, "%d %d %s %s", &p, &off, &val, &end); err != nil {
		t.Fatalf("child said %q", line)
	}
	acked[[2]int64{p, off}] = val
	*seq++
}

func verifyAcked(t *testing.T, b *Broker, acked map[[2]int64]string, round int) {
	t.Helper()
	infos, err := b.DescribeTopics(ctx, "crash")
	if err != nil {
		if len(acked) == 0 {
			return
		}
		t.Fatalf("round %d: %v", round, err)
	}
	found := 0
	for _, pi := range infos[0].Partitions {
		recs := readAll(t, b, "crash", pi.Partition)
		for i, r := range recs {
			if r.Offset != int64(i) {
				t.Fatalf("round %d: partition %d offsets not dense at %d: %d", round, pi.Partition, i, r.Offset)
			}
			if want, ok := acked[[2]int64{int64(pi.Partition), r.Offset}]; ok {
				if string(r.Value) != want {
					t.Fatalf("round %d: %d/%d is %q, acknowledged %q", round, pi.Partition, r.Offset, r.Value, want)
				}
				found++
			}
		}
	}
	if found != len(acked) {
		t.Fatalf("round %d: %d of %d acknowledged records present", round, found, len(acked))
	}
}

// TestRecoveryRandomTruncation cuts and corrupts the last segment's tail at
// random byte positions: recovery must never fail or panic, and must keep
// exactly the batches that lie wholly before the damage.
func TestRecoveryRandomTruncation(t *testing.T) {
	src := t.TempDir()
	b, err := Open(src, WithTopicDefaults(broker.TopicConfig{Partitions: 1}))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		b.Produce(ctx, "t", makeRecords(1+rand.IntN(20), i*20))
	}
	b.Close()
	seg := segmentName(partitionDir(src, "t", 0), 0, ".log")
	orig, _ := os.ReadFile(seg)
	var ends []int // byte position after each batch, and records up to it
	var counts []int
	total := 0
	recordbatch.Split(orig, func(h *recordbatch.Header, batch []byte) error {
		total += int(h.NumRecords)
		ends = append(ends, len(ends)) // placeholder, fixed below
		counts = append(counts, total)
		return nil
	})
	pos := 0
	for i := range ends {
		h, _ := recordbatch.ParseHeader(orig[pos:])
		pos += h.Size()
		ends[i] = pos
	}
	for round := 0; round < 60; round++ {
		dir := t.TempDir()
		copyTree(t, src, dir)
		os.Remove(filepath.Join(dir, ".clean_shutdown"))
		cut := rand.IntN(len(orig))
		data := append([]byte(nil), orig[:cut]...)
		if round%2 == 1 {
			// Garbage after the cut, as a torn write may leave.
			junk := make([]byte, rand.IntN(500))
			for i := range junk {
				junk[i] = byte(rand.IntN(256))
			}
			data = append(data, junk...)
		}
		os.WriteFile(segmentName(partitionDir(dir, "t", 0), 0, ".log"), data, 0o644)
		want := 0
		for i, e := range ends {
			if e <= cut {
				want = counts[i]
			}
		}
		b, err := Open(dir)
		if err != nil {
			t.Fatalf("cut at %d: open: %v", cut, err)
		}
		got := readAll(t, b, "t", 0)
		b.Close()
		if len(got) != want {
			t.Fatalf("cut at %d: %d records, want %d", cut, len(got), want)
		}
	}
}

func copyTree(t testing.TB, from, to string) {
	filepath.Walk(from, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// FuzzRecoverSegment recovers arbitrary bytes as a segment: no panic, and
// what survives is a valid, densely numbered prefix of the input.
func FuzzRecoverSegment(f *testing.F) {
	var e recordbatch.Encoder
	e.Reset(-1, -1, -1)
	e.Append([]byte("k"), []byte("v"), nil, 1)
	one := append([]byte(nil), e.Finish(0)...)
	two := append(append([]byte(nil), one...), e.Finish(1)...)
	f.Add(one)
	f.Add(two)
	f.Add(two[:len(two)-3])
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(segmentName(dir, 0, ".log"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := openSegment(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer s.release()
		if _, err := s.recoverSegment(0, 0, 64, nil); err != nil {
			t.Fatal(err)
		}
		kept := data[:s.size.Load()]
		next := int64(0)
		if _, err := recordbatch.Split(kept, func(h *recordbatch.Header, _ []byte) error {
			if h.BaseOffset != next {
				return fmt.Errorf("offset %d, want %d", h.BaseOffset, next)
			}
			next = h.LastOffset() + 1
			return nil
		}); err != nil {
			t.Fatalf("recovered prefix invalid: %v", err)
		}
		if next != s.next.Load() {
			t.Fatalf("next %d, want %d", s.next.Load(), next)
		}
		if st, _ := os.Stat(segmentName(dir, 0, ".log")); st.Size() != s.size.Load() {
			t.Fatalf("file is %d bytes, recovered %d", st.Size(), s.size.Load())
		}
		// Nothing sound is cut: input that is all valid batches,
		// densely numbered from 0, is kept whole.
		dense := int64(0)
		if n, err := recordbatch.Split(data, func(h *recordbatch.Header, _ []byte) error {
			if h.BaseOffset != dense {
				return fmt.Errorf("offset %d", h.BaseOffset)
			}
			dense = h.LastOffset() + 1
			return nil
		}); err == nil && n == len(data) && s.size.Load() != int64(len(data)) {
			t.Fatalf("valid segment of %d bytes recovered to %d", len(data), s.size.Load())
		}
	})
}
