// Package throttle lets a repeated log line through once per interval,
// with how many times it happened since: a flood of refused connections or
// dropped packets gives one line every few seconds, not one each, while
// its counter (a metric) counts each.
package throttle

import "time"

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
