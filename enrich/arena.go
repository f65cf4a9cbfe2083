package enrich

// arena hands out the keys and values of output records from shared
// chunks, one allocation for many records. A chunk is reused only after
// recycle, which the worker calls once the records are in the log and
// nothing holds them (on the embedded broker); elsewhere the records may
// be kept (replayed after an aborted transaction, carried to the next
// one) for as long as they like, and chunks are left to the GC.
type arena struct {
	buf []byte
	// reuse: the owner calls recycle; only then are chunks tracked.
	reuse bool
	used  [][]byte // the chunks handed out since the last recycle
	free  [][]byte // recycled chunks
}

// arenaChunk is the size of an arena's chunks.
const arenaChunk = 64 << 10

// start returns an empty slice to append one value to.
func (a *arena) start() []byte { return a.startFor(0) }

// startFor is start with room for a value of about n bytes: a value past
// the 2 KiB start leaves would outgrow the chunk, and append would move it
// to allocations of its own, twice as it grew (a 9 KB syslog line's
// enriched record: 260 B allocated a record of the corpus mix, each a
// mark of the live heap nearer). One larger than a chunk gets its own.
func (a *arena) startFor(n int) []byte {
	if n > arenaChunk {
		return make([]byte, 0, n)
	}
	if free := cap(a.buf) - len(a.buf); free < 2<<10 || free < n {
		if k := len(a.free); k > 0 {
			a.buf, a.free = a.free[k-1][:0], a.free[:k-1]
		} else {
			a.buf = make([]byte, 0, arenaChunk)
		}
		if a.reuse {
			a.used = append(a.used, a.buf)
		}
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

// recycle makes every chunk handed out so far free for reuse: the caller
// guarantees that no value from them is used again.
func (a *arena) recycle() {
	a.free = append(a.free, a.used...)
	clear(a.used)
	a.used, a.buf = a.used[:0], nil
}
