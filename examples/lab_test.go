package examples_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/weirproc"
)

// TestLab runs the top README's lab: weir-sim lab writes its config, and
// weir run on it gives interface rates and utilisation of all five
// switches, SNMP and gNMI alike, on the prometheus sink, and events from syslog and gNMI
// tagged from the lab's inventory, flapping among them. Ports move to
// free ones, by weir-sim lab's flags.
func TestLab(t *testing.T) {
	t.Parallel() // it waits on poll and sample intervals
	commands(t, "curl")
	const readme = "../README.md"
	dir, syslogPort := t.TempDir(), freePort(t)
	cfg := filepath.Join(dir, "weir-lab.yaml")
	run := moved(t, "the README's weir-sim lab line", readmeLine(t, readme, "bin/weir-sim lab --write-config"),
		"bin/weir-sim lab --write-config /tmp/weir-lab.yaml &", "lab --write-config "+cfg)
	sim(t, append(strings.Fields(run), "--data-dir", filepath.Join(dir, "data"),
		"--snmp-base-port", fmt.Sprint(freePorts(t, "udp", 3)), "--gnmi-base-port", fmt.Sprint(freePorts(t, "tcp", 2)),
		"--syslog-target", "127.0.0.1:"+syslogPort)...)
	peers.Eventually(t, "the lab's config", func() bool { fi, err := os.Stat(cfg); return err == nil && fi.Size() > 0 })
	sinkAddr := peers.FreeAddr(t)
	moveFile(t, cfg, "127.0.0.1:9273", sinkAddr)
	// The lab's config has an snmp section, so a trap receiver on the
	// default port: moved too, as a weir already running (make run) or
	// another test holds it.
	w := weirproc.Start(t, weirBin, root, "-c", cfg, "--kafka-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
		"--syslog-listen", "127.0.0.1:"+syslogPort, "--trap-listen", "127.0.0.1:0")

	devices := func(metric string) []string {
		out, err := try("curl -s http://" + sinkAddr + "/metrics")
		var ds []string
		for _, line := range strings.Split(out, "\n") {
			if err != nil || !strings.HasPrefix(line, metric+"{") {
				continue
			}
			if _, d, ok := strings.Cut(line, `device="`); ok {
				d, _, _ = strings.Cut(d, `"`)
				if !slices.Contains(ds, d) {
					ds = append(ds, d)
				}
			}
		}
		slices.Sort(ds)
		return ds
	}
	want := []string{"leaf1", "leaf2", "leaf3", "spine1", "spine2"}
	var seen []string
	peers.Within(t, 2*time.Minute, "interface rates of the five switches", func() bool {
		w.Running(t)
		seen = devices("interface_in_octets_rate")
		return slices.Equal(seen, want)
	})
	// Utilisation too: the leaves' from ifHighSpeed, the spines' from the
	// port-speed the lab's speed subscription streams.
	peers.Within(t, 2*time.Minute, "interface utilisation of the five switches", func() bool {
		w.Running(t)
		seen = devices("interface_in_utilization_pct")
		return slices.Equal(seen, want)
	})

	// The events file the lab's config names, in the data dir: events
	// from syslog and gNMI, tagged from the inventory, and flapping
	// raised (the README's "after a minute").
	var syslogLink, gnmiSpine, flapping bool
	peers.Within(t, 90*time.Second, "leaf1's link event from syslog with its role, a spine's from gNMI, and a flapping one", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "data", "events.jsonl"))
		for _, line := range strings.Split(string(b), "\n") {
			var rec struct {
				Value struct {
					Type, Device, Object string
					Tags                 map[string]string
					Cause                struct{ Topic string }
				}
			}
			if json.Unmarshal([]byte(line), &rec) != nil {
				continue
			}
			ev := rec.Value
			syslogLink = syslogLink || ev.Device == "leaf1" && ev.Object == "Ethernet3" &&
				strings.HasPrefix(ev.Type, "interface_") && ev.Tags["role"] == "leaf" && ev.Tags["site"] == "lab"
			gnmiSpine = gnmiSpine || ev.Cause.Topic == "raw.gnmi" && strings.HasPrefix(ev.Device, "spine") && ev.Tags["role"] == "spine"
			flapping = flapping || strings.HasSuffix(ev.Type, "_flapping")
		}
		return syslogLink && gnmiSpine && flapping
	})

	// Every metric of weir's own that the lab's weir exports (SNMP,
	// gNMI, syslog, traps' receiver, enrichment, sinks, the broker) is in
	// the README or a part's README, which say what /metrics holds.
	var docs strings.Builder
	for _, pattern := range []string{"../README.md", "../*/README.md", "../*/*/README.md"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			docs.WriteString(read(t, f))
		}
	}
	names := map[string]bool{}
	for sample := range w.Metrics(t) {
		name, _, _ := strings.Cut(sample, "{")
		if !strings.HasPrefix(name, "weir_") {
			continue
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			name = strings.TrimSuffix(name, suffix)
		}
		names[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(docs.String()) {
			t.Errorf("weir exports %s, which no README lists", name)
		}
	}
}
