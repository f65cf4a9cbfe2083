package enrich

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/internal/corpus"
	"github.com/weirnet/weir/telemetry"
)

// TestRuleExamples: every rule's example lines give its event and fields,
// and no earlier rule steals them; a vendor's rule tells its vendor, as a
// message with no header that tells one reads.
func TestRuleExamples(t *testing.T) {
	c := NewClassifier()
	for _, r := range c.builtin {
		if len(r.examples) == 0 {
			t.Errorf("rule %s has no examples", r.name)
		}
		for _, ex := range r.examples {
			l := telemetry.Log{Message: ex.line}
			info := c.Classify(&l)
			if info.Rule != r.name {
				t.Errorf("%s: %q matched rule %q", r.name, ex.line, info.Rule)
				continue
			}
			if info.Event != ex.event {
				t.Errorf("%s: %q gave event %q, want %q", r.name, ex.line, info.Event, ex.event)
			}
			if r.vendor != "" && info.Vendor != r.vendor {
				t.Errorf("%s: %q gave vendor %q, want %q", r.name, ex.line, info.Vendor, r.vendor)
			}
			for k, v := range ex.fields {
				if info.Fields[k] != v {
					t.Errorf("%s: %q field %s = %q, want %q", r.name, ex.line, k, info.Fields[k], v)
				}
			}
		}
	}
}

// TestLooseRulesReadAddressesAndFailures: the fallback rules, whose
// patterns are loose, take no word for an address ("from Console", a
// neighbor named "Dead") and no failed login for a login.
func TestLooseRulesReadAddressesAndFailures(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct {
		msg, event string
		fields     map[string]string
	}{
		{"User admin logged in from Console", "login_succeeded", map[string]string{"user": "admin", "source": ""}},
		{"User admin logged in from dashboard", "login_succeeded", map[string]string{"source": ""}},
		{"user admin logged in from a remote host", "login_succeeded", map[string]string{"source": ""}},
		{"user admin logged in failed", "", nil},
		{"user admin logged in failed from 10.0.0.5", "", nil},
		{"User admin logged in unsuccessfully from 10.0.0.5", "", nil},
		{"the user admin logged in with an expired password and was rejected", "", nil},
		{"OSPF: Neighbor Dead timer expired, neighbor 10.0.0.2 state changed from Full to Down", "ospf_neighbor_down", map[string]string{"neighbor": "10.0.0.2"}},
		{"BGP: peer added 10.0.0.1 changed from Established to Idle", "", nil},
		{"pam_unix(cron:session): session opened for user root(uid=0) by root(uid=0)", "", nil},
		{"pam_unix(sudo:session): session opened for user root by netops(uid=1000)", "", nil},
		{"routed: BGP peer fe80::1 state changed from Established to Idle", "bgp_peer_down", map[string]string{"neighbor": "fe80::1"}},
		// No configuration change (no "by"): RouterOS's line after a boot.
		{"system,info router rebooted", "device_rebooted", nil},
		{"system,info,account user netadmin logged in from 10.20.0.9 via winbox", "login_succeeded", map[string]string{"user": "netadmin"}},
		{"00180 mgr:  SME CONSOLE Session - MANAGER Mode", "", nil},
	} {
		info := c.Classify(&telemetry.Log{Message: tc.msg})
		if info.Event != tc.event {
			t.Errorf("%q: event %q (rule %s), want %q", tc.msg, info.Event, info.Rule, tc.event)
		}
		for k, v := range tc.fields {
			if info.Fields[k] != v {
				t.Errorf("%q: %s = %q, want %q", tc.msg, k, info.Fields[k], v)
			}
		}
	}
}

type corpusLine = corpus.SyslogLine

