package main

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
)

// TestLabFailsToStart: a lab whose gNMI port is taken says so and ends
// (stopping the SNMP agents it started), rather than serving them for
// ever while the README's "until [ -s config ]" waits for a config that
// never comes.
func TestLabFailsToStart(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// The lab's SNMP agents listen on consecutive ports from the base,
	// and they must bind for the lab to come to its gNMI targets.
	snmpPort := peers.FreePorts(t, len(labLeaves), "udp")
	done := make(chan error, 1)
	go func() {
		done <- labCmd(context.Background(), []string{
			"--gnmi-base-port", strconv.Itoa(taken.Addr().(*net.TCPAddr).Port),
			"--snmp-base-port", strconv.Itoa(snmpPort), "--syslog-target", "127.0.0.1:9"})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "gNMI target") {
			t.Errorf("lab ended with %v, want the gNMI target's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("lab still running 5 s after its gNMI target could not listen")
	}
}

// TestLabConfigListensWhereTheStoryGoes: the written config is the one
// that collects the lab, its syslog too: with --syslog-target moved off
// the default (5514 taken by make run), weir run -c listened on 5514 and
// never saw a line.
func TestLabConfigListensWhereTheStoryGoes(t *testing.T) {
	const target = "127.0.0.1:35514"
	cfg, err := configs.Parse([]byte(labConfig(t.TempDir(), "inventory.yaml", "127.0.0.1", target, 16100, 50051, 10*time.Second)))
	if err != nil {
		t.Fatalf("weir refuses the lab's config: %v", err)
	}
	var udp bool
	for _, l := range cfg.Syslog.Listeners {
		udp = udp || l.Protocol == "udp" && string(l.Address) == target
	}
	if !udp {
		t.Errorf("syslog listeners %+v: none on udp %s, where the lab sends", cfg.Syslog.Listeners, target)
	}
}

// TestLabInventoryBesideItsConfig: the inventory --write-config writes is
// named after the config file, so two labs written to one folder do not
// share (and overwrite) one inventory, as weir-lab-inventory.yaml was for
// any config name.
func TestLabInventoryBesideItsConfig(t *testing.T) {
	for config, want := range map[string]string{
		"/tmp/weir-lab.yaml": "/tmp/weir-lab-inventory.yaml",
		"/tmp/lab2.yml":      "/tmp/lab2-inventory.yml",
		"/tmp/labs/a":        "/tmp/labs/a-inventory.yaml",
	} {
		if got := labInventoryPath(config); got != want {
			t.Errorf("%s: inventory %s, want %s", config, got, want)
		}
	}
}

// sentLink is a link line as sent: its device, interface and state.
var sentLink = regexp.MustCompile(`(\S+) \S+ %LINEPROTO-5-UPDOWN: .* Interface (Ethernet\d+), changed state to (up|down)$`)

// TestStoryTellsTheSimulatorsItsLinks: a story line saying a link went
// down or up is told to the device's simulator before it is sent, so the
// device's polls or stream say what its syslog does. Before, leaf1's
// agent polled Ethernet3 up and spine2's stream said Ethernet7 UP while
// their syslog had them go down every 20 s.
func TestStoryTellsTheSimulatorsItsLinks(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var mu sync.Mutex
	var told []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sendStory(ctx, pc.LocalAddr().String(), time.Millisecond, func(device string, index int, up bool) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, fmt.Sprintf("%s Ethernet%d up=%v", device, index, up))
	})
	var links []string
	buf := make([]byte, 2048)
	for range labStory {
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		line := string(buf[:n])
		if m := sentLink.FindStringSubmatch(line); m != nil {
			link := fmt.Sprintf("%s %s up=%v", m[1], m[2], m[3] == "up")
			links = append(links, link)
			mu.Lock()
			last := "nothing"
			if len(told) > 0 {
				last = told[len(told)-1]
			}
			mu.Unlock()
			if last != link {
				t.Errorf("line %q sent, the simulators last told %q", line, last)
			}
		}
	}
	if want := "leaf1 Ethernet3 up=false, leaf1 Ethernet3 up=true, spine2 Ethernet7 up=false, spine2 Ethernet7 up=true"; strings.Join(links, ", ") != want {
		t.Errorf("links the story changes: %s, want %s", strings.Join(links, ", "), want)
	}
	if devices := storyDevices(); len(devices) != 2 || !devices["leaf1"] || !devices["spine2"] {
		t.Errorf("devices whose links the story changes: %v, want leaf1 and spine2", devices)
	}
}
