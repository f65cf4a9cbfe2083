package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// produceCmd sends each line of stdin as one record.
func produceCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weir produce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clientFlags
	cf.register(fs)
	key := fs.String("key", "", "record key (the device name, by weir's convention)")
	partition := fs.Int("partition", -1, "write to this partition instead of the key's")
	var headers multiFlag
	fs.Var(&headers, "header", "record header key=value, repeatable")
	maxLine := fs.Int("max-line-bytes", 8<<20, "longest accepted line")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &exitError{2, errors.New("produce: give one topic")}
	}
	topic := pos[0]
	var hdrs []kgo.RecordHeader
	for _, h := range headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok {
			return fmt.Errorf("--header %q: want key=value", h)
		}
		hdrs = append(hdrs, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	opts := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation()}
	if *partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := cf.client(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	var (
		mu       sync.Mutex
		firstErr error
		acked    int
	)
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), *maxLine)
	sent := 0
	for sc.Scan() {
		if ctx.Err() != nil {
			break
		}
		r := &kgo.Record{Value: append([]byte(nil), sc.Bytes()...), Headers: hdrs}
		if *key != "" {
			r.Key = []byte(*key)
		}
		if *partition >= 0 {
			r.Partition = int32(*partition)
		}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("produce to %s: %w", topic, err)
			}
			if err == nil {
				acked++
			}
		})
		sent++
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(stderr, "produced %d of %d records to %s\n", acked, sent, topic)
	return firstErr
}
