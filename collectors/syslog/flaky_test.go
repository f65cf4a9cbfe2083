package syslog

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/weirnet/weir/broker"
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
