package examples_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/weirproc"
)

// TestExampleOnePollThreeSystems runs examples/one-poll-three-systems:
// three simulated switches polled by weir, and the README's three queries
// of a real Prometheus, a real InfluxDB and the file give the same polls:
// InfluxDB and the file the same times, counters and rates, Prometheus
// the rate of one of them.
func TestExampleOnePollThreeSystems(t *testing.T) {
	t.Parallel() // each waits on poll and scrape intervals, on ports of its own
	commands(t, "curl", "jq")
	const dir = "one-poll-three-systems/"
	influx := peers.InfluxDB(t)
	sinkAddr, httpAddr, out := peers.FreeAddr(t), peers.FreeAddr(t), t.TempDir()
	where := func(text string) string {
		return strings.NewReplacer("127.0.0.1:8086", influx.Addr, "/tmp/weir-examples/one-poll-three-systems", out).Replace(text)
	}
	shell(t, where(readmeLine(t, dir+"README.md", "CREATE DATABASE weir_example")))

	base := freePorts(t, "udp", 3)
	sim(t, "snmp", "--agents", "3", "--interfaces", "8", "--base-port", fmt.Sprint(base))
	cfg := movedFile(t, dir+"weir.yaml",
		"127.0.0.1:16100", fmt.Sprintf("127.0.0.1:%d", base),
		"127.0.0.1:16101", fmt.Sprintf("127.0.0.1:%d", base+1),
		"127.0.0.1:16102", fmt.Sprintf("127.0.0.1:%d", base+2),
		"127.0.0.1:9273", sinkAddr,
		"http://127.0.0.1:8086", "http://"+influx.Addr,
		"/tmp/weir-examples/one-poll-three-systems", out)
	// The config has no syslog section: its default port, moved too.
	w := weirproc.Start(t, weirBin, root, "-c", cfg, "--kafka-listen", "127.0.0.1:0", "--http-listen", httpAddr, "--syslog-listen", "127.0.0.1:0")
	prom := peers.Prometheus(t, moved(t, "prometheus.yml", read(t, dir+"prometheus.yml"),
		"127.0.0.1:9273", sinkAddr, "127.0.0.1:8080", httpAddr))
	// query runs the README's query command with marker; "" while it
	// fails (the file not written yet).
	query := func(marker string) string {
		out, err := try(strings.ReplaceAll(where(readmeLine(t, dir+"README.md", marker)), "127.0.0.1:9090", prom))
		if err != nil {
			return ""
		}
		return out
	}

	// polls parses the JSON arrays [time, counter, rate], one a line,
	// that the InfluxDB and file queries print.
	type poll struct {
		at      time.Time
		counter *int64 // nil while InfluxDB has stored only the point's other field
		rate    *float64
	}
	polls := func(text string) []poll {
		var ps []poll
		for _, line := range strings.Fields(text) {
			var row []json.RawMessage
			var p poll
			if json.Unmarshal([]byte(line), &row) != nil || len(row) != 3 ||
				json.Unmarshal(row[0], &p.at) != nil || json.Unmarshal(row[1], &p.counter) != nil || json.Unmarshal(row[2], &p.rate) != nil {
				t.Fatalf("not a [time, counter, rate] row: %s", line)
			}
			ps = append(ps, p)
		}
		return ps
	}
	same := func(a, b poll) bool {
		return a.at.Equal(b.at) && a.counter != nil && b.counter != nil && *a.counter == *b.counter &&
			(a.rate == nil) == (b.rate == nil) && (a.rate == nil || *a.rate == *b.rate)
	}
	// InfluxDB 1.x stores a point's fields one by one: a query at the
	// wrong moment sees a rate without its counter. Such a poll is not
	// there yet (every poll but the first has a rate).
	counted := func(ps []poll) bool {
		if len(ps) < 3 {
			return false
		}
		for i, p := range ps[:3] {
			if p.counter == nil || (i > 0 && p.rate == nil) {
				return false
			}
		}
		return true
	}
	show := func(ps []poll) string {
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "[%s", p.at.Format(time.RFC3339Nano))
			for _, v := range []any{p.counter, p.rate} {
				switch v := v.(type) {
				case *int64:
					if v != nil {
						fmt.Fprintf(&b, " %d", *v)
						continue
					}
				case *float64:
					if v != nil {
						fmt.Fprintf(&b, " %g", *v)
						continue
					}
				}
				b.WriteString(" null")
			}
			b.WriteString("] ")
		}
		return b.String()
	}
	var inFile, inInflux []poll
	var inProm string
	// Each sink reads at its own pace: wait until the file has caught
	// up with what Prometheus and InfluxDB show.
	inRates := func(rate string) bool {
		f, err := strconv.ParseFloat(rate, 64)
		return err == nil && slices.ContainsFunc(inFile, func(p poll) bool { return p.rate != nil && *p.rate == f })
	}
	defer func() {
		if t.Failed() {
			t.Logf("file: %s\nInfluxDB: %s\nPrometheus: %s", show(inFile), show(inInflux), inProm)
		}
	}()
	peers.Within(t, 2*time.Minute, "three polls of sw1 in the file and in InfluxDB, and one of their rates in Prometheus", func() bool {
		w.Running(t)
		inProm = strings.TrimSpace(query("api/v1/query"))
		inInflux = polls(query("FROM snmp_interface WHERE"))
		inFile = polls(query("metrics.jsonl"))
		return counted(inFile) && counted(inInflux) && inRates(inProm)
	})
	// Every system also gets the interface measurement, and Prometheus
	// the unknown="true" of a device no inventory lists.
	peers.Within(t, time.Minute, "the interface measurement in all three systems", func() bool {
		inProm = shell(t, `curl -s -G `+prom+`/api/v1/query --data-urlencode 'query=interface_in_octets_rate{device="sw1",interface="Ethernet1",unknown="true"}' | jq -r '.data.result | length'`)
		measurements := shell(t, `curl -s -G `+influx.Addr+`/query --data-urlencode db=weir_example --data-urlencode 'q=SHOW MEASUREMENTS' | jq -c '[.results[0].series[0].values[][0]]'`)
		file, _ := try(`jq -c 'select(.value.measurement == "interface" and .value.device == "sw1" and .value.tags.interface == "Ethernet1")' ` + out + `/metrics.jsonl | head -1`)
		return strings.TrimSpace(inProm) == "1" && strings.Contains(measurements, `"interface"`) && strings.Contains(file, `"interface":"Ethernet1"`)
	})
	if inFile[0].rate != nil {
		t.Errorf("the first poll has a rate: %v", *inFile[0].rate)
	}
	for i := range 3 {
		if !same(inFile[i], inInflux[i]) {
			t.Errorf("poll %d: file %s, InfluxDB %s", i, show(inFile[i:i+1]), show(inInflux[i:i+1]))
		}
	}
}
