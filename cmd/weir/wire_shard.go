package main

import (
	"log/slog"

	"github.com/weirnet/weir/internal/shard"
)

// shardMember makes this process a member of the group of collecting
// processes that share the SNMP and gNMI targets (cluster: in the config),
// or returns nil when it collects every target: on the embedded log, with
// cluster.shard_targets false, or without targets.
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
	if len(all) == 0 {
		return nil, nil
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
	if len(snmpNames) > 0 {
		m.Track("snmp", snmpNames)
	}
	if len(gnmiNames) > 0 {
		m.Track("gnmi", gnmiNames)
	}
	return m, nil
}
