package enrich

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/gnmi"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// gnmiChain is gNMI notifications of device mx1 flattened as the collector
// does, enriched by a metrics worker and fed to a Prometheus sink's
// collector, as weir chains them.
type gnmiChain struct {
	t      *testing.T
	w      *MetricsWorker
	sink   *promsink.Collector
	now    time.Time
	t0     time.Time // the notifications' times are from it
	offset int64
}

func newGNMIChain(t *testing.T) *gnmiChain {
	inv, _ := ParseInventory([]byte(testInventory))
	w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
	w.out = newOutputs(nil, telemetry.TopicRawGNMI, w.logger, w.m, false)
	now := time.Now()
	return &gnmiChain{t: t, w: w, now: now, t0: now.Add(-time.Minute).Truncate(time.Second),
		sink: promsink.NewCollector("", 5*time.Minute, func() time.Time { return now })}
}

// path parses a gNMI path.
func (c *gnmiChain) path(s string) *gpb.Path {
	p, err := gnmi.ParsePath(s, "")
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

// step enriches n, stamped at t0+sec, and feeds the sink what enrich
// publishes; it returns the enriched records.
func (c *gnmiChain) step(sec int, n *gpb.Notification) []telemetry.Metric {
	n.Timestamp = c.t0.Add(time.Duration(sec) * time.Second).UnixNano()
	var recs []broker.Record
	for _, m := range gnmi.Flatten("mx1", n, c.now) {
		v, _, err := m.AppendJSON(nil, nil)
		if err != nil {
			c.t.Fatal(err)
		}
		recs = append(recs, broker.Record{Topic: telemetry.TopicRawGNMI, Value: v, Offset: c.offset, Timestamp: c.now})
		c.offset++
	}
	metrics, _ := c.w.enrichBatch(recs, nil, nil)
	var out []telemetry.Metric
	for _, o := range metrics {
		var m telemetry.Metric
		if err := json.Unmarshal(o.rec.Value, &m); err != nil {
			c.t.Fatal(err)
		}
		c.sink.Update(&m)
		out = append(out, m)
	}
	return out
}

// served are the names of the series the sink serves of interface iface.
func (c *gnmiChain) served(iface string) []string {
	var b bytes.Buffer
	if err := c.sink.WriteText(&b); err != nil {
		c.t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(b.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") && strings.Contains(line, `"`+iface+`"`) {
			names = append(names, line[:strings.IndexByte(line, '{')])
		}
	}
	return names
}
