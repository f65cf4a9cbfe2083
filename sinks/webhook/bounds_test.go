package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
)

// downs is n interface_down events of distinct interfaces of edge1, from
// the first'th.
func downs(first, n int) []sinks.Item {
	items := make([]sinks.Item, n)
	for i := range items {
		items[i] = amEv("interface_down", fmt.Sprintf("Ethernet%d", first+i), "", 0)
	}
	return items
}

// TestFiringAlertsAreBounded: past maxActiveAlerts, new firing alerts are
// posted but not remembered (re-sent, saved): a sender inventing objects
// cannot grow what every re-send and save costs without bound.
func TestFiringAlertsAreBounded(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	s := amSink(t, hs.URL, "")
	for first := 0; first < maxActiveAlerts+5000; first += 5000 {
		amWrite(t, s, downs(first, 5000)...)
	}
	if len(s.active) != maxActiveAlerts {
		t.Errorf("%d firing alerts remembered, want the bound %d", len(s.active), maxActiveAlerts)
	}
	// An end still ends one remembered.
	amWrite(t, s, amEv("interface_up", "Ethernet0", "", time.Minute))
	if len(s.active) != maxActiveAlerts-1 {
		t.Errorf("%d firing alerts remembered after one ended", len(s.active))
	}
}

// TestStateSavedAtMostEverySaveEvery: the firing alerts are saved after a
// batch at most every saveEvery (their cost is that of all of them), and
// what changed since is saved when the sink closes.
func TestStateSavedAtMostEverySaveEvery(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	dir := t.TempDir()
	s := amSink(t, hs.URL, dir)
	saved := func() int {
		data, err := os.ReadFile(filepath.Join(dir, "am.alerts.json"))
		if err != nil {
			return -1
		}
		var m map[string]Alert
		json.Unmarshal(data, &m)
		return len(m)
	}
	amWrite(t, s, downs(0, 3)...)
	if n := saved(); n != 3 {
		t.Fatalf("after the first batch %d alerts saved, want 3", n)
	}
	amWrite(t, s, downs(3, 2)...)
	if n := saved(); n != 3 {
		t.Errorf("a second batch at once: %d alerts saved, want the first's 3 (saved at most every %v)", n, saveEvery)
	}
	s.Close()
	if n := saved(); n != 5 {
		t.Errorf("after Close %d alerts saved, want 5", n)
	}
}

// TestResendInChunks: the minute's re-send of the firing alerts posts at
// most resendChunk of them at a time (one post of all could take longer
// than the timeout, and Alertmanager would then expire them all).
func TestResendInChunks(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var as []Alert
		json.NewDecoder(r.Body).Decode(&as)
		mu.Lock()
		sizes = append(sizes, len(as))
		mu.Unlock()
	}))
	defer hs.Close()
	s, err := NewSink(configs.Sink{Name: "am", URL: hs.URL, Format: "alertmanager"}, sinks.Env{}, time.Now, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	amWrite(t, s, downs(0, 2*resendChunk+500)...)
	mu.Lock()
	sizes = nil
	mu.Unlock()
	// Until a round is posted (a loaded machine under -race took more
	// than a fixed half second).
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			mu.Lock()
			n := len(sizes)
			mu.Unlock()
			if n >= 3 {
				cancel()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	s.Run(ctx)
	mu.Lock()
	defer mu.Unlock()
	// Each round: three posts, of at most resendChunk, of every alert.
	if len(sizes) < 3 || max(sizes[0], sizes[1], sizes[2]) > resendChunk || sizes[0]+sizes[1]+sizes[2] != 2*resendChunk+500 {
		t.Errorf("re-send posts of %v alerts, want rounds of three of at most %d", sizes, resendChunk)
	}
}

// TestKilledBetweenSavesKeepsChanges: the firing alerts are saved every
// saveEvery, but a batch's offsets are committed at once; a process
// killed in between restarted with the last save, so an alert ended since
// was re-posted as firing every minute for ever (the event that ended it
// is not read again), and one begun since was not re-posted. The changes
// in between are journaled.
func TestKilledBetweenSavesKeepsChanges(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	dir := t.TempDir()
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, downs(0, 3)...) // saved: Ethernet0-2 firing
	amWrite(t, s, amEv("interface_up", "Ethernet1", "", time.Minute), amEv("interface_down", "Ethernet7", "", time.Minute))
	// Killed: no Close. The next run loads what the first left.
	s2 := amSink(t, hs.URL, dir)
	var got []string
	for _, a := range s2.active {
		got = append(got, a.Labels["object"])
	}
	slices.Sort(got)
	if want := []string{"Ethernet0", "Ethernet2", "Ethernet7"}; !slices.Equal(got, want) {
		t.Errorf("after a kill between saves the firing alerts are %v, want %v", got, want)
	}
	// Its first save takes in the journal, which is then empty.
	s2.Close()
	if _, err := os.Stat(filepath.Join(dir, "am.alerts.json.journal")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("journal left after a save: %v", err)
	}
	s3 := amSink(t, hs.URL, dir)
	if len(s3.active) != 3 {
		t.Errorf("%d alerts after a save and a restart, want 3", len(s3.active))
	}
}

