package enrich

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/telemetry"
)

// TestClearedNotRepeatedAfterARenameWhileStopped: edge1's Gi0/1 flapped
// and was cleared, both under the name edge1; weir stopped, the inventory
// renamed edge1 edge1-fra, and weir started again. The warm-up rebuilds
// the flapping under the new name, and the events topic has its cleared
// event under the old one: it is the same object's, cleared already, and
// the restart does not clear it a second time (nor say a rename for it).
func TestClearedNotRepeatedAfterARenameWhileStopped(t *testing.T) {
	t.Parallel() // it waits out flap windows, on a log of its own
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	inv, reload := renameInventory(t, "devices:\n  - {name: edge1, address: 192.0.2.1}\n")
	kept := filepath.Join(t.TempDir(), "enrich", "renames.json")
	var flaps []broker.Record
	for i := range 4 {
		l := telemetry.Log{V: 1, Device: "edge1", Hostname: "edge1", Facility: 23, Severity: 3, Format: "rfc3164",
			Message:    "%LINK-3-UPDOWN: Interface Gi0/1, changed state to " + [...]string{"down", "up"}[i%2],
			SourceAddr: "192.0.2.1:514", ReceivedAt: time.Now()}
		flaps = append(flaps, broker.Record{Key: []byte("edge1"), Value: l.AppendJSON(nil)})
	}
	if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, flaps); err != nil {
		t.Fatal(err)
	}
	events := func() []string {
		var out []string
		for _, r := range readTopic(t, b, telemetry.TopicEvents) {
			var ev telemetry.Event
			json.Unmarshal(r.Value, &ev)
			out = append(out, ev.Type+" "+ev.Device+" "+ev.Object)
		}
		return out
	}
	count := func(ev string) int {
		n := 0
		for _, e := range events() {
			if strings.HasPrefix(e, ev+" ") {
				n++
			}
		}
		return n
	}
	run := func(inv *Inventory, until func() bool, wait time.Duration) {
		t.Helper()
		rules := NewEventRules(0, 3, flapRigWindow)
		rules.KeepRenames(kept, slog.New(slog.DiscardHandler))
		stop := startRunner(NewWorker(b, inv, NewClassifier(), WithSharedEventRules(rules), WithWarmup(DefaultWarmup)))
		defer stop()
		for deadline := time.Now().Add(wait); !until(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				return
			}
		}
	}
	run(inv, func() bool {
		data, _ := os.ReadFile(kept)
		return count("interface_flapping_cleared") > 0 && strings.Contains(string(data), "edge1")
	}, 10*time.Second)
	if got := events(); count("interface_flapping") != 1 || count("interface_flapping_cleared") != 1 {
		t.Fatalf("before the restart: events %q, want interface_flapping and its cleared event", got)
	}

	reload("devices:\n  - {name: edge1-fra, address: 192.0.2.1}\n")
	renamed, err := LoadInventory(inv.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	run(renamed, func() bool { return count("interface_flapping_cleared") > 1 }, 4*flapRigWindow)
	if got := events(); count("interface_flapping_cleared") != 1 || count("interface_flapping") != 1 {
		t.Errorf("after the rename and the restart: events %q, want the one interface_flapping_cleared of before", got)
	}
}
