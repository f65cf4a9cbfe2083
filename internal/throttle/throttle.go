// Package throttle lets a repeated log line through once per interval,
// with how many times it happened since: a flood of refused connections or
// dropped packets gives one line every few seconds, not one each, while
// its counter (a metric) counts each.
package throttle

import (
	"sync"
	"time"
)

// Every is the interval a Throttle lets a line through once in.
const Every = 10 * time.Second

// Throttle is one repeated line's state. The zero value lets the first
// line through. Not safe for concurrent use.
type Throttle struct {
	last   time.Time
	missed int
}

// Due reports whether to log now, and how many times it happened since
// the last line let through (this one included).
func (t *Throttle) Due(now time.Time) (int, bool) {
	t.missed++
	if now.Sub(t.last) >= Every {
		n := t.missed
		t.last, t.missed = now, 0
		return n, true
	}
	return 0, false
}

// Set is a Throttle per key (a partition, an outcome and sender), made
// on first use; it holds max keys at most (0: no bound) and starts again
// when full rather than grow with whatever the keys are. The zero value
// is ready. Not safe for concurrent use.
type Set struct {
	Max int
	m   map[string]*Throttle
}

// Due is Throttle.Due for key's line.
func (s *Set) Due(key string, now time.Time) (int, bool) {
	t := s.m[key]
	if t == nil {
		if s.m == nil || (s.Max > 0 && len(s.m) >= s.Max) {
			s.m = map[string]*Throttle{}
		}
		t = &Throttle{}
		s.m[key] = t
	}
	return t.Due(now)
}

// Empty reports whether no key has state, so Forget has nothing to do.
func (s *Set) Empty() bool { return len(s.m) == 0 }

// Forget drops key's state: the condition it logged has ended, so its
// next occurrence is logged at once. It reports whether key had state (so
// the end can be logged once).
func (s *Set) Forget(key string) bool {
	_, ok := s.m[key]
	delete(s.m, key)
	return ok
}

// Shared is a Throttle for lines logged from several goroutines (one per
// connection). The zero value lets the first line through.
type Shared struct {
	mu sync.Mutex
	t  Throttle
}

// Due is Throttle.Due, safe for concurrent use.
func (s *Shared) Due(now time.Time) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t.Due(now)
}

// SharedSet is a Set for lines logged from several goroutines, such as
// one line per reason a connection is closed for: one reason's flood must
// not hide another's first line. The zero value is ready.
type SharedSet struct {
	mu sync.Mutex
	s  Set
}

// Due is Set.Due, safe for concurrent use.
func (s *SharedSet) Due(key string, now time.Time) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.Due(key, now)
}

// Run is a run of failures in a row (a publish a full disk refuses, a poll
// of a cluster away): Failed counts one and says whether to log it, as
// Throttle.Due does (the first, then one per Every, with how many since);
// Ended says how many the run had, once, when something works again. The
// zero value is no run. Not safe for concurrent use.
type Run struct {
	n int
	t Throttle
}

// Failed counts a failure; see Throttle.Due for what it returns.
func (r *Run) Failed(now time.Time) (int, bool) {
	r.n++
	return r.t.Due(now)
}

// Ended reports how many failures the run had (0: none, nothing to say)
// and starts afresh, so the next failure is logged at once.
func (r *Run) Ended() int {
	n := r.n
	*r = Run{}
	return n
}
