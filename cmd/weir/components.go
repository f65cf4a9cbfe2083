package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/shard"
)

// component is one long-running part of weir (a collector, a worker, a
// sink). Run blocks until ctx is done and returns nil on a clean stop.
type component struct {
	name string
	run  func(ctx context.Context) error
}

// Roles group the components so each stage can be scaled alone:
// `weir run --roles collect` on the edge, `--roles enrich,sink` elsewhere,
// all on one Kafka cluster.
const (
	roleCollect = "collect"
	roleEnrich  = "enrich"
	roleSink    = "sink"
)

// deps are what wiring hands to every part.
type deps struct {
	roles  map[string]bool // nil: all
	cfg    *configs.Config
	broker broker.Broker
	logger *slog.Logger
	reg    prometheus.Registerer
	// shard says which SNMP and gNMI targets this process collects when
	// several share them; nil: all.
	shard *shard.Member
	// reload is where parts that SIGHUP reloads register.
	reload *reloads
	// names are what devices are named by, for enrichment and the
	// collectors' keys; nil: enrichment is off in the config.
	names *deviceNames
}

// buildComponents wires every configured part; each source has its own
// builder in its own file (wire_syslog.go, wire_snmp.go, ...).
func buildComponents(d deps) ([]component, error) {
	var all []component
	if d.roles == nil || d.roles[roleCollect] {
		m, err := shardMember(d)
		if err != nil {
			return nil, err
		}
		if m != nil {
			d.shard = m
			all = append(all, component{name: "shard", run: m.Run})
		}
	}
	if wantDeviceNames(d) {
		names, comps, err := newDeviceNames(d)
		if err != nil {
			return nil, err
		}
		d.names = names
		all = append(all, comps...)
	}
	for _, b := range []struct {
		role  string
		build func(deps) ([]component, error)
	}{
		{roleCollect, syslogComponents},
		{roleCollect, snmpComponents},
		{roleCollect, gnmiComponents},
		{roleEnrich, enrichComponents},
		{roleSink, sinkComponents},
	} {
		if d.roles != nil && !d.roles[b.role] {
			continue
		}
		cs, err := b.build(d)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	return all, nil
}