// TestJournalTornLineKeepsLaterChanges: a journal line cut short (a process
// killed in its write, a full disk writing part of it) was followed by the
// next changes on the same line, when the save that would have emptied the
// journal failed too: at the next start the replay stopped at that line,
// and every change after it was lost (an ended alert re-posted as firing
// for ever, a begun one not re-posted).
func TestJournalTornLineKeepsLaterChanges(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	dir := t.TempDir()
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, downs(0, 2)...) // saved: Ethernet0-1 firing
	journal := filepath.Join(dir, "am.alerts.json.journal")
	// Killed while appending a change.
	if err := os.WriteFile(journal, []byte(`{"key":"edge1\u0000Ethernet9","alert":{"labels":{"alertn`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The state file cannot be replaced for now.
	if err := os.Mkdir(filepath.Join(dir, "am.alerts.json.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	s2 := amSink(t, hs.URL, dir)
	amWrite(t, s2, amEv("interface_up", "Ethernet0", "", time.Minute), amEv("interface_down", "Ethernet5", "", time.Minute))
	// Killed again: the next run has the save and the journal.
	s3 := amSink(t, hs.URL, dir)
	var got []string
	for _, a := range s3.active {
		got = append(got, a.Labels["object"])
	}
	slices.Sort(got)
	if want := []string{"Ethernet1", "Ethernet5"}; !slices.Equal(got, want) {
		t.Errorf("after a torn journal line the firing alerts are %v, want %v", got, want)
	}
}

// TestJournalOlderThanSaveIgnored: a weir killed between saves leaves a
// journal; an earlier weir (a downgrade) knows no journal, ends an alert,
// and saves without removing it; this build again replayed the old
// journal over that newer save and re-posted as firing, every minute for
// ever, the alert the save had ended. The journal names the save it
// follows.
func TestJournalOlderThanSaveIgnored(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	dir := t.TempDir()
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, downs(0, 2)...)                                       // saved: Ethernet0-1 firing
	amWrite(t, s, amEv("interface_down", "Ethernet7", "", time.Minute)) // journaled
	// Killed; the earlier weir starts from the save alone, Ethernet7
	// ends meanwhile (it never knew it), and it saves what it has, the
	// journal left as it was.
	state := filepath.Join(dir, "am.alerts.json")
	saved, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	var old map[string]Alert
	if err := json.Unmarshal(saved, &old); err != nil {
		t.Fatal(err)
	}
	for k, a := range old {
		if a.Labels["object"] == "Ethernet0" {
			delete(old, k) // ended under the earlier weir
		}
	}
	data, _ := json.Marshal(old)
	if err := os.WriteFile(state, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := amSink(t, hs.URL, dir)
	var got []string
	for _, a := range s2.active {
		got = append(got, a.Labels["object"])
	}
	if want := []string{"Ethernet1"}; !slices.Equal(got, want) {
		t.Errorf("after a save by an earlier weir the firing alerts are %v, want the save's %v", got, want)
	}
	// A journal of this save is still replayed.
	amWrite(t, s2, amEv("interface_down", "Ethernet8", "", time.Minute), amEv("interface_up", "Ethernet1", "", time.Minute))
	amWrite(t, s2, amEv("interface_down", "Ethernet9", "", time.Minute))
	s3 := amSink(t, hs.URL, dir)
	got = got[:0]
	for _, a := range s3.active {
		got = append(got, a.Labels["object"])
	}
	slices.Sort(got)
	if want := []string{"Ethernet8", "Ethernet9"}; !slices.Equal(got, want) {
		t.Errorf("after a kill between saves the firing alerts are %v, want %v", got, want)
	}
}

// TestJournalWithoutSaveReplayed: the first save failing (the state
// directory not writable yet, a full disk) while the journal is written,
// then a kill: the next start found no save and did not read the journal,
// so the alerts that had begun were never re-posted (Alertmanager resolved
// them while they still fired). And the journal's first line, naming no
// save ({}), was taken for a line cut short, so a journal left beside a
// save an earlier weir wrote since was replayed over it.
func TestJournalWithoutSaveReplayed(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	dir := t.TempDir()
	// The state file cannot be written for now.
	if err := os.Mkdir(filepath.Join(dir, "am.alerts.json.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, downs(0, 2)...) // journaled only
	// Killed: the next run has the journal alone.
	s2 := amSink(t, hs.URL, dir)
	if len(s2.active) != 2 {
		t.Errorf("%d firing alerts after a kill before the first save, want 2", len(s2.active))
	}
	// An earlier weir (a downgrade) starts with neither, saves what it
	// has since; this build again must not replay the journal over it.
	if err := os.WriteFile(filepath.Join(dir, "am.alerts.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	s3 := amSink(t, hs.URL, dir)
	if len(s3.active) != 0 {
		t.Errorf("%d firing alerts replayed over a save written since, want 0", len(s3.active))
	}
}

// TestJournalAfterSaveWhoseRemoveFailed: a save that is renamed in place
// but whose journal cannot be removed leaves the old journal, and the next
// change appends a second head naming the new save. The replay took the
// first head's older save for a downgrade's and dropped the whole journal,
// the changes after the new save with it (a begun alert never re-posted).
// Changes after the last head naming the save are replayed; those before
// it are in the save already.
func TestJournalAfterSaveWhoseRemoveFailed(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	dir := t.TempDir()
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, downs(0, 2)...)                                     // saved: Ethernet0-1 firing
	amWrite(t, s, amEv("interface_up", "Ethernet0", "", time.Minute)) // journaled
	// A save of that, renamed into place, whose journal removal failed:
	// what saveActive leaves when os.Remove does.
	data, err := json.Marshal(s.active)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "am.alerts.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s.savedSum, s.journaled = sum(data), false
	// Ethernet0 fires again, and Ethernet5 begins; then a kill.
	amWrite(t, s, amEv("interface_down", "Ethernet0", "", 2*time.Minute), amEv("interface_down", "Ethernet5", "", 2*time.Minute))
	s2 := amSink(t, hs.URL, dir)
	var got []string
	for _, a := range s2.active {
		got = append(got, a.Labels["object"])
	}
	slices.Sort(got)
	if want := []string{"Ethernet0", "Ethernet1", "Ethernet5"}; !slices.Equal(got, want) {
		t.Errorf("firing alerts %v, want %v", got, want)
	}
}
