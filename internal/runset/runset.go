// Package runset runs one goroutine per member of a named set that may
// change while it runs: the SNMP poller's and the gNMI collector's
// targets, reloaded on SIGHUP. A member added starts, a member removed
// stops (its context is cancelled and the set waits for it to return), a
// member whose config changed restarts, and a member whose config did
// not change keeps running untouched.
package runset

import (
	"context"
	"reflect"
	"sync"
	"time"
)

// Member is one goroutine of a set.
type Member struct {
	// Name identifies the member from one update to the next.
	Name string
	// Config is compared (reflect.DeepEqual) with the running member's of
	// the same name: equal, the running one goes on.
	Config any
	// Value is what the member runs (a target), for Members.
	Value any
	// Run runs the member until ctx ends.
	Run func(ctx context.Context)
	// Gone, when set, is called once the member has stopped because an
	// update removed it (not when it restarts, nor when the set stops),
	// with the set's context (bounded by Set.GoneWithin): to drop what is
	// kept for it, such as its metric series, or to say it is gone. The
	// Gones of an update's removed members run at once, each on its own
	// goroutine (256 at a time), once all those the update stops have
	// stopped: one that
	// waits (on a broker, say) holds the update for as long as the
	// slowest, not for the sum of them. The update's other members start
	// after every one has returned.
	Gone func(ctx context.Context)
}

// MaxGonesAtOnce bounds the Gones running at once (AtOnce): a reload
// taking out 100,000 targets would otherwise make as many goroutines,
// each publishing its removal. With GoneWithin, those past the deadline
// return at once.
const MaxGonesAtOnce = 256

// AtOnce calls fn(0) to fn(n-1) on goroutines of their own, at most
// MaxGonesAtOnce at a time, and returns once all have returned: the Gones
// of an update, and a collector's removals at a start, each of which
// waits on a broker.
func AtOnce(n int, fn func(i int)) {
	var wg sync.WaitGroup
	at := make(chan struct{}, MaxGonesAtOnce)
	for i := range n {
		at <- struct{}{}
		wg.Go(func() {
			defer func() { <-at }()
			fn(i)
		})
	}
	wg.Wait()
}

// Set is a changing set of members. The zero Set is ready; Run runs it.
type Set struct {
	// GoneWithin, when set (before Run), bounds the Gones of an update
	// together: their context ends GoneWithin after they start, one
	// deadline for all of them, so that what they wait on ends at one
	// time. Zero leaves them the set's context alone.
	GoneWithin time.Duration

	mu      sync.Mutex
	pending []Member
	has     bool
	wake    chan struct{}
	current []Member // running now, in list order
	running bool
}

// Members returns the members running now, in the order of the list
// they came from, with the running member (not an equal newer one) for
// each kept name; false before Run has started them.
func (s *Set) Members() ([]Member, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Member(nil), s.current...), s.running
}

func (s *Set) wakeCh() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	return s.wake
}

// Update makes members the set: Run applies it, at once if it is running,
// else when it starts. An update not yet applied is replaced by the next.
func (s *Set) Update(members []Member) {
	wake := s.wakeCh()
	s.mu.Lock()
	s.pending, s.has = members, true
	s.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default:
	}
}

// running is a member's goroutine.
type running struct {
	m      Member
	cancel context.CancelFunc
	done   chan struct{}
}

// Run runs members, then every update, until ctx ends; it returns once
// every member has returned.
func (s *Set) Run(ctx context.Context, members []Member) {
	wake := s.wakeCh()
	live := map[string]*running{}
	defer func() {
		for _, r := range live {
			r.cancel()
		}
		for _, r := range live {
			<-r.done
		}
		s.mu.Lock()
		s.current, s.running = nil, false
		s.mu.Unlock()
	}()
	s.apply(ctx, live, members)
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		s.mu.Lock()
		next, has := s.pending, s.has
		s.pending, s.has = nil, false
		s.mu.Unlock()
		if has {
			s.apply(ctx, live, next)
		}
	}
}

// apply stops the live members not in members or whose config changed,
// then starts those not running.
func (s *Set) apply(ctx context.Context, live map[string]*running, members []Member) {
	want := make(map[string]Member, len(members))
	for _, m := range members {
		want[m.Name] = m
	}
	var stopping []*running
	for name, r := range live {
		if m, ok := want[name]; !ok || !reflect.DeepEqual(m.Config, r.m.Config) {
			r.cancel()
			stopping = append(stopping, r)
			delete(live, name)
		}
	}
	for _, r := range stopping {
		<-r.done // a restarted member never runs twice at once
	}
	// Together, once all have stopped, under one deadline (GoneWithin).
	gctx, cancel := ctx, context.CancelFunc(func() {})
	if s.GoneWithin > 0 {
		gctx, cancel = context.WithTimeout(ctx, s.GoneWithin)
	}
	var gones []func(context.Context)
	for _, r := range stopping {
		if _, restarted := want[r.m.Name]; !restarted && r.m.Gone != nil {
			gones = append(gones, r.m.Gone)
		}
	}
	AtOnce(len(gones), func(i int) { gones[i](gctx) })
	cancel()
	current := make([]Member, 0, len(members))
	var starts []func()
	for _, m := range members {
		if r, ok := live[m.Name]; ok {
			current = append(current, r.m)
			continue
		}
		mctx, cancel := context.WithCancel(ctx)
		r := &running{m: m, cancel: cancel, done: make(chan struct{})}
		live[m.Name] = r
		current = append(current, m)
		starts = append(starts, func() {
			defer close(r.done)
			m.Run(mctx)
		})
	}
	// Members lists a member before it starts, so whatever it does
	// running (such as serving a status page) finds it there.
	s.mu.Lock()
	s.current, s.running = current, true
	s.mu.Unlock()
	for _, start := range starts {
		go start()
	}
}
