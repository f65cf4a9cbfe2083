// Package par splits a destination's per-record work over the cores. The
// framework decodes a poll on every core but calls Write on one goroutine,
// so while a destination encodes a batch the other cores are idle; a
// destination whose records encode independently (line protocol, remote
// write time series) encodes chunks of the batch at once and joins them.
package par

import (
	"runtime"
	"sync"
)

// Chunks is how many chunks Do splits n items into: at least least items
// in each, at most one chunk per core, at least one chunk.
func Chunks(n, least int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/max(least, 1)))
}

// Do calls f(w, lo, hi) for the chunks w of [0, n), as Chunks splits it
// and in order of w, all at once (the last on the calling goroutine), and
// returns when all are done.
func Do(n, least int, f func(w, lo, hi int)) {
	k := Chunks(n, least)
	if k == 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < k-1; w++ {
		lo, hi := w*n/k, (w+1)*n/k
		wg.Go(func() { f(w, lo, hi) })
	}
	f(k-1, (k-1)*n/k, n)
	wg.Wait()
}
