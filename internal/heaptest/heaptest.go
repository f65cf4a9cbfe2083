// Package heaptest measures the live heap, for tests that a part lets go
// of memory it no longer needs.
package heaptest

import "runtime"

// Live is the live heap after two collections (the second frees what
// sync.Pools' victim caches held through the first).
func Live() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// Allocated is how many bytes fn allocated, freed or not: for tests that
// a part does not make what it need not, however briefly.
func Allocated(fn func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
