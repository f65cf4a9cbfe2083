package webhook

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// amModel is Alertmanager's view: by label set, the last state posted.
type amModel struct {
	mu     sync.Mutex
	last   map[string]bool // labels JSON -> firing
	bodies int
	// clock is when a post comes (nil: time.Now): the sink's, if it
	// has its own.
	clock func() time.Time
}

func (m *amModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var as []Alert
	if err := json.Unmarshal(b, &as); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	now := time.Now()
	if m.clock != nil {
		now = m.clock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bodies++
	for _, a := range as {
		l, _ := json.Marshal(a.Labels)
		m.last[string(l)] = a.EndsAt == nil || a.EndsAt.After(now) // firing: its end not yet come
	}
}

func (m *amModel) firing(labels map[string]string) (firing, known bool) {
	l, _ := json.Marshal(labels)
	m.mu.Lock()
	defer m.mu.Unlock()
	firing, known = m.last[string(l)]
	return
}

func amSink(t *testing.T, url, dir string) *Sink {
	t.Helper()
	s, err := NewSink(configs.Sink{Name: "am", URL: url, Format: "alertmanager"}, sinks.Env{StateDir: dir}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func amEv(typ, obj, id string, at time.Duration) sinks.Item {
	return sinks.Item{Schema: telemetry.SchemaEvent, Event: &telemetry.Event{V: 1, Type: typ, Device: "edge1", Object: obj, ObjectID: id,
		Severity: "error", Message: typ, Tags: map[string]string{"site": "ams1"}, Time: amT0.Add(at)}}
}

func amWrite(t *testing.T, s *Sink, items ...sinks.Item) {
	t.Helper()
	if err := s.Write(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

// checkNoStaleSaved: every alert the sink keeps (and Run re-posts as firing
// every minute) is one Alertmanager was last told is firing.
func checkNoStaleSaved(t *testing.T, s *Sink, am *amModel) {
	t.Helper()
	for k, a := range s.active {
		if firing, _ := am.firing(a.Labels); !firing {
			t.Errorf("saved alert %q (labels %v) was resolved in Alertmanager but is still kept: Run re-posts it as firing every minute for ever", k, a.Labels)
		}
	}
}

// TestEarlierBuildsEventsAndAlertsAreOneKeySpace: events without
// object_id (an earlier build's, in a backlog across the upgrade, or
// another producer's) key their alerts as those with it do, whichever
// way round they come: a down without it ended by an up with it, in one
// batch or two, and a down with it ended by an up without it.
func TestEarlierBuildsEventsAndAlertsAreOneKeySpace(t *testing.T) {
	for _, tc := range []struct {
		name         string
		downID, upID string
		oneBatch     bool
	}{
		{"old down, new up, one batch", "", "et7", true},
		{"old down, new up", "", "et7", false},
		{"new down, old up", "et7", "", false},
		{"new down, old up, one batch", "et7", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			am := &amModel{last: map[string]bool{}}
			hs := httptest.NewServer(am)
			defer hs.Close()
			s := amSink(t, hs.URL, t.TempDir())
			down, up := amEv("interface_down", "Ethernet7", tc.downID, 0), amEv("interface_up", "Ethernet7", tc.upID, time.Minute)
			if tc.oneBatch {
				amWrite(t, s, down, up)
			} else {
				amWrite(t, s, down)
				amWrite(t, s, up)
			}
			checkNoStaleSaved(t, s, am)
			if len(s.active) != 0 {
				t.Errorf("after the up, %d alerts still kept: %v", len(s.active), s.active)
			}
		})
	}
}

// TestSavedAlertFiredAgainAndResolved: an alert an earlier build saved
// (keyed by the object as spelt) and fired again after the upgrade is one
// alert: the up ends it, and nothing is left to re-post.
func TestSavedAlertFiredAgainAndResolved(t *testing.T) {
	am := &amModel{last: map[string]bool{}}
	hs := httptest.NewServer(am)
	defer hs.Close()
	dir := t.TempDir()
	labels := map[string]string{"alertname": "interface_down", "device": "edge1", "object": "Ethernet7", "site": "ams1"}
	data, _ := json.Marshal(map[string]Alert{"interface_down\x00edge1\x00Ethernet7": {Labels: labels, StartsAt: amT0}})
	if err := os.WriteFile(filepath.Join(dir, "am.alerts.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, amEv("interface_down", "Ethernet7", "et7", time.Minute))
	amWrite(t, s, amEv("interface_up", "Ethernet7", "et7", 2*time.Minute))
	checkNoStaleSaved(t, s, am)
	if len(s.active) != 0 {
		t.Errorf("after the up, %d alerts still kept: %v", len(s.active), s.active)
	}
	if firing, known := am.firing(labels); firing || !known {
		t.Errorf("Alertmanager: the alert firing %v (known %v) after its up", firing, known)
	}
}

// TestAlertsAgainstAlertmanagersView: random batches (objects in several
// spellings, object_id present or not), checked against what Alertmanager
// was told rather than against a copy of the code: after each batch every
// alert the sink keeps (and Run re-posts as firing) is one Alertmanager
// was last told is firing, and every alert Alertmanager takes for firing
// of a type some event resolves is kept.
func TestAlertsAgainstAlertmanagersView(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	am := &amModel{last: map[string]bool{}, clock: func() time.Time { return now }}
	hs := httptest.NewServer(am)
	defer hs.Close()
	s, err := NewSink(configs.Sink{Name: "am", URL: hs.URL, Format: "alertmanager"}, sinks.Env{}, func() time.Time { return now }, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	for batch := 0; batch < 300; batch++ {
		items := make([]sinks.Item, 1+rng.IntN(20))
		for i := range items {
			e := &telemetry.Event{V: 1,
				Type:   pick("interface_down", "interface_up", "interface_flapping", "interface_flapping_cleared", "bgp_peer_down", "bgp_peer_up", "device_unreachable", "device_reachable"),
				Device: pick("r1", "r2"),
				Time:   now.Add(time.Duration(rng.Int64N(1e12))),
				Tags:   map[string]string{"site": "ams1"},
			}
			switch {
			case strings.HasPrefix(e.Type, "interface_"):
				e.Object = pick("Ethernet1", "Et1", "Eth1", "Ethernet2")
			case strings.HasPrefix(e.Type, "bgp_"):
				e.Object = pick("2001:DB8::1", "2001:db8::1")
			}
			if e.Object != "" && rng.IntN(3) > 0 {
				e.ObjectID = telemetry.ObjectID(e.Type, e.Object)
			}
			items[i] = sinks.Item{Event: e}
		}
		if err := s.Write(context.Background(), items); err != nil {
			t.Fatal(err)
		}
		kept := map[string]bool{}
		for k, a := range s.active {
			if firing, _ := am.firing(a.Labels); !firing {
				t.Fatalf("batch %d: kept alert %q %v was resolved in Alertmanager; Run would fire it again for ever", batch, k, a.Labels)
			}
			l, _ := json.Marshal(a.Labels)
			kept[string(l)] = true
		}
		am.mu.Lock()
		for l, firing := range am.last {
			if firing && !kept[l] && !strings.Contains(l, `"alertname":"config_changed"`) {
				am.mu.Unlock()
				t.Fatalf("batch %d: alert %s firing in Alertmanager but not kept: its resolution would not find it", batch, l)
			}
		}
		am.mu.Unlock()
	}
	if len(s.active) == 0 {
		t.Fatal("no alert stayed active: the test does not test much")
	}
}

var amT0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// TestStateFileKeyNotUTF8: the state file's JSON writes bytes that are not
// UTF-8 as U+FFFD; the keys are made so too, so after a restart the up
// still finds the alert its down saved.
func TestStateFileKeyNotUTF8(t *testing.T) {
	am := &amModel{last: map[string]bool{}}
	hs := httptest.NewServer(am)
	defer hs.Close()
	dir := t.TempDir()
	s := amSink(t, hs.URL, dir)
	amWrite(t, s, amEv("interface_down", "caf\xe9\xe9", "", 0))
	s2 := amSink(t, hs.URL, dir) // restart
	amWrite(t, s2, amEv("interface_up", "caf\xe9\xe9", "", time.Minute))
	checkNoStaleSaved(t, s2, am)
	if len(s2.active) != 0 {
		t.Errorf("after a restart and the up, %d alerts still kept: %q", len(s2.active), s2.active)
	}
}
