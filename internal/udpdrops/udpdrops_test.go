package udpdrops

import (
	"context"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestCountsWhatTheKernelDropped: a socket with a small receive buffer
// that nobody reads drops a burst; the watcher reports the drops the
// kernel counted, and none from before it started.
func TestCountsWhatTheKernelDropped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/net/udp is Linux's")
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadBuffer(4096) // the kernel doubles it, and keeps a floor
	send := func(n int) {
		out, err := net.DialUDP("udp", nil, conn.LocalAddr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		payload := make([]byte, 1000)
		for range n {
			out.Write(payload)
		}
	}
	send(2000)
	w := New(conn)
	if len(w.inodes) != 1 {
		t.Fatalf("inodes %v", w.inodes)
	}
	before, ok := Dropped(w.inodes)
	if !ok || before == 0 {
		t.Fatalf("the kernel dropped %d of 2,000 datagrams into a 4 KiB buffer (found %v)", before, ok)
	}
	var reported atomic.Uint64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx, 20*time.Millisecond, func(n uint64) { reported.Add(n) }); close(done) }()
	time.Sleep(100 * time.Millisecond) // Run took the count before as its start
	send(2000)
	// The watcher catches up with the kernel's count within a few ticks
	// (which may go on counting the burst a moment after send returns).
	var after uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		after, _ = Dropped(w.inodes)
		if after > before && reported.Load() == after-before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reported %d, the kernel counted %d since the watcher started", reported.Load(), after-before)
		}
	}
	cancel()
	<-done
}
