// Package shrink lets go of reused buffers a burst grew: a sink's encoding
// buffers grow to its largest batch (a backlog sent after an outage) and
// would keep that size for the life of the process, tens of megabytes
// that the small batches after it never use.
package shrink

// MinCap is the smallest capacity worth letting go of.
const MinCap = 1 << 20

// After is how many uses in a row under a quarter of its capacity let a
// buffer go: a burst's buffers are not dropped between its own batches.
const After = 32

// Tracker follows the uses of one buffer.
type Tracker struct{ small int }

// Keep returns b, whose length is what this use took, or nil once it has
// been used under a quarter of its capacity After times in a row (and
// holds at least MinCap): the next use grows a buffer of its own size.
func (t *Tracker) Keep(b []byte) []byte {
	if cap(b) < MinCap || len(b) >= cap(b)/4 {
		t.small = 0
		return b
	}
	if t.small++; t.small < After {
		return b
	}
	t.small = 0
	return nil
}
