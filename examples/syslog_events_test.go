package examples_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/weirproc"
)

// TestExampleSyslogEvents runs examples/syslog-events: devices' syslog lines,
// replayed with the README's command, become events tagged with the
// inventory's site and role; a real Alertmanager gets the link, BGP and
// flapping ones as alerts, routed by role, each resolved by its up event;
// the file gets every event.
func TestExampleSyslogEvents(t *testing.T) {
	t.Parallel() // each waits on poll and scrape intervals, on ports of its own
	commands(t, "sed")
	am := peers.Alertmanager(t, read(t, "syslog-events/alertmanager.yml"))
	port, out := freePort(t), t.TempDir()
	cfg := movedFile(t, "syslog-events/weir.yaml",
		"127.0.0.1:5514", "127.0.0.1:"+port,
		"http://127.0.0.1:9093", "http://"+am,
		"/tmp/weir-examples/syslog-events", out)
	p := weirproc.Start(t, weirBin, root, "-c", cfg, "--kafka-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0")
	p.SyslogAddrs(t)

	send := readmeLine(t, "syslog-events/README.md", "devices.log > /dev/tcp/")
	shell(t, moved(t, "the README's command", send, "/dev/tcp/127.0.0.1/5514", "/dev/tcp/127.0.0.1/"+port))

	// alert is what the test compares of an alert in Alertmanager.
	type alert struct{ name, device, object, site, role, receiver string }
	want := []alert{
		{"bgp_peer_down", "core1", "203.0.113.9", "ams1", "core", "backbone-oncall"},
		{"bgp_peer_down", "edge1", "198.51.100.1", "ams1", "edge", "backbone-oncall"},
		{"bgp_peer_down", "pe1", "192.0.2.41 vrf CUST-A", "par1", "pe", "backbone-oncall"},
		{"interface_down", "core1", "xe-0/0/3", "ams1", "core", "backbone-oncall"},
		{"interface_down", "edge1", "TenGigabitEthernet0/1/0", "ams1", "edge", "backbone-oncall"},
		{"interface_down", "lab-sw9", "Ethernet1", "", "", "noc"}, // not in the inventory
		{"interface_flapping", "leaf1", "Ethernet12", "fra1", "leaf", "datacenter-oncall"},
		// leaf2's BGP session and leaf1's Ethernet12 came back up:
		// resolved, no longer listed.
	}
	var got []alert
	// alerts reads Alertmanager's active alerts into got, sorted, and
	// reports whether they are want.
	alerts := func(want []alert) bool {
		resp, err := http.Get("http://" + am + "/api/v2/alerts?active=true")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var active []struct {
			Labels    map[string]string `json:"labels"`
			Receivers []struct {
				Name string `json:"name"`
			} `json:"receivers"`
		}
		if json.NewDecoder(resp.Body).Decode(&active) != nil {
			return false
		}
		got = got[:0]
		for _, a := range active {
			l := a.Labels
			r := ""
			if len(a.Receivers) > 0 {
				r = a.Receivers[0].Name
			}
			got = append(got, alert{l["alertname"], l["device"], l["object"], l["site"], l["role"], r})
		}
		slices.SortFunc(got, func(a, b alert) int { return strings.Compare(a.name+a.device+a.object, b.name+b.device+b.object) })
		return slices.Equal(got, want)
	}
	peers.Eventually(t, "Alertmanager's alerts", func() bool { return alerts(want) })

	// The README's up line resolves edge1's BGP alert; the others stay.
	up := readmeLine(t, "syslog-events/README.md", "neighbor 198.51.100.1 Up")
	shell(t, moved(t, "the README's up line", up, "/dev/tcp/127.0.0.1/5514", "/dev/tcp/127.0.0.1/"+port))
	resolved := slices.DeleteFunc(slices.Clone(want), func(a alert) bool { return a.name == "bgp_peer_down" && a.device == "edge1" })
	peers.Eventually(t, "edge1's BGP alert resolved by the up line", func() bool { return alerts(resolved) })

	// The file has every event, the config change among them, and
	// nothing from the LLDP line.
	var types []string
	peers.Eventually(t, "the events in the file", func() bool {
		b, _ := os.ReadFile(filepath.Join(out, "events.jsonl"))
		types = types[:0]
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var rec struct {
				Value struct {
					Type, Device, Object string
					Count                int
				}
			}
			if json.Unmarshal([]byte(line), &rec) == nil {
				ev := rec.Value
				e := ev.Type + " " + ev.Device + " " + ev.Object
				if ev.Count != 0 {
					e += fmt.Sprintf(" count %d", ev.Count)
				}
				types = append(types, e)
			}
		}
		return len(types) >= 19
	})
	if !slices.Contains(types, "config_changed edge1 netops") || !slices.Contains(types, "bgp_peer_up edge1 198.51.100.1") ||
		!slices.Contains(types, "interface_flapping leaf1 Ethernet12 count 6") || len(types) != 19 {
		t.Fatalf("events in the file: %q", types)
	}
}
