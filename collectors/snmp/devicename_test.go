package snmp

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestDeviceNameKeysPolls: Config.DeviceName keys a target's records by
// the name it gives (the device as enrichment names it), asked with the
// target's name and host; a target it gives no name for is keyed by its
// name, as without it. The records still name the target.
func TestDeviceNameKeysPolls(t *testing.T) {
	refused := fmt.Sprintf("127.0.0.1:%d", snmptest.FreeUDPPort(t)) // answers at once, with a status record
	fast := func(tc *configs.SNMPTarget) { tc.Interval = time.Second }
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	asked := map[string]string{}
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: []configs.SNMPTarget{testTarget("core-a", refused, fast), testTarget("other", refused, fast)},
		Profiles: loadProfiles(t), Broker: capture, Metrics: metrics,
		DeviceName: func(target, host string) string {
			mu.Lock()
			defer mu.Unlock()
			asked[target] = host
			if target == "core-a" {
				return "edge1"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	ok := capture.WaitFor(10*time.Second, func(recs []broker.Record) bool {
		return countStatus(recs, "edge1") >= 1 && countStatus(recs, "other") >= 1 // by key
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatal("the targets were not polled in time")
	}
	for _, r := range capture.Records() {
		m := decode(t, []broker.Record{r})[0]
		want := map[string]string{"core-a": "edge1", "other": "other"}[m.Device]
		if string(r.Key) != want {
			t.Errorf("%s's %s record: key %q, want %q", m.Device, m.Measurement, r.Key, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["core-a"] != "127.0.0.1" {
		t.Errorf("asked with host %q, want 127.0.0.1", asked["core-a"])
	}
}
