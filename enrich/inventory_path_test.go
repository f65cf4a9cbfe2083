package enrich

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
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
	watchFor(t, inv, 50*time.Millisecond)
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
	write("b.yaml", "b-edited")
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
	watchFor(t, inv, 50*time.Millisecond)
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

// TestInventoryWatchOutcomeNotTakenAfterReloadPath: the watch loaded the
// old file just as SIGHUP moved the inventory to a new one that did not
// load (not there yet). The watch told its success after SIGHUP told the
// new file's failure, so weir_inventory_last_reload_successful said 1 for
// a file not loaded, and the reloads took the refused inventory part as
// taken since (weir_config_last_reload_successful 1). The outcome of a
// check SIGHUP reloaded during is not told: SIGHUP's is newer.
func TestInventoryWatchOutcomeNotTakenAfterReloadPath(t *testing.T) {
	dir := t.TempDir()
	old, moved := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(old, []byte("devices:\n  - {name: edge1, site: ams1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	// The SIGHUP, started while the watch reads the old file, has
	// returned before the watch goes on from its log line.
	switched := make(chan error, 1)
	var sighup sync.WaitGroup
	h := &hookHandler{Handler: slog.NewTextHandler(&logs, nil), hook: func(r slog.Record) {
		if r.Message == "inventory reloaded" {
			sighup.Wait()
		}
	}}
	inv, err := LoadInventory(old, slog.New(h))
	if err != nil {
		t.Fatal(err)
	}
	waitOutcomes := watchOutcomes(t, inv, &logs)
	var armed atomic.Bool
	armed.Store(true)
	sighup.Add(1)
	inv.afterRead = func() {
		if armed.CompareAndSwap(true, false) {
			go func() { defer sighup.Done(); switched <- inv.ReloadPath(moved) }()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	if err := os.WriteFile(old, []byte("devices:\n  - {name: edge1, site: fra1}\n  - {name: edge2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-switched; err == nil {
		t.Fatal("ReloadPath of a missing file: no error")
	}
	// The watch, following the new file, finds it missing: SIGHUP's
	// failure, told already.
	waitOutcomes("failure")
}

// TestInventorySighupFailureToldOnce: a SIGHUP that found the inventory's
// file missing or broken told it (weir_inventory_reloads_total failure,
// an error logged), then the watch found it so too and told it again: one
// failure counted and logged twice. The watch takes what the SIGHUP
// found as reported; the file made right is told once, as a success.
func TestInventorySighupFailureToldOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		// sighup makes the file wrong at path, the inventory's (before
		// the SIGHUP when move is false), and sends the SIGHUP.
		move bool
		bad  string // the file's content; "" none
	}{
		{"moved to a file not there yet", true, ""},
		{"moved to a broken file", true, "devices: [unterminated\n"},
		{"file broken, then SIGHUP", false, "devices: [unterminated\n"},
		{"file removed, then SIGHUP", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.yaml")
			inv, logs := loggedInventory(t, path)
			waitOutcomes := watchOutcomes(t, inv, logs)
			var checks atomic.Int64
			// Held from the file's change to the SIGHUP's end: the watch,
			// which reads a version it has seen at two checks, cannot
			// find the file wrong before the SIGHUP does.
			var hold sync.Mutex
			inv.beforeCheck = func() {
				hold.Lock()
				defer hold.Unlock()
				checks.Add(1)
			}
			watchFor(t, inv, 5*time.Millisecond)
			hold.Lock()

			target := path
			if tc.move {
				target = filepath.Join(dir, "b.yaml")
			}
			if tc.bad != "" {
				if err := os.WriteFile(target, []byte(tc.bad), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if !tc.move {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if tc.move {
				err = inv.ReloadPath(target)
			} else {
				err = inv.Reload()
			}
			hold.Unlock()
			if err == nil {
				t.Fatal("SIGHUP's reload: no error")
			}
			// Ten checks of the file by the watch after the SIGHUP.
			for from := checks.Load(); checks.Load() < from+10; time.Sleep(time.Millisecond) {
			}
			waitOutcomes("failure")
			if n := strings.Count(logs.String(), "level=ERROR"); n != 0 {
				t.Errorf("the watch logged %d errors of a file SIGHUP found wrong, want none:\n%s", n, logs.String())
			}
			// Made right by a rename, as editors save: written in place,
			// the file is empty from its truncation to its write, and
			// on a loaded machine the watch (a check every 5 ms) found
			// it so at two checks, a failure of its own (seen in a
			// -race run: outcomes failure, failure, success).
			if err := os.WriteFile(target+".new", []byte("devices:\n  - {name: edge1, site: fra1}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(target+".new", target); err != nil {
				t.Fatal(err)
			}
			waitOutcomes("failure", "success")
			if got := siteOf(inv, "edge1"); got != "fra1" {
				t.Errorf("site %q after the file was made right, want fra1", got)
			}
		})
	}
}

// TestInventorySighupDuringACheckToldOnce: a SIGHUP that lands while a
// check of the watch is under way (begun before it, reading the file
// after it: the watch's read waits for SIGHUP's, which holds reloads off)
// found the file missing or broken and told it; the watch, whose check
// began before, was kept from counting it again (observedSince) but still
// logged it: the error logged twice, the once-told promise broken in
// exactly the window where the two meet. The check, stepped here from
// its start, logs nothing of it; the file made right is told, a success.
func TestInventorySighupDuringACheckToldOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  string // the file's content; "" removed
	}{
		{"file broken", "devices: [unterminated\n"},
		{"file removed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.yaml")
			inv, logs := loggedInventory(t, path)
			waitOutcomes := watchOutcomes(t, inv, logs)
			// Each check waits at its start (SIGHUP's count taken) for
			// the test to let it go on: atCheck returns once the watch
			// is there, the check before it done; next lets it go.
			paused, resume, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
			inv.beforeCheck = func() {
				select {
				case paused <- struct{}{}:
					select {
					case <-resume:
					case <-stop:
					}
				case <-stop:
				}
			}
			watchFor(t, inv, time.Millisecond)
			t.Cleanup(func() { close(stop) }) // before the watch's: cleanups run last first
			atCheck := func() { <-paused }
			next := func() { resume <- struct{}{} }

			atCheck()
			next() // the loaded file, as LoadInventory left it
			atCheck()
			if tc.bad != "" {
				if err := os.WriteFile(path, []byte(tc.bad), 0o644); err != nil {
					t.Fatal(err)
				}
				next() // seen once: read at the next check
				atCheck()
			} else if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			// The check has begun: SIGHUP now.
			if err := inv.Reload(); err == nil {
				t.Fatal("SIGHUP's reload: no error")
			}
			for range 5 {
				next()
				atCheck()
			}
			waitOutcomes("failure")
			if n := strings.Count(logs.String(), "level=ERROR"); n != 0 {
				t.Errorf("the watch logged %d errors of a file SIGHUP found wrong, want none:\n%s", n, logs.String())
			}
			if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: fra1}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				next()
				atCheck()
			}
			waitOutcomes("failure", "success")
			if got := siteOf(inv, "edge1"); got != "fra1" {
				t.Errorf("site %q after the file was made right, want fra1", got)
			}
		})
	}
}

// hookHandler calls hook with each record before handling it.
type hookHandler struct {
	slog.Handler
	hook func(slog.Record)
}

func (h *hookHandler) Handle(ctx context.Context, r slog.Record) error {
	h.hook(r)
	return h.Handler.Handle(ctx, r)
}

func (h *hookHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &hookHandler{h.Handler.WithAttrs(as), h.hook}
}

func (h *hookHandler) WithGroup(name string) slog.Handler {
	return &hookHandler{h.Handler.WithGroup(name), h.hook}
}

// loggedInventory writes an inventory of edge1 at site ams1 to path and
// loads it, logging as text into the buffer it returns.
func loggedInventory(t *testing.T, path string) (*Inventory, *syncbuf.Buffer) {
	t.Helper()
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: ams1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	inv, err := LoadInventory(path, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return inv, logs
}

// watchFor runs inv's watch, checking every interval, until the test ends.
func watchFor(t *testing.T, inv *Inventory, every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, every); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}
