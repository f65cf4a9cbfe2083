package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestNegativePositionsRefused: a negative --offset, --partition or --max
// is a usage error naming the flag. They were taken for "not given" (the
// flags' defaults are -1 and 0), so `weir consume t --partition 1 --offset
// -5`, written as kcat's "5 from the end", followed the partition's end
// without a word, and `--partition -3` read every partition.
func TestNegativePositionsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"consume", "t", "--partition", "1", "--offset", "-5"}, "--offset"},
		{[]string{"consume", "t", "--partition", "-3", "--from-beginning"}, "--partition"},
		{[]string{"consume", "t", "--from-beginning", "--max", "-1"}, "--max"},
		{[]string{"produce", "t", "--partition", "-2"}, "--partition"},
	} {
		var stdout, stderr bytes.Buffer
		err := dispatch(ctx, append(tc.args, "--brokers", "127.0.0.1:1"), strings.NewReader("x\n"), &stdout, &stderr)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("weir %s: %v (exit %d); want a usage error naming %s", strings.Join(tc.args, " "), err, exitCode(err), tc.want)
		}
	}
}
