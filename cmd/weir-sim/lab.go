package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	gnmisim "github.com/weirnet/weir/collectors/gnmi/sim"
	snmpsim "github.com/weirnet/weir/collectors/snmp/sim"
)

// labStory is what the lab's devices log, a line at a time, over and
// over: link and BGP changes, a configuration change and a login, in the
// formats those devices send (@NOW@ is the time of sending). leaf1-3 are
// the lab's SNMP agents, spine1-2 its gNMI targets, so one device's
// syslog, polls and stream come together under its name; and what a line
// says of a link, the device's agent or target says too (storyLink), as a
// real device's would.
var labStory = []string{
	"<187>@NOW@ leaf1 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet3, changed state to down",
	"<189>@NOW@ leaf2 Bgp: %BGP-5-ADJCHANGE: peer 10.0.2.1 (VRF default AS 65102) old state Established event HoldTimerExpired new state Idle",
	"<189>@NOW@ leaf3 ConfigAgent: %SYS-5-CONFIG_I: Configured from console by admin on vty3 (10.0.0.9)",
	"<189>@NOW@ leaf1 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet3, changed state to up",
	"<86>@NOW@ spine1 sshd[4242]: Accepted publickey for netops from 10.0.0.5 port 50122 ssh2",
	"<189>@NOW@ leaf2 Bgp: %BGP-5-ADJCHANGE: peer 10.0.2.1 (VRF default AS 65102) old state OpenConfirm event RecvKeepAlive new state Established",
	"<187>@NOW@ spine2 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down",
	"<14>@NOW@ leaf3 Lldp: %LLDP-5-NEIGHBOR_NEW: LLDP neighbor with chassisId 001c.7300.0003 and portId \"Ethernet49/1\" added on interface Ethernet49/1",
	"<189>@NOW@ spine2 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to up",
	"<13>@NOW@ leaf1 netops: maintenance window opened for rack 12",
}

// The lab's devices.
var (
	labLeaves = []string{"leaf1", "leaf2", "leaf3"}
	labSpines = []string{"spine1", "spine2"}
)

// labCmd runs a small network on loopback: SNMP agents, gNMI targets and
// the devices' syslog, and writes the weir config (and inventory) that
// collects all of it, so that `weir run -c` on that file shows every
// path, enrichment and events without a device.
func labCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("weir-sim lab", flag.ContinueOnError)
	configOut := fs.String("write-config", "", "write the weir config for the lab to this file (and its inventory beside it: NAME-inventory.yaml)")
	dataDir := fs.String("data-dir", "/tmp/weir-lab", "data_dir of the written config")
	snmpBase := fs.Int("snmp-base-port", 16100, "UDP port of the first SNMP agent (leaf1); the others follow")
	gnmiBase := fs.Int("gnmi-base-port", 50051, "TCP port of the first gNMI target (spine1); the other follows")
	syslogTarget := fs.String("syslog-target", "127.0.0.1:5514", "where the devices send their syslog (UDP); the written config listens there")
	every := fs.Duration("syslog-every", 2*time.Second, "send the devices' next syslog line this often")
	interval := fs.Duration("interval", 10*time.Second, "SNMP poll and gNMI sample interval of the written config")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *every <= 0 || *interval <= 0 {
		return fmt.Errorf("lab: --syslog-every and --interval must be positive")
	}
	if err := checkPollInterval(*interval); err != nil {
		return fmt.Errorf("lab: %w", err)
	}
	// Deferred in this order, cancel runs first: on an error the agents
	// and targets already serving stop, and the error is returned.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const host = "127.0.0.1"
	links := map[string]func(index int, up bool){} // by device: sets its simulator's link state
	for i, name := range labLeaves {
		opts := snmpsim.Options{Name: name, Seed: uint64(i), Interfaces: 8, Community: "public"}
		if i == len(labLeaves)-1 {
			opts.RebootEvery = 5 * time.Minute // device_rebooted, now and then
		}
		a, err := snmpsim.Listen(net.JoinHostPort(host, strconv.Itoa(*snmpBase+i)), opts)
		if err != nil {
			return fmt.Errorf("lab: %w", err)
		}
		links[name] = a.SetOperStatus
		wg.Go(func() { _ = a.Serve(ctx) })
	}
	told := storyDevices()
	for i, name := range labSpines {
		addr := net.JoinHostPort(host, strconv.Itoa(*gnmiBase+i))
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("lab: gNMI target %s: %w", addr, err)
		}
		cfg := gnmisim.Config{Interfaces: 8, Neighbors: 4, ToggleEvery: 45 * time.Second, FlapEvery: 100 * time.Second}
		if told[name] {
			// Its links go down and up as its syslog says, not on
			// their own as well.
			cfg.FlapEvery = 0
		}
		s := gnmisim.New(cfg)
		links[name] = func(index int, up bool) { s.SetOperStatus(index-1, up) }
		wg.Go(func() { _ = s.Serve(ctx, lis) })
	}
	fmt.Fprintf(os.Stderr, "weir-sim: lab: SNMP agents %s on udp %s:%d-%d, gNMI targets %s on tcp %s:%d-%d, their syslog to udp %s every %s\n",
		strings.Join(labLeaves, ", "), host, *snmpBase, *snmpBase+len(labLeaves)-1,
		strings.Join(labSpines, ", "), host, *gnmiBase, *gnmiBase+len(labSpines)-1, *syslogTarget, *every)
	if *configOut != "" {
		inventory := labInventoryPath(*configOut)
		if err := writeConfig(inventory, labInventory()); err != nil {
			return err
		}
		if err := writeConfig(*configOut, labConfig(*dataDir, inventory, host, *syslogTarget, *snmpBase, *gnmiBase, *interval)); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "weir-sim: wrote %s and %s\n", *configOut, inventory)
	}
	return sendStory(ctx, *syslogTarget, *every, func(device string, index int, up bool) {
		if set := links[device]; set != nil {
			set(index, up)
		}
	})
}

