package enrich

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInventoryReloadPathSwitchesFile: ReloadPath loads another file (a
// SIGHUP after the config's enrich.inventory changed) and the watch
// follows it from then on, leaving the old file alone; a path that does
// not load keeps the devices loaded until the watch loads it; an empty path empties
// the inventory, and a path given to an inventory started without one
// loads and is watched.
func TestInventoryReloadPathSwitchesFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, site string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: "+site+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := write("a.yaml", "from-a"), write("b.yaml", "from-b")
	inv, err := LoadInventory(a, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 50*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	waitSite := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); siteOf(inv, "edge1") != want; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("edge1 site %q, want %q", siteOf(inv, "edge1"), want)
			}
		}
	}

	if err := inv.ReloadPath(b); err != nil {
		t.Fatal(err)
	}
	if got := siteOf(inv, "edge1"); got != "from-b" {
		t.Fatalf("after ReloadPath(b): site %q, want from-b", got)
	}
	if got := inv.Path(); got != b {
		t.Errorf("Path() %q, want %q", got, b)
	}
	// The watch reads b now: an edit of b loads, one of a does not.
	write("a.yaml", "a-edited")
	b = write("b.yaml", "b-edited")
	waitSite("b-edited")
	// A file it does not know the version of (a, edited) would have been
	// loaded by now, two checks after b's edit was.
	time.Sleep(200 * time.Millisecond)
	if got := siteOf(inv, "edge1"); got != "b-edited" {
		t.Fatalf("site %q after a was edited, want b's b-edited: the watch still reads a", got)
	}

	// A file that is not there yet keeps the devices loaded, and is
	// loaded once it is.
	late := filepath.Join(dir, "late.yaml")
	if err := inv.ReloadPath(late); err == nil {
		t.Fatal("ReloadPath of a missing file: no error")
	}
	if got, path := siteOf(inv, "edge1"), inv.Path(); got != "b-edited" || path != late {
		t.Fatalf("after a path that did not load: site %q, file %q; want b-edited, %q", got, path, late)
	}
	write("late.yaml", "late")
	waitSite("late")

	if err := inv.ReloadPath(""); err != nil {
		t.Fatal(err)
	}
	if got := siteOf(inv, "edge1"); got != "" {
		t.Fatalf("inventory path removed: edge1 still has site %q", got)
	}
	// With no file, the watch waits for one.
	if err := inv.ReloadPath(a); err != nil {
		t.Fatal(err)
	}
	waitSite("a-edited")
	write("a.yaml", "a-again")
	waitSite("a-again")
}

// TestInventoryStartedWithoutFileTakesOne: an inventory loaded from no
// path (weir started without enrich.inventory) loads one given later and
// watches it, its watch started before.
func TestInventoryStartedWithoutFileTakesOne(t *testing.T) {
	inv, err := LoadInventory("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 50*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: one}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := inv.ReloadPath(path); err != nil {
		t.Fatal(err)
	}
	if got := siteOf(inv, "edge1"); got != "one" {
		t.Fatalf("site %q, want one", got)
	}
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: two, region: r}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); siteOf(inv, "edge1") != "two"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("site %q after the file changed, want two: not watched", siteOf(inv, "edge1"))
		}
	}
}
