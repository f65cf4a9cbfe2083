package enrich

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestTrapUptimeThatIsNoTimeTicks: a raw.traps record whose uptime is no
// sysUpTime (-1, 1.5, "x", true, 2^32: a Kafka client's) is a trap without
// one, as a metric's is, not an undecodable record: a coldStart still
// raises device_rebooted (at the time weir got it). It is counted in
// weir_enrich_invalid_uptimes_total{topic="raw.traps"} and logged, once
// per 10 s. A whole number written as a float (1.2e3) is that uptime.
func TestTrapUptimeThatIsNoTimeTicks(t *testing.T) {
	at := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		uptime  string
		want    uint32
		invalid bool
	}{
		{"100", 100, false}, {"1.2e3", 1200, false}, {"null", 0, false},
		{"-1", 0, true}, {"1.5", 0, true}, {`"x"`, 0, true}, {"true", 0, true}, {"4294967296", 0, true}, {`{"ticks":1}`, 0, true},
	} {
		reg := prometheus.NewPedanticRegistry()
		inv, _ := ParseInventory([]byte(testInventory))
		w := NewTrapWorker(nil, inv, WithWorkerMetrics(NewWorkerMetrics(reg)))
		var logs bytes.Buffer
		w.logger = slog.New(slog.NewTextHandler(&logs, nil))
		if got := gathered(t, reg, "weir_enrich_invalid_uptimes_total"); got != "topic=raw.traps 0" {
			t.Errorf("weir_enrich_invalid_uptimes_total before any trap: %q, want it at 0", got)
		}
		r := broker.Record{Topic: telemetry.TopicRawTraps, Offset: 7, Value: []byte(`{"v":1,"device":"edge1","trap_name":"coldStart","source_addr":"192.0.2.1:162",` +
			`"received_at":"` + at.Format(time.RFC3339) + `","uptime":` + tc.uptime + `}`)}
		tr, ok := w.decode(&r)
		if !ok {
			t.Errorf("uptime %s: trap not decoded: %s", tc.uptime, logs.String())
			continue
		}
		if tr.Uptime != tc.want {
			t.Errorf("uptime %s: decoded as %d, want %d", tc.uptime, tr.Uptime, tc.want)
		}
		ev, ok := w.eventOf(&tr, &r)
		if !ok || ev.Type != "device_rebooted" || !ev.Time.Equal(at.Add(-time.Duration(tc.want)*10*time.Millisecond)) {
			t.Errorf("uptime %s: event %+v (%v), want device_rebooted at the boot time", tc.uptime, ev, ok)
		}
		wantCount := "topic=raw.traps 0"
		if tc.invalid {
			wantCount = "topic=raw.traps 1"
			if !strings.Contains(logs.String(), "uptime is no sysUpTime") || !strings.Contains(logs.String(), "offset=7") {
				t.Errorf("uptime %s: no warning naming the record:\n%s", tc.uptime, logs.String())
			}
		}
		if got := gathered(t, reg, "weir_enrich_invalid_uptimes_total"); got != wantCount {
			t.Errorf("uptime %s: weir_enrich_invalid_uptimes_total %q, want %q", tc.uptime, got, wantCount)
		}
		if got := gathered(t, reg, "weir_enrich_decode_errors_total"); got != "reason=incomplete,topic=raw.traps 0;reason=malformed,topic=raw.traps 0;reason=version,topic=raw.traps 0" {
			t.Errorf("uptime %s: weir_enrich_decode_errors_total %q, want 0", tc.uptime, got)
		}
	}
}
