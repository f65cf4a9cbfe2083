// Package publish produces a collector's batches of records to the broker
// and keeps them through broker trouble, written once for the parts that
// each had a copy of it: the syslog, trap, gNMI and SNMP collectors, and
// the sinks' dead letters.
//
// While the broker cannot take a batch (a full disk, a cluster away) it
// retries, with exponential back-off up to a cap, until the broker does or
// the context ends. When the broker refuses the batch itself (a record
// over its size limit, a corrupt batch: see broker.Refused), retrying
// cannot help and would stall the collector for good, so the records go
// one by one and only those refused are dropped. What a failed call
// appended all the same (see broker.Broker.Produce) is not sent again.
// Nothing is dropped silently: every record ends taken, refused or unsent,
// and the caller hears of each drop through a hook, to count it under its
// own labels.
//
// Grace makes the context that bounds a collector's drain at shutdown.
package publish

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/throttle"
)

// Default back-off bounds.
const (
	DefaultMinBackoff = 50 * time.Millisecond
	// DefaultMaxBackoff keeps a broker back from an outage written to
	// within seconds.
	DefaultMaxBackoff = 5 * time.Second
	// DefaultStallAfter is how long an attempt waits on a broker that
	// waits (a Kafka cluster away) before the wait is reported.
	DefaultStallAfter = 15 * time.Second
)

// Waiter is a broker whose Produce may wait for the cluster to come back
// rather than fail (the Kafka backend): a Publisher reports such a wait
// while it lasts. Its Produce must end when its ctx does.
type Waiter interface {
	ProduceMayWait() bool
}

// WaitCauser is a Waiter that may know why it waits (the last failed
// connection to a Kafka cluster), for StalledError's Cause.
type WaitCauser interface {
	WaitCause() error
}

// StalledError is what OnRetry and the log are given for an attempt that
// has waited Waited on the broker without an answer and goes on waiting.
// The records are not sent again: that might write them twice.
type StalledError struct {
	Waited time.Duration
	Cause  error // why, where the broker knows (WaitCauser); may be nil
}

func (e *StalledError) Error() string {
	msg := fmt.Sprintf("the broker has not taken the records for %v (no answer, or only errors that are retried, such as an unknown topic); still waiting", e.Waited.Round(time.Second))
	if e.Cause != nil {
		msg += " (last connection attempt: " + e.Cause.Error() + ")"
	}
	return msg
}

func (e *StalledError) Unwrap() error { return e.Cause }

// Reason says why records were dropped.
type Reason uint8

const (
	// Refused: the broker refused the record itself; sending it again
	// cannot succeed.
	Refused Reason = iota + 1
	// Unsent: the context ended before the broker took the records.
	Unsent
)

func (r Reason) String() string {
	switch r {
	case Refused:
		return "refused"
	case Unsent:
		return "unsent"
	}
	return "unknown"
}

// Publisher publishes batches to one topic. Set Broker and Topic; the
// other fields are optional. Publish only reads the fields, so a
// Publisher may be used by several goroutines at once (if its hooks may),
// and a copy with other hooks serves a single call.
type Publisher struct {
	Broker broker.Broker
	Topic  string
	// Name begins the log messages: the collector's ("syslog").
	Name string
	// Logger logs failed attempts that will be retried (warn: the first
	// of a batch, then one per throttle.Every with how many failed) and
	// each record dropped because the broker refused it (error); nil logs
	// nothing. Give it the caller's attributes (the listener, the
	// target): Publisher adds the topic, the error and the numbers.
	Logger *slog.Logger
	// RefusedLog, if set, lets the refused records' line through once per
	// throttle.Every, with how many were refused since ("times"): a
	// source that sends an oversized value every interval would otherwise
	// log a line per interval. Share it among the copies of a Publisher
	// that log to the same place; nil logs each.
	RefusedLog *throttle.Shared
	// RetryLog, if set, lets the retry line through once per
	// throttle.Every for all the Publishers sharing it (a collector's
	// targets: a broker that fails one fails them all), logged to
	// RetryLogger (else Logger) without this batch's numbers: its
	// attempts are all of theirs. Nil throttles each call's retries on
	// their own.
	RetryLog    *throttle.Shared
	RetryLogger *slog.Logger
	// MinBackoff is the wait after a first failed attempt; each further
	// failure doubles it, up to MaxBackoff. Zero takes the defaults.
	MinBackoff, MaxBackoff time.Duration
	// OnRetry, if set, is called for each failed attempt that will be
	// retried after wait (not for one the end of the context cut short).
	OnRetry func(err error, wait time.Duration)
	// StallAfter: an attempt that has waited this long on a Waiter broker
	// is reported, and again each StallAfter it goes on waiting: logged
	// (warn) and passed to OnRetry as a *StalledError with wait 0, from
	// another goroutine while Publish waits. Zero takes
	// DefaultStallAfter; negative reports nothing.
	StallAfter time.Duration
	// OnDrop, if set, is called for records dropped: recs[i:i+n] of the
	// batch given to Publish. For Refused, one record (n is 1) and the
	// broker's error; for Unsent, the records left when the context
	// ended (a call per run of them: the broker may have taken some
	// partitions' records and not others) and the last attempt's error.
	OnDrop func(reason Reason, i, n int, err error)
}

