package file

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPruneKeepsOtherTopics: pruning topic x's rotations leaves those of
// a topic x-2 alone, though the glob matches them too, and keeps the
// newest: "-1" was rotated after the one of the same millisecond.
func TestPruneKeepsOtherTopics(t *testing.T) {
	dir := t.TempDir()
	names := []string{
		"weir.x-20261130T010000.000.jsonl.gz", "weir.x-20261130T020000.000.jsonl", "weir.x-20261130T020000.000-1.jsonl",
		"weir.x-2-20261129T010000.000.jsonl.gz", "weir.x-2-20261129T020000.000.jsonl",
		"weir.x-20261130T030000.000.jsonl.tmp", "weir.x.jsonl", "weir.x-2.jsonl",
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &Sink{keep: 1}
	if err := s.prune(filepath.Join(dir, "weir.x"), ".jsonl"); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{
		"weir.x-2-20261129T010000.000.jsonl.gz", "weir.x-2-20261129T020000.000.jsonl", "weir.x-2.jsonl",
		"weir.x-20261130T020000.000-1.jsonl", "weir.x-20261130T030000.000.jsonl.tmp", "weir.x.jsonl",
	}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("left %v\nwant %v", left, want)
	}
}

func TestIsRotation(t *testing.T) {
	for name, want := range map[string]bool{
		"d/w.x-20261130T010000.000.jsonl":      true,
		"d/w.x-20261130T010000.000.jsonl.gz":   true,
		"d/w.x-20261130T010000.000-12.jsonl":   true,
		"d/w.x-20261130T010000.000-.jsonl":     false,
		"d/w.x-2-20261130T010000.000.jsonl":    false,
		"d/w.x-20261130T010000.000.jsonl.tmp":  false,
		"d/w.x-20261130T010000.000.json":       false,
		"d/w.x-20261199T010000.000.jsonl":      false,
		"d/w.x-20261130T010000.000-1x.jsonl":   false,
		"d/w.x-20261130T010000.000.jsonl.gzip": false,
	} {
		if got := isRotation(name, "d/w.x", ".jsonl"); got != want {
			t.Errorf("isRotation(%q) = %v, want %v", name, got, want)
		}
	}
}