func loadCorpus(t testing.TB) []corpusLine {
	lines, err := corpus.Syslog()
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestVendorOfCiscoHeaders: the Cisco family shares one body format; the
// header, as the collector parses it, tells which OS sent it.
func TestVendorOfCiscoHeaders(t *testing.T) {
	c := NewClassifier()
	var p syslog.Parser
	for _, tc := range []struct{ raw, vendor string }{
		{"<189>48: edge1: Nov 29 14:03:01.004 UTC: %BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up", VendorCiscoIOS},
		{"<189>61: edge1: 000062: Nov 29 14:03:01.004 UTC: %SYS-5-CONFIG_I: Configured from console by netops on vty0", VendorCiscoIOS},
		{"<189>Nov 29 14:03:02 relay1 585917: Nov 29 14:03:01.272: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", VendorCiscoIOS},
		{"<189>: 2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up", VendorCiscoNXOS},
		{"<189>nx1: 2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up", VendorCiscoNXOS},
		{"<187>2001: pe1 RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 192.0.2.1 Up", VendorCiscoIOSXR},
		{"<166>Nov 29 2026 14:03:01: %ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443", VendorCiscoASA},
		{"<164>Nov 29 2026 14:03:02 asa1 : %ASA-4-106023: Deny tcp src outside:198.51.100.7/5555 dst inside:10.0.0.5/22", VendorCiscoASA},
		{"<131>wlc1: *spamApTask1: Nov 29 14:03:01.553: %LWAPP-3-DISCOVERY_ERR: capwap_ac_sm.c:2144 Did not send discovery response", VendorCiscoWLC},
		// IOS without "service sequence-numbers": no counter, an unsynced
		// clock, the uptime; NX-OS's header has the year first.
		{"<189>Nov  8 04:00:48 10.20.30.40 *Nov  8 04:00:47.272: %SEC-6-IPACCESSLOGP: list 110 denied udp 198.51.100.195(55250) -> 198.51.100.255(15600), 1 packet", VendorCiscoIOS},
		{"<189>edge1: *Mar  1 00:01:23.456: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", VendorCiscoIOS},
		{"<189>1w2d: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", VendorCiscoIOS},
		{"<189>Nov 29 14:00:01.456 CDT: %SYS-5-CONFIG_I: Configured from console by ops on vty2 (192.0.2.55)", VendorCiscoIOS},
		{"<189>2026 Nov 29 14:03:05 nx1 %BGP-5-ADJCHANGE:  bgp-65001 [12345]  (default) neighbor 10.1.1.2 Up", VendorCiscoNXOS},
		// ASA's default header (no time), and NX-OS and AireOS lines with
		// their origin host name relayed by rsyslog (rsyslogd 8's output).
		{"<166>%ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443", VendorCiscoASA},
		{"<166>fw1 : %ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443", VendorCiscoASA},
		{"<189>2026-12-02T06:10:54.359866+00:00 localhost nx-leaf-101: 2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up in mode trunk", VendorCiscoNXOS},
		{"<131>Dec  2 06:10:54 localhost wlc1: *spamApTask1: Nov 29 14:03:01.553: %LWAPP-3-DISCOVERY_ERR: capwap_ac_sm.c:2144 Did not send", VendorCiscoWLC},
		// NX-OS relayed by rsyslog (RSYSLOG_ForwardFormat and the
		// traditional one) from a sender it names by address or FQDN: the
		// device's year-first time is further in than a short relay
		// header puts it.
		{"<189>2026-12-02T06:10:54.309476+00:00 192.168.100.201 : 2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up", VendorCiscoNXOS},
		{"<189>Dec  2 06:10:54 nx-leaf-101.pod3.dc1.example.com : 2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up", VendorCiscoNXOS},
		// NX-OS's year-first BSD-like header ("2026 Nov 29 14:03:05 nx1
		// %BGP-..."), which rsyslog reads and rewrites in each of its
		// formats: only the body tells, "bgp-ASN [pid]" after the mnemonic.
		{"<189>2026-11-29T14:03:05+00:00 nx1 %BGP-5-ADJCHANGE:  bgp-65001 [12345]  (default) neighbor 10.1.1.2 Up", VendorCiscoNXOS},
		{"<189>Nov 29 14:03:05 nx1 %BGP-5-ADJCHANGE:  bgp-65001 [12345]  (default) neighbor 10.1.1.2 Up", VendorCiscoNXOS},
		{"<189>1 2026-11-29T14:03:05+00:00 nx1 %BGP-5-ADJCHANGE - - -   bgp-65001 [12345]  (default) neighbor 10.1.1.2 Up", VendorCiscoNXOS},
		{"<189>Nov 29 14:03:05 edge1 %BGP-5-ADJCHANGE: neighbor 10.1.1.2 Up", VendorCiscoIOS},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		if got := c.Classify(&l).Vendor; got != tc.vendor {
			t.Errorf("%.70q: vendor %q, want %q (format %s, app %q, pid %q, sequence %q)", tc.raw, got, tc.vendor, l.Format, l.AppName, l.ProcID, l.Sequence)
		}
	}
}

// TestCorpusEvents: every corpus line with an event gives exactly that
// event with that object; lines without one give none. Vendors are checked
// where the message itself tells (a Junos box's sshd line looks like any
// sshd's).
func TestCorpusEvents(t *testing.T) {
	c := NewClassifier()
	var p syslog.Parser
	for _, line := range loadCorpus(t) {
		var l telemetry.Log
		p.ParseCopy([]byte(line.Raw), &l)
		info := c.Classify(&l)
		if info.Event != line.Event {
			t.Errorf("%.90q: event %q (rule %s), want %q", line.Raw, info.Event, info.Rule, line.Event)
			continue
		}
		obj := ObjectOf(info)
		want := line.Interface + line.Neighbor + line.User
		if obj != want {
			t.Errorf("%.90q: object %q, want %q", line.Raw, obj, want)
		}
		if line.Vendor != "" && info.Vendor != line.Vendor && !(line.Vendor == "junos" && info.Rule == "sshd_accepted") {
			t.Errorf("%.90q: vendor %q, want %q", line.Raw, info.Vendor, line.Vendor)
		}
	}
}

func BenchmarkClassifyCorpus(b *testing.B) { benchmarkClassifyCorpus(b, NewClassifier()) }

// BenchmarkClassifyCorpusSiteRules: the same with the three rules of
// configs/syslog-rules.example.yaml tried first, what a site's rules cost
// every message.
func BenchmarkClassifyCorpusSiteRules(b *testing.B) {
	s, err := ReadSyslogRules("../configs/syslog-rules.example.yaml")
	if err != nil {
		b.Fatal(err)
	}
	c := NewClassifier()
	if err := c.UseSyslogRules(s); err != nil {
		b.Fatal(err)
	}
	benchmarkClassifyCorpus(b, c)
}

func benchmarkClassifyCorpus(b *testing.B, c *Classifier) {
	var p syslog.Parser
	lines := loadCorpus(b)
	logs := make([]telemetry.Log, len(lines))
	for i, line := range lines {
		p.ParseCopy([]byte(line.Raw), &logs[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Classify(&logs[i%len(logs)])
	}
}

// The regular expressions mnemonic and junosTag write out.
var (
	mnemonicRE = regexp.MustCompile(`%(?:%\d+)?([A-Z][A-Za-z0-9_]*(?:-[A-Z][A-Za-z0-9_]*)*)-(\d)-([A-Z][A-Z0-9_]*)|%%\d+([A-Z][A-Z0-9_]*)/(\d)/([A-Za-z][A-Za-z0-9_]*(?: [A-Z][A-Z0-9_]*[(:])?)`)
	junosTagRE = regexp.MustCompile(`^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?::|$)`)
)

func checkMnemonicMatchesRE(t *testing.T, msg string) {
	t.Helper()
	fac, sev, mnem, ok := mnemonic(msg)
	m := mnemonicRE.FindStringSubmatch(msg)
	if m != nil && m[1] == "" {
		m = []string{m[0], m[4], m[5], m[6]} // the Huawei form
		if strings.Contains(m[3], " ") {
			m[3] = m[3][:len(m[3])-1] // the "(" or ":" after Comware 3's spaced brief
		}
	}
	if ok != (m != nil) || ok && (fac != m[1] || sev != int(m[2][0]-'0') || mnem != m[3]) {
		t.Errorf("mnemonic(%q) = %q %d %q %v, regexp %q", msg, fac, sev, mnem, ok, m)
	}
	want := ""
	if m := junosTagRE.FindStringSubmatch(msg); m != nil {
		want = m[1]
	}
	if got := junosTag(msg); got != want {
		t.Errorf("junosTag(%q) = %q, regexp %q", msg, got, want)
	}
}

func TestMnemonicMatchesRegexp(t *testing.T) {
	for _, msg := range []string{
		"%LINK-3-UPDOWN: x", "%PKT_INFRA-LINEPROTO-5-UPDOWN : y", "%%01IFNET/4/LINK_STATE(l)", "%%01BGP-5-X", "%%BGP-5-X",
		"a % b %SYS-5-CONFIG_I: c", "%A-1-", "%A-1-b", "%A--1-B", "%A-B-1-C2_D", "%1A-1-B", "100% %BGP-x %OSPF-5-ADJCHG",
		"BGP_PEER_STATE_CHANGE: x", "UI_COMMIT", "UI__X:", "UI_:", "A_B c", "a_B:", "SNMP_TRAP_LINK_DOWN:", "X:",
		"%%10IFNET/4/LINK UPDOWN(l): x", "%%10IFNET/4/LINK UPDOWN: x", "%%10IFNET/4/LINK UPDOWN x", "%%10IFNET/4/LINK Updown(l)",
		"%%10A/1/b C:", "%%10A/1/B C", "%%10A/1/B  C:", "%%10A/1/B C_2(",
	} {
		checkMnemonicMatchesRE(t, msg)
	}
	for _, c := range loadCorpus(t) {
		checkMnemonicMatchesRE(t, c.Raw)
	}
}

func FuzzMnemonic(f *testing.F) {
	f.Add("%PKT_INFRA-LINEPROTO-5-UPDOWN : y")
	f.Add("%%01BGP-5-X")
	f.Add("%%01IFNET/4/LINK_STATE(l)[5]:x")
	f.Add("%%10IFNET/4/LINK UPDOWN(l): x")
	f.Add("%OSPFv3-5-ADJCHG: x")
	f.Add("BGP_PEER_STATE_CHANGE: x")
	f.Fuzz(checkMnemonicMatchesRE)
}

func TestEachPair(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`date=2026-11-29 devname="fw 1" action="login" status=success`, `date=2026-11-29|devname=fw 1|action=login|status=success`},
		{`<189>date=x user="" msg="a=b c" tail`, `user=|msg=a=b c`},
		{`k="unterminated value`, `k=unterminated value`},
		{`  a=1   b=2 =3 c= d`, `a=1|b=2|c=`},
		{`xaction=login action=login`, `xaction=login|action=login`},
		{``, ``},
	} {
		var got []string
		eachPair(tc.in, func(k, v string) { got = append(got, k+"="+v) })
		if s := strings.Join(got, "|"); s != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, s, tc.want)
		}
	}
}

