package enrich

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
)

// TestInventoryReloadOfThousandsOfMistakesLogsALine: an inventory the
// watch finds broken on thousands of lines (a generated file gone wrong)
// is one log line of its first mistakes and a count of the rest, not one
// of every mistake (3,000 unknown keys made 600 KB).
func TestInventoryReloadOfThousandsOfMistakesLogsALine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: ams1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	inv, err := LoadInventory(path, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	var b strings.Builder
	b.WriteString("devices:\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "  - {name: d%d, bogus: %d}\n", i, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(path, later, later)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "inventory reload failed"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the broken file not reported:\n%.2000s", logs.String())
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if len(line) > 8<<10 {
			t.Errorf("a log line of %d bytes: %.300s...", len(line), line)
		}
	}
	if !strings.Contains(logs.String(), "and 2980 more (weir check -c FILE lists them all)") {
		t.Errorf("no count of the mistakes left out:\n%.2000s", logs.String())
	}
	if got := siteOf(inv, "edge1"); got != "ams1" {
		t.Errorf("site %q after the broken file; want the previous ams1", got)
	}
}
