package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestDoCoversEveryItemOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 99, 1000, 1001} {
		for _, least := range []int{0, 1, 7, 500} {
			seen := make([]atomic.Int32, n)
			chunks := make([]atomic.Int32, runtime.GOMAXPROCS(0))
			Do(n, least, func(w, lo, hi int) {
				chunks[w].Add(1)
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				if seen[i].Load() != 1 {
					t.Fatalf("n=%d least=%d: item %d seen %d times", n, least, i, seen[i].Load())
				}
			}
			k := Chunks(n, least)
			for w := range chunks {
				if want := int32(0); w < k {
					want = 1
					if chunks[w].Load() != want {
						t.Fatalf("n=%d least=%d: chunk %d ran %d times", n, least, w, chunks[w].Load())
					}
				} else if chunks[w].Load() != want {
					t.Fatalf("n=%d least=%d: chunk %d of %d ran", n, least, w, k)
				}
			}
		}
	}
}
