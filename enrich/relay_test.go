package enrich

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// TestInventoryRelayNamesOnlyItsOwnLines: a syslog relay listed by its
// address named every line it relayed from a device the inventory does
// not list (or lists only inside a range) as itself, with its tags: the
// objects of many devices became one, real changes were dropped as
// repeats and false flapping raised. An entry with relay: true names the
// relay's own lines (no hostname) and no line that names another host;
// such a line is an unknown device's, or its address's range's.
func TestInventoryRelayNamesOnlyItsOwnLines(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: relay1, address: 10.9.0.1, site: dc, relay: true}
  - {cidr: 10.9.0.0/24, site: relays, relay: true}
  - {cidr: 10.1.0.0/16, site: lab}
  - {name: edge1, address: 192.0.2.1, site: ams1}
  - {name: noisy, address: 10.8.0.1, site: plain}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, addr, want string }{
		{"", "10.9.0.1:514", "relay1"},              // the relay's own line
		{"edge1", "10.9.0.1:514", "edge1"},          // a listed device, by name
		{"mystery", "10.9.0.1:514", ""},             // unknown, not the relay
		{"10.1.1.1", "10.9.0.1:514", "10.1.0.0/16"}, // an address hostname in a range: the range
		{"10.77.0.1", "10.9.0.1:514", ""},           // an address nothing lists
		{"mystery", "10.9.0.7:514", ""},             // through a relay of the relays' range
		{"", "10.9.0.7:514", "10.9.0.0/24"},         // that relay's own line
		{"mystery", "10.8.0.1:514", "noisy"},        // no relay: the sender's entry, as before
	} {
		got := ""
		if d := inv.Lookup(tc.name, tc.addr); d != nil {
			got = entryName(d)
		}
		if got != tc.want {
			t.Errorf("Lookup(%q, %q) = %q, want %q", tc.name, tc.addr, got, tc.want)
		}
	}
	if _, err := ParseInventory([]byte("devices:\n  - {name: r, relay: true}\n")); err == nil || !strings.Contains(err.Error(), "relay") {
		t.Errorf("a relay without an address or cidr: %v", err)
	}
}

// TestInventoryRelayPolledIsItself: a relay is a device of its own, and
// weir polls its agent, not a line it relayed. An SNMP target polled at
// a relay's address (or in a relays' range) under a name the inventory
// does not list found no entry, so the relay's own metrics lost its name
// and tags; the collector's namer and the metrics worker agree on it.
func TestInventoryRelayPolledIsItself(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: relay1, address: 10.9.0.1, site: dc, relay: true}
  - {cidr: 10.9.0.0/24, site: relays, relay: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ target, agent, want string }{
		{"relay1-snmp", "10.9.0.1", "relay1"},
		{"relay7-snmp", "10.9.0.7", "10.9.0.0/24"},
		{"other", "10.77.0.1", ""},
	} {
		got := ""
		if d := inv.LookupTarget(tc.target, tc.agent); d != nil {
			got = entryName(d)
		}
		if got != tc.want {
			t.Errorf("LookupTarget(%q, %q) = %q, want %q", tc.target, tc.agent, got, tc.want)
		}
	}
	if got := NewDeviceNamer(inv, NewSNMPTargets(nil), nil).SNMPTarget("relay1-snmp", "10.9.0.1"); got != "relay1" {
		t.Errorf("SNMPTarget(relay1-snmp at the relay's address) = %q, want relay1", got)
	}
	w := NewMetricsWorker(nil, inv)
	w.out = newOutputs(nil, telemetry.TopicRawSNMP, w.logger, w.m, false)
	at := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	enrichAt(t, w, telemetry.Metric{V: 1, Measurement: "snmp_status", Device: "relay1-snmp", Tags: map[string]string{"agent": "10.9.0.1"},
		Fields: map[string]any{"snmp_up": int64(1)}, Time: at, Source: "snmp"}, 0)
	if site, _ := w.row.Tag("site"); w.row.Device != "relay1" || site != "dc" {
		t.Errorf("the relay's own poll enriched as device %q, site %q; want relay1, dc", w.row.Device, site)
	}
}

// TestRelayWrappedCorpusClassified: a device's line a relay read from a
// file and forwarded behind its own header (logger --prio-prefix -f,
// rsyslog's imfile) was classified by the relay's header: IOS, NX-OS and
// IOS-XR lines as Arista's, Junos lines as generic, an RFC 5424 Junos BGP
// line as PAN-OS's, and the relay's tag was an IOS line's host name. Each
// corpus line so wrapped gives the vendor, mnemonic, event and object it
// gives sent directly, and its device is named by its own host name, not
// the relay's, also when the inventory marks the relay.
func TestRelayWrappedCorpusClassified(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: vm, address: 10.9.0.1, site: dc, relay: true}
  - {name: edge1, site: ams1}
