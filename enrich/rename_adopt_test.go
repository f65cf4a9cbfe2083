package enrich

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestRestartAfterARenameWhileStoppedAdoptsPublished: as in
// TestRestartThenPollAfterAFirstSampleChange, a syslog line said Gi0/3
// went down and the row's first poll found it up, publishing the
// interface_up the line's down missed. weir stops, the device is renamed
// in the inventory, and weir starts again; the next polls say up: no
// change, so nothing is published. The warm-up rebuilds the line's down
// under the new name, while the state last published, the interface_up,
// is under the old one: it is adopted all the same. (It was not, and the
// first live poll published a device_renamed and a second interface_up.)
func TestRestartAfterARenameWhileStoppedAdoptsPublished(t *testing.T) {
	f := newLinkRestart(t)
	inv, reload := renameInventory(t, "devices:\n  - {name: core9, address: 192.0.2.9}\n")
	kept := filepath.Join(t.TempDir(), "enrich", "renames.json")
	opts := func(rules *EventRules) []WorkerOption {
		rules.KeepRenames(kept, slog.New(slog.DiscardHandler))
		return []WorkerOption{WithSharedEventRules(rules), WithSNMPTargets(NewSNMPTargets(f.targets))}
	}

	down := f.t0.Add(5 * time.Second)
	before := opts(NewEventRules(linkRestartDedup, DefaultFlapThreshold, DefaultFlapWindow))
	f.produce(telemetry.TopicRawSyslog, f.down(down))
	stopS := startRunner(NewWorker(f.b, inv, NewClassifier(), before...))
	waitCommitted(t, f.b, telemetry.TopicRawSyslog, 1)
	f.produce(telemetry.TopicRawSNMP, f.poll(down.Add(10*time.Second), 1))
	stopM := startRunner(NewMetricsWorker(f.b, inv, before...))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, 1)
	waitUntil(t, "the inventory kept", func() bool {
		data, _ := os.ReadFile(kept)
		return strings.Contains(string(data), "core9")
	})
	stopS()
	stopM()
	want := []string{"interface_down core9 gi0/3 from raw.syslog", "interface_up core9 gi0/3 from raw.snmp"}
	f.check("before the restart", true, want...)

	reload("devices:\n  - {name: core9-fra, address: 192.0.2.9}\n")
	renamed, err := LoadInventory(inv.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	after := opts(restartRules(2, linkRestartDedup, DefaultFlapThreshold, DefaultFlapWindow))
	defer startRunner(NewWorker(f.b, renamed, NewClassifier(), after...))()
	defer startRunner(NewMetricsWorker(f.b, renamed, after...))()
	f.produce(telemetry.TopicRawSNMP, f.poll(down.Add(15*time.Second), 1), f.poll(down.Add(45*time.Second), 1), f.poll(down.Add(50*time.Second), 1))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, 4)
	f.check("after the rename, the restart and polls saying up", false, want...)
}

// TestNewNamesFollowRenamesOfRenames: an old name goes by the name its
// last rename gave; a cycle (not given by inventoryRenames) ends.
func TestNewNamesFollowRenamesOfRenames(t *testing.T) {
	d := newDetector(time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.renamed = map[string]*renameNote{
		"core1-fra":  {from: []string{"core1"}},
		"core1-fra1": {from: []string{"core1-fra", "core1-snmp"}},
		"a":          {from: []string{"b"}},
		"b":          {from: []string{"a"}},
	}
	got := d.newNames()
	for from, want := range map[string]string{"core1": "core1-fra1", "core1-fra": "core1-fra1", "core1-snmp": "core1-fra1"} {
		if got[from] != want {
			t.Errorf("%s goes by %q, want %q", from, got[from], want)
		}
	}
	if got["a"] == "" || got["b"] == "" {
		t.Errorf("a cycle: %v", got)
	}
}
