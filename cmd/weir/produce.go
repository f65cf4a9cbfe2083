package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/internal/kafkalimits"
)

// produceCmd sends each line of stdin as one record.
func produceCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("weir produce [flags] TOPIC < records, one a line", stderr)
	var cf clientFlags
	cf.register(fs)
	key := fs.String("key", "", "record key (the device name, by weir's convention)")
	partition := fs.Int("partition", -1, "write to this partition instead of the key's")
	var headers multiFlag
	fs.Var(&headers, "header", "record header key=value, repeatable")
	maxLine := fs.Int("max-line-bytes", 8<<20, "longest accepted line")
	timeout := fs.Duration("timeout", 30*time.Second, "give up when the broker acknowledges nothing for this long while records wait (0: wait for ever)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &exitError{2, errors.New("produce: give one topic")}
	}
	topic := pos[0]
	if *maxLine < 1 {
		return &exitError{2, errors.New("produce: --max-line-bytes must be positive")}
	}
	// -1 is the flag's "not given" (the key picks); a negative value given
	// is refused, not read as that.
	if *partition < 0 && flagGiven(fs, "partition") {
		return &exitError{2, fmt.Errorf("produce: --partition %d: a partition is 0 or more (without --partition, the key picks it)", *partition)}
	}
	var hdrs []kgo.RecordHeader
	for _, h := range headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok {
			return &exitError{2, fmt.Errorf("--header %q: want key=value", h)}
		}
		hdrs = append(hdrs, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	// franz-go's default until the broker has answered, before the first
	// record (the client checks a limit when it is made).
	batchLimit := func(string) int32 { return 1_000_012 }
	opts := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation(),
		kgo.ProducerBatchMaxBytesFn(func(t string) int32 { return batchLimit(t) })}
	if *partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := cf.client(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// A broker that cannot be reached fails the command at once, as it
	// does the other commands, before stdin is read.
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	err = cl.Ping(pctx)
	cancel()
	if err != nil {
		return fmt.Errorf("produce to %s: %w", topic, err)
	}
	// The idempotent producer's id is asked for before stdin is read: a
	// refusal for good (a user that may not write) fails the command at
	// once. Left to the first record, franz-go may miss failing it (a
	// record of a topic new to the client, buffered before the client
	// stores the topic's partitions) and the command waits --timeout.
	pctx, cancel = context.WithTimeout(ctx, 15*time.Second)
	_, _, err = cl.ProducerID(pctx)
	cancel()
	if ke := (*kerr.Error)(nil); errors.As(err, &ke) && !ke.Retriable {
		return fmt.Errorf("produce to %s: %w", topic, mayNotWrite(err))
	}
	lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	batchLimit = produceBatchLimit(lctx, kadm.NewClient(cl), topic, *maxLine)
	cancel()
	if *partition >= 0 {
		// A partition the topic does not have fails the command before
		// stdin is read, as `weir consume --partition` does; a topic not
		// there yet is left to the broker (created on first use, or not).
		lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		md, err := kadm.NewClient(cl).ListTopics(lctx, topic)
		cancel()
		if td, ok := md[topic]; err == nil && ok && td.Err == nil && *partition >= len(td.Partitions) {
			return fmt.Errorf("produce to %s: no partition %d (%s has %d partitions, 0 to %d)", topic, *partition, topic, len(td.Partitions), len(td.Partitions)-1)
		}
	}

	var (
		mu       sync.Mutex
		firstErr error
		sent     int
		acked    int
		answered int       // acked or failed
		progress time.Time // when the broker last answered, or the first record since went out
	)
	// franz-go retries an idempotent producer's records for as long as
	// the broker cannot be reached (kgo.RecordDeliveryTimeout does not
	// cut those short), so a broker that stops while records wait would
	// leave the command hanging. stalled gives up on them instead.
	pctx, stalled := context.WithCancelCause(ctx)
	defer stalled(nil)
	if *timeout > 0 {
		go func() {
			tick := time.NewTicker(max(min(*timeout/4, time.Second), time.Millisecond))
			defer tick.Stop()
			for {
				select {
				case <-pctx.Done():
					return
				case <-tick.C:
				}
				mu.Lock()
				stuck := sent > answered && time.Since(progress) > *timeout
				mu.Unlock()
				if stuck {
					stalled(fmt.Errorf("produce to %s: no answer from the broker for %s (unreachable, or refusing with an error Kafka calls temporary, such as a full disk: see the broker's log)", topic, *timeout))
					return
				}
			}
		}()
	}
	// stdin is read on its own goroutine, so that giving up (a stalled
	// broker, Ctrl-C) does not wait for the next line: stdin may be a
	// terminal or a pipe that stays open (tail -f). The reader ends at
	// the next line or at EOF once this returns.
	lines := make(chan []byte, 64)
	var scanErr error // set before lines is closed
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		// The scanner's bound (the larger of the buffer's size and
		// max) counts the line's end too: room for "\r\n" past
		// maxLine, and the line itself is held to maxLine below.
		bound := min(*maxLine, math.MaxInt-2) + 2
		sc.Buffer(make([]byte, min(64<<10, bound)), bound)
		n := 0
		for sc.Scan() {
			if len(sc.Bytes()) > *maxLine {
				scanErr = bufio.ErrTooLong
				break
			}
			n++
			select {
			// []byte{}: an empty line is an empty value, not a null
			// one (Kafka's tombstone), as kcat -P sends it.
			case lines <- append([]byte{}, sc.Bytes()...):
			case <-pctx.Done():
				return
			}
		}
		if scanErr == nil {
			scanErr = sc.Err()
		}
		if errors.Is(scanErr, bufio.ErrTooLong) {
			// bufio's "token too long" names neither the line nor the
			// flag that bounds it.
			scanErr = fmt.Errorf("line %d is longer than --max-line-bytes (%d); the lines before it were sent", n+1, *maxLine)
		}
	}()
	stdinDone := false
