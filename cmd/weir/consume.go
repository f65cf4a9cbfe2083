package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumedRecord is what consume prints, one JSON object per line, so the
// output pipes into jq.
type consumedRecord struct {
	Topic     string            `json:"topic"`
	Partition int32             `json:"partition"`
	Offset    int64             `json:"offset"`
	Timestamp time.Time         `json:"timestamp"`
	Key       *string           `json:"key"`
	Value     json.RawMessage   `json:"value"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// consumeCmd prints records of a topic. With --from-beginning (or --offset)
// it reads to the end and exits unless --follow; without either it starts
// at the end and follows, like tail -f.
func consumeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("weir consume", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clientFlags
	cf.register(fs)
	fromBeginning := fs.Bool("from-beginning", false, "start at the oldest retained record")
	follow := fs.Bool("follow", false, "keep waiting for new records at the end")
	fs.BoolVar(follow, "f", false, "shorthand for --follow")
	maxRecs := fs.Int("max", 0, "exit after this many records (0: no limit)")
	partition := fs.Int("partition", -1, "read only this partition")
	offset := fs.Int64("offset", -1, "start at this offset (needs --partition)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &exitError{2, errors.New("consume: give one topic")}
	}
	topic := pos[0]
	if *offset >= 0 && *partition < 0 {
		return &exitError{2, errors.New("consume: --offset needs --partition")}
	}
	if !*fromBeginning && *offset < 0 {
		*follow = true
	}

	adm, admCl, err := cf.admin()
	if err != nil {
		return err
	}
	defer admCl.Close()
	mctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	details, err := adm.ListTopics(mctx, topic)
	if err != nil {
		return fmt.Errorf("consume %s: %w", topic, err)
	}
	td, ok := details[topic]
	if !ok || td.Err != nil {
		return fmt.Errorf("consume %s: no such topic", topic)
	}
	ends, err := adm.ListEndOffsets(mctx, topic)
	if err != nil {
		return fmt.Errorf("consume %s: end offsets: %w", topic, err)
	}

	start := kgo.NewOffset().AtEnd()
	if *fromBeginning {
		start = kgo.NewOffset().AtStart()
	}
	assign := map[int32]kgo.Offset{}
	remaining := map[int32]int64{} // partition -> end offset still to reach
	for p := range td.Partitions {
		if *partition >= 0 && p != int32(*partition) {
			continue
		}
		o := start
		if *offset >= 0 {
			o = kgo.NewOffset().At(*offset)
		}
		assign[p] = o
		if e, ok := ends.Lookup(topic, p); ok {
			remaining[p] = e.Offset
		}
	}
	if len(assign) == 0 {
		return fmt.Errorf("consume %s: no partition %d", topic, *partition)
	}
	cl, err := cf.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}))
	if err != nil {
		return err
	}
	defer cl.Close()

	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	// Without --follow, partitions already at their end are done.
	if !*follow {
		for p, end := range remaining {
			if *offset >= end {
				delete(remaining, p)
			}
		}
		if *fromBeginning {
			starts, err := adm.ListStartOffsets(mctx, topic)
			if err == nil {
				for p, end := range remaining {
					if s, ok := starts.Lookup(topic, p); ok && s.Offset >= end {
						delete(remaining, p)
					}
				}
			}
		}
	}
	count := 0
	for *follow || len(remaining) > 0 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fetchErr error
		fetches.EachError(func(t string, p int32, err error) {
			if fetchErr == nil {
				fetchErr = fmt.Errorf("consume %s/%d: %w", t, p, err)
			}
		})
		if fetchErr != nil {
			return fetchErr
		}
		stop := false
		fetches.EachRecord(func(r *kgo.Record) {
			if stop {
				return
			}
			if err := enc.Encode(toConsumed(r)); err != nil {
				stop = true
				return
			}
			count++
			if end, ok := remaining[r.Partition]; ok && !*follow && r.Offset+1 >= end {
				delete(remaining, r.Partition)
			}
			if *maxRecs > 0 && count >= *maxRecs {
				stop = true
			}
		})
		w.Flush()
		if stop {
			return nil
		}
	}
	return nil
}

func toConsumed(r *kgo.Record) consumedRecord {
	c := consumedRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp}
	if r.Key != nil {
		k := string(r.Key)
		c.Key = &k
	}
	c.Value = jsonValue(r.Value)
	if len(r.Headers) > 0 {
		c.Headers = make(map[string]string, len(r.Headers))
		for _, h := range r.Headers {
			c.Headers[h.Key] = string(h.Value)
		}
	}
	return c
}

// jsonValue inlines a JSON value as is, so jq can reach into it; anything
// else becomes a JSON string (invalid UTF-8 replaced), null stays null.
func jsonValue(v []byte) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	if json.Valid(v) {
		return v
	}
	s := string(v)
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	b, _ := json.Marshal(s)
	return b
}