// labInventoryPath is where the lab's inventory goes beside its config
// file: /tmp/weir-lab.yaml's is /tmp/weir-lab-inventory.yaml. Named after
// the config, so two labs written to one folder keep their own.
func labInventoryPath(config string) string {
	ext := filepath.Ext(config)
	return strings.TrimSuffix(config, ext) + "-inventory" + cmp.Or(ext, ".yaml")
}

// sendStory sends labStory's lines to target over UDP, one every every,
// stamped with the time of sending, until ctx ends. A weir not yet
// listening loses the lines sent meanwhile, as a device's would. Before a
// line saying a link went down or up, link is told (storyLink).
func sendStory(ctx context.Context, target string, every time.Duration, link func(device string, index int, up bool)) error {
	conn, err := net.Dial("udp", target)
	if err != nil {
		return fmt.Errorf("lab: syslog: %w", err)
	}
	defer conn.Close()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick.C:
			line := labStory[i%len(labStory)]
			if device, index, up, ok := storyLink(line); ok {
				link(device, index, up)
			}
			line = strings.Replace(line, "@NOW@", now.UTC().Format(time.Stamp), 1)
			_, _ = conn.Write([]byte(line)) // refused while weir is not up: a lost datagram, as a device's
		}
	}
}

// storyLinkLine is a story line saying a link of its device went down or
// up.
var storyLinkLine = regexp.MustCompile(`^<\d+>@NOW@ (\S+) \S+ %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet(\d+), changed state to (up|down)$`)

// storyLink returns the device, interface (Ethernet's number, its
// ifIndex) and state a story line gives a link, if it is about one.
func storyLink(line string) (device string, index int, up, ok bool) {
	m := storyLinkLine.FindStringSubmatch(line)
	if m == nil {
		return "", 0, false, false
	}
	index, _ = strconv.Atoi(m[2])
	return m[1], index, m[3] == "up", true
}

// storyDevices are the devices whose links the story changes.
func storyDevices() map[string]bool {
	told := map[string]bool{}
	for _, line := range labStory {
		if device, _, _, ok := storyLink(line); ok {
			told[device] = true
		}
	}
	return told
}

// labInventory places the lab's devices: the leaves in rack 12 and the
// spines in the lab's core, so records and events carry site and role.
func labInventory() string {
	var b strings.Builder
	b.WriteString("# Generated by weir-sim lab: the lab's devices.\ndevices:\n")
	for _, n := range labLeaves {
		fmt.Fprintf(&b, "  - {name: %s, site: lab, role: leaf, vendor: arista_eos, tags: {rack: \"12\"}}\n", n)
	}
	for _, n := range labSpines {
		fmt.Fprintf(&b, "  - {name: %s, site: lab, role: spine, vendor: arista_eos}\n", n)
	}
	return b.String()
}

// labConfig is the weir config that collects the lab: its SNMP agents
// and gNMI targets, syslog where the lab sends it and traps on the
// default port, enrichment with the lab's inventory, and the devices'
// series for Prometheus and the events in a file.
func labConfig(dataDir, inventory, host, syslogTarget string, snmpBase, gnmiBase int, interval time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by weir-sim lab. Run: weir run -c this-file\ndata_dir: %q\n", dataDir)
	fmt.Fprintf(&b, "snmp:\n  defaults: {version: 2c, community: public, interval: %s, timeout: %s, retries: 1, profiles: [system, if-mib]}\n  targets:\n", interval, pollTimeout(interval))
	for i, n := range labLeaves {
		fmt.Fprintf(&b, "    - {name: %s, address: %q}\n", n, net.JoinHostPort(host, strconv.Itoa(snmpBase+i)))
	}
	b.WriteString("gnmi:\n  subscriptions:\n")
	fmt.Fprintf(&b, "    counters: {path: /interfaces/interface/state/counters, mode: stream, stream_mode: sample, sample_interval: %s}\n", interval)
	b.WriteString(onChangeSubscriptions)
	b.WriteString("  targets:\n")
	for i, n := range labSpines {
		fmt.Fprintf(&b, "    - {name: %s, address: %q, encoding: proto, insecure: true, subscriptions: [counters, oper, bgp, speed]}\n", n, net.JoinHostPort(host, strconv.Itoa(gnmiBase+i)))
	}
	// Where the lab's syslog goes, moved or not: weir's default
	// listeners would miss a --syslog-target off 5514.
	fmt.Fprintf(&b, "syslog:\n  listeners:\n    - {protocol: udp, address: %q}\n    - {protocol: tcp, address: %q}\n", syslogTarget, syslogTarget)
	fmt.Fprintf(&b, "enrich:\n  inventory: %q\n", inventory)
	b.WriteString("sinks:\n")
	b.WriteString("  - {type: prometheus, name: prom, listen: \"127.0.0.1:9273\", topics: [enriched.metrics]}\n")
	fmt.Fprintf(&b, "  - {type: file, name: events, path: %q, topics: [events]}\n", filepath.Join(dataDir, "events.jsonl"))
	return b.String()
}
