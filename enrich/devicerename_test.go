package enrich

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// renameInventory is an inventory file loaded from yaml, and a function
// that writes the file anew and reloads it, as a SIGHUP does.
func renameInventory(t *testing.T, yaml string) (*Inventory, func(string)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(yaml)
	inv, err := LoadInventory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return inv, func(s string) {
		t.Helper()
		write(s)
		if err := inv.Reload(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRenamedDeviceKeepsItsHistory: a reload that renames a device's
// inventory entry (same address, another name) moves what the detector
// holds of it to the new name. A repeat of the link down under the new
// name, within the de-duplication window, is no news; the link up is a
// change, and the first event under the new name is preceded by one
// device_renamed, new name as device, old as object, for a webhook sink
// to move the alerts fired under the old name. (Before, the repeat was
// published again, as the new name's first state, and nothing said
// which alerts the up ends.)
func TestRenamedDeviceKeepsItsHistory(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9, site: fra1}\n")
	b := openBroker(t)
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow))}
	stop := startRunner(NewWorker(b, inv, NewClassifier(), opts...))
	defer stop()

	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9, site: fra1}\n")
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down") // another path's report, say
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up")
	produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/2, changed state to down")
	waitCommitted(t, b, telemetry.TopicRawSyslog, 4)
	stop()

	want := []string{
		"interface_down core1 GigabitEthernet0/1 site=fra1 from raw.syslog",
		"device_renamed core1-fra core1 site=fra1 from raw.syslog",
		"interface_up core1-fra GigabitEthernet0/1 site=fra1 from raw.syslog",
		"interface_down core1-fra GigabitEthernet0/2 site=fra1 from raw.syslog",
	}
	wantEventLines(t, b, want)
}

// TestRenameOfAnEntryFoundByItsHostname: a device listed by name alone
// (its syslog lines carry that hostname) that a reload lists under its
// FQDN, or in another case, is still found by the hostname its lines
// carry (see Inventory): that is a rename, as one by address is. Before,
// the reload was no rename for an entry without an address: the repeat of
// the link down was published again under the new name, and nothing said
// that the new name's link up ends the down alert fired under the old.
func TestRenameOfAnEntryFoundByItsHostname(t *testing.T) {
	for _, c := range []struct{ before, after string }{
		{"core1", "core1.fra.example.net"}, // the domain added
		{"core1.fra.example.net", "core1"}, // taken off
		{"core1", "CORE1"},                 // another case
	} {
		t.Run(c.after, func(t *testing.T) {
			inv, reload := renameInventory(t, "devices:\n  - {name: "+c.before+", site: fra1}\n")
			b := openBroker(t)
			opts := []WorkerOption{WithSharedEventRules(NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow))}
			stop := startRunner(NewWorker(b, inv, NewClassifier(), opts...))
			defer stop()
			line := func(msg string) {
				l := telemetry.Log{V: 1, Hostname: "core1", Device: "core1", SourceAddr: "198.51.100.1:514",
					Facility: 23, Severity: 3, Message: msg, ReceivedAt: time.Now()}
				if err := b.Produce(context.Background(), telemetry.TopicRawSyslog, []broker.Record{{Key: []byte(l.Device), Value: l.AppendJSON(nil)}}); err != nil {
					t.Fatal(err)
				}
			}

			line("%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down")
			waitCommitted(t, b, telemetry.TopicRawSyslog, 1)
			reload("devices:\n  - {name: " + c.after + ", site: fra1}\n")
			line("%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down") // a repeat
			line("%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up")
			waitCommitted(t, b, telemetry.TopicRawSyslog, 3)
			stop()

			wantEventLines(t, b, []string{
				"interface_down " + c.before + " GigabitEthernet0/1 site=fra1 from raw.syslog",
				"device_renamed " + c.after + " " + c.before + " site=fra1 from raw.syslog",
				"interface_up " + c.after + " GigabitEthernet0/1 site=fra1 from raw.syslog",
			})
		})
	}
}

