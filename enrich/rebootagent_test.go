package enrich

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestNoRebootFromAnotherAgentsUptime: a target whose address a SIGHUP
// changed to another agent, and back (or an HA pair's floating address
// answered by the other member), reads a sysUpTime that went back but to
// a boot before its previous poll: that agent was up then, so nothing
// restarted between the polls, and no device_rebooted is raised. Seen
// live: snmpd on 127.0.0.2 (up since 13:35:58, reported then), target
// moved to 127.0.0.1 and back, gave a second device_rebooted of the
// 13:35:58 boot at 13:40:46. A real restart after it is still one.
func TestNoRebootFromAnotherAgentsUptime(t *testing.T) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	bootA, bootB := t0.Add(-5*time.Minute), t0.Add(-10*time.Minute)
	uptime := func(boot, at time.Time) uint32 { return uint32(at.Sub(boot) / (10 * time.Millisecond)) }
	for i, tc := range []struct {
		agent    string
		boot     time.Time
		rebooted bool
	}{
		{"127.0.0.2", bootA, false},
		{"127.0.0.2", bootA, false},
		{"127.0.0.1", bootB, false}, // moved: up for longer
		{"127.0.0.1", bootB, false},
		{"127.0.0.2", bootA, false}, // moved back: up since before the last poll
		{"127.0.0.2", bootA, false},
		{"127.0.0.2", t0.Add(29 * time.Second), true}, // restarted after the last poll
		{"127.0.0.2", t0.Add(29 * time.Second), false},
	} {
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		w.rates.setNow(at.Add(time.Second))
		m := telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "host2", Tags: map[string]string{"agent": tc.agent},
			Fields: map[string]any{"snmp_up": int64(1)}, Time: at, Uptime: uptime(tc.boot, at), Source: "snmp"}
		v, _ := json.Marshal(&m)
		evs, ok := w.enrich(&broker.Record{Topic: telemetry.TopicRawSNMP, Offset: int64(i), Value: v})
		if !ok {
			t.Fatalf("poll %d not enriched", i)
		}
		rebooted := len(evs) == 1 && evs[0].Type == "device_rebooted"
		if rebooted != tc.rebooted || len(evs) > 1 || len(evs) == 1 && !rebooted {
			t.Errorf("poll %d (agent %s, sysUpTime %d): events %+v, want rebooted %v", i, tc.agent, m.Uptime, evs, tc.rebooted)
		}
	}
}
