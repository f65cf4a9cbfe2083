package snmp

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// discardBroker takes every record and keeps none.
type discardBroker struct {
	broker.Broker
	last []broker.Record
}

func (d *discardBroker) Produce(_ context.Context, _ string, recs []broker.Record) error {
	d.last = recs
	return nil
}

// ifMIBRows are n rows as the poller builds them from if-mib (ifTable
// joined with ifXTable: 27 columns).
func ifMIBRows(n int) []telemetry.Metric {
	at := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	ms := make([]telemetry.Metric, n)
	for i := range ms {
		f := map[string]any{"ifIndex": int64(i + 1), "ifDescr": fmt.Sprintf("GigabitEthernet0/%d", i), "ifType": int64(6),
			"ifMtu": int64(1500), "ifSpeed": uint64(1e9), "ifPhysAddress": "00:1a:2b:3c:4d:5e", "ifAdminStatus": int64(1),
			"ifOperStatus": int64(1), "ifLastChange": uint64(123456), "ifName": fmt.Sprintf("Gi0/%d", i),
			"ifAlias": "uplink to \"core\" <b>", "ifHighSpeed": uint64(1000), "ifPromiscuousMode": int64(2), "ifConnectorPresent": int64(1)}
		var counters, counters64 []string
		for j, c := range []string{"ifHCInOctets", "ifHCInUcastPkts", "ifHCInMulticastPkts", "ifHCInBroadcastPkts",
			"ifHCOutOctets", "ifHCOutUcastPkts", "ifHCOutMulticastPkts", "ifHCOutBroadcastPkts", "ifInDiscards",
			"ifInErrors", "ifOutDiscards", "ifOutErrors", "ifInUnknownProtos"} {
			f[c] = uint64(1_000_000_007 * (i + j + 1))
			counters = append(counters, c)
			if j < 8 {
				counters64 = append(counters64, c)
			}
		}
		ms[i] = telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:   map[string]string{"agent": "192.0.2.1", "ifIndex": fmt.Sprint(i + 1), "ifName": fmt.Sprintf("Gi0/%d", i)},
			Fields: f, Counters: counters, Counters64: counters64, Time: at, Uptime: 123456789, Source: "snmp"}
	}
	return ms
}

// The poller's records are what json.Marshal gives, each in its own bytes.
func TestPublishEncodesAsJSON(t *testing.T) {
	d := &discardBroker{}
	tg := &target{cfg: configs.SNMPTarget{Name: "edge1"}, p: &Poller{cfg: Config{Broker: d, Topic: "raw.snmp"}}}
	ms := ifMIBRows(100)
	if err := tg.publish(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	if len(d.last) != len(ms) {
		t.Fatalf("%d records for %d rows", len(d.last), len(ms))
	}
	for i := range ms {
		want, _ := json.Marshal(&ms[i])
		if got := d.last[i].Value; string(got) != string(want) || cap(got) != len(got) {
			t.Fatalf("row %d (cap %d):\ngot  %s\nwant %s", i, cap(got), got, want)
		}
	}
}

// BenchmarkPublishIfMIB48 encodes one poll of a 48-port switch's if-mib.
func BenchmarkPublishIfMIB48(b *testing.B) {
	tg := &target{cfg: configs.SNMPTarget{Name: "edge1"}, p: &Poller{cfg: Config{Broker: &discardBroker{}, Topic: "raw.snmp"}}}
	ms := ifMIBRows(48)
	b.ReportAllocs()
	for b.Loop() {
		if err := tg.publish(context.Background(), ms); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ms)), "ns/row")
}
