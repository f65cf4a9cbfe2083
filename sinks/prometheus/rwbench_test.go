package prometheus

import (
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// BenchmarkRemoteWriteAppendPoint: one enriched metric encoded as remote
// write TimeSeries, an SNMP IF-MIB row and a gNMI interface row whose
// hyphenated rates share names with the normalised ones (see
// rwWorker.name). Names are cached, so a point costs no allocation.
func BenchmarkRemoteWriteAppendPoint(b *testing.B) {
	snmp := map[string]any{"ifOperStatus": 1, "ifHighSpeed": 10000}
	var snmpCounters []string
	for _, c := range []string{"ifHCInOctets", "ifHCOutOctets", "ifHCInUcastPkts", "ifHCOutUcastPkts", "ifInErrors", "ifOutErrors", "ifInDiscards", "ifOutDiscards"} {
		snmp[c], snmp[c+"_rate"] = uint64(123456789), 1234.5
		snmpCounters = append(snmpCounters, c)
	}
	for _, f := range []string{"in_octets_rate", "out_octets_rate", "in_errors_rate", "out_errors_rate", "in_utilization_pct", "out_utilization_pct", "speed_mbps", "oper_up"} {
		snmp[f] = 1.5
	}
	gnmi := map[string]any{}
	var gnmiCounters []string
	for _, c := range []string{"in-octets", "out-octets", "in-errors", "out-errors", "in-discards", "out-discards"} {
		gnmi[c], gnmi[c+"_rate"] = uint64(987654321), 99.5
		gnmiCounters = append(gnmiCounters, c)
	}
	for _, f := range []string{"in_octets_rate", "out_octets_rate", "in_errors_rate", "out_errors_rate", "in_discards_rate", "out_discards_rate", "in_utilization_pct", "out_utilization_pct", "speed_mbps", "oper_up"} {
		gnmi[f] = 99.5
	}
	tags := map[string]string{"ifName": "Ethernet1", "site": "ams1", "role": "leaf", "vendor": "arista"}
	for _, c := range []struct {
		name     string
		fields   map[string]any
		counters []string
	}{{"snmp", snmp, snmpCounters}, {"gnmi", gnmi, gnmiCounters}} {
		b.Run(c.name, func(b *testing.B) {
			p := telemetry.PointOf(&telemetry.Metric{Measurement: "interface", Device: "leaf1", Tags: tags, Fields: c.fields,
				Counters: c.counters, Time: time.Unix(1_800_000_000, 0)})
			w := newRWWorker("", labeler{})
			w.appendPoint(p) // names cached
			b.ReportAllocs()
			for b.Loop() {
				w.body = w.body[:0]
				w.appendPoint(p)
			}
			b.ReportMetric(float64(len(p.Fields)), "fields/op")
		})
	}
}
