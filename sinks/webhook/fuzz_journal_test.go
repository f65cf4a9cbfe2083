package webhook

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
)

// FuzzRestoreAlerts starts the sink on an arbitrary firing alerts file
// and journal (a crash, rot, another build): no panic, the alerts kept
// stay bounded, and what it restored is what the next start restores
// after it saved (the state reaches a fixed point at the first save).
func FuzzRestoreAlerts(f *testing.F) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	a := Alert{Labels: map[string]string{"alertname": "interface_down", "device": "edge1", "object": "et7"}, StartsAt: t0}
	b := Alert{Labels: map[string]string{"alertname": "bgp_down", "device": "core1", "object": "10.0.0.2"}, StartsAt: t0,
		Annotations: map[string]string{"summary": "down"}}
	ka := string(appendKeyOf(nil, "interface_down", "edge1", "et7"))
	kb := string(appendKeyOf(nil, "bgp_down", "core1", "10.0.0.2"))
	state, _ := json.Marshal(map[string]Alert{ka: a})
	head, _ := json.Marshal(journalEntry{Save: sum(state)})
	journal := append(append(head, '\n'), appendJournal(appendJournal(nil, kb, &b), ka, nil)...)
	f.Add(state, journal)
	f.Add(state, journal[:len(journal)-4])
	f.Add([]byte{}, journal)
	f.Add(state[:len(state)-2], []byte{})
	noSaveHead, _ := json.Marshal(journalEntry{Save: sum(nil)})
	f.Add([]byte(nil), append(append(noSaveHead, '\n'), appendJournal(nil, kb, &b)...))
	f.Add([]byte(`{"x":{"labels":null,"startsAt":"2025-03-01T12:00:00Z"}}`), []byte(`{"key":"k","alert":{"labels":{}}}`+"\n"))
	cfg := configs.Sink{Type: "webhook", Name: "am", Topics: []string{"events"}, URL: "http://127.0.0.1:1/", Format: "alertmanager"}
	f.Fuzz(func(t *testing.T, state, journal []byte) {
		dir := t.TempDir()
		statePath := filepath.Join(dir, cfg.Name+".alerts.json")
		if state != nil {
			if err := os.WriteFile(statePath, state, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(statePath+".journal", journal, 0o644); err != nil {
			t.Fatal(err)
		}
		start := func() *Sink {
			s, err := NewSink(cfg, sinks.Env{StateDir: dir}, time.Now, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.active) > maxActiveAlerts {
				t.Fatalf("%d firing alerts restored", len(s.active))
			}
			return s
		}
		s1 := start()
		if !s1.saveActive() {
			t.Fatal("save failed")
		}
		s2 := start()
		if !s2.saveActive() {
			t.Fatal("save failed")
		}
		s3 := start()
		if !maps.EqualFunc(s2.active, s3.active, func(x, y Alert) bool { return reflect.DeepEqual(x, y) }) {
			t.Fatalf("restarts do not settle:\n%v\n%v", s2.active, s3.active)
		}
		if _, err := os.Stat(statePath + ".journal"); err == nil {
			t.Fatal("journal left beside a save")
		}
	})
}
