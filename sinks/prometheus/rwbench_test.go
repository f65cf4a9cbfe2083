package prometheus

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
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
			w.appendPoint(p, nil) // names cached
			b.ReportAllocs()
			for b.Loop() {
				w.body = w.body[:0]
				w.appendPoint(p, nil)
			}
			b.ReportMetric(float64(len(p.Fields)), "fields/op")
		})
	}
}

// BenchmarkRemoteWriteBatch: Write of a batch of 2,000 IF-MIB-like rows
// of 100 devices (48 interfaces each, 4 numeric fields), the same series
// every batch, to a receiver that discards them: encoding, compression
// and whatever the sink keeps per batch.
func BenchmarkRemoteWriteBatch(b *testing.B) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(204)
	}))
	defer hs.Close()
	d, err := NewRemoteWrite(configs.Sink{URL: hs.URL}, sinks.Env{})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	items := make([]sinks.Item, 2000)
	for i := range items {
		m := &telemetry.Metric{Measurement: "interface", Device: fmt.Sprintf("r%d", i%100), Time: now, ReceivedAt: now,
			Tags:     map[string]string{"ifName": fmt.Sprintf("Ethernet%d", i%48), "site": "ams1"},
			Fields:   map[string]any{"ifHCInOctets": uint64(i), "ifHCOutOctets": uint64(i), "in_octets_rate": 1.5, "oper_up": true},
			Counters: []string{"ifHCInOctets", "ifHCOutOctets"}}
		items[i].Point = telemetry.PointOf(m)
		items[i].Record.Topic, items[i].Record.Offset = "enriched.metrics", int64(i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Write(ctx, items); err != nil {
			b.Fatal(err)
		}
		for i := range items {
			items[i].Record.Offset += int64(len(items)) // a new batch of the same series
		}
	}
	b.ReportMetric(float64(len(items)), "records/op")
}
