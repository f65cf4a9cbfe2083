package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestConsumeGroupFollowSurvivesBrokerRestart: as the README says of
// `weir consume`, a broker that stops while it follows is reported, and it
// goes on where it was, with --group too (it exited 1 with "unable to join
// group session: UNKNOWN_MEMBER_ID").
func TestConsumeGroupFollowSurvivesBrokerRestart(t *testing.T) {
	dir := t.TempDir()
	p := startWeir(t, dir)
	addr := p.KafkaAddr
	if _, errOut, err := p.cli(t, "one\n", "produce", "follow.group"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	out, errb, exited := startCLI(t, "consume", "follow.group", "--group", "g", "--from-beginning", "--follow", "--brokers", addr)
	waitText(t, out, `"value":"one"`)
	p.Stop(t)
	time.Sleep(2 * time.Second)
	p2 := startWeir(t, dir, "--kafka-listen", addr)
	time.Sleep(3 * time.Second)
	if _, errOut, err := p2.cli(t, "two\n", "produce", "follow.group"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	select {
	case err := <-exited:
		exited <- err
		t.Fatalf("consume --group --follow exited (%v) across a broker restart:\nstdout %s\nstderr %s", err, out.String(), errb.String())
	case <-time.After(100 * time.Millisecond):
	}
	waitText(t, out, `"value":"two"`)
}

// TestConsumeGroupFollowGoesOnWhereItWasAfterRestart: what a group member
// printed is the group's across a broker restart. The embedded broker
// forgets the group's members when it restarts, so the member joins again
// and starts at the group's commit; franz-go commits marked records only
// every 5 s, so a restart within that time sent it back to the reset
// position: the log start with --from-beginning (everything printed
// again), the end without (what was not printed yet, never printed).
func TestConsumeGroupFollowGoesOnWhereItWasAfterRestart(t *testing.T) {
	dir := t.TempDir()
	p := startWeir(t, dir)
	addr := p.KafkaAddr
	if _, errOut, err := p.cli(t, "one\n", "produce", "follow.again"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	out, errb, _ := startCLI(t, "consume", "follow.again", "--group", "g", "--from-beginning", "--follow", "--brokers", addr)
	waitText(t, out, `"value":"one"`)
	p.Stop(t)
	p2 := startWeir(t, dir, "--kafka-listen", addr)
	time.Sleep(3 * time.Second)
	if _, errOut, err := p2.cli(t, "two\n", "produce", "follow.again"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	waitText(t, out, `"value":"two"`)
	time.Sleep(500 * time.Millisecond)
	if n := strings.Count(out.String(), `"value":"one"`); n != 1 {
		t.Fatalf("\"one\" printed %d times across the restart:\n%s\nstderr %s", n, out.String(), errb.String())
	}
}

// startCLI runs weir with args in the background, as a user leaves
// `weir consume --follow` running: its stdout, its stderr, and its exit
// (receive from it, then send it back: the cleanup kills the process and
// waits for that).
func startCLI(t *testing.T, args ...string) (out, errb *syncbuf.Buffer, exited chan error) {
	t.Helper()
	cmd := exec.Command(weirBin, args...)
	out, errb = &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	return out, errb, exited
}
