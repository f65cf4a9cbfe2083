package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/configs"
)

// TestInventoryReloadMetrics: an inventory saved broken was only logged
// (weir_config_* count SIGHUP's reading of the config, and say nothing
// of a file the watch reloads), so an operator alerting on /metrics
// never learnt that the devices on disk were not the ones tagging
// records. weir_inventory_reloads_total and
// weir_inventory_last_reload_successful tell each reload's outcome.
func TestInventoryReloadMetrics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: ams1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := configs.Defaults()
	cfg.Enrich.Inventory = path
	reg := prometheus.NewRegistry()
	r := newReloads(prometheus.NewRegistry())
	if _, _, err := newDeviceNames(deps{cfg: cfg, logger: slog.New(slog.DiscardHandler), reg: reg, reload: r}); err != nil {
		t.Fatal(err)
	}
	inventory := partApply(t, r, partInventory)
	value := func(name string, labels ...string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
		metrics:
			for _, m := range mf.GetMetric() {
				for i, l := range m.GetLabel() {
					if i*2+1 >= len(labels) || l.GetName() != labels[i*2] || l.GetValue() != labels[i*2+1] {
						continue metrics
					}
				}
				if m.Counter != nil {
					return m.GetCounter().GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	if got := value("weir_inventory_last_reload_successful"); got != 1 {
		t.Errorf("at start: weir_inventory_last_reload_successful = %v, want 1", got)
	}
	os.WriteFile(path, []byte("devices: [unterminated\n"), 0o644)
	if inventory(cfg) == nil {
		t.Fatal("a broken inventory reloaded")
	}
	if got := value("weir_inventory_reloads_total", "result", "failure"); got != 1 {
		t.Errorf("weir_inventory_reloads_total{result=failure} = %v, want 1", got)
	}
	if got := value("weir_inventory_last_reload_successful"); got != 0 {
		t.Errorf("after a broken file: weir_inventory_last_reload_successful = %v, want 0", got)
	}
	os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: fra1}\n"), 0o644)
	if err := inventory(cfg); err != nil {
		t.Fatal(err)
	}
	if got := value("weir_inventory_reloads_total", "result", "success"); got != 1 {
		t.Errorf("weir_inventory_reloads_total{result=success} = %v, want 1", got)
	}
	if got := value("weir_inventory_last_reload_successful"); got != 1 {
		t.Errorf("after a good file: weir_inventory_last_reload_successful = %v, want 1", got)
	}
}

// TestInventoryLoadedIsLogged: weir's start said nothing of the
// inventory (a "starting component=inventory" line at most), so an
// operator could not tell from the log which file tags the records nor
// whether it held the devices he listed. The start logs the file and
// what it holds, as a reload does.
func TestInventoryLoadedIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: ams1}\n  - {name: lab, cidr: 10.0.0.0/8}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := configs.Defaults()
	cfg.Enrich.Inventory = path
	var logs bytes.Buffer
	r := newReloads(prometheus.NewRegistry())
	if _, _, err := newDeviceNames(deps{cfg: cfg, logger: slog.New(slog.NewTextHandler(&logs, nil)), reload: r}); err != nil {
		t.Fatal(err)
	}
	if want := `msg="inventory loaded" component=enrich file=` + path + " devices=1 ranges=1"; !strings.Contains(logs.String(), want) {
		t.Fatalf("log %q, want a line with %q", logs.String(), want)
	}
}

// TestInventoryPathChangeOnSIGHUP: the config's enrich.inventory changed
// and SIGHUP said it waited for a restart, so moving the inventory (a
// file per site, a ConfigMap mounted elsewhere) meant stopping
// collection. SIGHUP now loads the file the config names, logs it as the
// start does, and the watch follows it; a weir started without an
// inventory takes one, and a config without one empties it.
func TestInventoryPathChangeOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	write := func(name, site string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: "+site+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := write("a.yaml", "ams1"), write("b.yaml", "fra1")
	cfg := configs.Defaults()
	var logs bytes.Buffer
	r := newReloads(prometheus.NewRegistry())
	names, _, err := newDeviceNames(deps{cfg: cfg, logger: slog.New(slog.NewTextHandler(&logs, nil)), reg: prometheus.NewRegistry(), reload: r})
	if err != nil {
		t.Fatal(err)
	}
	inventory := partApply(t, r, partInventory)
	site := func() string {
		if d := names.inv.Lookup("edge1", ""); d != nil {
			return d.TagsOf()["site"]
		}
		return ""
	}
	for _, step := range []struct{ path, site string }{{a, "ams1"}, {b, "fra1"}, {"", ""}, {a, "ams1"}} {
		next := configs.Defaults()
		next.Enrich.Inventory = step.path
		if err := inventory(next); err != nil {
			t.Fatalf("SIGHUP with inventory %q: %v", step.path, err)
		}
		if got := site(); got != step.site {
			t.Errorf("SIGHUP with inventory %q: edge1 site %q, want %q", step.path, got, step.site)
		}
		if got := names.inv.Path(); got != step.path {
			t.Errorf("SIGHUP with inventory %q: the watch follows %q", step.path, got)
		}
	}
	for _, want := range []string{"inventory loaded\" component=enrich file=" + b + " devices=1", "inventory removed from the config; every device is unknown"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log %q, want a line with %q", logs.String(), want)
		}
	}
}