// TestInventoryEntryRenamesPolledTarget: an inventory entry added for the
// address an SNMP target polls renames the target's device from the
// target's name to the entry's. The device was unreachable under the old
// name; its device_reachable under the new one comes after the
// device_renamed that says which device it was. The reachability state
// moves too, from the target's name with no object (a device named as
// its target) to the target as the object.
func TestInventoryEntryRenamesPolledTarget(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: edge1, address: 192.0.2.1}\n")
	b := openBroker(t)
	targets := NewSNMPTargets([]SNMPTarget{{Name: "lab1", Host: "192.0.2.50"}})
	opts := []WorkerOption{WithSharedEventRules(NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)),
		WithSNMPTargets(targets)}
	stop := startRunner(NewMetricsWorker(b, inv, opts...))
	defer stop()

	t0 := time.Now().Add(-time.Minute)
	status := func(up int64, at time.Time) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "lab1", Source: "snmp",
			Tags: map[string]string{"agent": "192.0.2.50"}, Fields: map[string]any{"snmp_up": up}, Time: at}
	}
	produceMetrics(t, b, []telemetry.Metric{status(1, t0), status(0, t0.Add(10*time.Second))})
	waitCommitted(t, b, telemetry.TopicRawSNMP, 2)
	reload("devices:\n  - {name: edge1, address: 192.0.2.1}\n  - {name: labrouter, address: 192.0.2.50, site: lab}\n")
	produceMetrics(t, b, []telemetry.Metric{status(0, t0.Add(20*time.Second)), status(1, t0.Add(30*time.Second))})
	waitCommitted(t, b, telemetry.TopicRawSNMP, 4)
	stop()

	got := eventsAs(t, b, func(ev telemetry.Event) string {
		return ev.Type + " " + ev.Device + " " + ev.Object + " target=" + ev.Tags["target"]
	})
	want := []string{
		"device_unreachable lab1  target=", // named as its target: no object
		"device_renamed labrouter lab1 target=lab1",
		"device_reachable labrouter lab1 target=lab1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRenameSaidAgainOnRedo: a record enriched again (its transaction
// aborted) gives its events as it gave them the first time: the
// device_renamed its first event went out with too, and only with that
// event.
func TestRenameSaidAgainOnRedo(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9}\n")
	d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.inv.Store(inv)
	now := time.Now()
	d.reportClock(t, nil, now)
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9}\n")
	d.reportClock(t, nil, now)
	c := telemetry.Cause{Topic: telemetry.TopicRawTraps, Partition: 0, Offset: 7}
	down := telemetry.Event{Type: "interface_down", Device: "core1-fra", Object: "Gi0/1", Cause: c, Time: now}
	other := down
	other.Object = "Gi0/2"
	first := typeObjects(append(d.observeInto(down, now, false, nil), d.observeInto(other, now, false, nil)...))
	redo := typeObjects(append(d.observeInto(down, now, true, nil), d.observeInto(other, now, true, nil)...))
	want := []string{"device_renamed core1", "interface_down Gi0/1", "interface_down Gi0/2"}
	if !slices.Equal(first, want) || !slices.Equal(redo, want) {
		t.Fatalf("first: %q\nredo:  %q\nwant:  %q", first, redo, want)
	}
	if again := typeObjects(d.observeInto(telemetry.Event{Type: "interface_up", Device: "core1-fra", Object: "Gi0/1", Time: now.Add(time.Second)}, now.Add(time.Second), false, nil)); !slices.Equal(again, []string{"interface_up Gi0/1"}) {
		t.Fatalf("a later event: %q, want the rename said once", again)
	}
}

