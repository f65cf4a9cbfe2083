package telemetry

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendIntMatchesStrconv: around every power of ten, at the ends
// of the ranges, and at random.
func TestAppendIntMatchesStrconv(t *testing.T) {
	check := func(x uint64) {
		if got, want := string(appendUint([]byte("x"), x)), "x"+strconv.FormatUint(x, 10); got != want {
			t.Fatalf("appendUint(%d) = %s", x, got)
		}
		i := int64(x)
		if got, want := string(appendInt(nil, i)), strconv.FormatInt(i, 10); got != want {
			t.Fatalf("appendInt(%d) = %s", i, got)
		}
	}
	for _, p := range powersOf10 {
		for d := uint64(0); d < 3; d++ {
			check(p + d)
			check(p - d)
		}
	}
	check(math.MaxUint64)
	check(math.MaxUint64 - 1)
	check(1 << 63)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		check(rng.Uint64() >> rng.IntN(64))
	}
}

func BenchmarkAppendUint(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.Run("weir", func(b *testing.B) {
		for i := uint64(0); b.Loop(); i++ {
			buf = appendUint(buf[:0], 60_000_000*i)
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for i := uint64(0); b.Loop(); i++ {
			buf = strconv.AppendUint(buf[:0], 60_000_000*i, 10)
		}
	})
}
