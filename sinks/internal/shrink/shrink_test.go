package shrink

import "testing"

func TestKeep(t *testing.T) {
	var tr Tracker
	big := make([]byte, 0, 8<<20)
	// Used whole, or nearly: kept however long.
	for range 3 * After {
		if tr.Keep(big[:4<<20]) == nil {
			t.Fatal("a buffer used at half its capacity was let go")
		}
	}
	// Used at a tenth: kept After-1 times, then let go.
	for i := 1; i < After; i++ {
		if tr.Keep(big[:800<<10]) == nil {
			t.Fatalf("let go after %d small uses, want %d", i, After)
		}
	}
	if tr.Keep(big[:800<<10]) != nil {
		t.Fatalf("kept after %d uses under a quarter of its capacity", After)
	}
	// One large use in between starts the count again.
	for i := 0; i < After-1; i++ {
		tr.Keep(big[:1])
	}
	tr.Keep(big[:8<<20])
	if tr.Keep(big[:1]) == nil {
		t.Fatal("let go right after a use of its whole capacity")
	}
	// Small buffers are never let go.
	var small Tracker
	for range 2 * After {
		if small.Keep(make([]byte, 0, MinCap-1)) == nil {
			t.Fatal("a buffer under MinCap was let go")
		}
	}
}