read:
	for {
		var line []byte
		select {
		case <-pctx.Done():
			break read
		case l, ok := <-lines:
			if !ok {
				stdinDone = true
				break read
			}
			line = l
		}
		r := &kgo.Record{Value: line, Headers: hdrs}
		if *key != "" {
			r.Key = []byte(*key)
		}
		if *partition >= 0 {
			r.Partition = int32(*partition)
		}
		mu.Lock()
		if sent == answered {
			progress = time.Now()
		}
		sent++
		mu.Unlock()
		cl.Produce(pctx, r, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				if errors.Is(err, kerr.UnknownTopicOrPartition) {
					// The broker does not create topics on first use
					// (auto.create.topics.enable false on a Kafka
					// cluster, broker.auto_create_topics on weir's),
					// or not for this user (a read_only one on weir's).
					err = fmt.Errorf("no such topic, and the broker did not create it: it does not create topics on first use, or not for this user (create it: weir topics create %s): %w", topic, err)
				}
				firstErr = fmt.Errorf("produce to %s: %w", topic, mayNotWrite(err))
			}
			if err == nil {
				acked++
			}
			answered++
			progress = time.Now()
		})
	}
	flushErr := cl.Flush(pctx)
	if cause := context.Cause(pctx); ctx.Err() == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		mu.Lock()
		fmt.Fprintf(stderr, "produced %d of %d records to %s\n", acked, sent, topic)
		mu.Unlock()
		return cause
	}
	if flushErr != nil {
		return flushErr
	}
	if !stdinDone {
		return pctx.Err() // interrupted
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(stderr, "produced %d of %d records to %s\n", acked, sent, topic)
	if scanErr != nil {
		return fmt.Errorf("reading stdin: %w", scanErr)
	}
	return firstErr
}

// produceBatchLimit is how large a batch the producer may fill, by topic.
// franz-go's own default (1,000,012 bytes, within Kafka's default
// message.max.bytes) refused every line longer than that, whatever the
// broker takes. Where the broker says what it takes (message.max.bytes:
// weir's listener and Kafka do), a batch may hold a line of maxLine bytes
// with its key and headers within that, and within the topic's
// max.message.bytes if lower; a batch above them would be refused whole,
// small records and all. Where it does not say (describing configs is
// not allowed), franz-go's default stays.
func produceBatchLimit(ctx context.Context, adm *kadm.Client, topic string, maxLine int) func(string) int32 {
	limit := int32(1_000_012)
	if n, ok := kafkalimits.BrokerLimit(ctx, adm); ok {
		limit = int32(min(int64(maxLine)+64<<10, int64(n), 96<<20)) // franz-go's writes stop at 100 MiB
	}
	limits := kafkalimits.New(limit)
	limits.Learn(ctx, adm, topic)
	return limits.Batch
}

// mayNotWrite says what an authorization refusal means: an idempotent
// producer's first request is refused CLUSTER_AUTHORIZATION_FAILED, which
// says no more.
func mayNotWrite(err error) error {
	if !errors.Is(err, kerr.ClusterAuthorizationFailed) && !errors.Is(err, kerr.TopicAuthorizationFailed) {
		return err
	}
	return fmt.Errorf("the user may not write here (on weir, a read_only user of broker.kafka_sasl; on Kafka, no WRITE or IDEMPOTENT_WRITE ACL): %w", err)
}
