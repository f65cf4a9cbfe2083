package main

import (
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
)

// TestShardMemberWithoutTargets: on a Kafka cluster, a collecting process
// started with no SNMP or gNMI targets made no shard member, so its
// collectors took every target a SIGHUP then added: each such process of
// the cluster polled them all, every record duplicated. It joins the group
// all the same, and the targets a reload brings are shared.
func TestShardMemberWithoutTargets(t *testing.T) {
	cfg := configs.Defaults()
	cfg.Broker.Kafka.Brokers = []string{"127.0.0.1:1"}
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := newReloads(prometheus.NewRegistry())
	reg := prometheus.NewRegistry()
	d := deps{cfg: cfg, broker: b, logger: slog.New(slog.DiscardHandler), reg: reg, reload: r}
	m, err := shardMember(d)
	if err != nil {
		t.Fatal(err)
	}
	if m == nil {
		t.Fatal("no shard member for a process started without targets: the targets a SIGHUP adds would be polled by every process")
	}
	next := configs.Defaults()
	next.SNMP.Targets = []configs.SNMPTarget{{Name: "edge1"}}
	next.GNMI.Targets = []configs.GNMITarget{{Name: "spine1"}}
	for _, p := range r.parts {
		if err := p.apply(next); err != nil {
			t.Fatal(err)
		}
	}
	// Both collectors' targets are counted (weir_shard_owned_targets).
	if n := testutil.CollectAndCount(reg, "weir_shard_owned_targets"); n != 2 {
		t.Errorf("%d weir_shard_owned_targets series after the reload, want snmp and gnmi", n)
	}
}
