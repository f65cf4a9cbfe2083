package enrich

// arena hands out the keys and values of output records from shared
// chunks, one allocation for many records. A chunk is never reused: the
// records may be kept (replayed, delivered later) for as long as they
// like.
type arena struct{ buf []byte }

// arenaChunk is the size of an arena's chunks.
const arenaChunk = 64 << 10

// start returns an empty slice to append one value to.
func (a *arena) start() []byte {
	if cap(a.buf)-len(a.buf) < 2<<10 {
		a.buf = make([]byte, 0, arenaChunk)
	}
	return a.buf[len(a.buf):]
}

// keep takes b, appended to a slice from start, as a finished value: the
// next start begins after it. A value that outgrew the chunk was moved to
// its own allocation by append and is returned as it is.
func (a *arena) keep(b []byte) []byte {
	free := a.buf[len(a.buf):cap(a.buf)]
	if len(b) > 0 && len(free) > 0 && &b[0] == &free[0] && len(b) <= len(free) {
		a.buf = a.buf[:len(a.buf)+len(b)]
	}
	return b[:len(b):len(b)]
}
