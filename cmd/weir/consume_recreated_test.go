package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestConsumeFollowAcrossARecreatedTopic: `weir consume --follow` on a topic
// deleted and made again exited 1 with franz-go's data-loss notice ("lost
// records; the client consumed to offset 5 ... but was reset to offset
// 0"), which franz-go gives after it has already reset and goes on from. The
// notice is printed and the command goes on reading, as it does across a
// broker restart.
func TestConsumeFollowAcrossARecreatedTopic(t *testing.T) {
	p := startWeir(t, t.TempDir())
	if _, errOut, err := p.cli(t, "", "topics", "create", "rt", "--partitions", "1"); err != nil {
		t.Fatalf("create: %v %s", err, errOut)
	}
	if _, errOut, err := p.cli(t, "one\ntwo\nthree\nfour\nfive\n", "produce", "rt"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	cmd := exec.Command(weirBin, "consume", "rt", "--from-beginning", "--follow", "--brokers", p.KafkaAddr)
	var out, errb syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { cmd.Process.Kill(); <-exited }()
	waitText(t, &out, `"value":"five"`)
	for _, args := range [][]string{{"topics", "delete", "rt"}, {"topics", "create", "rt", "--partitions", "1"}} {
		if _, errOut, err := p.cli(t, "", args...); err != nil {
			t.Fatalf("%v: %v %s", args, err, errOut)
		}
	}
	if _, errOut, err := p.cli(t, "six\nseven\n", "produce", "rt"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	deadline := time.After(15 * time.Second)
	for !strings.Contains(out.String(), `"value":"seven"`) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("consume --follow exited (%v) on a topic made again:\nstdout %s\nstderr %s", err, out.String(), errb.String())
		case <-deadline:
			t.Fatalf("the new topic's records not printed:\nstdout %s\nstderr %s", out.String(), errb.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
