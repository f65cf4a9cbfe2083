package trap

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartEngine: the engine ID is kept across starts and boots counts
// them; a configured ID without its count starts above any count it may
// have had; an unreadable state starts a new engine and says so.
func TestStartEngine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trap", "engine.json")
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	floor := bootsFloor(now)
	start := func(configured string) (string, uint32, string) {
		t.Helper()
		id, boots, note, err := startEngine(file, configured, now)
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
	if id, boots, _ := start("0x" + fixed); id != fixed || boots != floor {
		t.Fatalf("configured: %s boots %d, want %d", id, boots, floor)
	}
	if id, boots, _ := start(fixed); id != fixed || boots != floor+1 {
		t.Fatalf("configured again: %s boots %d", id, boots)
	}
	if id, boots, _ := start(""); id != fixed || boots != floor+2 {
		t.Fatalf("configuration removed: %s boots %d, want the kept %s", id, boots, fixed)
	}
	// A state edited by hand, in upper case, is the same engine.
	os.WriteFile(file, []byte(`{"engine_id":"80001F8880AABBCCDD","boots":7}`), 0o644)
	if id, boots, _ := start(""); id != fixed || boots != 8 {
		t.Fatalf("upper-case state: %s boots %d, want %s boots 8", id, boots, fixed)
	}
	// A configured ID whose state is broken never goes back in boots.
	os.WriteFile(file, []byte("{not json"), 0o644)
	if id, boots, note := start(fixed); id != fixed || boots != floor || !strings.Contains(note, "unreadable") || !strings.Contains(note, "above") {
		t.Fatalf("configured, corrupt state: %s boots %d note %q", id, boots, note)
	}
	// Without a configured ID, a broken state is a new engine, said so.
	os.WriteFile(file, []byte("{not json"), 0o644)
	if id, boots, note := start(""); id == fixed || boots != 1 || !strings.Contains(note, "a new engine") {
		t.Fatalf("corrupt state: %s boots %d note %q", id, boots, note)
	}
	os.WriteFile(file, []byte(`{"engine_id":"800000","boots":7}`), 0o644)
	if _, boots, note := start(""); boots != 1 || !strings.Contains(note, "not 5 to 32 bytes") {
		t.Fatalf("invalid kept ID: boots %d note %q", boots, note)
	}
	if _, _, _, err := startEngine(file, "8000", now); err == nil {
		t.Fatal("a 2-byte engine ID was taken")
	}
	// Without a file: a new engine at every start.
	a, _, _, _ := startEngine("", "", now)
	b, boots, _, _ := startEngine("", "", now)
	if a == b || boots != 1 {
		t.Fatalf("no state file: the same engine twice, or boots %d", boots)
	}
}
