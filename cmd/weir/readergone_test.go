package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReaderGoneNotABrokerConnection: SIGPIPE is raised by a write to any
// pipe or socket whose other end is gone, a broker connection reset (a
// broker restarting) as well as stdout's reader; taken as stdout's, it
// stopped a following consume, exit 0 and not a word.
func TestReaderGoneNotABrokerConnection(t *testing.T) {
	var out strings.Builder // stdout: a reader that stays
	ctx, stop := untilReaderGone(context.Background(), &out)
	defer stop()
	seen := make(chan os.Signal, 1)
	signal.Notify(seen, syscall.SIGPIPE)
	defer signal.Stop(seen)

	// A connection the peer resets, written to until EPIPE.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close() // RST
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := c.Write([]byte("x"))
		if errors.Is(err, syscall.EPIPE) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no EPIPE writing to a reset connection: %v", err)
		}
	}
	select {
	case <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no SIGPIPE for the EPIPE")
	}
	// Time for a watch taking it as stdout's to end ctx (a lower bound:
	// a slow machine can only miss the bug, not fail a fix).
	select {
	case <-ctx.Done():
		t.Error("a broker connection's SIGPIPE ended the consume, with its reader still there")
	case <-time.After(200 * time.Millisecond):
	}
}
