package main

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// watchReaderGone calls gone when f, a pipe or socket, has no reader any
// more (poll reports POLLERR or POLLHUP on it, as GNU tail -f checks),
// without writing to it: a consume following an idle topic sees that
// too. stop ends the watch.
func watchReaderGone(f *os.File, gone func()) (stop func()) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return func() {}
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return func() {}
	}
	var fd int
	if err := sc.Control(func(u uintptr) { fd = int(u) }); err != nil {
		return func() {}
	}
	// Closing wake's write end wakes the poll for stop.
	wakeR, wakeW, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	wfd := int(wakeR.Fd())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			// Events 0: only the errors poll always reports.
			fds := []unix.PollFd{{Fd: int32(fd)}, {Fd: int32(wfd), Events: unix.POLLIN}}
			_, err := unix.Poll(fds, -1)
			switch {
			case errors.Is(err, syscall.EINTR):
				continue
			case err != nil, fds[1].Revents != 0:
				return
			case fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
				gone()
				return
			}
		}
	}()
	return func() {
		wakeW.Close()
		<-done
		wakeR.Close()
	}
}
