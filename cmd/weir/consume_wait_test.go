package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestConsumeFollowWaitsForTopic: following a topic not made yet
// (dead.letter before any sink has started, a topic a producer makes with
// its first record) waits for it, saying so once, and prints its records
// from its first, in a group too; without following it is an error, and
// dead.letter's says why it may not be there: no sink has started (sinks
// make it when they start, not with their first dead letter, as it said).
func TestConsumeFollowWaitsForTopic(t *testing.T) {
	t.Parallel() // it waits on the consumers' metadata refreshes, on a weir of its own
	p := startWeir(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, tc := range []struct{ topic, group string }{{"later", ""}, {"later-grouped", "dash"}} {
		args := []string{"consume", tc.topic, "--follow", "--max", "1", "--brokers", p.KafkaAddr}
		if tc.group != "" {
			args = append(args, "--group", tc.group)
		}
		var out, errs syncbuf.Buffer
		cmd := exec.CommandContext(ctx, weirBin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		for !strings.Contains(errs.String(), "waiting") {
			select {
			case err := <-done:
				t.Fatalf("%v of a topic not made yet ended: %v\n%s", args, err, errs.String())
			case <-ctx.Done():
				t.Fatalf("%v never said it waits:\n%s", args, errs.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		if _, e, err := p.cli(t, `{"n":1}`+"\n", "produce", tc.topic); err != nil {
			t.Fatal(err, e)
		}
		if err := <-done; err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errs.String())
		}
		if !strings.Contains(out.String(), `"value":{"n":1}`) {
			t.Errorf("%v: the first record of the topic made meanwhile was not printed:\n%s", args, out.String())
		}
	}

	_, e, err := p.cli(t, "", "consume", "dead.letter", "--from-beginning")
	if err == nil || !strings.Contains(e, "no such topic") || !strings.Contains(e, "when they start") || strings.Contains(e, "first record") {
		t.Errorf("consume dead.letter before any sink started: %v, %q", err, e)
	}
	// With --partition it does not wait, so the error does not say it would.
	_, e, err = p.cli(t, "", "consume", "later2", "--partition", "0", "--follow")
	if err == nil || !strings.Contains(e, "no such topic") || strings.Contains(e, "waits") {
		t.Errorf("consume of a topic not made yet with --partition: %v, %q", err, e)
	}
	// A Kafka internal topic weir never makes is not waited for.
	_, e, err = p.cli(t, "", "consume", "__consumer_offsets")
	if err == nil || !strings.Contains(e, "outside topics") {
		t.Errorf("consume __consumer_offsets: %v, %q", err, e)
	}
}
