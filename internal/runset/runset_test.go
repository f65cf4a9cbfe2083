package runset

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder counts starts and stops per member, and which are running.
type recorder struct {
	mu      sync.Mutex
	starts  map[string]int
	running map[string]int
	gone    []string
}

func (r *recorder) member(name string, cfg any) Member {
	return Member{Name: name, Config: cfg, Run: func(ctx context.Context) {
		r.mu.Lock()
		r.starts[name]++
		r.running[name]++
		r.mu.Unlock()
		<-ctx.Done()
		r.mu.Lock()
		r.running[name]--
		r.mu.Unlock()
	}, Gone: func(context.Context) {
		r.mu.Lock()
		r.gone = append(r.gone, name)
		r.mu.Unlock()
	}}
}

func (r *recorder) waitRunning(t *testing.T, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		got = got[:0]
		twice := false
		for name, n := range r.running {
			if n > 0 {
				got = append(got, name)
			}
			twice = twice || n > 1
		}
		r.mu.Unlock()
		if twice {
			t.Fatal("a member runs twice at once")
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
	}
	t.Fatalf("running %v, want %v", got, want)
}

func TestUpdates(t *testing.T) {
	r := &recorder{starts: map[string]int{}, running: map[string]int{}}
	var s Set
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	firstB := r.member("b", []string{"x"})
	firstB.Value = "first b"
	go func() { s.Run(ctx, []Member{r.member("a", 1), firstB}); close(done) }()
	r.waitRunning(t, "a", "b")

	// b unchanged (equal, not identical, config), a changed, c added.
	s.Update([]Member{r.member("a", 2), r.member("b", []string{"x"}), r.member("c", 1)})
	r.waitRunning(t, "a", "b", "c")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		r.mu.Lock()
		a, b, c := r.starts["a"], r.starts["b"], r.starts["c"]
		r.mu.Unlock()
		if a == 2 && b == 1 && c == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("starts a=%d b=%d c=%d, want 2 (restarted), 1 (untouched), 1", a, b, c)
		}
	}

	// Members: the running member for each name, not the equal newer one.
	ms, ok := s.Members()
	if !ok || len(ms) != 3 || ms[1].Value != "first b" {
		t.Fatalf("members %v %v, want a, the first b, c", ms, ok)
	}

	s.Update([]Member{r.member("a", 3), r.member("b", []string{"x"})}) // c removed, a restarted
	r.waitRunning(t, "a", "b")
	s.Update([]Member{r.member("c", 1)}) // a and b removed
	r.waitRunning(t, "c")
	r.mu.Lock()
	gone := slices.Clone(r.gone)
	r.mu.Unlock()
	slices.Sort(gone)
	if !slices.Equal(gone, []string{"a", "b", "c"}) {
		t.Errorf("gone %v, want a, b and c once each (a restart is not gone)", gone)
	}
	s.Update(nil)
	r.waitRunning(t)

	cancel()
	<-done
	r.waitRunning(t)
	if r.mu.Lock(); len(r.gone) != 4 { // c again, by Update(nil)
		t.Errorf("gone %v after the set stopped: stopping is not removing", r.gone)
	}
	r.mu.Unlock()
}

// TestUpdateBeforeRun: an update made before Run starts is applied when
// it does, after the initial members.
func TestUpdateBeforeRun(t *testing.T) {
	r := &recorder{starts: map[string]int{}, running: map[string]int{}}
	var s Set
	s.Update([]Member{r.member("late", 1)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, []Member{r.member("early", 1)}); close(done) }()
	r.waitRunning(t, "late")
	cancel()
	<-done
	r.waitRunning(t)
}

// TestMembersIncludesAStartedMember: a member that has started is in
// Members, as seen from its own goroutine.
func TestMembersIncludesAStartedMember(t *testing.T) {
	var s Set
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan bool, 1)
	member := Member{Name: "m", Run: func(ctx context.Context) {
		ms, _ := s.Members()
		seen <- len(ms) == 1 && ms[0].Name == "m"
		<-ctx.Done()
	}}
	done := make(chan struct{})
	go func() { s.Run(ctx, nil); close(done) }()
	s.Update([]Member{member})
	if !<-seen {
		t.Error("a started member is not in Members")
	}
	cancel()
	<-done
}

