package influxdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/influxdb"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/telemetry"
)

// influxd runs Debian's InfluxDB 1.x with every listener on 127.0.0.1.
type influxd struct {
	t      *testing.T
	bin    string
	conf   string
	http   string
	cancel context.CancelFunc
	done   chan struct{}
}

func startInfluxd(t *testing.T) *influxd {
	bin, err := exec.LookPath("influxd")
	if err != nil {
		t.Skip("influxd not installed (apt-get install influxdb)")
	}
	dir := t.TempDir()
	d := &influxd{t: t, bin: bin, conf: filepath.Join(dir, "influxdb.conf"), http: sinktest.FreeAddr(t)}
	conf := fmt.Sprintf(`reporting-disabled = true
bind-address = %q
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[http]
  bind-address = %q
  log-enabled = false
[continuous_queries]
  enabled = false
[monitor]
  store-enabled = false
`, sinktest.FreeAddr(t), filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), d.http)
	if err := os.WriteFile(d.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	d.start()
	t.Cleanup(d.stop)
	return d
}

func (d *influxd) start() {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, d.bin, "-config", d.conf)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.cancel, d.done = cancel, make(chan struct{})
	go func() { cmd.Wait(); close(d.done) }()
	sinktest.Eventually(d.t, "influxd up", func() bool {
		resp, err := http.Get("http://" + d.http + "/ping")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 204
	})
}

func (d *influxd) stop() {
	if d.cancel != nil {
		d.cancel()
		<-d.done
		d.cancel = nil
	}
}

func (d *influxd) query(q string) [][]any {
	resp, err := http.PostForm("http://"+d.http+"/query", url.Values{"q": {q}, "db": {"net"}})
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Results []struct {
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
			Error string `json:"error"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		d.t.Fatal(err)
	}
	if len(res.Results) == 0 || res.Results[0].Error != "" {
		d.t.Fatalf("query %q: %+v", q, res)
	}
	if len(res.Results[0].Series) == 0 {
		return nil
	}
	return res.Results[0].Series[0].Values
}

func (d *influxd) count() int {
	v := d.query(`SELECT count("utilisation") FROM "interface"`)
	if len(v) == 0 {
		return 0
	}
	n, _ := v[0][1].(float64)
	return int(n)
}

// TestRealInfluxDB1 writes through the v1 API to a real InfluxDB 1.x,
// queries it back, then stops it for a while: the sink retries, and after
// the restart nothing is missing.
func TestRealInfluxDB1(t *testing.T) {
	d := startInfluxd(t)
	d.query("CREATE DATABASE net")
	c := configs.Sink{Type: "influxdb", Name: "influx1", Topics: []string{"enriched.metrics"}, URL: "http://" + d.http,
		Database: "net", BatchSize: 100, FlushInterval: configs.Duration(20 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(20 * time.Millisecond), Max: configs.Duration(200 * time.Millisecond)}}
	dest, err := influxdb.New(c, sinks.Env{})
	if err != nil {
		t.Fatal(err)
	}
	b := sinktest.Broker(t)
	key := func(i int) string { return fmt.Sprintf("r%d", i) }
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key, metrics(300, 0))
	r := sinktest.Start(t, b, c, dest)
	sinktest.Eventually(t, "300 points in InfluxDB", func() bool { return d.count() == 300 })
	v := d.query(`SELECT "ifHCInOctets", "utilisation", "ifOperStatus", "ok" FROM "interface" WHERE "device" = 'r7' AND "ifName" = 'Ethernet 1/1'`)
	if len(v) != 1 || v[0][1] != float64(1<<40) || v[0][2] != 12.5 || v[0][3] != "up" || v[0][4] != true {
		t.Fatalf("r7: %v", v)
	}
	if ts, _ := time.Parse(time.RFC3339Nano, v[0][0].(string)); !ts.Equal(t0.Add(7 * time.Second)) {
		t.Fatalf("r7 time %v", v[0][0])
	}

	// Outage: stop InfluxDB, publish more, see the retries, restart.
	d.stop()
	before := r.Counter("weir_sink_retries_total", map[string]string{"sink": "influx1"})
	key2 := func(i int) string { return fmt.Sprintf("r%d", 1000+i) }
	sinktest.Produce(t, b, "enriched.metrics", telemetry.SchemaMetric, key2, metrics(200, 1000))
	sinktest.Eventually(t, "retries while InfluxDB is down", func() bool {
		return r.Counter("weir_sink_retries_total", map[string]string{"sink": "influx1"}) >= before+3
	})
	d.start()
	sinktest.Eventually(t, "500 points after the outage", func() bool { return d.count() == 500 })
}
