package sinks_test

import (
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/weirnet/weir/sinks"
)

// TestRetryReasonOfFileErrors: a file sink whose volume went read-only (a
// file system remounted after errors) or whose directory it may not write
// (a chown, a volume mounted with other owners) was counted as "error",
// like any failure; the reason says which, as no_space does for a full
// disk, so /metrics tells an operator what to fix.
func TestRetryReasonOfFileErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{syscall.ENOSPC, "no_space"},
		{syscall.EROFS, "read_only"},
		{syscall.EACCES, "permission"},
		{syscall.EPERM, "permission"},
	} {
		err := &sinks.RetryableError{Err: fmt.Errorf("file sink: %w", &fs.PathError{Op: "open", Path: "/var/lib/weir/events.jsonl", Err: tc.err})}
		if got := sinks.RetryReason(err); got != tc.want {
			t.Errorf("RetryReason(%v) = %q, want %q", err, got, tc.want)
		}
	}
}
