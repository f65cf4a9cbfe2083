package throttle

import (
	"testing"
	"time"
)

// TestThrottle: a repeated line goes through at once, then once per Every
// with the times it happened since.
func TestThrottle(t *testing.T) {
	var th Throttle
	t0 := time.Now()
	if n, ok := th.Due(t0); !ok || n != 1 {
		t.Fatalf("first: %d %v", n, ok)
	}
	for i := range 3 {
		if _, ok := th.Due(t0.Add(time.Duration(i+1) * time.Second)); ok {
			t.Fatal("let through within the interval")
		}
	}
	if n, ok := th.Due(t0.Add(Every)); !ok || n != 4 {
		t.Fatalf("after the interval: %d %v, want 4 true", n, ok)
	}
}
