package yamlerr

import "strings"

// ClosestKey is the key of known that key is most likely a misspelling
// of (adress: address; dataDir: data_dir), or "" when none is near
// enough: at most a third of its letters apart (one for a short key),
// case, "-" and "_" aside. Ties go to the first in alphabetical order.
func ClosestKey(key string, known []string) string {
	if len(key) > 64 {
		return "" // no key is that long: no misspelling of one
	}
	best, bestD := "", 0
	for _, k := range known {
		d := editDistance(foldKey(key), foldKey(k))
		if d <= max(1, len(k)/3) {
			if best == "" || d < bestD || d == bestD && k < best {
				best, bestD = k, d
			}
		}
	}
	return best
}

// foldKey is key as a misspelling may differ only in: case, and - or
// nothing for _ (data-dir, dataDir: data_dir).
func foldKey(key string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(key))
}

// editDistance is the number of letters to add, remove, change or swap
// with the next (optimal string alignment) to make a b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
