package kafkawire

import (
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestIdleConnectionMemory: an idle connection holds little memory, so
// that broker.max_connections (4096) of them do not take half a GiB. Each
// once held a 64 KiB read buffer and a 64 KiB write buffer for as long as it
// stayed open.
func TestIdleConnectionMemory(t *testing.T) {
	checkIdleHeap(t, func(c *rawClient) {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 9
		c.do(md)
	})
}

// TestIdleAfterPipelining: a connection that pipelined requests, and read
// them through a large buffer, gives it back when it has caught up.
func TestIdleAfterPipelining(t *testing.T) {
	checkIdleHeap(t, func(c *rawClient) {
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 9
		// Two requests in one write: the second is buffered when the
		// first is answered.
		frame := kmsg.NewRequestFormatter().AppendRequest(nil, md, 1)
		frame = append(frame, kmsg.NewRequestFormatter().AppendRequest(nil, md, 2)...)
		if _, err := c.c.Write(frame); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := c.readFrame(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// checkIdleHeap serves 200 connections once each with serve, leaves them
// idle, and fails if each holds more than 32 KiB of heap.
func checkIdleHeap(t *testing.T, serve func(*rawClient)) {
	t.Helper()
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl)
	const conns = 200
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // and the pool's victims
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	clients := make([]*rawClient, conns)
	for i := range clients {
		clients[i] = dialRaw(t, addr)
		serve(clients[i])
	}
	per := int64(heap()-before) / conns
	t.Logf("%d bytes of heap per idle connection", per)
	if per > 32<<10 {
		t.Errorf("an idle connection holds %d bytes of heap, want at most %d", per, 32<<10)
	}
}
