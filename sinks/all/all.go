// Package all maps a sink's config `type:` to its constructor and builds
// the configured sinks. It lives apart from package sinks because every
// sink imports that package for the framework.
package all

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/file"
	"github.com/weirnet/weir/sinks/influxdb"
	"github.com/weirnet/weir/sinks/kafka"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/sinks/webhook"
)

// Registry returns the constructors by type. It is built on each call, so
// there is no package state to mutate; adding a sink is adding a folder and
// a line here (and its name to configs.SinkTypes).
func Registry() map[string]sinks.Constructor {
	return map[string]sinks.Constructor{
		"file":       file.New,
		"influxdb":   influxdb.New,
		"kafka":      kafka.New,
		"prometheus": promsink.New,
		// Remote write shares the exposition sink's naming, so it lives
		// in the same folder.
		"prometheus_remote_write": promsink.NewRemoteWrite,
		"webhook":                 webhook.New,
	}
}

// Build makes one runnable Sink per configured sink, all sharing one set of
// metrics registered on env.Registerer; each destination gets env with
// its own logger. On error, destinations already built are closed.
func Build(b broker.Broker, cfgs []configs.Sink, env sinks.Env) ([]*sinks.Sink, error) {
	logger, reg := env.Logger, env.Registerer
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := sinks.NewMetrics(reg)
	names := map[string]bool{}
	var built []*sinks.Sink
	var dests []sinks.Destination
	fail := func(err error) ([]*sinks.Sink, error) {
		for _, d := range dests {
			d.Close()
		}
		return nil, err
	}
	ctors := Registry()
	for _, c := range cfgs {
		if names[c.Name] {
			return fail(fmt.Errorf("sinks: two sinks named %q (names must be unique: they name the consumer group)", c.Name))
		}
		names[c.Name] = true
		ctor, ok := ctors[c.Type]
		if !ok {
			return fail(fmt.Errorf("sink %s: unknown type %q", c.Name, c.Type))
		}
		l := logger.With(slog.String("sink", c.Name), slog.String("type", c.Type))
		d, err := ctor(c, sinks.Env{Logger: l, Registerer: reg, StateDir: env.StateDir})
		if err != nil {
			// Else named twice: a sink's errors name it by its kind
			// ("prometheus sink p:", "remote write sink rw:").
			if head, _, _ := strings.Cut(err.Error(), ": "); !strings.HasSuffix(head, " sink "+c.Name) {
				err = fmt.Errorf("sink %s: %w", c.Name, err)
			}
			return fail(err)
		}
		dests = append(dests, d)
		// The sink's own lines name it already (sink=NAME).
		s, err := sinks.New(b, c, d, sinks.WithLogger(logger.With(slog.String("type", c.Type))), sinks.WithMetrics(m),
			sinks.WithSessionTimeout(env.SessionTimeout))
		if err != nil {
			return fail(err)
		}
		built = append(built, s)
	}
	return built, nil
}
