package influxdb_test

import (
	"testing"
	"time"

	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// TestNonFiniteGNMIFloatDoesNotPoisonField: the gnmi collector writes a
// double_val NaN or ±Inf as the string "NaN", "+Inf" or "-Inf" (an optic
// with no light reports its input power as -Inf dBm). Written as a string
// field, the first such value of a shard made the field a string in
// InfluxDB, and every later reading of it (a float) was refused as a
// field type conflict, each going to dead.letter, until the shard ended
// (a week for autogen). The value is left out, as Telegraf leaves out a
// NaN or infinite field; the point's other fields are written.
func TestNonFiniteGNMIFloatDoesNotPoisonField(t *testing.T) {
	d, c, dest := realInfluxDB(t, 1)
	b := sinktest.Broker(t)
	m := func(i int, instant any) telemetry.Metric {
		return telemetry.Metric{V: 1, Measurement: "components_component_transceiver_physical_channels_channel_state_input_power",
			Device: "spine1", Tags: map[string]string{"name": "Ethernet1", "index": "0"},
			Fields: map[string]any{"instant": instant, "min": -40.0}, Time: t0.Add(time.Duration(i) * time.Second)}
	}
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, func(int) string { return "spine1" },
		[]telemetry.Metric{m(0, "-Inf"), m(1, -3.5), m(2, "NaN"), m(3, -2.25), m(4, "+Inf")})
	r := sinktest.Start(t, b, c, dest)
	var v [][]any
	sinktest.Eventually(t, "five points in InfluxDB", func() bool {
		v = d.Query("net", `SELECT "instant", "min" FROM "components_component_transceiver_physical_channels_channel_state_input_power"`)
		return len(v) == 5
	})
	if v[0][1] != nil || v[1][1] != -3.5 || v[2][1] != nil || v[3][1] != -2.25 || v[4][1] != nil || v[0][2] != -40.0 {
		t.Fatalf("read back: %v", v)
	}
	if n := r.Counter("weir_sink_dead_letters_total", nil); n != 0 {
		t.Fatalf("%v dead letters", n)
	}
}
