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
	now    func() time.Time // time.Now if nil (tests set it)
}

// dialFailureFresh is how long a failure to connect is taken as why a
// produce waits: franz-go dials a broker it needs again within seconds,
// so a failure older than this, with no attempt since, is of a broker
// no longer dialled (a seed since decommissioned), not of the wait.
const dialFailureFresh = time.Minute

func (w *dialWatch) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
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
	w.failed[addr] = dialFailure{err: err, at: w.clock()}
}

// lastFailure is the latest of the failures to connect not followed by a
// connection to the same broker, if it is recent (dialFailureFresh), or
// nil.
func (w *dialWatch) lastFailure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last dialFailure
	for addr, f := range w.failed {
		if w.clock().Sub(f.at) > dialFailureFresh {
			delete(w.failed, addr) // dialled no more
			continue
		}
		if f.at.After(last.at) {
			last = f
		}
	}
	return last.err
}
