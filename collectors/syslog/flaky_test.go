package syslog

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
)

// flakyBroker refuses produces while fail is set, like a full disk.
type flakyBroker struct {
	broker.Broker
	fail atomic.Bool
}

func (f *flakyBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if f.fail.Load() {
		return errors.New("injected: no space left on device")
	}
	return f.Broker.Produce(ctx, topic, recs)
}

// refusingRun is a collector serving one listener over an embedded log
// behind a flakyBroker that refuses writes until fb.fail is cleared.
type refusingRun struct {
	fb     *flakyBroker
	b      *embedded.Broker
	addr   string // the listener's host:port
	cancel context.CancelFunc
	done   chan struct{} // closed once Run has returned
}

// runRefusing starts a refusingRun; the test's cleanup stops it.
func runRefusing(t *testing.T, l configs.SyslogListener) *refusingRun {
	t.Helper()
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	r := &refusingRun{fb: &flakyBroker{Broker: b}, b: b, done: make(chan struct{})}
	r.fb.fail.Store(true)
	c, err := New(configs.Syslog{Listeners: []configs.SyslogListener{l}}, r.fb)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { c.Run(ctx); close(r.done) }()
	t.Cleanup(func() { cancel(); <-r.done })
	addrs, err := c.Addrs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, r.addr, _ = strings.Cut(addrs[0], "://")
	return r
}