// FuzzEachPair: any input ends, and every key is a key and a substring.
func FuzzEachPair(f *testing.F) {
	f.Add(`date=2026-11-29 devname="fw1" user="admin" action="login" status="success"`)
	f.Add(`a="`)
	f.Fuzz(func(t *testing.T, s string) {
		eachPair(s, func(k, v string) {
			if k == "" || !strings.Contains(s, k+"=") || !strings.Contains(s, v) {
				t.Fatalf("%q: pair %q=%q", s, k, v)
			}
		})
	})
}

// TestJunosStructuredDataBrief: a link trap logged with "structured-data
// brief" carries its interface in the parameters only.
func TestJunosStructuredDataBrief(t *testing.T) {
	c := NewClassifier()
	var p syslog.Parser
	for _, tc := range []struct{ raw, event, ifc string }{
		{`<28>1 2026-02-11T09:14:03.210+01:00 edge-srx4 mib2d 4410 SNMP_TRAP_LINK_DOWN [junos@2636.1.1.1.2.133 snmp-interface-index="517" admin-status="up(1)" operational-status="down(2)" interface-name="ge-0/0/5.0"]`, "interface_down", "ge-0/0/5.0"},
		{`<30>1 2026-02-11T09:14:40.002+01:00 edge-srx4 mib2d 4410 SNMP_TRAP_LINK_UP [junos@2636.1.1.1.2.133 snmp-interface-index="517" admin-status="up(1)" operational-status="up(1)" interface-name="ge-0/0/5.0"]`, "interface_up", "ge-0/0/5.0"},
		{`<28>1 2026-02-11T09:14:03.210+01:00 edge-srx4 mib2d 4410 SNMP_TRAP_LINK_DOWN [junos@2636.1.1.1.2.133 snmp-interface-index="517"]`, "", ""},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		info := c.Classify(&l)
		if info.Event != tc.event || info.Fields["interface"] != tc.ifc || info.Vendor != VendorJunos {
			t.Errorf("%.60q: %s %q (%s), want %s %q", tc.raw, info.Event, info.Fields["interface"], info.Vendor, tc.event, tc.ifc)
		}
	}
}

