package enrich

// shrinkable notes how many entries a map has held, so that it can be
// rebuilt once most of them are forgotten: a Go map keeps its buckets when
// entries are deleted, so the state of a million objects seen an hour ago
// would hold hundreds of megabytes for ever (measured: 258–403 bytes an
// object, with every entry gone).
type shrinkable struct{ peak int }

// shrinkMin is the smallest peak worth a rebuild.
const shrinkMin = 4096

// note records the map's size before entries are deleted.
func (s *shrinkable) note(n int) { s.peak = max(s.peak, n) }

// shrunk returns m, or a new map of its entries when it holds under a
// quarter of its peak.
func shrunk[K comparable, V any](m map[K]V, s *shrinkable) map[K]V {
	n := len(m)
	s.note(n)
	if s.peak < shrinkMin || n >= s.peak/4 {
		return m
	}
	out := make(map[K]V, n)
	for k, v := range m {
		out[k] = v
	}
	s.peak = n
	return out
}
