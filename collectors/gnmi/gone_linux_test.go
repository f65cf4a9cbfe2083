package gnmi

import (
	"slices"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/wholefile/wholefiletest"
)

// TestUntoldRemovalsShareSaves: the removals a reload could not tell (a
// failing broker) are kept in the state file by a few saves, not one
// each: 199 saves, each synced, held the reload (and Update, waiting on
// the collector's lock) 0.8 s here, seconds on a slow disk.
func TestUntoldRemovalsShareSaves(t *testing.T) {
	const n = 200
	c, _, state, cfgs, _ := manyDown(t, n)
	saves := wholefiletest.Saves(t, state)
	if err := c.Update(cfgs[:1]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the reload applied", func() bool { return slices.Equal(memberNames(c), []string{cfgs[0].Name}) })
	known, err := readKnown(state)
	if err != nil {
		t.Fatal(err)
	}
	if len(known) != n {
		t.Errorf("state file lists %d targets, want the one left and the %d removals not told", len(known), n-1)
	}
	// The reload's own save, and the removals' (failing within moments of
	// each other).
	if got := saves(); got > n/4 {
		t.Errorf("state file saved %d times for a reload and %d removals not told, want a few", got, n-1)
	} else {
		t.Logf("state file saved %d times for a reload and %d removals not told", got, n-1)
	}
}
