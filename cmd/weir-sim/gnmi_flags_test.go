package main

import (
	"context"
	"strings"
	"testing"
)

// TestGNMICountsRefused: --interfaces 0 or --neighbors 0 served the
// simulator's defaults (8 and 4) while the banner said 0: a count the
// simulator cannot serve is refused, not replaced.
func TestGNMICountsRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--interfaces", "0"},
		{"--interfaces", "-3"},
		{"--neighbors", "0"},
	} {
		// Cancelled: a simulator that starts stops at once.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := gnmiCmd(ctx, append([]string{"--host", "127.0.0.1", "--base-port", "47391"}, args...))
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: error %v, want one naming the flag", args, err)
		}
	}
}
