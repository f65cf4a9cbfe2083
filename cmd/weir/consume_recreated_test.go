package main

import (
	"strings"
	"testing"
	"time"
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
	out, errb, exited := startCLI(t, "consume", "rt", "--from-beginning", "--follow", "--brokers", p.KafkaAddr)
	waitText(t, out, `"value":"five"`)
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

// TestConsumeGroupFollowAcrossARecreatedTopic: `weir consume --group G
// --follow` (from the end: no --from-beginning) on a topic deleted and made
// again, or whose records retention deleted before it read them, was reset
// to the end, as a partition the group never committed starts, so it
// skipped every record the new log held when it noticed (here "six"): it
// reads on from the log start, as the group-less consume does.
func TestConsumeGroupFollowAcrossARecreatedTopic(t *testing.T) {
	p := startWeir(t, t.TempDir())
	if _, errOut, err := p.cli(t, "", "topics", "create", "rt", "--partitions", "1"); err != nil {
		t.Fatalf("create: %v %s", err, errOut)
	}
	out, errb, exited := startCLI(t, "consume", "rt", "--group", "g", "--follow", "--brokers", p.KafkaAddr)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), `"value":"one"`); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing printed: %s", errb.String())
		}
		if _, errOut, err := p.cli(t, "one\n", "produce", "rt"); err != nil {
			t.Fatalf("produce: %v %s", err, errOut)
		}
	}
	if _, errOut, err := p.cli(t, "two\nthree\nfour\nfive\n", "produce", "rt"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	waitText(t, out, `"value":"five"`)
	for _, args := range [][]string{{"topics", "delete", "rt"}, {"topics", "create", "rt", "--partitions", "1"}} {
		if _, errOut, err := p.cli(t, "", args...); err != nil {
			t.Fatalf("%v: %v %s", args, err, errOut)
		}
	}
	if _, errOut, err := p.cli(t, "six\nseven\n", "produce", "rt"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	deadline := time.After(15 * time.Second)
	for !strings.Contains(out.String(), `"value":"six"`) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("consume --group --follow exited (%v) on a topic made again:\nstdout %s\nstderr %s", err, out.String(), errb.String())
		case <-deadline:
			t.Fatalf("the new topic's first record not printed:\nstdout %s\nstderr %s", out.String(), errb.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
