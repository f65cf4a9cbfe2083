package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumeToTheEndSaysNothingOfClosing: `weir consume T --from-beginning`
// that read to the end (here of an empty topic) and closed its client
// printed "weir: cannot reach broker ...: client closed (retrying)" (or
// "...: operation was canceled (retrying)") on most runs, and exited 0:
// franz-go reports the dials its own Close cuts short to the connection
// hook, which took them for a broker out of reach.
func TestConsumeToTheEndSaysNothingOfClosing(t *testing.T) {
	p := startWeir(t, t.TempDir())
	if _, errOut, err := p.cli(t, "", "topics", "create", "empty", "--partitions", "6"); err != nil {
		t.Fatalf("create: %v %s", err, errOut)
	}
	for i := range 10 {
		out, errOut, err := p.cli(t, "", "consume", "empty", "--from-beginning")
		if err != nil || out != "" || errOut != "" {
			t.Fatalf("run %d: consume of an empty topic to its end: err %v, stdout %q, stderr %q", i, err, out, errOut)
		}
	}
}

// TestConnReporterIgnoresClosing: the connection hook sees the dials the
// client's own Close ends; they say nothing of the broker.
func TestConnReporterIgnoresClosing(t *testing.T) {
	var b strings.Builder
	r := &connReporter{w: &b, down: map[string]bool{}}
	meta := kgo.BrokerMetadata{Host: "127.0.0.1", Port: 9092}
	for _, err := range []error{
		fmt.Errorf("unable to dial: %w", kgo.ErrClientClosed),
		fmt.Errorf("unable to dial: %w", &net.OpError{Op: "dial", Net: "tcp", Err: context.Canceled}),
	} {
		r.OnBrokerConnect(meta, 0, nil, err)
	}
	if b.Len() != 0 {
		t.Errorf("dials ended by the client's Close reported: %q", b.String())
	}
	r.OnBrokerConnect(meta, 0, nil, fmt.Errorf("unable to dial: %w", errors.New("connect: connection refused")))
	if !strings.Contains(b.String(), "cannot reach broker 127.0.0.1:9092") {
		t.Errorf("a refused connection not reported: %q", b.String())
	}
}
