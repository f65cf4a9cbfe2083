package enrich

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestReachBackStartsRatesAgainAfterAnOutageOfOverAnHour: core9's polls
// fail for 90 minutes (an ACL: the device runs on, its counters count) and
// weir restarts 80 minutes in. A worker that ran all along forgot Gi0/3's
// counters an hour into the outage (only the uptime, sysName and states
// stay while a target's polls fail: the README), so the first poll after
// it gives no rates, rather than rates over the whole gap (which for a
// 32-bit counter may have wrapped unseen). The reach back's poll of
// before the outage made the row seen at the restart: the restarted
// worker gave ifHCInOctets_rate over the 90 minutes.
func TestReachBackStartsRatesAgainAfterAnOutageOfOverAnHour(t *testing.T) {
	f := newLinkRestart(t)
	start := time.Now().Add(-90 * time.Minute).Truncate(time.Second)
	const uptime = 100 * 24 * 3600 * 100
	row := func(at time.Time, octets int64, up uint32) broker.Record {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "core9", Source: "snmp",
			Tags:   map[string]string{"ifIndex": "3", "ifName": "Gi0/3", "agent": "192.0.2.9"},
			Fields: map[string]any{"ifOperStatus": 1, "ifHCInOctets": octets}, Counters: []string{"ifHCInOctets"},
			Counters64: []string{"ifHCInOctets"}, Time: at, Uptime: up}
		v, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		return broker.Record{Key: []byte("core9"), Value: v, Timestamp: at}
	}
	f.produce(telemetry.TopicRawSNMP, row(start, 1e9, uptime), f.status(start, 1, uptime))
	n := 2
	failed := func(from, to int) { n += f.failedPolls(start, from, to) }
	failed(1, 80)
	stop := startRunner(NewMetricsWorker(f.b, f.inv, f.before()...))
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, n)
	stop()
	stop = startRunner(NewMetricsWorker(f.b, f.inv, f.before()...))
	defer stop()
	failed(81, 89)
	at := start.Add(90 * time.Minute)
	f.produce(telemetry.TopicRawSNMP, row(at, 2e9, uptime+90*60*100), f.status(at, 1, uptime+90*60*100))
	n += 2
	waitCommitted(t, f.b, telemetry.TopicRawSNMP, n)
	for _, r := range readTopic(t, f.b, telemetry.TopicEnrichedMetrics) {
		var m telemetry.Metric
		if err := json.Unmarshal(r.Value, &m); err != nil {
			t.Fatal(err)
		}
		if m.Measurement == "snmp_interface" && m.Time.Equal(at) {
			if rate, ok := m.Fields["ifHCInOctets_rate"]; ok {
				t.Errorf("the first poll after an outage of 90 minutes has ifHCInOctets_rate %v, over the whole outage", rate)
			}
			return
		}
	}
	t.Fatal("no enriched row of the poll after the outage")
}
