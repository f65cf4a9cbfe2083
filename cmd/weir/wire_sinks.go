package main

import (
	"github.com/weirnet/weir/configs"
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
	env := sinks.Env{Logger: d.logger.With(slog.String("component", "sinks")),
		Registerer: d.reg, StateDir: filepath.Join(d.cfg.DataDir, "sinks")}
	if len(d.cfg.Broker.Kafka.Brokers) > 0 {
		// A killed process's sink partitions wait this long for
		// another process, as its enrichment and targets do.
		env.SessionTimeout = d.cfg.Cluster.SessionTimeout.Std()
	}
	ss, err := all.Build(d.broker, d.cfg.Sinks, env)
	if err != nil {
		return nil, err
	}
	comps := make([]component, len(ss))
	for i, s := range ss {
		comps[i] = component{name: "sink-" + d.cfg.Sinks[i].Name, run: s.Run}
	}
	// What of a sink a reload changes: a prometheus sink's staleness,
	// set or the default that follows the collectors' intervals
	// (restartNeeded leaves it out).
	d.reload.add("sinks", func(cfg *configs.Config) error {
		for i, s := range ss {
			for _, c := range cfg.Sinks {
				if c.Name == d.cfg.Sinks[i].Name && c.Type == d.cfg.Sinks[i].Type {
					s.Reload(c)
				}
			}
		}
		return nil
	})
	return comps, nil
}
