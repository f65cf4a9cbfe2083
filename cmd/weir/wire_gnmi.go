package main

import (
	"log/slog"
	"path/filepath"

	"github.com/weirnet/weir/collectors/gnmi"
	"github.com/weirnet/weir/configs"
)

// gnmiComponents builds the gNMI collector from the config; with no
// targets it waits for a SIGHUP that adds some.
func gnmiComponents(d deps) ([]component, error) {
	c := d.cfg.GNMI
	m, err := gnmi.NewMetrics(d.reg)
	if err != nil {
		return nil, err
	}
	opts := []gnmi.Option{gnmi.WithLogger(d.logger.With(slog.String("component", "gnmi"))), gnmi.WithMetrics(m),
		gnmi.WithStateFile(filepath.Join(d.cfg.DataDir, "gnmi", "targets.json"))}
	if d.shard != nil {
		opts = append(opts, gnmi.WithOwner(d.shard))
	}
	if d.names != nil {
		// Keyed by the device's name as enrichment gives it.
		opts = append(opts, gnmi.WithDeviceName(d.names.namer.GNMITarget))
	}
	col, err := gnmi.New(c, d.broker, opts...)
	if err != nil {
		return nil, err
	}
	d.reload.add(partGNMITargets, func(cfg *configs.Config) error { return col.Update(cfg.GNMI.Targets) })
	return []component{{name: "gnmi", run: col.Run}}, nil
}
