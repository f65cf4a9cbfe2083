// Package peers starts real programs none of us wrote (Prometheus,
// Alertmanager, InfluxDB 1.x) on free loopback ports for tests, and skips
// the test where one is not installed. .ci/run installs them all.
package peers

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
)

// Timeout bounds Eventually, and so every wait for a peer to start.
const Timeout = 30 * time.Second

// Eventually polls cond until it holds, failing the test after Timeout.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Timeout, what, cond)
}

// Within polls cond until it holds, failing the test after d: for what
// waits on a device's poll interval or a scrape interval.
func Within(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	wait := 10 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(wait)
		wait = min(2*wait, 500*time.Millisecond) // a cond may run commands: back off
	}
}

// Process runs bin until the test ends, its output discarded.
func Process(t testing.TB, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
}

// Look returns the path of the first of names installed, or skips the
// test, saying which package brings it.
func Look(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skipf("%s not installed (apt-get install %s)", names[0], pkg)
	return ""
}

// writeFile writes text into a new file in dir and returns its path.
func writeFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WaitHTTP waits until GET url answers with status want.
func WaitHTTP(t testing.TB, what, url string, want int) {
	t.Helper()
	Eventually(t, what, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == want
	})
}

// Prometheus runs Debian's prometheus with conf (prometheus.yml's text)
// on a free loopback port, with the remote-write receiver on and args,
// and returns its address. It may still be starting: wait for
// "http://"+addr+"/-/ready" with WaitHTTP where that matters (with a
// --web.config.file of TLS, it answers https only).
func Prometheus(t testing.TB, conf string, args ...string) string {
	t.Helper()
	bin := Look(t, "prometheus", "prometheus")
	dir := t.TempDir()
	addr := FreeAddr(t)
	Process(t, bin, append([]string{"--config.file=" + writeFile(t, dir, "prometheus.yml", conf),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr,
		"--web.enable-remote-write-receiver"}, args...)...)
	return addr
}

// Sample is one series of a Prometheus instant query's result.
type Sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// Float is the sample's value.
func (s Sample) Float() float64 {
	v, _ := s.Value[1].(string)
	var f float64
	fmt.Sscan(v, &f)
	return f
}

// Query runs the instant query q on the Prometheus at addr. A query
// Prometheus refuses fails the test; an empty result is no error.
func Query(t testing.TB, addr, q string) []Sample {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("prometheus query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var res struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []Sample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || res.Status != "success" {
		t.Fatalf("prometheus query %s: %v %s %s", q, err, res.Status, res.Error)
	}
	return res.Data.Result
}

// Alertmanager runs Debian's Alertmanager with conf (alertmanager.yml's
// text; "" routes nowhere) on a free loopback port, clustering off, and
// returns its address once it is ready.
func Alertmanager(t testing.TB, conf string) string {
	t.Helper()
	bin := Look(t, "prometheus-alertmanager", "prometheus-alertmanager", "alertmanager")
	if conf == "" {
		conf = "route: {receiver: none}\nreceivers: [{name: none}]\n"
	}
	dir := t.TempDir()
	addr := FreeAddr(t)
	Process(t, bin, "--config.file="+writeFile(t, dir, "am.yml", conf),
		"--storage.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr,
		"--cluster.listen-address=", "--log.level=warn")
	WaitHTTP(t, "Alertmanager ready", "http://"+addr+"/-/ready", http.StatusOK)
	return addr
}

// Influxd is Debian's InfluxDB 1.x with every listener on loopback.
type Influxd struct {
	// Addr is its HTTP API's address.
	Addr   string
	t      testing.TB
	bin    string
	conf   string
	cancel context.CancelFunc
	done   chan struct{}
}

// InfluxDB starts an InfluxDB 1.x, stopped when the test ends.
func InfluxDB(t testing.TB) *Influxd {
	t.Helper()
	bin := Look(t, "influxdb", "influxd")
	dir := t.TempDir()
	d := &Influxd{t: t, bin: bin, Addr: FreeAddr(t)}
	d.conf = writeFile(t, dir, "influxdb.conf", fmt.Sprintf(`reporting-disabled = true
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
`, FreeAddr(t), filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), d.Addr))
	d.Start()
	t.Cleanup(d.Stop)
	return d
}

// Start starts it (again, after Stop) and waits until it answers.
func (d *Influxd) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, d.bin, "-config", d.conf)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		cancel()
		d.t.Fatal(err)
	}
	d.cancel, d.done = cancel, make(chan struct{})
	go func() { cmd.Wait(); close(d.done) }()
	WaitHTTP(d.t, "influxd up", "http://"+d.Addr+"/ping", http.StatusNoContent)
}

// Stop stops it; its data stays for a Start.
func (d *Influxd) Stop() {
	if d.cancel != nil {
		d.cancel()
		<-d.done
		d.cancel = nil
	}
}

// Query runs q (InfluxQL) in database db and returns the first series'
// rows, nil when there is none. A query InfluxDB refuses fails the test.
func (d *Influxd) Query(db, q string) [][]any {
	d.t.Helper()
	resp, err := http.PostForm("http://"+d.Addr+"/query", url.Values{"q": {q}, "db": {db}})
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
		d.t.Fatalf("influxdb query %q: %+v", q, res)
	}
	if len(res.Results[0].Series) == 0 {
		return nil
	}
	return res.Results[0].Series[0].Values
}
