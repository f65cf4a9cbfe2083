package snmp

import (
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/wholefile/wholefiletest"
)

// TestUntoldRemovalsShareSaves: the removals a reload could not tell (a
// failing broker) are kept in the state file by a few saves, not one
// each: 199 saves, each synced, held the reload for a second or more.
func TestUntoldRemovalsShareSaves(t *testing.T) {
	const n = 200
	p, _, state, cfgs, _ := manyPolled(t, n)
	saves := wholefiletest.Saves(t, state)
	if err := p.Update(cfgs[:1]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !slices.Equal(memberNames(p), []string{cfgs[0].Name}); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the reload not applied after 30 s")
		}
	}
	if got := knownNames(t, state); len(got) != n {
		t.Errorf("state file lists %d targets, want the one left and the %d removals not told", len(got), n-1)
	}
	// The reload's own save, and the removals' (failing at one deadline).
	if got := saves(); got > n/4 {
		t.Errorf("state file saved %d times for a reload and %d removals not told, want a few", got, n-1)
	} else {
		t.Logf("state file saved %d times for a reload and %d removals not told", got, n-1)
	}
}
