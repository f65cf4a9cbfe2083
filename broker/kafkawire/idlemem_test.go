package kafkawire

import (
	"runtime"
	"strings"
	"testing"
	"time"

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
	before := heapInuse()
	clients := make([]*rawClient, conns)
	for i := range clients {
		clients[i] = dialRaw(t, addr)
		serve(clients[i])
	}
	per := int64(heapInuse()-before) / conns
	t.Logf("%d bytes of heap per idle connection", per)
	if per > 32<<10 {
		t.Errorf("an idle connection holds %d bytes of heap, want at most %d", per, 32<<10)
	}
}

// TestCaughtUpConsumerMemory: a consumer that read a backlog in large
// fetches and caught up gives back the buffers they grew once its fetches
// have stayed small for a while. Each connection kept them (up to 8 MiB
// each for the batches and the response) for as long as it was open.
func TestCaughtUpConsumerMemory(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl, func(c *config) { c.grownIdle = 50 * time.Millisecond })
	values := make([]string, 1000)
	for i := range values {
		values[i] = strings.Repeat("x", 1000)
	}
	p := dialRaw(t, addr)
	for range 2 {
		p.do(produceReq(9, 1, "t", 0, batch(values...))) // 1 MB each
	}
	const conns = 20
	before := heapInuse()
	clients := make([]*rawClient, conns)
	for i := range clients {
		clients[i] = dialRaw(t, addr)
		// The backlog: a 1 MB batch.
		resp := clients[i].do(fetchReq(11, 0, 1, "t", 0, 0)).(*kmsg.FetchResponse)
		if n := len(resp.Topics[0].Partitions[0].RecordBatches); n < 1_000_000 {
			t.Fatalf("backlog fetch: %d bytes", n)
		}
	}
	held := int64(heapInuse()-before) / conns
	time.Sleep(100 * time.Millisecond)
	for _, c := range clients {
		// Caught up: a fetch at the end that finds nothing.
		c.do(fetchReq(11, 0, 0, "t", 2000, 0))
	}
	per := int64(heapInuse()-before) / conns
	t.Logf("%d bytes of heap per connection after the backlog, %d once caught up", held, per)
	if per > 64<<10 {
		t.Errorf("a caught-up consumer's connection holds %d bytes of heap, want at most %d", per, 64<<10)
	}
}

// heapInuse is the heap in use after the collections that free what a
// test let go (and the pools' victims).
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
