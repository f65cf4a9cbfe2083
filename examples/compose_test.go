package examples_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.yaml.in/yaml/v3"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/weirproc"
)

// TestComposeDashboards runs the docker compose lab without Docker: weir
// with deploy/weir.yaml on a Kafka cluster (kfake), the simulated devices
// it names, and a real Prometheus with deploy/prometheus.yml. Every query
// of every dashboard docker-compose.yml mounts into Grafana (and every
// variable's) gives series, with the labels its legend names, and asks a
// data source Grafana has: a metric or label renamed in weir, or misspelt
// in a dashboard, would draw an empty panel that no other test sees.
func TestComposeDashboards(t *testing.T) {
	t.Parallel() // it waits on poll and scrape intervals, on ports of its own
	commands(t, "logger")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	snmpBase, gnmiBase := freePorts(t, "udp", 5), freePorts(t, "tcp", 2)
	// The compose file's simulators, smaller.
	sim(t, "snmp", "--agents", "5", "--interfaces", "4", "--base-port", fmt.Sprint(snmpBase))
	sim(t, "gnmi", "--targets", "2", "--interfaces", "4", "--flap-every", "5m", "--base-port", fmt.Sprint(gnmiBase))
	syslogPort, httpAddr, sinkAddr := freePort(t), peers.FreeAddr(t), peers.FreeAddr(t)
	inventory, err := filepath.Abs("../deploy/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pairs := []string{
		"data_dir: /var/lib/weir", "data_dir: " + t.TempDir(),
		"listen: 0.0.0.0:8080", "listen: " + httpAddr,
		"[kafka:9092]", "[" + strings.Join(cluster.ListenAddrs(), ", ") + "]",
		`"0.0.0.0:5514"`, `"127.0.0.1:` + syslogPort + `"`,
		`"0.0.0.0:5162"`, `"` + peers.FreeAddr(t) + `"`,
		"/etc/weir/inventory.yaml", inventory,
		`"0.0.0.0:9273"`, `"` + sinkAddr + `"`,
		"sim-gnmi:50051", fmt.Sprintf("127.0.0.1:%d", gnmiBase),
		"sim-gnmi:50052", fmt.Sprintf("127.0.0.1:%d", gnmiBase+1),
	}
	for i := range 5 {
		pairs = append(pairs, fmt.Sprintf("sim-snmp:%d", 16100+i), fmt.Sprintf("127.0.0.1:%d", snmpBase+i))
	}
	cfg := movedFile(t, "../deploy/weir.yaml", pairs...)
	w := weirproc.Start(t, weirBin, root, "-c", cfg, "--roles", "collect,enrich,sink")
	// One process: weir2's targets go.
	prom := peers.Prometheus(t, moved(t, "deploy/prometheus.yml", read(t, "../deploy/prometheus.yml"),
		`"weir1:8080", "weir2:8080"`, `"`+httpAddr+`"`,
		`"weir1:9273", "weir2:9273"`, `"`+sinkAddr+`"`))
	peers.WaitHTTP(t, "Prometheus ready", "http://"+prom+"/-/ready", 200)
	// An event for the events panel, as the compose lab's syslog sender
	// raises them.
	shell(t, fmt.Sprintf("logger -n 127.0.0.1 -P %s -d --rfc3164 '%%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down'", syslogPort))

	queries := composeDashboardQueries(t)
	if len(queries) < 10 {
		t.Fatalf("%d queries in the compose lab's dashboards: %+v", len(queries), queries)
	}
	var failing []string
	defer func() {
		if t.Failed() {
			t.Logf("still failing: %s\nweir's log:\n%s", strings.Join(failing, "\n"), w.Logs())
		}
	}()
	peers.Within(t, 4*time.Minute, "series for every query of the compose lab's dashboards", func() bool {
		w.Running(t)
		failing = failing[:0]
		for _, q := range queries {
			if why := q.check(t, prom); why != "" {
				failing = append(failing, why)
			}
		}
		return len(failing) == 0
	})
}

// dashQuery is a query of a dashboard panel or variable, its variables
// replaced by what selects everything.
type dashQuery struct {
	where, expr string
	legend      []string // labels the legend shows
	maybeEmpty  bool     // series only while something is wrong: accepted, not required
}