// TestRenameAcrossARestart: with the inventory kept (KeepRenames), a
// rename made while weir was stopped is found at the next start, and one
// found before a stop but not said yet (no event under the new name) is
// said after it: the first event under the new name comes after its
// device_renamed, whichever process publishes it.
func TestRenameAcrossARestart(t *testing.T) {
	for _, whileStopped := range []bool{true, false} {
		name := "found before the stop, said after"
		if whileStopped {
			name = "made while stopped"
		}
		t.Run(name, func(t *testing.T) {
			inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9, site: fra1}\n")
			kept := filepath.Join(t.TempDir(), "enrich", "renames.json")
			b := openBroker(t)
			run := func(inv *Inventory, lines int, before func()) {
				t.Helper()
				rules := NewEventRules(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
				rules.KeepRenames(kept, slog.New(slog.DiscardHandler))
				stop := startRunner(NewWorker(b, inv, NewClassifier(), WithSharedEventRules(rules)))
				defer stop()
				waitCommitted(t, b, telemetry.TopicRawSyslog, lines)
				if before != nil {
					before()
				}
			}
			keptHas := func(s string) func() {
				return func() {
					for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
						if data, _ := os.ReadFile(kept); strings.Contains(string(data), s) {
							return
						}
						if time.Now().After(deadline) {
							t.Fatalf("%s never kept %q", kept, s)
						}
					}
				}
			}
			produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down")
			rename := func() {
				reload("devices:\n  - {name: core1-fra, address: 192.0.2.9, site: fra1}\n")
			}
			if whileStopped {
				run(inv, 1, keptHas("core1"))
				rename()
			} else {
				run(inv, 1, func() {
					keptHas("core1")()
					rename()
					keptHas(`"unsaid":{"core1-fra":"core1"}`)()
				})
			}
			produceLine(t, b, "%LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to up")
			restarted, err := LoadInventory(inv.Path(), nil)
			if err != nil {
				t.Fatal(err)
			}
			run(restarted, 2, nil)

			want := []string{
				"interface_down core1 GigabitEthernet0/1 site=fra1 from raw.syslog",
				"device_renamed core1-fra core1 site=fra1 from raw.syslog",
				"interface_up core1-fra GigabitEthernet0/1 site=fra1 from raw.syslog",
			}
			wantEventLines(t, b, want)
		})
	}
}

// TestInventoryRenames: which devices a reload renames, old name to new.
func TestInventoryRenames(t *testing.T) {
	parse := func(s string) *inventoryIndex {
		t.Helper()
		idx, err := parseInventory([]byte(s), "inventory")
		if err != nil {
			t.Fatal(err)
		}
		return idx
	}
	old := parse(`devices:
  - {name: core1, address: 192.0.2.1}
  - {name: core2, address: 192.0.2.2}
  - {name: edge5, address: 192.0.2.5}
  - {name: gone, address: 192.0.2.6}
  - {name: lab, cidr: 10.0.0.0/8}
`)
	cur := parse(`devices:
  - {name: core1-fra, address: 192.0.2.1}
  - {name: core2, address: 192.0.2.2, site: fra1}
  - {name: spine9, address: 192.0.2.9}
  - {name: leaf7, address: 192.0.2.7}
  - {name: lab-ams, cidr: 10.0.0.0/8}
`)
	snmp := NewSNMPTargets([]SNMPTarget{
		{Name: "core1-snmp", Host: "192.0.2.1"}, // its device renamed with the entry
		{Name: "edge5-snmp", Host: "192.0.2.5"}, // its entry removed: named as the target
		{Name: "sw9", Host: "192.0.2.9"},        // an entry added for its address
		{Name: "lab3", Host: "10.0.0.3"},        // a range names no device
		{Name: "core2", Host: "192.0.2.2"},      // unchanged
	})
	gnmi := NewGNMITargets([]GNMITarget{{Name: "leaf7-gnmi", Address: "192.0.2.7:57400"}})
	got := inventoryRenames(old, cur, snmp, gnmi)
	want := map[string]string{"core1": "core1-fra", "edge5": "edge5-snmp", "sw9": "spine9", "leaf7-gnmi": "leaf7"}
	if !maps.Equal(got, want) {
		t.Errorf("renames %v, want %v", got, want)
	}
}

