package examples_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/weirproc"
)

// TestExampleGNMIAndSNMP runs examples/gnmi-and-snmp: two simulated SNMP
// switches and two simulated gNMI targets, weir's prometheus sink scraped
// by a real Prometheus, and every query of the Grafana dashboard run on
// it. Each is valid PromQL, the traffic, errors and utilisation panels
// draw all four devices, SNMP and gNMI alike, and the dashboard's
// variables list them.
func TestExampleGNMIAndSNMP(t *testing.T) {
	t.Parallel() // each waits on poll and scrape intervals, on ports of its own
	commands(t, "curl", "jq")
	const dir = "gnmi-and-snmp/"
	snmpBase, gnmiBase := freePorts(t, "udp", 2), freePorts(t, "tcp", 2)
	sim(t, "snmp", "--agents", "2", "--interfaces", "4", "--base-port", fmt.Sprint(snmpBase))
	sim(t, "gnmi", "--targets", "2", "--interfaces", "4", "--flap-every", "1m", "--base-port", fmt.Sprint(gnmiBase))
	sinkAddr := peers.FreeAddr(t)
	cfg := movedFile(t, dir+"weir.yaml",
		"127.0.0.1:16100", fmt.Sprintf("127.0.0.1:%d", snmpBase),
		"127.0.0.1:16101", fmt.Sprintf("127.0.0.1:%d", snmpBase+1),
		"127.0.0.1:50051", fmt.Sprintf("127.0.0.1:%d", gnmiBase),
		"127.0.0.1:50052", fmt.Sprintf("127.0.0.1:%d", gnmiBase+1),
		"127.0.0.1:9273", sinkAddr,
		"/tmp/weir-examples/gnmi-and-snmp", t.TempDir())
	// The config has no syslog section: its default port, moved too.
	w := weirproc.Start(t, weirBin, root, "-c", cfg, "--kafka-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--syslog-listen", "127.0.0.1:0")
	prom := peers.Prometheus(t, moved(t, "prometheus.yml", read(t, dir+"prometheus.yml"), "127.0.0.1:9273", sinkAddr))
	peers.WaitHTTP(t, "Prometheus ready", "http://"+prom+"/-/ready", http.StatusOK)

	var dash struct {
		Templating struct {
			List []struct {
				Name, Type string
				Query      any
			}
		}
		Panels []struct {
			Title      string
			Datasource struct{ Type, UID string }
			Targets    []struct {
				Expr       string
				Datasource struct{ UID string }
			}
		}
	}
	if err := json.Unmarshal([]byte(read(t, dir+"grafana/dashboards/interfaces.json")), &dash); err != nil {
		t.Fatal(err)
	}
	// Every panel asks the data source the user picks (provisioned or
	// imported alike), and the variables select everything at first.
	all := strings.NewReplacer(`"$device"`, `".*"`, `"$site"`, `".*"`, `"$role"`, `".*"`)
	var exprs []string
	// Panels that draw every device, SNMP and gNMI alike (utilisation too,
	// the spines' from the speed subscription; the busiest are whichever
	// are).
	var everyDevice []string
	for _, p := range dash.Panels {
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source %q, want ${datasource}", p.Title, p.Datasource.UID)
		}
		for _, tg := range p.Targets {
			if tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: a query's data source %q, want ${datasource}", p.Title, tg.Datasource.UID)
			}
			exprs = append(exprs, all.Replace(tg.Expr))
			if strings.HasPrefix(p.Title, "Traffic") || strings.HasPrefix(p.Title, "Errors") || strings.HasPrefix(p.Title, "Utilisation") {
				everyDevice = append(everyDevice, all.Replace(tg.Expr))
			}
		}
	}
	if len(exprs) < 8 || !slices.ContainsFunc(dash.Templating.List, func(v struct {
		Name, Type string
		Query      any
	}) bool {
		return v.Name == "datasource" && v.Type == "datasource"
	}) {
		t.Fatalf("dashboard: %d queries, variables %+v", len(exprs), dash.Templating.List)
	}

	devices := func(samples []peers.Sample) []string {
		var ds []string
		for _, s := range samples {
			if !slices.Contains(ds, s.Metric["device"]) {
				ds = append(ds, s.Metric["device"])
			}
		}
		slices.Sort(ds)
		return ds
	}
	want := []string{"leaf1", "leaf2", "spine1", "spine2"}
	traffic := all.Replace(`interface_in_octets_rate{device=~"$device", site=~"$site", role=~"$role"} * 8`)
	if !slices.Contains(exprs, traffic) {
		t.Fatalf("the dashboard has no query %s", traffic)
	}
	var seen []string
	defer func() {
		if t.Failed() {
			t.Logf("devices with traffic in Prometheus: %v", seen)
			sink, _ := try("curl -s http://" + sinkAddr + "/metrics | grep -c ^interface_")
			t.Logf("interface series on the sink: %s\nweir's log:\n%s", sink, w.Logs())
		}
	}()
	peers.Within(t, 2*time.Minute, "traffic of the SNMP and gNMI devices in Prometheus", func() bool {
		w.Running(t)
		seen = devices(peers.Query(t, prom, traffic))
		return slices.Equal(seen, want)
	})
	// The README's query for those without Grafana.
	out := shell(t, moved(t, "the README's query", readmeLine(t, dir+"README.md", "query=interface_in_octets_rate * 8"), "127.0.0.1:9090", prom))
	for _, d := range want {
		if !strings.Contains(out, `"device":"`+d+`"`) {
			t.Errorf("the README's query shows no %s:\n%s", d, out)
		}
	}
	// A stat panel's "or vector(0)" always gives a series: ask without it,
	// so a misspelt metric there shows. The interfaces down panel has
	// series only while an interface is down: the spines' flaps below.
	var downPanel string
	for _, e := range exprs {
		bare := strings.TrimSuffix(e, " or vector(0)")
		if strings.Contains(bare, "== 0") {
			downPanel = bare
			continue
		}
		if len(peers.Query(t, prom, bare)) == 0 { // a query Prometheus refuses fails in Query
			t.Errorf("no series for %s", bare)
		}
	}
	if len(everyDevice) < 6 {
		t.Fatalf("%d queries of traffic, errors and utilisation panels: %q", len(everyDevice), everyDevice)
	}
	for _, e := range everyDevice {
		if got := devices(peers.Query(t, prom, e)); !slices.Equal(got, want) {
			t.Errorf("%s draws %v, want %v", e, got, want)
		}
	}
	// Interface status, SNMP's ifOperStatus and gNMI's oper-status alike,
	// for the interfaces down panel.
	if got := devices(peers.Query(t, prom, "interface_oper_up")); !slices.Equal(got, want) {
		t.Errorf("interface_oper_up of %v, want %v", got, want)
	}
	// The interfaces down panel counts gNMI interfaces too (the oper
	// subscription): one of each spine's goes down a minute in.
	if downPanel == "" {
		t.Fatalf("the dashboard has no interfaces down query among %q", exprs)
	}
	down := strings.TrimSuffix(strings.TrimPrefix(downPanel, "count("), ")")
	var downs []string
	peers.Within(t, 2*time.Minute, "the spines' interfaces down in "+down, func() bool {
		w.Running(t)
		downs = devices(peers.Query(t, prom, down))
		return slices.Contains(downs, "spine1") && slices.Contains(downs, "spine2")
	})
	if n := peers.Query(t, prom, downPanel); len(n) != 1 || n[0].Float() < 2 {
		t.Errorf("%s: %+v with %v down", downPanel, n, downs)
	}
	// The device variable's values (label_values, as Grafana asks them).
	resp, err := http.Get("http://" + prom + "/api/v1/label/device/values?match[]=" + url.QueryEscape("interface_in_octets_rate"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var values struct{ Data []string }
	if err := json.NewDecoder(resp.Body).Decode(&values); err != nil || !slices.Equal(values.Data, want) {
		t.Fatalf("device variable values %v (%v), want %v", values.Data, err, want)
	}
}
