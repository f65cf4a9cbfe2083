package file

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLastLineEndCutsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(path, []byte("{\"a\":1}\n{\"b\":2}\n{\"torn"), 0o644)
	f, _ := os.Open(path)
	defer f.Close()
	st, _ := f.Stat()
	if cut, err := lastLineEnd(f, st.Size()); err != nil || cut != 16 {
		t.Fatalf("cut %d %v, want 16", cut, err)
	}
	os.WriteFile(path, []byte("no newline at all"), 0o644)
	g, _ := os.Open(path)
	defer g.Close()
	if cut, _ := lastLineEnd(g, 17); cut != 0 {
		t.Fatalf("cut %d, want 0", cut)
	}
}
