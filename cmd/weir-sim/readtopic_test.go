package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReadTopicEndsAtTheEndAfterRetention: --verify-brokers reads the topic
// to the end it had when the read began. With records deleted from the
// start (retention, on a log under load), it counted what it read against
// the sum of the end offsets, never got there, and read on while records
// kept coming (a run of weir-sim syslog --verify-brokers against a weir
// under load read for 17 minutes); a SIGTERM then made it spin, as it did
// not look at its context.
func TestReadTopicEndsAtTheEndAfterRetention(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "raw.syslog"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("raw.syslog"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recs := make([]*kgo.Record, 10050)
	for i := range recs {
		recs[i] = &kgo.Record{Value: []byte(strconv.Itoa(i))}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(cl).DeleteRecords(ctx, kadm.Offsets{"raw.syslog": {0: {At: 10000}}}); err != nil {
		t.Fatal(err)
	}
	go func() { // records keep coming, as on a weir under load
		for i := 0; ctx.Err() == nil; i++ {
			cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))})
			time.Sleep(10 * time.Millisecond)
		}
	}()
	done := make(chan error, 1)
	var read int
	go func() { done <- readTopic(ctx, addr, "raw.syslog", func(*kgo.Record) { read++ }) }()
	select {
	case err := <-done:
		if err != nil || read < 50 {
			t.Fatalf("read %d records, err %v; want the 50 left and those that came meanwhile", read, err)
		}
	case <-time.After(10 * time.Second):
		cancel()
		select {
		case <-done:
			t.Fatal("still reading after 10 s; it ended only when cancelled")
		case <-time.After(5 * time.Second):
			t.Fatal("still reading after 10 s, and 5 s after its context was cancelled")
		}
	}
}