// TestRenameSaidBeforeFlappingCleared: an interface flapping under the
// old name settles after the reload that renamed its device, before any
// record's event under the new name. The flapping_cleared event, caused
// by no record, is the new name's first event: it comes after the
// device_renamed, so a webhook sink in the Alertmanager form has moved
// the old name's interface_flapping alert when the cleared event comes
// to end it. (Before, the cleared event went out alone: the alert stayed
// firing under the old name, and the device_renamed said with the next
// record's event moved it, still firing, to the new name for good.)
func TestRenameSaidBeforeFlappingCleared(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9, site: fra1}\n")
	w := NewWorker(nil, inv, NewClassifier(), WithEventRules(time.Second, 3, time.Minute))
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	w.det.reportClock(w, nil, t0)
	var flapping bool
	for i := range 6 {
		typ := "interface_down"
		if i%2 == 1 {
			typ = "interface_up"
		}
		at := t0.Add(time.Duration(i) * time.Second)
		for _, ev := range w.det.observe(telemetry.Event{Type: typ, Device: "core1", Object: "Gi0/1", Time: at,
			Tags: map[string]string{"site": "fra1"}, Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: int64(i)}}, at) {
			flapping = flapping || ev.Type == "interface_flapping"
		}
	}
	if !flapping {
		t.Fatal("no interface_flapping under the old name")
	}
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9, site: fra1}\n")
	w.det.reportClock(w, nil, t0.Add(time.Minute)) // the next poll: the rename is found
	var got []string
	for _, ev := range w.settled(context.Background(), t0.Add(2*time.Minute)) {
		got = append(got, ev.Type+" "+ev.Device+" "+ev.Object)
	}
	want := []string{"device_renamed core1-fra core1", "interface_flapping_cleared core1-fra Gi0/1"}
	if !slices.Equal(got, want) {
		t.Fatalf("settled: %q, want %q", got, want)
	}
	at := t0.Add(3 * time.Minute)
	if evs := w.det.observe(telemetry.Event{Type: "interface_down", Device: "core1-fra", Object: "Gi0/1", Time: at,
		Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: 6}}, at); len(evs) != 1 || evs[0].Type != "interface_down" {
		t.Fatalf("the next record's events %+v: the rename said twice", evs)
	}
}

// TestRenameSaidAgainAfterACrash: a device_renamed went out with a
// record's event, and weir was killed before that record's commit. The
// next start enriches the record again: the rename goes out again with
// the same event (kept in the file with it), and with no other.
func TestRenameSaidAgainAfterACrash(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9}\n")
	kept := filepath.Join(t.TempDir(), "renames.json")
	newDet := func() *detector {
		d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
		d.inv.Store(inv)
		d.renamesPath, d.logger = kept, slog.New(slog.DiscardHandler)
		return d
	}
	now := time.Now()
	d := newDet()
	d.reportClock(t, nil, now)
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9}\n")
	d.reportClock(t, nil, now)
	c := telemetry.Cause{Topic: telemetry.TopicRawSyslog, Partition: 3, Offset: 41}
	down := telemetry.Event{Type: "interface_down", Device: "core1-fra", Object: "Gi0/1", Cause: c, Time: now}
	want := []string{"device_renamed core1", "interface_down Gi0/1"}
	if got := typeObjects(d.observeInto(down, now, false, nil)); !slices.Equal(got, want) {
		t.Fatalf("first: %q, want %q", got, want)
	}
	d.saveRenames()

	// Killed; started again: the record is enriched again, then others.
	d = newDet()
	d.reportClock(t, nil, now)
	if got := typeObjects(d.observeInto(down, now, false, nil)); !slices.Equal(got, want) {
		t.Errorf("the record enriched again after the restart: %q, want %q", got, want)
	}
	other := down
	other.Object, other.Cause.Offset = "Gi0/2", 42
	if got := typeObjects(d.observeInto(other, now, false, nil)); !slices.Equal(got, []string{"interface_down Gi0/2"}) {
		t.Errorf("the next record: %q, want the rename said no more", got)
	}
}

// TestUnsaidRenameDroppedWhenTheOldNameIsReused: core1 was renamed
// core1-fra, and before any event of core1-fra another device was named
// core1. The alerts under core1 are that device's: core1-fra's first
// event says no rename.
func TestUnsaidRenameDroppedWhenTheOldNameIsReused(t *testing.T) {
	unsaidRenameDropped(t,
		"devices:\n  - {name: core1-fra, address: 192.0.2.9}\n",
		"devices:\n  - {name: core1-fra, address: 192.0.2.9}\n  - {name: core1, address: 192.0.2.10}\n")
}

