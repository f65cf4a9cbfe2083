package kafkacluster

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/peers"
)

// TestWaitCauseNamesTheDialError: a produce waiting on a cluster that is
// away was logged as "the broker has not answered for 15s; still
// waiting", with nothing on why. WaitCause gives the last failed
// connection ("connection refused"), and nothing once the cluster is back.
func TestWaitCauseNamesTheDialError(t *testing.T) {
	// A port nothing listens on, for now.
	// Outside the ephemeral range: no other socket is given it before
	// kfake takes it below.
	port := peers.FreePort(t, "tcp")
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	b, err := New([]string{addr.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.WaitCause(); err != nil {
		t.Fatalf("before any connection: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err = b.Produce(ctx, "weir.logs", []broker.Record{{Key: []byte("k"), Value: []byte("v")}})
	cancel()
	if err == nil {
		t.Fatal("produce with no cluster: no error")
	}
	if c := b.WaitCause(); c == nil || !strings.Contains(c.Error(), "connection refused") {
		t.Fatalf("WaitCause with the cluster away: %v, want the dial's connection refused", c)
	}
	unreachable := func() float64 {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(b.Collector())
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "weir_kafka_cluster_brokers_unreachable" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no weir_kafka_cluster_brokers_unreachable")
		return 0
	}
	if n := unreachable(); n != 1 {
		t.Errorf("weir_kafka_cluster_brokers_unreachable with the cluster away: %v, want 1", n)
	}
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(addr.Port), kfake.SeedTopics(1, "weir.logs"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.Produce(ctx, "weir.logs", []broker.Record{{Key: []byte("k"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if c := b.WaitCause(); c != nil {
		t.Errorf("WaitCause with the cluster back: %v", c)
	}
	if n := unreachable(); n != 0 {
		t.Errorf("weir_kafka_cluster_brokers_unreachable with the cluster back: %v, want 0", n)
	}
}
