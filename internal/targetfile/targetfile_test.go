package targetfile

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
)

func identity(s string) string { return s }

func TestSaveListsUnsaidUntilListedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "targets.json")
	targets := []string{"a", "b"}
	k := New(path, func() []string { return slices.Clone(targets) }, identity, slog.New(slog.DiscardHandler), "test")
	if got, err := Read[string](path); err != nil || got != nil {
		t.Fatalf("before the first save: %v, %v; want nothing", got, err)
	}
	k.Save()
	if got, _ := Read[string](path); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("saved %v, want [a b]", got)
	}
	targets = []string{"a"}
	k.SaveSince(k.Unsaid("b"))
	if got, _ := Read[string](path); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("b removed but not told: saved %v, want [a b]", got)
	}
	targets = []string{"a", "b"} // listed again: no longer unsaid
	k.Save()
	targets = []string{"a"}
	k.Save()
	if got, _ := Read[string](path); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("b listed again then removed and told: saved %v, want [a]", got)
	}
}

// TestSaveSinceSharesSaves: removals that failed together save the file
// once or a few times, not once each.
func TestSaveSinceSharesSaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "targets.json")
	var saves int
	var mu sync.Mutex
	k := New(path, func() []string {
		mu.Lock()
		saves++
		mu.Unlock()
		return nil
	}, identity, slog.New(slog.DiscardHandler), "test")
	const n = 100
	var gens []uint64
	for i := range n {
		gens = append(gens, k.Unsaid(strings.Repeat("x", i+1)))
	}
	var wg sync.WaitGroup
	for _, g := range gens {
		wg.Go(func() { k.SaveSince(g) })
	}
	wg.Wait()
	got, err := Read[string](path)
	if err != nil || len(got) != n {
		t.Fatalf("saved %d unsaid (%v), want %d", len(got), err, n)
	}
	if saves != 1 {
		t.Fatalf("%d saves for %d removals kept before any save, want 1", saves, n)
	}
}

// TestRunSavesAgainAfterAFailedSave: a save that failed (a file where the
// directory should be, as a full disk would) is logged once, tried again
// by Run, and its recovery logged once.
func TestRunSavesAgainAfterAFailedSave(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "snmp")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "targets.json")
	var logs syncbuf.Buffer
	k := New(path, func() []string { return []string{"a"} }, identity, slog.New(slog.NewTextHandler(&logs, nil)), "test")
	k.Save()
	k.Save()
	if n := strings.Count(logs.String(), "cannot keep the list of targets"); n != 1 {
		t.Fatalf("two failed saves logged %d times, want once:\n%s", n, logs.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { k.Run(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	os.Remove(blocker) // space freed
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if got, _ := Read[string](path); slices.Equal(got, []string{"a"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not saved again after the failure ended")
		}
	}
	cancel()
	<-done
	if n := strings.Count(logs.String(), "the list of targets is kept again"); n != 1 {
		t.Fatalf("the recovery logged %d times, want once:\n%s", n, logs.String())
	}
}

func TestNoPathKeepsNothing(t *testing.T) {
	called := false
	k := New("", func() []string { called = true; return nil }, identity, slog.New(slog.DiscardHandler), "test")
	k.Save()
	k.SaveSince(k.Unsaid("a"))
	if called {
		t.Fatal("a keeper with no file read the targets")
	}
}
