package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/weirnet/weir/internal/syncbuf"
)

// fullWriter takes n bytes, then fails as a full disk does.
type fullWriter struct {
	strings.Builder
	n int
}

func (w *fullWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.n {
		k := w.n - w.Len()
		w.Builder.Write(p[:k])
		return k, syscall.ENOSPC
	}
	return w.Builder.Write(p)
}

// TestConsumeWriteErrorFails: `weir consume T --from-beginning >
// /dev/full` exited 0 without a word, and with --group it committed the
// records it could not write, so the next run skipped them: a failed
// write of stdout is an error (exit 1), and the group commits only what
// was written.
func TestConsumeWriteErrorFails(t *testing.T) {
	ctx := context.Background()
	c, cl := kfakeTopic(t, 1)
	var vals []string
	for i := range 2000 {
		vals = append(vals, strings.Repeat("x", 100)+string(rune('a'+i%26)))
	}
	produceTo(ctx, t, cl, 0, vals...)
	brokers := c.ListenAddrs()[0]
	for _, group := range []string{"", "g"} {
		args := []string{"t", "--from-beginning", "--brokers", brokers}
		if group != "" {
			args = append(args, "--group", group)
		}
		out := &fullWriter{n: 10_000}
		var errOut strings.Builder
		err := consumeCmd(ctx, args, out, &errOut)
		if !errors.Is(err, syscall.ENOSPC) || exitCode(err) != 1 {
			t.Errorf("consume %v to a full disk: err %v (exit %d), want ENOSPC, exit 1", args, err, exitCode(err))
		}
		if group == "" {
			continue
		}
		written := int64(strings.Count(out.String(), "\n"))
		offs, ferr := kadm.NewClient(cl).FetchOffsets(ctx, group)
		if ferr != nil {
			t.Fatal(ferr)
		}
		o, ok := offs.Lookup("t", 0)
		if ok && o.At > written {
			t.Errorf("group committed offset %d, but only %d records were written", o.At, written)
		}
	}
}

// TestConsumeGroupReaderGone: `weir consume T --group G --follow | head -1`
// went on after head exited until the next record killed it with SIGPIPE
// (or for ever on an idle topic), and without a commit and without
// leaving the group, so the next run of the group waited for the dead
// member's session to time out (45 s) and printed again what head had.
// The reader gone, it stops as on Ctrl-C: commits, leaves, exits 0.
func TestConsumeGroupReaderGone(t *testing.T) {
	ctx := context.Background()
	c, cl := kfakeTopic(t, 3)
	produceTo(ctx, t, cl, 0, "1", "2")
	brokers := c.ListenAddrs()[0]
	for _, args := range [][]string{
		{"consume", "t", "--group", "g", "--from-beginning", "--follow", "--brokers", brokers},
		{"consume", "t", "--from-beginning", "--follow", "--brokers", brokers},
	} {
		readerGoes(t, args)
	}
	adm := kadm.NewClient(cl)
	groups, err := adm.DescribeGroups(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if g := groups["g"]; len(g.Members) != 0 {
		t.Errorf("group g still has %d member(s) after its consume ended", len(g.Members))
	}
	offs, err := adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("t", 0); !ok || o.At < 1 {
		t.Errorf("group g committed %+v for t/0; want at least the record printed", o)
	}
}

// TestConsumeWaitingStopsQuietly: Ctrl-C on a consume waiting for a topic
// not made yet printed "weir: context canceled" and exited 1; it stops as
// a following consume does, exit 0.
func TestConsumeWaitingStopsQuietly(t *testing.T) {
	c, _ := kfakeTopic(t, 1)
	for _, extra := range [][]string{nil, {"--group", "g"}} {
		args := append([]string{"not.yet", "--follow", "--brokers", c.ListenAddrs()[0]}, extra...)
		ctx, cancel := context.WithCancel(context.Background())
		var errOut syncbuf.Buffer
		done := make(chan error, 1)
		go func() { done <- consumeCmd(ctx, args, io.Discard, &errOut) }()
		for !strings.Contains(errOut.String(), "waiting") {
			time.Sleep(10 * time.Millisecond)
		}
		cancel() // Ctrl-C
		if err := <-done; err != nil {
			t.Errorf("consume %v stopped while waiting for its topic: %v; want nil (exit 0)", args, err)
		}
	}
}

// readerGoes runs weir with args, reads its first line and closes its
// stdout, as head -1 does, and checks that it exits 0 within 30 s with
// nothing on stderr.
func readerGoes(t *testing.T, args []string) {
	t.Helper()
	cmd := exec.Command(weirBin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("%v: first line: %v", args, err)
	}
	stdout.Close() // as head -1 does
	select {
	case err := <-exited:
		if err != nil || errOut.Len() != 0 {
			t.Errorf("%v with its reader gone: %v, stderr %q; want exit 0 and nothing said", args, err, errOut.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("%v still running 30 s after its reader went", args)
	}
}