// check runs the query and returns why it does not draw yet ("" if it
// does). A query Prometheus refuses fails the test at once.
func (q dashQuery) check(t *testing.T, prom string) string {
	samples := peers.Query(t, prom, q.expr)
	if len(samples) == 0 {
		if q.maybeEmpty {
			return ""
		}
		return fmt.Sprintf("%s: no series for %s", q.where, q.expr)
	}
	for _, s := range samples {
		for _, l := range q.legend {
			if s.Metric[l] == "" {
				return fmt.Sprintf("%s: %s gives a series without the legend's label %q: %v", q.where, q.expr, l, s.Metric)
			}
		}
	}
	return ""
}

var (
	legendRE      = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)
	labelValuesRE = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
	dashVarRE     = regexp.MustCompile(`"\$\{?\w+\}?"`)
)

// composeDashboardQueries reads the dashboards docker-compose.yml mounts
// into Grafana's dashboards directory, checks that their panels ask a
// data source the compose lab provisions (or the dashboard's data source
// variable), and returns their queries.
func composeDashboardQueries(t *testing.T) []dashQuery {
	t.Helper()
	var compose struct {
		Services map[string]struct {
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(read(t, "../docker-compose.yml")), &compose); err != nil {
		t.Fatal(err)
	}
	var files []string
	var provisioned []string
	for _, v := range compose.Services["grafana"].Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 {
			continue
		}
		src := filepath.Join("..", parts[0])
		switch dst := parts[1]; {
		case dst == "/etc/grafana/provisioning":
			var ds struct {
				Datasources []struct{ UID string } `yaml:"datasources"`
			}
			if err := yaml.Unmarshal([]byte(read(t, filepath.Join(src, "datasources/prometheus.yaml"))), &ds); err != nil {
				t.Fatal(err)
			}
			for _, d := range ds.Datasources {
				provisioned = append(provisioned, d.UID)
			}
		case strings.HasPrefix(dst, "/var/lib/grafana/dashboards"):
			if strings.HasSuffix(src, ".json") {
				files = append(files, src)
				continue
			}
			more, err := filepath.Glob(filepath.Join(src, "*.json"))
			if err != nil || len(more) == 0 {
				t.Fatalf("no dashboard in %s: %v", src, err)
			}
			files = append(files, more...)
		}
	}
	if len(files) < 2 || len(provisioned) == 0 {
		t.Fatalf("docker-compose.yml's grafana: dashboards %v, data sources %v", files, provisioned)
	}
	var queries []dashQuery
	for _, f := range files {
		var dash struct {
			Templating struct {
				List []struct {
					Name, Type string
					Query      json.RawMessage
				}
			}
			Panels []struct {
				Title      string
				Datasource struct{ UID string }
				Targets    []struct {
					Expr, LegendFormat string
					Datasource         struct{ UID string }
				}
			}
		}
		if err := json.Unmarshal([]byte(read(t, f)), &dash); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		dsOK := func(uid string) bool { return uid == "${datasource}" || slices.Contains(provisioned, uid) }
		for _, p := range dash.Panels {
			if !dsOK(p.Datasource.UID) {
				t.Errorf("%s: panel %q asks data source %q, which the compose lab does not provision (%v)", f, p.Title, p.Datasource.UID, provisioned)
			}
			for _, tg := range p.Targets {
				if tg.Datasource.UID != "" && !dsOK(tg.Datasource.UID) {
					t.Errorf("%s: panel %q: a query asks data source %q, which the compose lab does not provision (%v)", f, p.Title, tg.Datasource.UID, provisioned)
				}
				q := dashQuery{where: fmt.Sprintf("%s panel %q", filepath.Base(f), p.Title),
					expr: strings.TrimSuffix(dashVarRE.ReplaceAllString(tg.Expr, `".*"`), " or vector(0)")}
				// An interface down: only while one is.
				q.maybeEmpty = strings.Contains(q.expr, "== 0")
				for _, m := range legendRE.FindAllStringSubmatch(tg.LegendFormat, -1) {
					q.legend = append(q.legend, m[1])
				}
				queries = append(queries, q)
			}
		}
		for _, v := range dash.Templating.List {
			if v.Type != "query" {
				continue
			}
			var q struct{ Query string }
			if err := json.Unmarshal(v.Query, &q); err != nil {
				json.Unmarshal(v.Query, &q.Query) // a variable's query may be a plain string
			}
			m := labelValuesRE.FindStringSubmatch(q.Query)
			if m == nil {
				t.Errorf("%s: variable %s: query %q is no label_values(metric, label)", f, v.Name, q.Query)
				continue
			}
			queries = append(queries, dashQuery{where: fmt.Sprintf("%s variable %s", filepath.Base(f), v.Name),
				expr: fmt.Sprintf("count by (%s) (%s)", m[2], m[1]), legend: []string{m[2]}})
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return queries
}
