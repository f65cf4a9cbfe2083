package main

import (
	"log/slog"

	"github.com/weirnet/weir/collectors/syslog"
)

// syslogComponents builds the syslog collector from the config; with no
// syslog section it listens on UDP and TCP 127.0.0.1:5514.
func syslogComponents(d deps) ([]component, error) {
	if !d.cfg.SyslogEnabled() {
		return nil, nil
	}
	opts := []syslog.Option{syslog.WithLogger(d.logger.With(slog.String("component", "syslog"))),
		syslog.WithRegisterer(d.reg)}
	if d.names != nil {
		// Keyed by the device's name as enrichment gives it.
		opts = append(opts, syslog.WithDeviceName(d.names.namer.Name))
	}
	c, err := syslog.New(d.cfg.Syslog, d.broker, opts...)
	if err != nil {
		return nil, err
	}
	return []component{{name: "syslog", run: c.Run}}, nil
}