// TestInventorySIGHUPIsLogged: a SIGHUP that read the same inventory file
// again logged only "SIGHUP: reloaded parts=inventory,...", not what the
// file held, as the watch's reload and a SIGHUP that moved the file do:
// a file saved as "null" (or "{}", "devices:") emptied the inventory, every
// device unknown from then on, and nothing in the log said so. The reload
// logs the file and what it holds.
func TestInventorySIGHUPIsLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: ams1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := configs.Defaults()
	cfg.Enrich.Inventory = path
	var logs bytes.Buffer
	r := newReloads(prometheus.NewRegistry())
	if _, _, err := newDeviceNames(deps{cfg: cfg, logger: slog.New(slog.NewTextHandler(&logs, nil)), reload: r}); err != nil {
		t.Fatal(err)
	}
	inventory := partApply(t, r, partInventory)
	for _, tc := range []struct{ file, want string }{
		{"devices:\n  - {name: edge1, site: ams1}\n  - {name: lab, cidr: 10.0.0.0/8}\n", "devices=1 ranges=1"},
		{"null\n", "devices=0 ranges=0"},
	} {
		if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		logs.Reset()
		if err := inventory(cfg); err != nil {
			t.Fatal(err)
		}
		if want := `msg="inventory reloaded" component=enrich file=` + path + " " + tc.want; !strings.Contains(logs.String(), want) {
			t.Fatalf("SIGHUP of %q: log %q, want a line with %q", tc.file, logs.String(), want)
		}
	}
}

// partApply is what a SIGHUP applies to r's part name; the test fails
// when no such part reloads.
func partApply(t *testing.T, r *reloads, name string) func(*configs.Config) error {
	t.Helper()
	for _, p := range r.parts {
		if p.name == name {
			return p.apply
		}
	}
	t.Fatalf("no %s part reloads on SIGHUP", name)
	return nil
}

// TestGNMITargetAddressesFollowSIGHUP: the gNMI collector's keys name a
// target by the inventory entry of the address the config dials it at
// (as the raw.gnmi workers do), and SIGHUP brings the targets' addresses
// of the file read again; a target behind a gateway (prefix_target) is
// not named by the gateway's address.
func TestGNMITargetAddressesFollowSIGHUP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(path, []byte("devices:\n  - {name: spine9, address: 127.0.0.1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := configs.Defaults()
	cfg.Enrich.Inventory = path
	cfg.GNMI.Targets = []configs.GNMITarget{{Name: "rv1", Address: "127.0.0.1:57400"},
		{Name: "leaf3", Address: "127.0.0.1:9339", PrefixTarget: "leaf3"}}
	r := newReloads(prometheus.NewRegistry())
	names, _, err := newDeviceNames(deps{cfg: cfg, logger: slog.New(slog.DiscardHandler), reload: r})
	if err != nil {
		t.Fatal(err)
	}
	if got := names.namer.GNMITarget("rv1"); got != "spine9" {
		t.Errorf("rv1 at 127.0.0.1: named %q, want spine9", got)
	}
	if got := names.namer.GNMITarget("leaf3"); got != "" {
		t.Errorf("leaf3 behind a gateway at 127.0.0.1: named %q, want none", got)
	}
	next := *cfg
	next.GNMI.Targets = []configs.GNMITarget{{Name: "rv1", Address: "192.0.2.1:57400"}}
	if err := partApply(t, r, "enrich device names")(&next); err != nil {
		t.Fatal(err)
	}
	if got := names.namer.GNMITarget("rv1"); got != "" {
		t.Errorf("rv1 moved to 192.0.2.1: named %q, want none", got)
	}
}
