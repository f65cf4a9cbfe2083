package trap

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartEngine: the engine ID is kept across starts and boots counts
// them; a configured ID is an engine of its own, counted from 1; an
// unreadable state starts a new engine and says so.
func TestStartEngine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trap", "engine.json")
	start := func(configured string) (string, uint32, string) {
		t.Helper()
		id, boots, note, err := startEngine(file, configured)
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString([]byte(id)), boots, note
	}
	id1, boots, _ := start("")
	if boots != 1 || len(id1) != 26 {
		t.Fatalf("first start: %s boots %d", id1, boots)
	}
	if id, boots, _ := start(""); id != id1 || boots != 2 {
		t.Fatalf("second start: %s boots %d, want %s boots 2", id, boots, id1)
	}
	const fixed = "80001f8880aabbccdd"
	if id, boots, _ := start("0x" + fixed); id != fixed || boots != 1 {
		t.Fatalf("configured: %s boots %d", id, boots)
	}
	if id, boots, _ := start(fixed); id != fixed || boots != 2 {
		t.Fatalf("configured again: %s boots %d", id, boots)
	}
	if id, boots, _ := start(""); id != fixed || boots != 3 {
		t.Fatalf("configuration removed: %s boots %d, want the kept %s", id, boots, fixed)
	}
	if err := os.WriteFile(file, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, boots, note := start(""); id == fixed || boots != 1 || !strings.Contains(note, "unreadable") {
		t.Fatalf("corrupt state: %s boots %d note %q", id, boots, note)
	}
	if _, _, _, err := startEngine(file, "8000"); err == nil {
		t.Fatal("a 2-byte engine ID was taken")
	}
	// Without a file: a new engine at every start.
	a, _, _, _ := startEngine("", "")
	b, boots, _, _ := startEngine("", "")
	if a == b || boots != 1 {
		t.Fatalf("no state file: the same engine twice, or boots %d", boots)
	}
}
