package gnmi

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
)

// TestDeviceNameKeysRecords: WithDeviceName keys a target's records by
// the name it gives (the device as enrichment names it), asked at each
// batch, so a change (an inventory reloaded) keys the next batches; where
// it gives "" they are keyed by the target's name. The records still name
// the target.
func TestDeviceNameKeysRecords(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 2, ToggleEvery: -1})
	var name atomic.Value
	name.Store("edge1")
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{
		simTarget("a", addr, sub(countersPath, "stream", "sample", 20*time.Millisecond)),
		simTarget("b", addr, sub(countersPath, "stream", "sample", 20*time.Millisecond)),
	}}, WithDeviceName(func(target string) string {
		if target == "a" {
			return name.Load().(string)
		}
		return ""
	}))
	keyed := func(key string) []metric { return r.b.where(t, func(m metric) bool { return m.Key == key }) }
	waitFor(t, 10*time.Second, "records of both targets", func() bool { return len(keyed("edge1")) > 0 && len(keyed("b")) > 0 })
	name.Store("edge2") // the inventory renamed it
	waitFor(t, 10*time.Second, "records keyed by the new name", func() bool { return len(keyed("edge2")) > 0 })
	for _, m := range r.b.metrics(t) {
		want := map[string]bool{"a": m.Key == "edge1" || m.Key == "edge2", "b": m.Key == "b"}
		if !want[m.Device] {
			t.Fatalf("%s's record keyed %q", m.Device, m.Key)
		}
	}
	if len(keyed("a")) != 0 {
		t.Errorf("records keyed by target a's name though it names a device")
	}
}
