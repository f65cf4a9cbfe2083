// Package kafkadial remembers a franz-go client's failed connections (a
// kgo.HookBrokerConnect), so that what waits on a Kafka cluster (a
// produce, a sink's batch) can say why: "connection refused", a TLS or
// SASL failure, rather than only that it waits.
package kafkadial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Fresh is how long a failure to connect is taken as why a client waits:
// franz-go dials a broker it needs again within seconds, so a failure
// older than this, with no attempt since, is of a broker no longer dialled
// (a seed since decommissioned), not of the wait.
const Fresh = time.Minute

// Watch remembers, per broker address, whether the last connection
// attempt failed. The zero Watch is ready to use; hand it to the client
// with kgo.WithHooks.
type Watch struct {
	mu     sync.Mutex
	failed map[string]failure
	now    func() time.Time // time.Now if nil (tests set it)
}

type failure struct {
	err error
	at  time.Time
}

var _ kgo.HookBrokerConnect = (*Watch)(nil)

// Closing reports whether a failed dial was ended by the client's own
// Close (a client replaced, a command done with it), which franz-go passes
// to the connection hook too, rather than by the broker.
func Closing(err error) bool {
	return errors.Is(err, kgo.ErrClientClosed) || errors.Is(err, context.Canceled)
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (w *Watch) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if Closing(err) {
		return
	}
	addr := net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		delete(w.failed, addr)
		return
	}
	if w.failed == nil {
		w.failed = map[string]failure{}
	}
	w.failed[addr] = failure{err: fmt.Errorf("%s: %w", addr, err), at: w.clock()}
}

// Err is the latest of the failures to connect ("host:port: error") not
// followed by a connection to the same broker, if it is recent (Fresh),
// or nil.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last failure
	for addr, f := range w.failed {
		if w.clock().Sub(f.at) > Fresh {
			delete(w.failed, addr) // dialled no more
			continue
		}
		if f.at.After(last.at) {
			last = f
		}
	}
	return last.err
}

// Failing is how many brokers the last connection attempt to failed,
// within Fresh.
func (w *Watch) Failing() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, f := range w.failed {
		if w.clock().Sub(f.at) <= Fresh {
			n++
		}
	}
	return n
}

func (w *Watch) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}
