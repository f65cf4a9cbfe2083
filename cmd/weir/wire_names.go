package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/collectors/snmp"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/enrich"
)

// deviceNames are what enrichment names devices by (the inventory, the
// SNMP and gNMI targets), shared by the process's enrichment workers and its
// collectors, which key raw records by the same names (enrich.DeviceNamer):
// a raw record's key is then the key of what is enriched from it, and
// the records and events of one device are in one partition. Reloads (the
// inventory's file changing, SIGHUP) apply to both at once.
type deviceNames struct {
	inv     *enrich.Inventory
	targets *enrich.SNMPTargets
	gnmi    *enrich.GNMITargets
	namer   *enrich.DeviceNamer
}

// wantDeviceNames says whether the process names devices: enrichment is
// on in the config, and the process collects or enriches.
func wantDeviceNames(d deps) bool {
	return d.cfg.EnrichEnabled() && (d.roles == nil || d.roles[roleCollect] || d.roles[roleEnrich])
}

// newDeviceNames loads the inventory and registers what reloads it and
// the SNMP targets' names; the component watches the inventory's file.
func newDeviceNames(d deps) (*deviceNames, []component, error) {
	logger := d.logger.With(slog.String("component", "enrich"))
	inv, err := enrich.LoadInventory(d.cfg.Enrich.Inventory, logger)
	if err != nil {
		return nil, nil, fmt.Errorf("enrich.inventory: %w", err)
	}
	comps := []component{{name: "inventory", run: func(ctx context.Context) error {
		inv.Watch(ctx, 5*time.Second)
		return nil
	}}}
	logSize := func(msg, path string) {
		if path == "" {
			return
		}
		devices, ranges := inv.Size()
		logger.Info(msg, slog.String("file", path), slog.Int("devices", devices), slog.Int("ranges", ranges))
	}
	loaded := func(path string) { logSize("inventory loaded", path) }
	loaded(d.cfg.Enrich.Inventory)
	// A SIGHUP the inventory refused is taken once its watch loads the
	// file fixed.
	observeInventory(inv, d.reg, func() { d.reload.took(partInventory) })
	// SIGHUP reads the file again, or the one the config names now (or
	// none: every device unknown), which the watch follows from then on.
	d.reload.add(partInventory, func(cfg *configs.Config) error {
		path := cfg.Enrich.Inventory
		if path == "" && inv.Path() == "" {
			return errNotInUse
		}
		if path == inv.Path() {
			// What the file holds now, as the watch's reload logs it: a
			// file saved as "null" empties the inventory.
			if err := inv.Reload(); err != nil {
				return err
			}
			logSize("inventory reloaded", path)
			return nil
		}
		if err := inv.ReloadPath(path); err != nil {
			return err
		}
		if path == "" {
			logger.Info("inventory removed from the config; every device is unknown")
		}
		loaded(path)
		return nil
	})
	// The config's SNMP targets name the devices traps and hostless syslog
	// lines come from (the same in every process of a cluster); SIGHUP
	// brings the targets of the file read again when they pass the
	// poller's own check against the profiles read with it (as the
	// poller's are), so a running poller and enrichment take or refuse a
	// target list together.
	if _, err := d.cfg.SNMP.LoadSNMPProfiles(); err != nil {
		return nil, nil, err
	}
	targets := enrich.NewSNMPTargets(snmpTargetNames(d.cfg.SNMP.Targets))
	// The config's gNMI targets' addresses find their devices' inventory
	// entries (by address), and name the devices of traps and hostless
	// syslog lines from an address no SNMP target polls, for the
	// collectors' keys and the workers' names alike, in every process of
	// a cluster.
	gnmiTargets := enrich.NewGNMITargets(gnmiTargetAddrs(d.cfg.GNMI.Targets))
	d.reload.add("enrich device names", func(cfg *configs.Config) error {
		gnmiTargets.Set(gnmiTargetAddrs(cfg.GNMI.Targets))
		profiles, err := cfg.SNMP.LoadSNMPProfiles()
		if err != nil {
			return err
		}
		if err := snmp.CheckTargets(profiles, cfg.SNMP.Targets); err != nil {
			return err
		}
		targets.Set(snmpTargetNames(cfg.SNMP.Targets))
		return nil
	})
	return &deviceNames{inv: inv, targets: targets, gnmi: gnmiTargets, namer: enrich.NewDeviceNamer(inv, targets, gnmiTargets)}, comps, nil
}

// observeInventory counts the inventory's reloads on reg (nil: none), the
// watch's and SIGHUP's: the config reload metrics count SIGHUP's reading
// of the config, and say nothing of an inventory file saved broken. It
// calls loaded after each load that worked.
func observeInventory(inv *enrich.Inventory, reg prometheus.Registerer, loaded func()) {
	if reg == nil {
		inv.Observe(func(err error) {
			if err == nil {
				loaded()
			}
		})
		return
	}
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_inventory_reloads_total",
		Help: "Reloads of the inventory file (its watch, SIGHUP), by result (failure: the previous inventory stays)."}, []string{"result"})
	last := prometheus.NewGauge(prometheus.GaugeOpts{Name: "weir_inventory_last_reload_successful",
		Help: "1 when the inventory file last loaded (or at the start), 0 when its last reload failed and the previous inventory stays."})
	success, failure := total.WithLabelValues("success"), total.WithLabelValues("failure")
	last.Set(1)
	reg.MustRegister(total, last)
	inv.Observe(func(err error) {
		if err != nil {
			failure.Inc()
			last.Set(0)
			return
		}
		success.Inc()
		last.Set(1)
		loaded()
	})
}

// snmpTargetNames are the SNMP targets' names and hosts, for enrichment.
func snmpTargetNames(targets []configs.SNMPTarget) []enrich.SNMPTarget {
	out := make([]enrich.SNMPTarget, len(targets))
	for i, t := range targets {
		out[i] = enrich.SNMPTarget{Name: t.Name, Host: t.Host, Interval: t.Interval}
	}
	return out
}

// gnmiTargetAddrs are the gNMI targets' names and addresses, for
// enrichment. A target behind a gateway (prefix_target) is dialed at the
// gateway's address, not its own, and is given none.
func gnmiTargetAddrs(targets []configs.GNMITarget) []enrich.GNMITarget {
	out := make([]enrich.GNMITarget, len(targets))
	for i, t := range targets {
		out[i] = enrich.GNMITarget{Name: t.Name}
		if t.PrefixTarget == "" {
			out[i].Address = t.Address
		}
	}
	return out
}
