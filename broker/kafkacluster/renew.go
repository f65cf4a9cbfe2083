package kafkacluster

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/internal/kafkalimits"
)

// limitedClient is a franz-go client with the batch limits it took per
// topic. franz-go asks a topic's limit once, when it first produces to a
// partition (kgo.ProducerBatchMaxBytesFn), so a topic whose
// max.message.bytes is lowered on the cluster later gets batches over it,
// refused whole (MESSAGE_TOO_LARGE) however small their records: the
// client has to be replaced by one that asks again.
type limitedClient struct {
	*kgo.Client
	taken kafkalimits.Taken
}

// newLimitedClient makes a client with opts whose batch limits are limits'.
func newLimitedClient(limits *kafkalimits.Limits, opts []kgo.Opt) (*limitedClient, error) {
	lc := new(limitedClient)
	cl, err := kgo.NewClient(append(opts, kgo.ProducerBatchMaxBytesFn(limits.BatchFn(&lc.taken)))...)
	if err != nil {
		return nil, err
	}
	lc.Client = cl
	return lc, nil
}

// renewable is a limitedClient that is replaced when a topic's limit goes
// down under the one it took. The one replaced is closed once what it
// holds is sent, or after retireWait.
type renewable struct {
	limits *kafkalimits.Limits
	opts   []kgo.Opt

	mu      sync.Mutex
	cur     *limitedClient
	retired sync.WaitGroup
	closing chan struct{} // closed by close
}

// retireWait bounds how long a replaced client may take to send what it
// holds.
const retireWait = 30 * time.Second

func newRenewable(limits *kafkalimits.Limits, opts []kgo.Opt) (*renewable, error) {
	lc, err := newLimitedClient(limits, opts)
	if err != nil {
		return nil, err
	}
	return &renewable{limits: limits, opts: opts, cur: lc, closing: make(chan struct{})}, nil
}

// client is the current client.
func (r *renewable) client() *limitedClient {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// renew replaces old, if it is still the current client and fills batches
// for topic over the topic's limit now, and returns the current client;
// false if there is no better one than old.
func (r *renewable) renew(old *limitedClient, topic string, logger *slog.Logger) (*limitedClient, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != old {
		return r.cur, true // another call renewed it
	}
	if !r.limits.Stale(&old.taken, topic) {
		return old, false
	}
	lc, err := newLimitedClient(r.limits, r.opts)
	if err != nil {
		return old, false
	}
	logger.Warn("kafka: a topic's max.message.bytes went down under the producer's batches; producing with a new client",
		slog.String("topic", topic), slog.Int("batch_limit", int(r.limits.Batch(topic))))
	r.cur = lc
	r.retired.Add(1)
	go func() {
		defer r.retired.Done()
		ctx, cancel := context.WithTimeout(context.Background(), retireWait)
		defer cancel()
		go func() {
			select {
			case <-r.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		_ = old.Flush(ctx)
		old.Close()
	}()
	return lc, true
}

// replaced returns the client that replaced old, if one did and r is not
// closed: a call that took old just before the replacement finds it
// closed, and goes on with the new one.
func (r *renewable) replaced(old *limitedClient) (*limitedClient, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.closing:
		return old, false
	default:
	}
	return r.cur, r.cur != old
}

// close closes the current client and, at once, the replaced ones.
func (r *renewable) close() {
	r.mu.Lock()
	select {
	case <-r.closing: // closed before: Close called twice
	default:
		close(r.closing)
	}
	cur := r.cur
	r.mu.Unlock()
	r.retired.Wait()
	cur.Close()
}