// unsaidRenameDropped renames core1 (192.0.2.9) core1-fra by the first of
// reloads, makes the others, and checks that core1-fra's first event then
// says no rename.
func unsaidRenameDropped(t *testing.T, reloads ...string) {
	t.Helper()
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9}\n")
	d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.inv.Store(inv)
	now := time.Now()
	d.reportClock(t, nil, now)
	for _, yaml := range reloads {
		reload(yaml)
		d.reportClock(t, nil, now)
	}
	ev := telemetry.Event{Type: "interface_down", Device: "core1-fra", Object: "Gi0/1", Time: now}
	if got := d.observeInto(ev, now, false, nil); len(got) != 1 || got[0].Type != "interface_down" {
		t.Errorf("events %+v, want the interface_down alone", got)
	}
}

// TestRenameSaidLongAfterItWasFoundSaidAgainOnRedo: core1 was renamed
// core1-fra, and its first event under the new name came two hours
// later (a quiet device). A redo of that event's record (its transaction
// aborted, another worker of the process enriching it again), after the
// next settle, says the rename again: it is kept for renameRetention
// from when it was said, not from when it was found. (Before, the settle
// after it was said forgot it at once, and the redo went out without it:
// the sink never moved the old name's alerts.)
func TestRenameSaidLongAfterItWasFoundSaidAgainOnRedo(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9}\n")
	d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.inv.Store(inv)
	now := time.Now()
	d.reportClock(t, nil, now)
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9}\n")
	d.reportClock(t, nil, now)
	d.mu.Lock()
	d.renamed["core1-fra"].at = now.Add(-2 * time.Hour) // found two hours ago
	d.mu.Unlock()
	down := telemetry.Event{Type: "interface_down", Device: "core1-fra", Object: "Gi0/1",
		Cause: telemetry.Cause{Topic: telemetry.TopicRawSyslog, Offset: 7}, Time: now}
	want := []string{"device_renamed core1", "interface_down Gi0/1"}
	if got := typeObjects(d.observeInto(down, now, false, nil)); !slices.Equal(got, want) {
		t.Fatalf("first: %q, want %q", got, want)
	}
	d.settleClears(time.Now().Add(2 * time.Second))
	if got := typeObjects(d.observeInto(down, now, true, nil)); !slices.Equal(got, want) {
		t.Fatalf("redo after a settle: %q, want %q", got, want)
	}
}

// TestRenameSaidAgainWithARebuiltClear: core1's Gi0/1 was flapping when
// a reload renamed core1 core1-fra; it settled, and its cleared event
// went out after the device_renamed said with it. weir was killed after
// the settle kept the rename as said, before the two were published.
// The next start rebuilds the flapping (under the new name) and sends
// its cleared event again: the rename goes out again before it, as it
// does before a record's event enriched again. A later cleared event of
// the object, not rebuilt, says no rename. (Before, the cleared event
// went out alone after the restart, and the flapping alert fired under
// core1 was never moved, nor ended.)
func TestRenameSaidAgainWithARebuiltClear(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9}\n")
	kept := filepath.Join(t.TempDir(), "renames.json")
	newDet := func() *detector {
		d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
		d.inv.Store(inv)
		d.renamesPath, d.logger = kept, slog.New(slog.DiscardHandler)
		return d
	}
	now := time.Now()
	d := newDet()
	d.reportClock(t, nil, now)
	reload("devices:\n  - {name: core1-fra, address: 192.0.2.9}\n")
	d.reportClock(t, nil, now)
	cleared := telemetry.Event{Type: "interface_flapping_cleared", Device: "core1-fra", Object: "Gi0/1", Time: now}
	types := func(evs []telemetry.Event) []string {
		var s []string
		for _, ev := range evs {
			s = append(s, ev.Type+" "+ev.Device+" "+ev.Object)
		}
		return s
	}
	want := []string{"device_renamed core1-fra core1", "interface_flapping_cleared core1-fra Gi0/1"}
	if got := types(d.sayRenamedBefore([]telemetry.Event{cleared}, 1)); !slices.Equal(got, want) {
		t.Fatalf("settled: %q, want %q", got, want)
	}
	d.saveRenames()

	// Killed; started again: the flapping, rebuilt, settles.
	d = newDet()
	d.reportClock(t, nil, now)
	if got := types(d.sayRenamedBefore([]telemetry.Event{cleared}, 0)); !slices.Equal(got, want) {
		t.Errorf("the rebuilt cleared event after the restart: %q, want %q", got, want)
	}
	if got := types(d.sayRenamedBefore([]telemetry.Event{cleared}, 1)); !slices.Equal(got, want[1:]) {
		t.Errorf("a later cleared event, not rebuilt: %q, want %q", got, want[1:])
	}
}

