package main

import (
	"log/slog"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/shard"
)

// shardMember makes this process a member of the group of collecting
// processes that share the SNMP and gNMI targets (cluster: in the config),
// or returns nil when it collects every target: on the embedded log, or
// with cluster.shard_targets false. A process started without targets
// joins too: its collectors run, and take the targets a SIGHUP adds.
func shardMember(d deps) (*shard.Member, error) {
	cfg := d.cfg
	if !cfg.ShardTargets() {
		return nil, nil
	}
	var snmpNames, gnmiNames, all []string
	for _, t := range cfg.SNMP.Targets {
		snmpNames = append(snmpNames, t.Name)
		all = append(all, "snmp/"+t.Name)
	}
	for _, t := range cfg.GNMI.Targets {
		gnmiNames = append(gnmiNames, t.Name)
		all = append(all, "gnmi/"+t.Name)
	}
	c := cfg.Cluster
	m, err := shard.New(shard.Config{
		Broker:         d.broker,
		Group:          shard.GroupName(c.Group, all),
		Topic:          c.Topic,
		Partitions:     c.Partitions,
		SessionTimeout: c.SessionTimeout.Std(),
		Logger:         d.logger.With(slog.String("component", "shard")),
		Registerer:     d.reg,
	})
	if err != nil {
		return nil, err
	}
	// Both collectors run in a collecting process, with targets or not.
	m.Track("snmp", snmpNames)
	m.Track("gnmi", gnmiNames)
	// A reload keeps the group (named after the list at start) but counts
	// the targets the processes now have.
	d.reload.add("shard target counts", func(cfg *configs.Config) error {
		m.Track("snmp", targetNames(cfg.SNMP.Targets, func(t configs.SNMPTarget) string { return t.Name }))
		m.Track("gnmi", targetNames(cfg.GNMI.Targets, func(t configs.GNMITarget) string { return t.Name }))
		return nil
	})
	return m, nil
}

func targetNames[T any](targets []T, name func(T) string) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = name(t)
	}
	return out
}
