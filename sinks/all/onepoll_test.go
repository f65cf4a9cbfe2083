package all_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp"
	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/collectors/snmp/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/file"
	"github.com/weirnet/weir/sinks/influxdb"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	promsink "github.com/weirnet/weir/sinks/prometheus"
	"github.com/weirnet/weir/telemetry"
)

// statusCount counts snmp_status records: polls done.
func statusCount(t *testing.T, b broker.Broker) int {
	n := 0
	for _, r := range sinktest.ReadAll(t, b, telemetry.TopicRawSNMP) {
		if strings.Contains(string(r.Value), `"measurement":"snmp_status"`) {
			n++
		}
	}
	return n
}

// TestOnePollThreeSystems: a simulated SNMP agent polled once; the same
// samples reach the Prometheus, InfluxDB and file sinks, and the agent
// sees no request beyond the poll's.
func TestOnePollThreeSystems(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent, err := sim.Listen("127.0.0.1:0", sim.Options{Name: "edge1", Community: "public", Interfaces: 4})
	if err != nil {
		t.Fatal(err)
	}
	go agent.Serve(ctx)
	profiles, err := profile.Load(configs.BuiltinSNMPProfiles(), "")
	if err != nil {
		t.Fatal(err)
	}
	tc := configs.DefaultSNMPTarget()
	tc.Name = "edge1"
	host, port, _ := strings.Cut(agent.Addr().String(), ":")
	p, _ := strconv.Atoi(port)
	tc.Host, tc.Port, tc.Community, tc.Timeout, tc.Interval = host, uint16(p), "public", 2*time.Second, 5*time.Second
	b := sinktest.Broker(t)
	poller, err := snmp.New(snmp.Config{Targets: []configs.SNMPTarget{tc}, Profiles: profiles, Broker: b,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	pctx, stopPoller := context.WithCancel(ctx)
	pdone := make(chan struct{})
	go func() { poller.Run(pctx); close(pdone) }()
	// One poll: its snmp_status record closes it. Polls are spread over
	// the interval, so the first comes within 5s; the poller is stopped
	// right after it.
	var recs int
	sinktest.Eventually(t, "one poll", func() bool {
		all := sinktest.ReadAll(t, b, telemetry.TopicRawSNMP)
		for _, r := range all {
			if strings.Contains(string(r.Value), `"measurement":"snmp_status"`) {
				recs = len(all)
				return true
			}
		}
		return false
	})
	stopPoller()
	<-pdone
	requests := agent.Requests()
	if n := statusCount(t, b); n != 1 {
		t.Fatalf("%d polls, want 1", n)
	}

	// What the poll wrote: per metric with a counter, the counter's value.
	want := map[string]float64{} // measurement/field/device/ifName -> value
	for _, r := range sinktest.ReadAll(t, b, telemetry.TopicRawSNMP) {
		var m telemetry.Metric
		d := json.NewDecoder(strings.NewReader(string(r.Value)))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for _, c := range m.Counters {
			if n, ok := m.Fields[c].(json.Number); ok && m.Tags["ifName"] != "" {
				v, _ := n.Float64()
				want[m.Measurement+"/"+c+"/"+m.Device+"/"+m.Tags["ifName"]] = v
			}
		}
	}
	if len(want) == 0 {
		t.Fatalf("no interface counters in %d records", recs)
	}

	common := func(typ, name string) configs.Sink {
		return configs.Sink{Type: typ, Name: name, Topics: []string{telemetry.TopicRawSNMP}, FlushInterval: configs.Duration(20 * time.Millisecond)}
	}
	// InfluxDB v2 stand-in.
	var mu sync.Mutex
	influxGot := map[string]float64{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body, _ := io.ReadAll(zr)
		dec := lineprotocol.NewDecoderWithBytes(body)
		mu.Lock()
		defer mu.Unlock()
		for dec.Next() {
			meas, _ := dec.Measurement()
			tags := map[string]string{}
			for {
				k, v, err := dec.NextTag()
				if err != nil || k == nil {
					break
				}
				tags[string(k)] = string(v)
			}
			for {
				k, v, err := dec.NextField()
				if err != nil || k == nil {
					break
				}
				if v.Kind() == lineprotocol.Int {
					influxGot[string(meas)+"/"+string(k)+"/"+tags["device"]+"/"+tags["ifName"]] = float64(v.IntV())
				}
			}
		}
		w.WriteHeader(204)
	}))
	defer hs.Close()
	ic := common("influxdb", "influx")
	ic.URL, ic.Org, ic.Bucket = hs.URL, "o", "b"
	idest, _ := influxdb.New(ic, sinks.Env{})
	ri := sinktest.Start(t, b, ic, idest)

	pc := common("prometheus", "prom")
	pc.Listen = "127.0.0.1:0"
	pdest, err := promsink.NewSink(pc, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	rp := sinktest.Start(t, b, pc, pdest)

	dir := t.TempDir()
	fc := common("file", "archive")
	fc.Path = filepath.Join(dir, "snmp.jsonl")
	fdest, _ := file.NewSink(fc, time.Now)
	rf := sinktest.Start(t, b, fc, fdest)

	for _, r := range []*sinktest.Running{ri, rp, rf} {
		sinktest.Eventually(t, "every sink has the poll", func() bool {
			return r.Counter("weir_sink_records_total", nil) == float64(recs)
		})
	}
	// InfluxDB: the same counters.
	mu.Lock()
	for k, v := range want {
		if influxGot[k] != v {
			t.Errorf("influxdb %s = %v, want %v", k, influxGot[k], v)
		}
	}
	mu.Unlock()
	// Prometheus: the same counters.
	resp, err := http.Get("http://" + pdest.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		parts := strings.Split(k, "/")
		f := fams[promsink.MetricName("", parts[0], parts[1], true)]
		found := false
		for _, m := range f.GetMetric() {
			ls := map[string]string{}
			for _, l := range m.GetLabel() {
				ls[l.GetName()] = l.GetValue()
			}
			if ls["device"] == parts[2] && ls["if_name"] == parts[3] {
				found = m.GetCounter().GetValue() == v
			}
		}
		if !found {
			t.Errorf("prometheus has no %s = %v", k, v)
		}
	}
	// File: every record of the poll, once.
	fh, err := os.Open(fc.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	lines := 0
	for sc := bufio.NewScanner(fh); sc.Scan(); {
		lines++
	}
	if lines != recs {
		t.Errorf("file has %d lines, the poll %d records", lines, recs)
	}
	if got := agent.Requests(); got != requests {
		t.Errorf("agent saw %d requests after the poll, %d during it", got, requests)
	}
	t.Logf("one poll: %d records, %d SNMP requests, %d interface counters in all three sinks", recs, requests, len(want))
}