// TestRenamesOfOneReloadTakenTogether: one reload renamed W to T and T to
// Z (an entry shifted onto a target's name, whose device took another):
// W's state is T's, and T's is Z's, whatever order the map gives them.
func TestRenamesOfOneReloadTakenTogether(t *testing.T) {
	for range 20 { // map order varies
		d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
		now := time.Now()
		for i, dev := range []string{"W", "T"} {
			d.observe(telemetry.Event{Type: "interface_down", Device: dev, Object: "Gi0/1", Time: now,
				Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}, now)
		}
		d.mu.Lock()
		d.moveDevices(map[string]string{"W": "T", "T": "Z"})
		d.noteRenames(map[string]string{"W": "T", "T": "Z"})
		var got []string
		for k := range d.states {
			got = append(got, k.device)
		}
		froms := map[string]string{}
		for to, n := range d.renamed {
			froms[to] = strings.Join(n.from, ",")
		}
		d.mu.Unlock()
		slices.Sort(got)
		if !slices.Equal(got, []string{"T", "Z"}) || !maps.Equal(froms, map[string]string{"T": "W", "Z": "T"}) {
			t.Fatalf("states of %v, renames %v; want T and Z, T from W and Z from T", got, froms)
		}
	}
}

// TestRenameOfTwoNamesIntoOneSaysBoth: an SNMP and a gNMI target reach one
// address; with no inventory entry for it, the SNMP target names the
// device's polls, traps and hostless syslog lines, and the gNMI target
// its gNMI updates, so one device's events went out under two names (as
// documented). An entry added for the address, as the README says to do,
// names both the device's: two old names become one. Each old name's
// alerts must be moved to the new name, so a device_renamed is said for
// each of them. (Before, the renames were noted by new name alone: one
// of the two device_renamed was never said, and the alerts fired under
// that old name stayed firing for good.)
func TestRenameOfTwoNamesIntoOneSaysBoth(t *testing.T) {
	inv, reload := renameInventory(t, "devices: []\n")
	d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.inv.Store(inv)
	d.targets.Store(NewSNMPTargets([]SNMPTarget{{Name: "sw4-snmp", Host: "192.0.2.4"}}))
	d.gnmi.Store(NewGNMITargets([]GNMITarget{{Name: "sw4-gnmi", Address: "192.0.2.4:57400"}}))
	now := time.Now()
	var got []string
	var offset int64
	observe := func(typ, device, object string) {
		t.Helper()
		offset++
		for _, e := range d.observe(telemetry.Event{Type: typ, Device: device, Object: object, Time: now,
			Cause: telemetry.Cause{Topic: "raw.syslog", Offset: offset}}, now) {
			got = append(got, e.Type+" "+e.Device+" "+e.Object)
		}
	}
	observe("interface_down", "sw4-gnmi", "Ethernet1") // gNMI's
	observe("interface_down", "sw4-snmp", "Ethernet2") // a trap's, or a hostless line's
	reload("devices:\n  - {name: sw4, address: 192.0.2.4}\n")
	observe("interface_up", "sw4", "Ethernet1")
	observe("interface_up", "sw4", "Ethernet2")
	want := []string{
		"interface_down sw4-gnmi Ethernet1",
		"interface_down sw4-snmp Ethernet2",
		"device_renamed sw4 sw4-gnmi",
		"device_renamed sw4 sw4-snmp",
		"interface_up sw4 Ethernet1",
		"interface_up sw4 Ethernet2",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRenamesKeptWithSeveralOldNames: a rename of two old names into one
// is kept across a restart with both, unsaid and said; a file written
// before several were kept (one old name, a string) still reads.
func TestRenamesKeptWithSeveralOldNames(t *testing.T) {
	inv, _ := renameInventory(t, "devices:\n  - {name: sw4, address: 192.0.2.4}\n")
	kept := filepath.Join(t.TempDir(), "renames.json")
	now := time.Now()
	cause := telemetry.Cause{Topic: "raw.syslog", Offset: 7}
	d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.renamesPath, d.logger = kept, slog.New(slog.DiscardHandler)
	d.seenIdx = inv.idx.Load()
	d.renamesGen.Add(1)
	d.renamed = map[string]*renameNote{
		"sw4": {from: []string{"sw4-gnmi", "sw4-snmp"}, at: now},
		"sw5": {from: []string{"sw5-gnmi", "sw5-snmp"}, said: true, cause: cause, typ: "interface_up", objID: "Ethernet1", at: now},
		"sw6": {from: []string{"sw6-old"}, at: now},
	}
	d.saveRenames()
	data, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"sw6":"sw6-old"`) {
		t.Errorf("one old name not kept as a string: %s", data)
	}
	d2 := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d2.renamesPath, d2.logger = kept, slog.New(slog.DiscardHandler)
	if d2.loadRenames() == nil {
		t.Fatal("nothing kept")
	}
	for to, n := range d.renamed {
		m := d2.renamed[to]
		if m == nil || !slices.Equal(m.from, n.from) || m.said != n.said || m.cause != n.cause {
			t.Errorf("%s: read back %+v, want %+v", to, m, n)
		}
	}
}

// TestUnsaidRenameDroppedWhenTheNewNameGoes: core1 was renamed core1-fra,
// which was taken out of the inventory before any event of it; later an
// entry of another device (another address) is named core1-fra. That
// device's first event says no rename: core1's alerts are not its own.
// (Before, the note waited for any event under the new name, and the
// webhook sink moved core1's alerts onto the other device.)
func TestUnsaidRenameDroppedWhenTheNewNameGoes(t *testing.T) {
	unsaidRenameDropped(t,
		"devices:\n  - {name: core1-fra, address: 192.0.2.9}\n",
		"devices: []\n",
		"devices:\n  - {name: core1-fra, address: 198.51.100.7}\n")
}

// TestUnsaidRenameKeptWhileTheTargetHoldsTheNewName: an SNMP target
// named core1 by its inventory entry, which the inventory then leaves
// out, is named by its own name again: a rename into a name the
// inventory does not list is kept, and said.
func TestUnsaidRenameKeptWhileTheTargetHoldsTheNewName(t *testing.T) {
	inv, reload := renameInventory(t, "devices:\n  - {name: core1, address: 192.0.2.9}\n")
	d := newDetector(30*time.Second, DefaultFlapThreshold, DefaultFlapWindow)
	d.inv.Store(inv)
	d.targets.Store(NewSNMPTargets([]SNMPTarget{{Name: "lab-core", Host: "192.0.2.9"}}))
	now := time.Now()
	d.reportClock(t, nil, now)
	reload("devices: []\n")
	d.reportClock(t, nil, now)
	ev := telemetry.Event{Type: "interface_down", Device: "lab-core", Object: "Gi0/1", Time: now}
	if got := typeObjects(d.observeInto(ev, now, false, nil)); !slices.Equal(got, []string{"device_renamed core1", "interface_down Gi0/1"}) {
		t.Errorf("events %q, want the rename from core1 said first", got)
	}
}

// typeObjects is each event's type and object, for comparing.
func typeObjects(evs []telemetry.Event) []string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.Type+" "+ev.Object)
	}
	return s
}
