package enrich

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// TestIdleFastPortUtilisationKeepsNineDigits: an idle 100 Gbit/s port
// (LLDP and little else: 31 octets a second) is 2.48e-7 percent used.
// Rates and utilisation keep nine significant digits, but one under 1e-6
// was not rounded: in_utilization_pct 2.482666664e-07 here, and
// 8.266666640000001e-08 for 1.03 octets a second on a 10G port, in every
// idle fast port's record, the float noise the rounding is there to drop.
func TestIdleFastPortUtilisationKeepsNineDigits(t *testing.T) {
	w := loneMetricsWorker()
	for i, in := range []uint64{1_000_000, 1_000_931, 1_001_862 + 1} {
		m := telemetry.Metric{V: 1, Measurement: "snmp_interface", Device: "edge1",
			Tags:     map[string]string{"ifName": "Hu0/0/0/1", "ifIndex": "1"},
			Fields:   map[string]any{"ifHCInOctets": in, "ifHighSpeed": int64(100_000), "ifSpeed": int64(4294967295)},
			Counters: []string{"ifHCInOctets"}, Counters64: []string{"ifHCInOctets"},
			Time: casesT0.Add(time.Duration(i) * 30 * time.Second), Uptime: uint32(100_000 + i*3000), Source: "snmp"}
		f, _ := enrichAt(t, w, m, int64(i))
		if i == 0 {
			continue
		}
		pct, ok := f["in_utilization_pct"]
		if !ok {
			t.Fatalf("poll %d: no in_utilization_pct", i)
		}
		// Nine significant digits at most, as written.
		mant, _, _ := bytes.Cut(strconv.AppendFloat(nil, pct, 'e', -1, 64), []byte("e"))
		if digits := len(bytes.ReplaceAll(mant, []byte("."), nil)); digits > 9 {
			t.Errorf("poll %d: in_utilization_pct %v has %d significant digits, want 9 at most", i, pct, digits)
		}
		if want := f["in_octets_rate"] * 8 / 1e11 * 100; pct < want*(1-1e-8) || pct > want*(1+1e-8) {
			t.Errorf("poll %d: in_utilization_pct %v, want %v", i, pct, want)
		}
	}
}