// TestLoginsWithoutUserFromTwoAddresses: ArubaOS-Switch names no user,
// only the address: two SSH sessions from two addresses within the
// de-duplication window are two logins.
func TestLoginsWithoutUserFromTwoAddresses(t *testing.T) {
	c := NewClassifier()
	d := newDetector(DefaultDedupWindow, DefaultFlapThreshold, DefaultFlapWindow)
	t0 := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	n := 0
	for i, msg := range []string{"00179 mgr:  SME SSH from 10.31.4.22 - MANAGER Mode", "00180 mgr:  SME SSH from 10.31.9.40 - MANAGER Mode"} {
		info := c.Classify(&telemetry.Log{Message: msg})
		ev := telemetry.Event{Type: info.Event, Device: "sw3", Object: ObjectOf(info), Cause: telemetry.Cause{Topic: "raw.syslog", Offset: int64(i)}}
		n += len(d.observe(ev, t0.Add(time.Duration(i)*5*time.Second)))
	}
	if n != 2 {
		t.Errorf("%d login events, want 2", n)
	}
}

// TestInventoryVendorOverridesRuleVendor: a vendor told by the rule a
// message matched (its header told none) is a guess: the inventory's
// vendor for the device wins over it, as over generic; a device the
// inventory gives no vendor keeps the rule's.
func TestInventoryVendorOverridesRuleVendor(t *testing.T) {
	inv, err := ParseInventory([]byte("devices:\n  - {name: fw1, address: 192.0.2.77, vendor: vyos}\n  - {name: fw2, address: 192.0.2.78}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := openLog(t)
	w := NewWorker(b, inv, NewClassifier())
	for _, tc := range []struct{ addr, vendor string }{{"192.0.2.77", "vyos"}, {"192.0.2.78", VendorPaloAlto}} {
		l := telemetry.Log{V: 1, Device: tc.addr, SourceAddr: tc.addr + ":514", Facility: 23, Severity: 4,
			Message:    `1,2026/03/02 08:19:40,013201009876,SYSTEM,routing,0,2026/03/02 08:19:40,,routed-BGP-peer-left-established,TRANSIT-B,0,0,general,high,"BGP peer session left established state. peer name: TRANSIT-B, peer IP: 198.51.100.77.",7302,0x0,0,0,0,0,,edge-fw2`,
			ReceivedAt: time.Now()}
		r := broker.Record{Value: l.AppendJSON(nil)}
		d, ok := w.decodeSyslog(&r)
		if !ok {
			t.Fatal("not decoded")
		}
		if got := d.log; got.Vendor != tc.vendor || got.Event != "bgp_peer_down" {
			t.Errorf("%s: vendor %q, event %q; want %q, bgp_peer_down", tc.addr, got.Vendor, got.Event, tc.vendor)
		}
	}
}

// TestCiscoLinesRelayedAsRFC5424: rsyslog relaying a Cisco line in RFC 5424
// (RSYSLOG_SyslogProtocol23Format, its usual template over octet-counted
// TCP) takes the mnemonic for the BSD tag and writes it as the APP-NAME,
// the message behind it: the line is classified as the device sent it.
func TestCiscoLinesRelayedAsRFC5424(t *testing.T) {
	c := NewClassifier()
	var p syslog.Parser
	for _, tc := range []struct{ raw, event, mnemonic string }{
		// rsyslogd 8.2302's output for what edge1 sent.
		{"<189>1 2026-11-29T14:11:01+00:00 edge1 %SYS-5-CONFIG_I - - -  Configured from console by admin on vty0 (10.0.0.9)", "config_changed", "CONFIG_I"},
		{"<189>1 2026-11-29T14:11:02+00:00 edge1 %BGP-5-ADJCHANGE - - -  neighbor 10.0.0.2 Down BGP Notification sent", "bgp_peer_down", "ADJCHANGE"},
		{"<189>1 2026-11-29T14:11:03+00:00 edge1 %OSPF-5-ADJCHG - - -  Process 1, Nbr 10.0.0.3 on Gi0/1 from FULL to DOWN, Neighbor Down: Dead timer expired", "ospf_neighbor_down", "ADJCHG"},
		{"<189>1 2026-11-29T14:11:04+00:00 edge1 %LINK-3-UPDOWN - - -  Interface Gi0/3, changed state to down", "interface_down", "UPDOWN"},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		info := c.Classify(&l)
		if info.Event != tc.event || info.Mnemonic != tc.mnemonic || info.Vendor != VendorCiscoIOS {
			t.Errorf("%.70q: event %q mnemonic %q vendor %q, want %q %q %q", tc.raw, info.Event, info.Mnemonic, info.Vendor, tc.event, tc.mnemonic, VendorCiscoIOS)
		}
	}
	// An Arista line relayed so keeps its process as the APP-NAME.
	var l telemetry.Log
	p.ParseCopy([]byte("<189>1 2026-11-29T14:11:05+00:00 leaf1 Ebra - - -  %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down"), &l)
	if info := c.Classify(&l); info.Event != "interface_down" || info.Vendor != VendorAristaEOS {
		t.Errorf("Arista relayed: %q %q", info.Event, info.Vendor)
	}
}

// TestCiscoLinesRelayedAsRFC5424WithoutTheSpace: rsyslog with its BSD
// parser's remove.msgFirstSpace="on" (pmrfc3164) writes the message
// behind the APP-NAME without the space the device sent after the
// mnemonic's colon: still the line the device sent, for weir's rules
// (which read "%OSPF-5-ADJCHG: Process") and a site's anchored ones.
func TestCiscoLinesRelayedAsRFC5424WithoutTheSpace(t *testing.T) {
	c := NewClassifier()
	var p syslog.Parser
	for _, tc := range []struct{ raw, event string }{
		// rsyslogd 8.2302's output, remove.msgFirstSpace="on", for what edge1 sent.
		{"<189>1 2026-12-06T08:12:00+00:00 edge1 %OSPF-5-ADJCHG - - - Process 1, Nbr 9.9.9.9 on Gi0/1 from FULL to DOWN, Neighbor Down: Dead timer expired", "ospf_neighbor_down"},
		{"<189>1 2026-12-06T08:12:00+00:00 edge1 %SEC_LOGIN-5-LOGIN_SUCCESS - - - Login Success [user: bob] [Source: 10.0.0.9] [localport: 22] at 10:00:00 UTC Mon Dec 6 2026", "login_succeeded"},
		{"<189>1 2026-12-06T08:12:00+00:00 edge1 %BGP-5-ADJCHANGE - - - neighbor 10.7.7.7 Down BGP Notification sent", "bgp_peer_down"},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		if info := c.Classify(&l); info.Event != tc.event || info.Vendor != VendorCiscoIOS {
			t.Errorf("%.70q: event %q vendor %q, want %q %q", tc.raw, info.Event, info.Vendor, tc.event, VendorCiscoIOS)
		}
	}
}

// TestJunosLinkTrapRelayedAsBSD: rsyslog's forwarding formats
// (RSYSLOG_ForwardFormat, RSYSLOG_TraditionalForwardFormat) drop the RFC
// 5424 MSGID where Junos puts its event tag, so mib2d's link trap arrives
// as "mib2d[pid] ifIndex ..., ifOperStatus down(2), ifName ...": still an
// interface event, as the line Junos sent.
func TestJunosLinkTrapRelayedAsBSD(t *testing.T) {
	c := NewClassifier()
	var p syslog.Parser
	for _, tc := range []struct{ raw, event, ifc string }{
		// rsyslogd 8.2302's output for what mx2 sent.
		{"<165>2026-11-29T14:06:07.123+00:00 mx2 mib2d[1234] ifIndex 545, ifAdminStatus up(1), ifOperStatus down(2), ifName xe-1/0/0", "interface_down", "xe-1/0/0"},
		{"<165>Nov 29 14:06:37 mx2 mib2d[1234] ifIndex 545, ifAdminStatus up(1), ifOperStatus up(1), ifName xe-1/0/0", "interface_up", "xe-1/0/0"},
		// Not the link trap: no event.
		{"<165>Nov 29 14:06:37 mx2 mib2d[1234] ifIndex 545 counters cleared", "", ""},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		info := c.Classify(&l)
		if info.Event != tc.event || info.Fields["interface"] != tc.ifc {
			t.Errorf("%.70q: event %q interface %q, want %q %q", tc.raw, info.Event, info.Fields["interface"], tc.event, tc.ifc)
		}
	}
}
