package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/peers"
)

// TestUnreachableBroker: the groups and topics commands against a
// broker that is not there say why, as the other commands do, without
// franz-go's "request ListGroups has 1 separate shard errors, first:" in
// front.
func TestUnreachableBroker(t *testing.T) {
	addr := peers.FreeAddr(t)
	for _, args := range [][]string{
		{"groups", "list", "--brokers", addr},
		{"groups", "describe", "g", "--brokers", addr},
		{"groups", "delete", "g", "--brokers", addr},
		{"groups", "reset", "g", "--all-topics", "--to-earliest", "--brokers", addr},
		{"topics", "alter", "t", "--retention", "1h", "--brokers", addr},
		{"topics", "describe", "t", "--brokers", addr},
		{"topics", "list", "--brokers", addr},
		{"topics", "create", "t", "--brokers", addr},
		{"topics", "delete", "t", "--brokers", addr},
		{"consume", "t", "--brokers", addr},
	} {
		var stdout, stderr bytes.Buffer
		err := dispatch(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		if err == nil || exitCode(err) != 1 {
			t.Fatalf("%v: %v (exit %d), want exit 1", args, err, exitCode(err))
		}
		msg := err.Error()
		if strings.Contains(msg, "shard errors") || !strings.Contains(msg, "connection refused") || !strings.Contains(msg, addr) {
			t.Errorf("%v: %q: want the dial error alone", args, msg)
		}
	}
}
