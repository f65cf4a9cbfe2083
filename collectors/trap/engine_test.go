package trap

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestStartEngineOnAFullDisk: weir restarted on a full disk (to let its
// sinks drain and retention free space) starts its trap receiver: the
// engine state, which cannot be replaced by a new file, is written over
// the old one's blocks with boots raised. It used to fail the start
// ("engine state ...: no space left on device"), and weir with it.
func TestStartEngineOnAFullDisk(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	file := filepath.Join(dir, "trap", "engine.json")
	id, boots, _, err := startEngine(file, "", time.Now())
	if err != nil || boots != 1 {
		t.Fatalf("first start: boots %d, %v", boots, err)
	}
	// Fill the disk.
	fill, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := fill.Write(buf); err != nil {
			break
		}
	}
	fill.Close()
	if f, err := os.CreateTemp(filepath.Join(dir, "trap"), "probe"); err == nil {
		if _, err := f.Write(buf); err == nil {
			t.Skip("the tmpfs is not full")
		}
		f.Close()
		os.Remove(f.Name())
	}
	for want := uint32(2); want <= 3; want++ {
		id2, boots, note, err := startEngine(file, "", time.Now())
		if err != nil || id2 != id || boots != want || note != "" {
			t.Fatalf("start on a full disk: id %x (want %x), boots %d (want %d), note %q, %v", id2, id, boots, want, note, err)
		}
	}
	// A configured ID of the longest kind fits over it too.
	long := strings.Repeat("ab", 32)
	now := time.Now()
	if _, boots, _, err := startEngine(file, long, now); err != nil || boots != bootsFloor(now) {
		t.Fatalf("32-byte engine ID on a full disk: boots %d, %v", boots, err)
	}
	if id3, boots, _, err := startEngine(file, "", time.Now()); err != nil || hex.EncodeToString([]byte(id3)) != long || boots < 2 {
		t.Fatalf("after it: id %x, boots %d, %v", id3, boots, err)
	}
}
