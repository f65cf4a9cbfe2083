package kafkacluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// dialWatch remembers, per broker address, whether the last connection
// attempt failed: a produce waiting on a cluster that is away says only
// that it waits, and the operator needs the why ("connection refused",
// a TLS or SASL failure) to act on it.
type dialWatch struct {
	mu     sync.Mutex
	failed map[string]dialFailure
}

type dialFailure struct {
	err error
	at  time.Time
}

var _ kgo.HookBrokerConnect = (*dialWatch)(nil)

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (w *dialWatch) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if errors.Is(err, kgo.ErrClientClosed) || errors.Is(err, context.Canceled) {
		return // a dial ended by the client's own Close (one renewed), not by the cluster
	}
	addr := net.JoinHostPort(meta.Host, fmt.Sprint(meta.Port))
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		delete(w.failed, addr)
		return
	}
	if w.failed == nil {
		w.failed = map[string]dialFailure{}
	}
	w.failed[addr] = dialFailure{err: err, at: time.Now()}
}

// lastFailure is the latest of the failures to connect not followed by a
// connection to the same broker, or nil.
func (w *dialWatch) lastFailure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last dialFailure
	for _, f := range w.failed {
		if f.at.After(last.at) {
			last = f
		}
	}
	return last.err
}
