package enrich

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestRenameSaidOnceAcrossAStopAfterItsCommit: a device_renamed went out
// with a record's event, that record was committed, and weir stopped (or
// was killed) before the syslog workers' next settle. The file must say
// the rename was said by then: the next start must not say it again with
// the next event under the new name. (Before, the file was written only
// at a syslog worker's settle, once a second, whenever that came: a stop
// in between left the rename unsaid in the file, and the next start said
// it a second time.)
func TestRenameSaidOnceAcrossAStopAfterItsCommit(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9, site: fra1}\n")
	kept := filepath.Join(t.TempDir(), "enrich", "renames.json")
	b := openBroker(t)
	start := func(inv *Inventory) func() {
		rules := NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
		rules.KeepRenames(kept, slog.New(slog.DiscardHandler))
		return startRunner(NewWorker(b, inv, NewClassifier(), WithSharedEventRules(rules)))
	}
	keptHas := func(s string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if data, _ := os.ReadFile(kept); strings.Contains(string(data), s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never kept %q", kept, s)
			}
		}
	}

	stop := start(inv)
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9, site: fra1}\n")
	// A settle just wrote the rename unsaid: the next is a second away.
	keptHas(`"unsaid":{"core1-fra":"core1"}`)
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 2)
	stop() // nothing is written at a stop: as a kill -9

	restarted, err := LoadInventory(inv.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	stop = start(restarted)
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 3)
	stop()

	want := []string{
		"interface_down core1 GigabitEthernet0/1 site=fra1 from raw.syslog",
		"device_renamed core1-fra core1 site=fra1 from raw.syslog",
		"interface_up core1-fra GigabitEthernet0/1 site=fra1 from raw.syslog",
		"interface_down core1-fra GigabitEthernet0/1 site=fra1 from raw.syslog",
	}
	wantEventLines(t, b, want)
}

// TestRenamesSavedInOrder: the workers sharing a detector save the
// renames file concurrently (each syslog worker's settle, and each worker
// before it commits a batch). A save that took its snapshot first must not
// land last: the file would hold the older one, a rename said since
// unsaid again, until the next change. (Before, two saves wrote at once,
// and the older could replace the newer.)
func TestRenamesSavedInOrder(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9}\n")
	kept := filepath.Join(t.TempDir(), "renames.json")
	d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.inv.Store(inv)
	d.renamesPath, d.logger = kept, slog.New(slog.DiscardHandler)
	now := time.Now()
	d.reportClock(t, nil, now)
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9}\n")
	d.reportClock(t, nil, now) // the rename found, unsaid

	inWrite, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	d.renamesReplace = func(path string, data []byte) error {
		first := false
		once.Do(func() { first = true })
		if first {
			close(inWrite)
			<-release // the older snapshot's write, held
		}
		return os.WriteFile(path, data, 0o644)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.saveRenames() }() // the unsaid rename
	<-inWrite
	c := telemetry.Cause{Topic: telemetry.TopicRawSyslog, Partition: 0, Offset: 7}
	down := telemetry.Event{Type: "interface_down", Device: "core1-fra", Object: "Gi0/1", Cause: c, Time: now}
	if got := d.observeInto(down, now, false, nil); len(got) != 2 || got[0].Type != TypeDeviceRenamed {
		t.Fatalf("events %+v, want the rename said with the interface_down", got)
	}
	second := make(chan struct{})
	go func() { defer wg.Done(); d.saveRenames(); close(second) }() // the said rename
	select {
	case <-second:
	case <-time.After(200 * time.Millisecond): // waiting for the first, as it should
	}
	close(release)
	wg.Wait()
	d.saveRenames() // the next settle's

	data, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"said":[{"to":"core1-fra","from":"core1"`) || strings.Contains(string(data), `"unsaid"`) {
		t.Errorf("the file holds %s, want the rename said", data)
	}
}

// TestRenamesPastTheBoundLogged: the detector remembers at most
// maxRenamed renames; those a reload (or the kept file) gives past it are
// never said, and the alerts fired under their old names never move. It
// says so, with how many. (Before, they were left out without a word.)
func TestRenamesPastTheBoundLogged(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: a1, address: 192.0.2.1}\n  - {name: a2, address: 192.0.2.2}\n  - {name: a3, address: 192.0.2.3}\n")
	var logs bytes.Buffer
	d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.inv.Store(inv)
	d.maxRenamed = 2
	d.logger = slog.New(slog.NewTextHandler(&logs, nil))
	now := time.Now()
	d.reportClock(t, nil, now)
	reload("devices:\n  - {name: b1, address: 192.0.2.1}\n  - {name: b2, address: 192.0.2.2}\n  - {name: b3, address: 192.0.2.3}\n")
	d.reportClock(t, nil, now)
	if len(d.renamed) != 2 {
		t.Fatalf("%d renames remembered, want 2", len(d.renamed))
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "left_unsaid=1") {
		t.Errorf("logs %q, want a warning of the one rename left unsaid", logs.String())
	}
}
