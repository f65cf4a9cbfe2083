package enrich

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/weirnet/weir/broker"
)

// warmGate holds back the live records of the workers that share a
// detector (one process's syslog, metrics, gNMI and trap workers) until
// each has warmed up the partitions it was first given. Without it, after
// a restart a worker whose warm-up is quick (the syslog one, over a small
// topic) judged live records before a slower one (the metrics worker, which
// warmed up only at its target's next poll) had told the detector the
// states and changes it knew: a syslog line repeating a change a poll had reported was
// published again, and a real change after it taken as a repeat.
//
// The trap workers pass in two steps: their warm-up holds back the traps
// that name an interface by ifIndex alone until a poll names it, and the
// metrics workers' warm-ups do; so they hand those traps to the detector
// once every worker is warm, and only then are ready. Live records wait
// for every worker to be ready.
//
// Before all that, each worker waits for the others to have joined the
// group before its first poll. The workers start one after the other: the
// first to join was given every partition, warmed them all up and read on,
// then lost half of them to the next to join, which warmed those up again
// and enriched again what the first had not committed. On the embedded log
// a join assigns at once, so after the last join each worker's first poll
// finds the partitions it keeps. (A Kafka client joins at its first poll;
// there the wait changes nothing.)
//
// No worker waits more than maxWait in all: one that cannot warm up (a
// broker that does not answer) delays the others' start, not their work.
type warmGate struct {
	maxWait                       time.Duration
	mu                            sync.Mutex
	joinLeft, warmLeft, readyLeft int
	// joined, warm, ready are closed when joinLeft, warmLeft, readyLeft
	// reach 0.
	joined, warm, ready chan struct{}
}

// defaultGateWait bounds a worker's waits at a warmGate, in all.
const defaultGateWait = time.Minute

// gateEmptyWait is how long a worker given no partition waits for some
// before it counts as warm: on Kafka the first assignment comes after the
// group's first rebalance (3 s later by default), and the wait counts from
// there (firstAssigner); on the embedded log a worker whose input topic
// exists has none only when the group has more members than partitions. A
// worker whose input topic does not exist yet (checkInput) has nothing to
// warm up and does not wait.
const gateEmptyWait = 5 * time.Second

// firstAssigner is a consumer that tells when its group first gave it its
// partitions, maybe none (a Kafka member, at the end of its first
// rebalance). Counted from the worker's start, gateEmptyWait ran out
// before a loaded machine's first rebalance ended: the worker counted as
// warm given nothing, and the others judged live records before it read
// back its partitions (on Kafka, after a kill, a trap published again as
// the change its line had reported).
type firstAssigner interface {
	FirstAssigned() (time.Time, bool)
}

func newWarmGate(workers int, maxWait time.Duration) *warmGate {
	g := &warmGate{maxWait: maxWait, joinLeft: workers, warmLeft: workers, readyLeft: workers,
		joined: make(chan struct{}), warm: make(chan struct{}), ready: make(chan struct{})}
	if workers <= 0 {
		close(g.joined)
		close(g.warm)
		close(g.ready)
	}
	return g
}

// ticket is one worker's passage, made once in *t: a worker whose Run is
// called again keeps its ticket, and is not counted twice. A nil gate
// gives one that is through.
func (g *warmGate) ticket(t **gateTicket, logger *slog.Logger) *gateTicket {
	if *t == nil {
		*t = &gateTicket{g: g, logger: logger, through: g == nil, joined: time.Now()}
	}
	return *t
}

// done counts one worker down on left, closing ch at zero.
func (g *warmGate) done(left *int, ch chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if *left--; *left == 0 {
		close(ch)
	}
}

// gateTicket is one worker's passage through a warmGate.
type gateTicket struct {
	g               *warmGate
	logger          *slog.Logger
	joined          time.Time
	deadline        time.Time // of the waits, set at the first
	inGroup         bool
	warmed, readied bool
	through         bool
	noInput         bool // the input topic did not exist (checkInput)
	// consumer is the worker's consumer now (see watch), or nil.
	consumer func() broker.Consumer
}

// watch gives the ticket the worker's consumer, as it is at each call of
// consumer (a member joins again with a new one): see firstAssigner.
func (t *gateTicket) watch(consumer func() broker.Consumer) { t.consumer = consumer }

