package telemetry

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTagFieldSearch: Tag and Field find what slices.BinarySearchFunc
// finds, for keys present or not, on sorted lists and on unsorted ones
// (which a Point must not have, but may).
func TestTagFieldSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := []string{"", "a", "ab", "agent", "b", "ifAlias", "ifDescr", "ifIndex", "ifName", "ifName2", "name", "z"}
	for range 5000 {
		var p Point
		for _, k := range keys {
			if rng.IntN(2) == 0 {
				p.Tags = append(p.Tags, Tag{k, k + "=v"})
				p.Fields = append(p.Fields, StringField(k, k+"=f"))
			}
		}
		if rng.IntN(4) == 0 {
			rng.Shuffle(len(p.Tags), func(i, j int) { p.Tags[i], p.Tags[j] = p.Tags[j], p.Tags[i] })
			rng.Shuffle(len(p.Fields), func(i, j int) { p.Fields[i], p.Fields[j] = p.Fields[j], p.Fields[i] })
		}
		for _, k := range append(keys, "c", "if", "zz") {
			i, ok := slices.BinarySearchFunc(p.Tags, k, func(t Tag, k string) int { return cmp.Compare(t.Key, k) })
			want := ""
			if ok {
				want = p.Tags[i].Value
			}
			if got, gotOK := p.Tag(k); got != want || gotOK != ok {
				t.Fatalf("Tag(%q) of %v: %q %v, want %q %v", k, p.Tags, got, gotOK, want, ok)
			}
			i, ok = slices.BinarySearchFunc(p.Fields, k, func(f Field, k string) int { return cmp.Compare(f.Key, k) })
			f, gotOK := p.Field(k)
			if gotOK != ok || ok && f != &p.Fields[i] {
				t.Fatalf("Field(%q) of %v: %v %v, want %d %v", k, p.Fields, f, gotOK, i, ok)
			}
		}
	}
}
