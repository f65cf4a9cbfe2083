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
	addr, cl := syslogCluster(t, 1)
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
	go func() {
		done <- readTopic(ctx, source{seeds: []string{addr}}, "raw.syslog", func(*kgo.Record) { read++ })
	}()
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

// TestVerifyCountsRecordsOtherWritersOvertake: with another sender writing
// to raw.syslog too (a UDP and a TCP run side by side, or devices), the log
// passed the end the run expected before the run's last records were in
// it, and those were reported lost (200 of 480,000 over TCP, none lost).
func TestVerifyCountsRecordsOtherWritersOvertake(t *testing.T) {
	addr, cl := syslogCluster(t, 2)
	ctx := context.Background()
	line := func(run string, n int) *kgo.Record {
		return &kgo.Record{Key: []byte(strconv.Itoa(n)), Value: []byte(`{"raw":"hello seq=` + run + "-" + strconv.Itoa(n) + `"}`)}
	}
	var old []*kgo.Record // an earlier run's, before the ends the run starts at
	for i := range 100 {
		old = append(old, line("r0", i))
	}
	if err := cl.ProduceSync(ctx, old...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	endsBefore, err := listOffsets(ctx, source{seeds: []string{addr}}, "raw.syslog", false)
	if err != nil {
		t.Fatal(err)
	}
	var startEnd int64
	for _, e := range endsBefore {
		startEnd += e
	}
	const sent = 100
	var recs []*kgo.Record
	for i := range sent - 10 {
		recs = append(recs, line("r1", i))
	}
	for i := range 50 { // the other sender's
		recs = append(recs, line("other", i))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	go func() { // this run's last records, still on their way
		time.Sleep(time.Second)
		var tail []*kgo.Record
		for i := sent - 10; i < sent; i++ {
			tail = append(tail, line("r1", i))
		}
		cl.ProduceSync(ctx, tail...)
	}()
	got, _, err := verifyCount(ctx, source{seeds: []string{addr}}, "raw.syslog", "r1", endsBefore, startEnd, sent)
	if err != nil || got != sent {
		t.Fatalf("counted %d of %d, err %v", got, sent, err)
	}
}

// syslogCluster is a kfake cluster with a raw.syslog of partitions
// partitions, and a client producing to it; both closed with the test.
func syslogCluster(t *testing.T, partitions int32) (string, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "raw.syslog"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	addr := c.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("raw.syslog"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return addr, cl
}