// Result is what became of a batch: Published+Refused+Unsent is its length.
type Result struct {
	// Published is how many records the broker took.
	Published int
	// Refused is how many it refused, which were dropped.
	Refused int
	// Unsent is how many were not sent because the context ended.
	Unsent int
}

// Publish produces recs to the topic: at once if the broker takes them,
// or retrying while it fails, until it takes them or ctx ends. If the
// broker refuses the batch, each record is produced (and retried) alone,
// in order, and those refused are dropped.
//
// The error is nil when every record was taken or refused; otherwise ctx
// ended first, and the error is the last attempt's (why the broker did not
// take the records). A ctx already done still gets one attempt, and no
// retry: a broker that answers at once (the embedded log does not wait on
// ctx) takes the batch, one that would wait fails at once. Nothing bounds
// an attempt but ctx.
//
// Publish allocates nothing while the broker takes batches.
func (p *Publisher) Publish(ctx context.Context, recs []broker.Record) (Result, error) {
	var res Result
	if len(recs) == 0 {
		return res, nil
	}
	left, err := p.produce(ctx, recs)
	if err == nil {
		res.Published = len(recs)
		return res, nil
	}
	if left == nil { // a failure: allocating is fine now
		left = make([]int, len(recs))
		for i := range left {
			left[i] = i
		}
	}
	res.Published = len(recs) - len(left)
	switch {
	case !broker.Refused(err):
		return p.unsent(res, left, err), err
	case len(left) == 1:
		p.refused(&res, recs, left[0], err)
		return res, nil
	}
	// The broker refuses the batch for one record or a few: find them,
	// among those it has not taken yet.
	for j, i := range left {
		_, err := p.produce(ctx, recs[i:i+1])
		switch {
		case err == nil:
			res.Published++
		case broker.Refused(err):
			p.refused(&res, recs, i, err)
		default:
			return p.unsent(res, left[j:], err), err
		}
	}
	return res, nil
}

// pending lists the records of a batch the broker has not taken, by
// index; nil is all of them, so a batch taken whole allocates nothing.
type pending []int

func (l pending) at(j int) int {
	if l == nil {
		return j
	}
	return l[j]
}

// update takes what a failed attempt that sent send (recs itself, or
// copies of recs' records l lists) appended all the same: their offsets go
// to recs, and it returns the records left and copies of them to send.
func (l pending) update(recs, send []broker.Record) (pending, []broker.Record) {
	taken := 0
	for i := range send {
		if send[i].Offset >= 0 {
			taken++
		}
	}
	if taken == 0 {
		return l, send
	}
	var left pending = make([]int, 0, len(send)-taken)
	next := make([]broker.Record, 0, len(send)-taken)
	for k := range send {
		i := l.at(k)
		if send[k].Offset >= 0 {
			recs[i].Partition, recs[i].Offset = send[k].Partition, send[k].Offset
			continue
		}
		left = append(left, i)
		next = append(next, send[k])
	}
	return left, next
}

// taken copies the offsets of a successful attempt that sent copies (l
// not nil) back to recs.
func (l pending) taken(recs, send []broker.Record) {
	if l == nil {
		return
	}
	for k := range send {
		i := l[k]
		recs[i].Partition, recs[i].Offset = send[k].Partition, send[k].Offset
	}
}

