package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// untilReaderGone is ctx, ended when the reader of stdout goes away
// (`weir consume T | head -1`), so that a consume stops as on Ctrl-C
// (a group member commits what it printed and leaves) instead of going on
// until its next write, which SIGPIPE would kill. While it runs, a write
// to the closed pipe fails with EPIPE instead of killing the process (the
// consume then ends as well: see writeError). SIGPIPE itself tells
// nothing: a write to a broker connection reset raises it too.
// stop ends the watch.
func untilReaderGone(ctx context.Context, stdout io.Writer) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	// Notified, SIGPIPE no longer kills; the channel is never read (a
	// signal for a full channel is dropped).
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	stopPoll := func() {}
	switch f := stdout.(type) {
	case *os.File:
		stopPoll = watchReaderGone(f, cancel)
	case *checkedStdout:
		stopPoll = watchReaderGone(f.f, cancel)
	}
	return ctx, func() {
		stopPoll()
		cancel()
		signal.Stop(sigpipe)
	}
}
