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
// to the closed pipe fails with EPIPE instead of killing the process.
// stop ends the watch.
func untilReaderGone(ctx context.Context, stdout io.Writer) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case <-sigpipe: // a write found the reader gone
			cancel()
		case <-ctx.Done():
		}
	}()
	stopPoll := func() {}
	if f, ok := stdout.(*os.File); ok {
		stopPoll = watchReaderGone(f, cancel)
	}
	return ctx, func() {
		stopPoll()
		cancel()
		<-watchDone
		signal.Stop(sigpipe)
	}
}