// produce sends recs until the broker takes them (nil), refuses them (an
// error broker.Refused reports), or ctx ends (the last attempt's error).
// After a failed attempt, the records the broker says it took (their
// Offset set, see broker.Broker.Produce) are not sent again, so a call
// that wrote some partitions before a full disk stopped it is not
// appended twice. left is what is not taken when err is not nil.
func (p *Publisher) produce(ctx context.Context, recs []broker.Record) (left pending, err error) {
	backoff, maxBackoff := p.MinBackoff, p.MaxBackoff
	if backoff <= 0 {
		backoff = DefaultMinBackoff
	}
	if maxBackoff <= 0 {
		maxBackoff = DefaultMaxBackoff
	}
	backoff = min(backoff, maxBackoff)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	send := recs // what the next attempt sends: recs, or copies of those left
	var retryLog throttle.Throttle
	for {
		for i := range send {
			send[i].Offset = -1 // a broker that does not say stays safe
		}
		err := p.attempt(ctx, send)
		if err == nil {
			left.taken(recs, send)
			return nil, nil
		}
		// What the failed attempt appended all the same is not sent
		// again, nor looked at for the refused records: a Kafka cluster
		// refuses one partition's batch for its size and takes the
		// others'.
		if left, send = left.update(recs, send); len(send) == 0 {
			return nil, nil // all taken after all
		}
		if broker.Refused(err) {
			return left, err
		}
		if ctx.Err() != nil {
			return left, err
		}
		wait := backoff
		if p.OnRetry != nil {
			p.OnRetry(err, wait)
		}
		// The first failure, then a line per throttle.Every: the
		// back-off starts at milliseconds, and a broker that keeps
		// failing would log a line per attempt.
		if p.RetryLog != nil {
			logger := cmp.Or(p.RetryLogger, p.Logger)
			if n, due := p.RetryLog.Due(time.Now()); due && logger != nil {
				logger.LogAttrs(ctx, slog.LevelWarn, p.message("publish failed, retrying"), slog.String("topic", p.Topic),
					slog.Any("err", err), slog.Int("attempts", n))
			}
		} else if n, due := retryLog.Due(time.Now()); due && p.Logger != nil {
			p.Logger.LogAttrs(ctx, slog.LevelWarn, p.message("publish failed, retrying"), slog.String("topic", p.Topic),
				slog.Int("records", len(send)), slog.Any("err", err), slog.Duration("retry_in", wait), slog.Int("attempts", n))
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return left, err
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// attempt is one Produce; on a broker that may wait, a wait past
// StallAfter is reported while it lasts (see StallAfter).
func (p *Publisher) attempt(ctx context.Context, send []broker.Record) error {
	w, ok := p.Broker.(Waiter)
	after := p.StallAfter
	if after == 0 {
		after = DefaultStallAfter
	}
	if !ok || !w.ProduceMayWait() || after < 0 {
		return p.Broker.Produce(ctx, p.Topic, send)
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTimer(after)
		defer t.Stop()
		for waited := after; ; waited += after {
			select {
			case <-done:
				return
			case <-t.C:
			}
			err := &StalledError{Waited: waited}
			if c, ok := p.Broker.(WaitCauser); ok {
				err.Cause = c.WaitCause()
			}
			if p.OnRetry != nil {
				p.OnRetry(err, 0)
			}
			if p.Logger != nil {
				p.Logger.LogAttrs(ctx, slog.LevelWarn, p.message("publish waiting for the broker"), slog.String("topic", p.Topic),
					slog.Int("records", len(send)), slog.Any("err", err))
			}
			t.Reset(after)
		}
	}()
	err := p.Broker.Produce(ctx, p.Topic, send)
	close(done)
	<-exited // the hooks are done with before Publish goes on
	return err
}

// refused drops recs[i], which the broker refused with err.
func (p *Publisher) refused(res *Result, recs []broker.Record, i int, err error) {
	res.Refused++
	if p.Logger != nil {
		times, due := 1, true
		if p.RefusedLog != nil {
			times, due = p.RefusedLog.Due(time.Now())
		}
		if due {
			p.Logger.LogAttrs(context.Background(), slog.LevelError, p.message("record refused by the broker; dropped"),
				slog.String("topic", p.Topic), slog.Int("bytes", len(recs[i].Value)), slog.Any("err", err), slog.Int("times", times))
		}
	}
	if p.OnDrop != nil {
		p.OnDrop(Refused, i, 1, err)
	}
}

// unsent gives up the records of the batch left lists, reporting each run
// of consecutive ones.
func (p *Publisher) unsent(res Result, left []int, err error) Result {
	res.Unsent = len(left)
	if p.OnDrop == nil {
		return res
	}
	for j := 0; j < len(left); {
		run := 1
		for j+run < len(left) && left[j+run] == left[j]+run {
			run++
		}
		p.OnDrop(Unsent, left[j], run, err)
		j += run
	}
	return res
}

func (p *Publisher) message(s string) string {
	if p.Name == "" {
		return s
	}
	return p.Name + " " + s
}

// Grace returns a context that ends d after ctx does (d after now if ctx
// has ended already), for a collector to publish under while it drains
// what it holds at shutdown; stop releases it. Publishing under ctx itself
// would lose the batch in flight when ctx ends (the Kafka client fails
// the records of a cancelled context at once), and publishing without a
// bound would let a broker that is down hold up weir's exit. Make it once
// for the whole drain, so that the bound is d in all, however many
// batches are left.
func Grace(ctx context.Context, d time.Duration) (gctx context.Context, stop context.CancelFunc) {
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() { time.AfterFunc(d, cancel) })
	return gctx, func() { unhook(); cancel() }
}
