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

// TestSet: each key is throttled on its own, a forgotten key is logged at
// once, and a full set starts again rather than grow.
func TestSet(t *testing.T) {
	s := Set{Max: 2}
	t0 := time.Now()
	for _, k := range []string{"a", "b"} {
		if _, ok := s.Due(k, t0); !ok {
			t.Fatalf("%s: first line held back", k)
		}
	}
	if _, ok := s.Due("a", t0.Add(time.Second)); ok {
		t.Fatal("a: let through within the interval")
	}
	if !s.Forget("a") || s.Forget("a") {
		t.Fatal("Forget: a had state, then none")
	}
	if n, ok := s.Due("a", t0.Add(2*time.Second)); !ok || n != 1 {
		t.Fatalf("a after Forget: %d %v", n, ok)
	}
	if _, ok := s.Due("c", t0.Add(3*time.Second)); !ok || len(s.m) != 1 {
		t.Fatalf("a third key: %d keys kept, want the set started again", len(s.m))
	}
}

func TestRun(t *testing.T) {
	var r Run
	now := time.Unix(1_800_000_000, 0)
	if n := r.Ended(); n != 0 {
		t.Fatalf("Ended with no failure: %d", n)
	}
	if n, due := r.Failed(now); !due || n != 1 {
		t.Fatalf("first failure: %d, %v", n, due)
	}
	if _, due := r.Failed(now.Add(time.Second)); due {
		t.Fatal("second failure within Every logged")
	}
	if n, due := r.Failed(now.Add(Every)); !due || n != 2 {
		t.Fatalf("failure after Every: %d, %v", n, due)
	}
	if n := r.Ended(); n != 3 {
		t.Fatalf("Ended: %d, want 3", n)
	}
	if n, due := r.Failed(now.Add(Every + time.Second)); !due || n != 1 {
		t.Fatalf("a new run's first failure: %d, %v", n, due)
	}
}
