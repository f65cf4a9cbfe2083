package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
)

// component is one long-running part of weir (a collector, a worker, a
// sink). Run blocks until ctx is done and returns nil on a clean stop.
type component struct {
	name string
	run  func(ctx context.Context) error
}

// deps are what wiring hands to every part.
type deps struct {
	cfg    *configs.Config
	broker broker.Broker
	logger *slog.Logger
	reg    prometheus.Registerer
}

// buildComponents wires every configured part; each source has its own
// builder in its own file (wire_syslog.go, wire_snmp.go, ...).
func buildComponents(d deps) ([]component, error) {
	var all []component
	for _, build := range []func(deps) ([]component, error){
		syslogComponents,
		snmpComponents,
		enrichComponents,
		gnmiComponents,
		sinkComponents,
	} {
		cs, err := build(d)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	return all, nil
}