// waitedEmpty reports whether a worker given nothing has waited
// gateEmptyWait for partitions: from its group's first assignment when its
// consumer tells (not before it), else from its start.
func (t *gateTicket) waitedEmpty() bool {
	from := t.joined
	if t.consumer != nil {
		if fa, ok := t.consumer().(firstAssigner); ok {
			at, assigned := fa.FirstAssigned()
			if !assigned {
				return false // the others wait for it at most maxWait
			}
			from = at
		}
	}
	return time.Since(from) >= gateEmptyWait
}

// gatePollWait is how long a worker's poll waits before it is through
// the gate: short, so that the gate opens soon after the last warm-up
// when no records come (the first poll of a quiet partition would
// otherwise hold every worker for the poll's usual wait).
const gatePollWait = 100 * time.Millisecond

// pollWait is how long the worker's next poll may wait: gatePollWait
// until it is through, then usual (0: until records come).
func (t *gateTicket) pollWait(usual time.Duration) time.Duration {
	if t.through {
		return usual
	}
	return gatePollWait
}

// checkInput notes whether the worker's input topic exists: one that does
// not (no collector has written it yet: no SNMP target, no gNMI target,
// no trap receiver) holds nothing to warm up, and the worker counts as
// warm at once rather than after gateEmptyWait.
func (t *gateTicket) checkInput(ctx context.Context, b broker.Broker, topic string) {
	if t.through || t.warmed {
		return
	}
	if _, err := b.DescribeTopics(ctx, topic); errors.Is(err, broker.ErrUnknownTopic) {
		t.noInput = true
	}
}

// awaitJoins counts the worker as joined (its join returned) and waits for
// every worker to have joined, before its first poll: see warmGate. false:
// ctx ended.
func (t *gateTicket) awaitJoins(ctx context.Context) bool {
	if t.through || t.g == nil {
		return ctx.Err() == nil
	}
	t.signalJoined()
	return t.wait(ctx, t.g.joined, "in the group")
}

// pass reports whether the worker may go on to the records it polled.
// Before it is through, the worker calls it after each warm-up round,
// saying whether it was given anything (partitions, or records): once it
// was (or has waited gateEmptyWait for it, see waitedEmpty), it counts as warm, waits for
// every worker to be warm, runs beforeReady (nil for none), counts as
// ready and waits for every worker to be ready. false: ctx ended, or the
// worker was given nothing yet and should poll again (it polled nothing:
// records are not kept across polls, whose buffers the broker reuses).
func (t *gateTicket) pass(ctx context.Context, given bool, beforeReady func()) bool {
	if t.through {
		return true
	}
	if !given && !t.noInput && !t.waitedEmpty() {
		return false
	}
	t.signalWarm()
	if !t.wait(ctx, t.g.warm, "warm") {
		return false
	}
	if beforeReady != nil {
		beforeReady()
	}
	t.signalReady()
	if !t.wait(ctx, t.g.ready, "ready") {
		return false
	}
	t.through = true
	return true
}

// wait waits for ch to close, at most until the gate's maxWait after the
// first wait began; false if ctx ended. A worker stopped in its warm-up
// (SIGTERM) closes its ticket as it returns, opening ch: a worker whose
// ctx ended with it finds ch open and ctx done at once, and must not take
// the stopped one's warm-up for done (see warmer.before).
func (t *gateTicket) wait(ctx context.Context, ch chan struct{}, what string) bool {
	if t.deadline.IsZero() {
		t.deadline = time.Now().Add(t.g.maxWait)
	}
	timer := time.NewTimer(time.Until(t.deadline))
	defer timer.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-timer.C:
		if ctx.Err() == nil {
			t.logger.Warn("enrich: going on before every worker of the process is "+what+" (warm-up)", slog.Duration("waited", t.g.maxWait))
		}
	}
	return ctx.Err() == nil
}

func (t *gateTicket) signalJoined() {
	if !t.inGroup && t.g != nil {
		t.inGroup = true
		t.g.done(&t.g.joinLeft, t.g.joined)
	}
}

func (t *gateTicket) signalWarm() {
	if !t.warmed && t.g != nil {
		t.warmed = true
		t.g.done(&t.g.warmLeft, t.g.warm)
	}
}

func (t *gateTicket) signalReady() {
	if !t.readied && t.g != nil {
		t.readied = true
		t.g.done(&t.g.readyLeft, t.g.ready)
	}
}

// close lets the other workers through as if this one were ready: for a
// worker that stops (or never gets going) before it passed.
func (t *gateTicket) close() {
	t.signalJoined()
	t.signalWarm()
	t.signalReady()
}