`))
	if err != nil {
		t.Fatal(err)
	}
	namer := NewDeviceNamer(inv, nil, nil)
	c := NewClassifier()
	p := syslog.Parser{Now: func() time.Time { return time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC) }}
	heads := []struct {
		name, head string
		keepPRI    bool
	}{
		{"logger --rfc3164", "Dec  5 00:57:12 vm corpus: ", false},
		{"logger --rfc5424", `1 2026-12-05T00:57:12.808038+00:00 vm corpus - - [timeQuality tzKnown="1" isSynced="0"] `, false},
		{"rsyslog imfile", "<133>Dec  5 01:00:27 vm corpus: ", true},
		{"rsyslog imfile protocol-23", "<133>1 2026-12-05T01:00:27.862257+00:00 vm corpus - - - ", true},
	}
	n := 0
	for _, line := range loadCorpus(t) {
		end := strings.IndexByte(line.Raw, '>')
		if line.Format == "malformed" || !strings.HasPrefix(line.Raw, "<") || end < 0 {
			continue
		}
		var direct telemetry.Log
		p.ParseCopy([]byte(line.Raw), &direct)
		want := c.Classify(&direct)
		for _, h := range heads {
			raw := line.Raw[:end+1] + h.head + line.Raw[end+1:]
			if h.keepPRI {
				raw = h.head + line.Raw
			}
			n++
			var l telemetry.Log
			p.ParseCopy([]byte(raw), &l)
			got := c.Classify(&l)
			if got.Vendor != want.Vendor || got.Mnemonic != want.Mnemonic || got.Event != want.Event || ObjectOf(got) != ObjectOf(want) {
				t.Errorf("%s: %.90q: vendor %q, mnemonic %q, event %q, object %q; want %q, %q, %q, %q (format %s, host %q, app %q)",
					h.name, raw, got.Vendor, got.Mnemonic, got.Event, ObjectOf(got), want.Vendor, want.Mnemonic, want.Event, ObjectOf(want), l.Format, l.Hostname, l.AppName)
			}
			if line.Host != "" && l.Hostname != line.Host {
				t.Errorf("%s: %.90q: host %q, want %q", h.name, raw, l.Hostname, line.Host)
			}
			if line.Host == "edge1" {
				if name := namer.Name(l.Hostname, "10.9.0.1:514"); name != "edge1" {
					t.Errorf("%s: %.90q through relay vm named %q, want edge1", h.name, raw, name)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no corpus line wrapped")
	}
}

// TestLoggerRelayedCiscoShapesClassified: Cisco lines an operator
// replayed with logger after cutting their PRI (the bytes util-linux
// logger 2.38 sends: its own PRI, BSD header and tag root with
// --rfc3164, RFC 5424 with its timeQuality element otherwise) lost their
// vendor or host: an IOS-XR line without sequence numbers and an IOS line
// stamped with its uptime read as Arista's, an ASA line with its device
// id as generic, and its device id was lost. Each gives the vendor,
// mnemonic, event and object it gives sent directly, and its own host
// name (the relay's when it has none).
func TestLoggerRelayedCiscoShapesClassified(t *testing.T) {
	c := NewClassifier()
	p := syslog.Parser{Now: func() time.Time { return time.Date(2026, 12, 5, 7, 0, 0, 0, time.UTC) }}
	heads := []string{
		"<13>Dec  5 06:14:49 vm root: ",
		`<13>1 2026-12-05T06:14:49.457124+00:00 vm root - - [timeQuality tzKnown="1" isSynced="0"] `,
	}
	for _, raw := range []string{
		"<187>RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: ifmgr[215]: %PKT_INFRA-LINK-3-UPDOWN : Interface GigabitEthernet0/0/0/1, changed state to Down",
		"<187>1236: RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 192.0.2.1 Down - BGP Notification sent",
		"<187>2001: pe1 RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 192.0.2.1 Up",
		"<166>fw1 : %ASA-4-106023: Deny tcp src outside:198.51.100.7/5555 dst inside:10.0.0.5/22",
		"<164>Nov 29 2026 14:03:02 asa1 : %ASA-4-106023: Deny tcp src outside:198.51.100.7/5555 dst inside:10.0.0.5/22",
		"<166>%ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443",
		"<131>wlc1: *spamApTask1: Nov 29 14:03:01.553: %LWAPP-3-DISCOVERY_ERR: capwap_ac_sm.c:2144 Did not send discovery response",
		"<189>1w2d: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down",
	} {
		var direct telemetry.Log
		p.ParseCopy([]byte(raw), &direct)
		want := c.Classify(&direct)
		host := direct.Hostname
		if host == "" {
			host = "vm"
		}
		for _, h := range heads {
			in := h + raw[strings.IndexByte(raw, '>')+1:]
			var l telemetry.Log
			p.ParseCopy([]byte(in), &l)
			got := c.Classify(&l)
			if got.Vendor != want.Vendor || got.Mnemonic != want.Mnemonic || got.Event != want.Event || ObjectOf(got) != ObjectOf(want) ||
				l.Hostname != host || l.Relay != "vm" {
				t.Errorf("%.90q: vendor %q, mnemonic %q, event %q, object %q, host %q, relay %q; want %q, %q, %q, %q, %q, vm",
					in, got.Vendor, got.Mnemonic, got.Event, ObjectOf(got), l.Hostname, l.Relay, want.Vendor, want.Mnemonic, want.Event, ObjectOf(want), host)
			}
		}
	}
}