// TestGonesRunAtOnce: the Gones of an update's removed members run at
// once, not one after the other: each here returns only once all have
// been called, so called one at a time the first would wait for good
// (until the set stops). The update's other member starts after every
// Gone has returned.
func TestGonesRunAtOnce(t *testing.T) {
	const n = 50
	var (
		mu       sync.Mutex
		called   int
		returned int
	)
	all := make(chan struct{})
	var members []Member
	for i := range n {
		members = append(members, Member{Name: fmt.Sprint(i), Run: func(ctx context.Context) { <-ctx.Done() },
			Gone: func(ctx context.Context) {
				mu.Lock()
				if called++; called == n {
					close(all)
				}
				mu.Unlock()
				select {
				case <-all:
				case <-ctx.Done():
				}
				time.Sleep(10 * time.Millisecond)
				mu.Lock()
				returned++
				mu.Unlock()
			}})
	}
	var s Set
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, members); close(done) }()
	defer func() { cancel(); <-done }()
	started := make(chan int, 1)
	s.Update([]Member{{Name: "next", Run: func(ctx context.Context) {
		mu.Lock()
		started <- returned
		mu.Unlock()
		<-ctx.Done()
	}}})
	select {
	case r := <-started:
		if r != n {
			t.Errorf("the update's added member started after %d of %d Gones returned, want all", r, n)
		}
	case <-time.After(10 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the update is not applied after 10 s: %d of %d Gones called, one at a time", called, n)
	}
}

// TestGoneWithinIsOneDeadline: with GoneWithin, the Gones of an update get
// one deadline, however late each starts its wait: what they wait on ends
// at one time.
func TestGoneWithinIsOneDeadline(t *testing.T) {
	const n = 20
	var (
		mu        sync.Mutex
		deadlines = map[time.Time]int{}
	)
	var members []Member
	for i := range n {
		members = append(members, Member{Name: fmt.Sprint(i), Run: func(ctx context.Context) { <-ctx.Done() },
			Gone: func(ctx context.Context) {
				time.Sleep(time.Duration(i) * 5 * time.Millisecond)
				d, ok := ctx.Deadline()
				mu.Lock()
				if ok {
					deadlines[d]++
				}
				mu.Unlock()
				<-ctx.Done()
			}})
	}
	s := Set{GoneWithin: 200 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, members); close(done) }()
	defer func() { cancel(); <-done }()
	started := make(chan time.Time, 1)
	at := time.Now()
	s.Update([]Member{{Name: "next", Run: func(ctx context.Context) { started <- time.Now(); <-ctx.Done() }}})
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the update is not applied after 10 s: the Gones did not end at their deadline")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deadlines) != 1 {
		t.Fatalf("the Gones had %d deadlines (%v), want one for all %d", len(deadlines), deadlines, n)
	}
	for d, k := range deadlines {
		if k != n || d.Sub(at) < 200*time.Millisecond {
			t.Errorf("deadline %v after the update for %d Gones, want GoneWithin (200ms) after, for all %d", d.Sub(at), k, n)
		}
	}
}

// TestGonesBoundedAtOnce: the Gones of an update run at once, but no more
// than MaxGonesAtOnce: a reload taking out 100,000 targets made as many
// goroutines, each publishing.
func TestGonesBoundedAtOnce(t *testing.T) {
	const n = 3 * MaxGonesAtOnce
	var running, most atomic.Int64
	var members []Member
	for i := range n {
		members = append(members, Member{Name: fmt.Sprint(i), Run: func(ctx context.Context) { <-ctx.Done() },
			Gone: func(ctx context.Context) {
				now := running.Add(1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				time.Sleep(20 * time.Millisecond)
				running.Add(-1)
			}})
	}
	var s Set
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, members); close(done) }()
	defer func() { cancel(); <-done }()
	started := make(chan struct{})
	s.Update([]Member{{Name: "next", Run: func(ctx context.Context) { close(started); <-ctx.Done() }}})
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the update is not applied after 30 s")
	}
	if m := most.Load(); m > MaxGonesAtOnce || m < 2 {
		t.Errorf("%d Gones ran at once at most, want 2 to %d", m, MaxGonesAtOnce)
	}
}
