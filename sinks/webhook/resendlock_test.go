package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
)

// TestResendDoesNotHoldTheLock: a re-send round to an Alertmanager that is
// slow to answer (or hung until the timeout) must not hold the sink's lock
// through its posts: Close (and the periodic save, which take it) go on
// while a re-send post hangs, and a stop ends the round at once. Order is
// kept: an alert a batch resolves while a round is under way is not
// re-posted firing after its resolution.
func TestResendDoesNotHoldTheLock(t *testing.T) {
	type post struct {
		objects map[string]bool // object: firing
	}
	var (
		mu      sync.Mutex
		posts   []post
		armed   bool
		held    = make(chan struct{}, 1)
		release = make(chan struct{})
	)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var as []Alert
		json.NewDecoder(r.Body).Decode(&as)
		p := post{objects: map[string]bool{}}
		for _, a := range as {
			// Firing: its end not yet come, give or take a minute: the
			// endsAt of a firing post is 80 ms after it here, which a
			// loaded machine under -race may take to deliver (a resolved
			// one ends at its event's time, days before).
			p.objects[a.Labels["object"]] = a.EndsAt == nil || a.EndsAt.After(time.Now().Add(-time.Minute))
		}
		mu.Lock()
		posts = append(posts, p)
		hold := armed
		armed = false
		mu.Unlock()
		if hold {
			held <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer hs.Close()
	defer close(release)
	s, err := NewSink(configs.Sink{Name: "am", URL: hs.URL, Format: "alertmanager"}, sinks.Env{StateDir: t.TempDir()},
		time.Now, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	amWrite(t, s, downs(0, resendChunk+10)...) // two posts a round
	arm := func() { mu.Lock(); armed = true; mu.Unlock() }
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s", what)
		}
	}
	arm()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan struct{})
	go func() { s.Run(ctx); close(ran) }()
	wait(held, "no re-send posted")

	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	wait(closed, "Close waited for a hung re-send post")

	wrote := make(chan error, 1)
	go func() {
		wrote <- s.Write(context.Background(), []sinks.Item{amEv("interface_up", "Ethernet5", "", time.Minute)})
	}()
	release <- struct{}{}
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the batch never posted")
	}
	// A few more rounds, then a stop while a post hangs.
	for {
		mu.Lock()
		n := len(posts)
		mu.Unlock()
		if n >= 8 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	arm()
	wait(held, "no re-send posted after the batch")
	cancel()
	wait(ran, "Run did not stop while a re-send post hung")

	mu.Lock()
	defer mu.Unlock()
	resolved := -1
	for i, p := range posts {
		firing, ok := p.objects["Ethernet5"]
		switch {
		case ok && !firing && resolved < 0:
			resolved = i
		case ok && firing && resolved >= 0:
			t.Errorf("post %d re-sent Ethernet5 firing after post %d resolved it", i, resolved)
		}
	}
	if resolved < 0 {
		t.Error("Ethernet5 was never resolved")
	}
}
