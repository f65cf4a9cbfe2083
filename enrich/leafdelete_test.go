package enrich

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// TestGNMILeafDeleteDropsItsRates: a gNMI delete of one counter (a
// target that no longer has in-octets on a port) takes what enrich derived
// from it with it, through to the Prometheus sink: the counter's own rate
// (in-octets_rate), the normalised in_octets_rate of its row and of the
// interface's "interface" record, at once rather than when stale. Its
// sibling's series stay. The counter's last sample is forgotten: made
// again, its first value gives no rate, not one over the gap from the
// old counter. The same when the counters came in one JSON object of
// /interfaces, fields of the interface's record (state/counters/in-octets).
func TestGNMILeafDeleteDropsItsRates(t *testing.T) {
	t.Run("leaves", func(t *testing.T) { testGNMILeafDeleteDropsItsRates(t, false) })
	t.Run("json", func(t *testing.T) { testGNMILeafDeleteDropsItsRates(t, true) })
}

func testGNMILeafDeleteDropsItsRates(t *testing.T, asJSON bool) {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	w.out = newOutputs(nil, telemetry.TopicRawGNMI, w.logger, w.m, false)
	now := time.Now()
	sink := promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })
	t0 := now.Add(-time.Minute).Truncate(time.Second)
	const eth1 = "/interfaces/interface[name=Ethernet1]/state/counters"
	path := func(s string) *gpb.Path {
		p, err := gnmi.ParsePath(s, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	row, field := "interfaces_interface_state_counters", ""
	if asJSON {
		row, field = "interfaces_interface", "state/counters/"
	}
	counters := func(in, out uint64) *gpb.Notification {
		if asJSON {
			js := fmt.Sprintf(`{"openconfig-interfaces:interface":[{"name":"Ethernet1","state":{"counters":{"in-octets":"%d","out-octets":"%d"}}}]}`, in, out)
			return &gpb.Notification{Update: []*gpb.Update{{Path: path("/interfaces"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}
		}
		return &gpb.Notification{Prefix: path(eth1), Update: []*gpb.Update{
			{Path: path("in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: in}}},
			{Path: path("out-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: out}}}}}
	}
	var offset int64
	// step enriches n, stamped at t0+sec, and feeds the sink what enrich
	// publishes; it returns the enriched records.
	step := func(sec int, n *gpb.Notification) []telemetry.Metric {
		n.Timestamp = t0.Add(time.Duration(sec) * time.Second).UnixNano()
		var recs []broker.Record
		for _, m := range gnmi.Flatten("mx1", n, now) {
			v, _, err := m.AppendJSON(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, broker.Record{Topic: telemetry.TopicRawGNMI, Value: v, Offset: offset, Timestamp: now})
			offset++
		}
		metrics, _ := w.enrichBatch(recs, nil, nil)
		var out []telemetry.Metric
		for _, o := range metrics {
			var m telemetry.Metric
			if err := json.Unmarshal(o.rec.Value, &m); err != nil {
				t.Fatal(err)
			}
			sink.Update(&m)
			out = append(out, m)
		}
		return out
	}
	served := func() []string {
		var b bytes.Buffer
		if err := sink.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, line := range strings.Split(b.String(), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") && strings.Contains(line, "Ethernet1") {
				names = append(names, line[:strings.IndexByte(line, '{')])
			}
		}
		return names
	}
	has := func(names []string, name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
	step(0, counters(1000, 2000))
	step(10, counters(2000, 3000))
	before := served()
	for _, name := range []string{"interfaces_interface_state_counters_in_octets_rate", "interface_in_octets_rate",
		"interfaces_interface_state_counters_out_octets_rate", "interface_out_octets_rate", row + "_in_octets_rate"} {
		if !has(before, name) {
			t.Fatalf("before the delete: %s not served; served %q", name, before)
		}
	}
	step(20, &gpb.Notification{Prefix: path(eth1), Delete: []*gpb.Path{path("in-octets")}})
	after := served()
	for _, name := range after {
		if strings.Contains(name, "in_octets") {
			t.Errorf("after the delete of in-octets: %s still served", name)
		}
	}
	for _, name := range []string{"interfaces_interface_state_counters_out_octets_rate", "interface_out_octets_rate"} {
		if !has(after, name) {
			t.Errorf("after the delete of in-octets: sibling %s gone; served %q", name, after)
		}
	}
	// Made again, counting from further on than before the delete.
	for _, m := range step(30, counters(900_000, 4000)) {
		if m.Measurement != row {
			continue
		}
		if v, ok := m.Fields[field+"in-octets_rate"]; ok {
			t.Errorf("the counter made again: its first value gives rate %v, want none", v)
		}
		if v, ok := m.Fields[field+"out-octets_rate"]; !ok || v != 50.0 {
			t.Errorf("its sibling's rate %v, want 50", v)
		}
	}
}
