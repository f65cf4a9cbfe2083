package main

import (
	"log/slog"
	"path/filepath"

	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/all"
)

// sinkComponents builds the configured sinks: each its own consumer group
// ("sink-<name>") over its topics, so a slow or broken destination never
// slows collection or another sink.
func sinkComponents(d deps) ([]component, error) {
	if len(d.cfg.Sinks) == 0 {
		return nil, nil
	}
	ss, err := all.Build(d.broker, d.cfg.Sinks, sinks.Env{Logger: d.logger.With(slog.String("component", "sinks")),
		Registerer: d.reg, StateDir: filepath.Join(d.cfg.DataDir, "sinks")})
	if err != nil {
		return nil, err
	}
	comps := make([]component, len(ss))
	for i, s := range ss {
		comps[i] = component{name: "sink-" + d.cfg.Sinks[i].Name, run: s.Run}
	}
	return comps, nil
}
