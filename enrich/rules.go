package enrich

import "regexp"

// A rule recognises one kind of vendor syslog message. All of its patterns
// must match the message text; their named groups become fields
// (interface, neighbor, user, vrf, asn, and the state groups below). The
// event comes from Event, or from the state groups through States:
//
//   - "state": the new state, mapped through States ("down" →
//     interface_down);
//   - "old" and "new": a session state change; Established/FULL as new
//     gives the Up event, as old the Down event, anything else no event.
//
// Every rule carries example lines: rules_test.go checks each example
// gives the rule's event and fields, so adding a vendor pattern is adding
// one entry here with its examples.
type rule struct {
	name string
	// needs is a literal every matching message contains: a cheap test
	// that spares the regular expressions most messages.
	needs    string
	patterns []*regexp.Regexp
	// pairs, for key=value formats (Fortinet), instead of patterns: each
	// key must be in the message with that value (quoted or not), and
	// pairFields name the keys whose values become fields (field -> key).
	// One pass over the pairs; regexps there would scan the whole line
	// from every position, pattern after pattern.
	pairs      map[string]string
	pairFields map[string]string
	// atNeeds: the pattern starts with needs (NewClassifier works it out).
	atNeeds []bool
	// fold: the patterns ignore case ((?i)), and so does the search for
	// needs, in ASCII (NewClassifier works it out).
	fold bool
	// finder looks for needs (NewClassifier makes it).
	finder finder
	// keywords are the other literals the patterns require (NewClassifier
	// works them out): most messages that contain needs but do not match
	// lack one, and are turned away without running a pattern.
	keywords []string
	// bigrams are the byte pairs of needs and keywords (NewClassifier
	// works them out), a test cheaper still.
	bigrams bigramSet
	// fast, when the rule has one, matches its usual messages without the
	// patterns (fastmatch.go); NewClassifier sets it.
	fast     fastMatch
	event    string
	states   map[string]string // lower-case state -> event
	up, down string            // events for old/new transitions
	upState  string            // the "established" state name, lower-case
	examples []example
	// vendor: the one vendor whose messages the rule matches, for a
	// message whose header tells none (detectVendor's generic): Nokia,
	// MikroTik, Aruba, Palo Alto and Extreme write no header of their own.
	vendor string
}

type example struct {
	line   string // the message text the rule sees
	event  string
	fields map[string]string
}

var nokiaStates = map[string]string{"operational": "interface_up", "not operational": "interface_down"}

var ifStates = map[string]string{
	"up": "interface_up", "down": "interface_down", "administratively down": "interface_down",
	"enabled": "interface_up", "disabled": "interface_down",
	// EOS: a port-channel whose members, or an SVI whose VLAN, went down.
	"lowerlayerdown": "interface_down",
}

// onOffLine: ArubaOS-Switch's port states.
var onOffLine = map[string]string{"on-line": "interface_up", "off-line": "interface_down"}

var bgpStates = map[string]string{"up": "bgp_peer_up", "down": "bgp_peer_down"}

// ipish matches an IPv4 or IPv6 address where the rule's context says
// one follows (a Cisco "neighbor" or "Nbr").
const ipish = `[0-9A-Fa-f:.]*[0-9A-Fa-f]`

// ipaddr matches an IPv4 address or an IPv6 one (with a colon), and not a
// word of hex letters ("Dead", "added"): for the looser rules, where
// words can stand where an address does.
const ipaddr = `(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*[0-9A-Fa-f])\b`

// sshdFrom is the end of sshd's login lines, " from " and the client:
// its address, or a host name (UseDNS), which is no source. An address
// is taken only as the whole word, up to a space or the line's end: a
// host name may begin with another's address ("10.9.9.9.example.com"),
// and whoever owns the name chooses it.
const sshdFrom = ` from (?:(?P<source>` + ipaddr + `)(?:\s|$)|\S+)`

// syslogRules is the rule table, tried in order; the first match wins.
func syslogRules() []rule {
	re := regexp.MustCompile
	return []rule{
		// --- Interfaces ---
		// EOS 4.19.6M and later put the interface's description in
		// parentheses after its name.
		{name: "cisco_lineproto", needs: "ine protocol on Interface ", patterns: []*regexp.Regexp{re(`ine protocol on Interface (?P<interface>[^\s,]+)(?: \([^)]*\))?, (?i:changed state to (?P<state>up|down|lowerlayerdown))`)},
			states: ifStates, examples: []example{
				{"%LINEPROTO-5-UPDOWN: Line protocol on Interface Port-Channel10, changed state to lowerlayerdown", "interface_down", map[string]string{"interface": "Port-Channel10"}},
				{"%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7 (uplink to spine2, port 3), changed state to up", "interface_up", map[string]string{"interface": "Ethernet7"}},
				{"%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/1, changed state to down", "interface_down", map[string]string{"interface": "GigabitEthernet0/1"}},
				{"%PKT_INFRA-LINEPROTO-5-UPDOWN : Line protocol on Interface GigabitEthernet0/0/0/1, changed state to Down", "interface_down", map[string]string{"interface": "GigabitEthernet0/0/0/1"}},
			}},
		{name: "cisco_link", needs: "changed state to", patterns: []*regexp.Regexp{re(`Interface (?P<interface>[^\s,]+), (?i:changed state to (?P<state>administratively down|up|down))`)},
			states: ifStates, examples: []example{
				{"%LINK-3-UPDOWN: Interface TenGigabitEthernet1/0/24, changed state to down", "interface_down", map[string]string{"interface": "TenGigabitEthernet1/0/24"}},
				{"%LINK-5-CHANGED: Interface Vlan10, changed state to administratively down", "interface_down", map[string]string{"interface": "Vlan10"}},
			}},
		{name: "nxos_ethport", needs: "%ETHPORT-", patterns: []*regexp.Regexp{re(`%ETHPORT-\d-IF_(?:DOWN|UP)\S*: Interface (?P<interface>\S+) is (?P<state>down|up)`)},
			states: ifStates, examples: []example{
				{"%ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/1 is down (Link failure)", "interface_down", map[string]string{"interface": "Ethernet1/1"}},
				{"%ETHPORT-5-IF_UP: Interface Ethernet1/1 is up in mode trunk", "interface_up", map[string]string{"interface": "Ethernet1/1"}},
			}},
		// A port-channel's member down or up in it (NX-OS), as syslog-ng's
		// patterndb tests and OpenNMS's Nexus syslog events have it: the
		// member's link (OpenNMS raises and clears an interface alarm by
		// it). The member's own %ETHPORT line, when it logs one, is the
		// same change.
		{name: "nxos_port_channel_member", needs: "%ETH_PORT_CHANNEL-", patterns: []*regexp.Regexp{re(`%ETH_PORT_CHANNEL-\d-PORT_(?:DOWN|UP): (?P<port_channel>port-channel\d+): (?P<interface>\S+) is (?P<state>down|up)\b`)},
			states: ifStates, examples: []example{
				{"%ETH_PORT_CHANNEL-5-PORT_DOWN: port-channel23: Ethernet1/15 is down", "interface_down", map[string]string{"interface": "Ethernet1/15", "port_channel": "port-channel23"}},
				{"%ETH_PORT_CHANNEL-5-PORT_UP: port-channel2: Ethernet1/2 is up", "interface_up", map[string]string{"interface": "Ethernet1/2", "port_channel": "port-channel2"}},
			}},
		{name: "junos_snmp_link", needs: "SNMP_TRAP_LINK_", patterns: []*regexp.Regexp{re(`SNMP_TRAP_LINK_(?P<state>DOWN|UP)\b.*ifName (?P<interface>\S+)`)},
			states: ifStates, examples: []example{
				{"SNMP_TRAP_LINK_DOWN: ifIndex 545, ifAdminStatus up(1), ifOperStatus down(2), ifName ge-0/0/1", "interface_down", map[string]string{"interface": "ge-0/0/1"}},
			}},
		// IF_STATE and UPDOWN lines: nocproject/noc
		// collections/fm.eventclassificationrules/Huawei/VRP/Network/Link/
		// Link_{Down,Up}_1_SYSLOG_.json, Link_Down_2_SYSLOG_.json.
		{name: "huawei_ifnet", vendor: VendorHuawei, needs: "IFNET/", patterns: []*regexp.Regexp{re(`(?i)IFNET/\d/(?:LINK_STATE|LINKNO_STATE|LINKUPDOWN|PHY_STATUS|IF_STATE|UPDOWN).*?(?:interface|Interface) (?P<interface>[\w/.:-]+) (?:has entered|(?:has )?turned into|(?:was )?changed to) (?:the )?(?P<state>UP|DOWN)`)},
			states: ifStates, examples: []example{
				{"%%01IFNET/4/LINK_STATE(l)[0]:The line protocol IP on the interface GigabitEthernet0/0/1 has entered the DOWN state.", "interface_down", map[string]string{"interface": "GigabitEthernet0/0/1"}},
				{"%%01IFNET/4/IF_STATE(l)[1475]:Interface GigabitEthernet2/0/9 has turned into DOWN state.", "interface_down", map[string]string{"interface": "GigabitEthernet2/0/9"}},
				{"%%01IFNET/4/IF_STATE(l)[1479]:Interface GigabitEthernet2/0/9 has turned into UP state.", "interface_up", map[string]string{"interface": "GigabitEthernet2/0/9"}},
				{"%%01IFNET/4/UPDOWN(l): The state of interface Ethernet0/0/16 was changed to DOWN.", "interface_down", map[string]string{"interface": "Ethernet0/0/16"}},
				// AR routers: a PPP link's line protocol (the AR log reference).
				{"%%01IFNET/4/LINKNO_STATE(l)[6]:The line protocol on the interface Serial1/0/0 has entered the UP state.", "interface_up", map[string]string{"interface": "Serial1/0/0"}},
			}},
		// HPE Comware and H3C (Huawei's "%%MODULE/SEV/BRIEF" layout with
		// their version, "%%10"): Comware 5's "X link status is DOWN." and
		// "Line protocol on the interface X is DOWN.", Comware 7's
		// "Physical state on the interface X changed to down." and "Line
		// protocol state on the interface X changed to up." (H3C MSR 50
		// and SR8800 user manuals, System information formats; H3C
		// Comware 7 system log message references, IFNET).
		{name: "comware_ifnet", vendor: VendorComware, needs: "IFNET/", patterns: []*regexp.Regexp{
			re(`(?i)IFNET/\d/(?:LINK|PHY)[_ ]UPDOWN\b[^:]*:\s*(?P<interface>[\w/.:-]*[\w/.-]):? link status is (?P<state>UP|DOWN)\b`)},
			states: ifStates, examples: []example{
				{"%%10IFNET/3/LINK_UPDOWN(l): GigabitEthernet3/1/6 link status is DOWN.", "interface_down", map[string]string{"interface": "GigabitEthernet3/1/6"}},
				// 3Com Baseline / HP 1910 (Comware 3): a space in the brief, a
				// colon after the port (nocproject/noc .../HP/1910/Network/Link/
				// Link_Down_1_SYSLOG_.json).
				{"%%10IFNET/4/LINK UPDOWN(l):   GigabitEthernet1/0/2: link status is DOWN", "interface_down", map[string]string{"interface": "GigabitEthernet1/0/2"}},
			}},
		{name: "comware_ifnet_state", vendor: VendorComware, needs: "IFNET/", patterns: []*regexp.Regexp{
			re(`(?i)IFNET/\d/(?:LINK|PHY)_UPDOWN\b.*?(?:Line protocol|Physical state)(?: state)? on the interface (?P<interface>[\w/.:-]+?)\.? (?:is|changed to) (?P<state>UP|DOWN)\b`)},
			states: ifStates, examples: []example{
				{"%%10IFNET/5/LINK_UPDOWN: Line protocol on the interface Ten-GigabitEthernet1/0/38 is up.", "interface_up", map[string]string{"interface": "Ten-GigabitEthernet1/0/38"}},
				{"%%10IFNET/3/PHY_UPDOWN: Physical state on the interface GigabitEthernet1/0/1 changed to down.", "interface_down", map[string]string{"interface": "GigabitEthernet1/0/1"}},
				{"%%10IFNET/5/LINK_UPDOWN: Line protocol state on the interface GigabitEthernet1/0/1 changed to up.", "interface_up", map[string]string{"interface": "GigabitEthernet1/0/1"}},
			}},
		// The IF-MIB linkDown/linkUp traps as VRP logs them too: "OID ...
		// Interface <ifIndex> turned into DOWN state.(AdminStatus=1,
		// OperStatus=2,InterfaceName=X)" (S-series and AR alarm references;
		// IF_PVCDOWN with spaces for '=': nocproject/noc .../Huawei/VRP/
		// Network/Link/Link_Down_SYSLOG_5.json).
		{name: "huawei_ifnet_trap", vendor: VendorHuawei, needs: "IFNET/", patterns: []*regexp.Regexp{re(`IFNET/\d/IF_(?:LINK|PVC)(?P<state>DOWN|UP)\b.*? turned into (?:DOWN|UP) state\.\s*\(AdminStatus[= ]\d+,\s*OperStatus[= ]\d+,\s*InterfaceName[= ](?P<interface>[^,)\s]+)`)},
			states: ifStates, examples: []example{
				{"%%01IFNET/1/IF_LINKDOWN(l)[7]:OID 1.3.6.1.6.3.1.1.5.3 Interface 8 turned into DOWN state.(AdminStatus=1,OperStatus=2,InterfaceName=GigabitEthernet0/0/2)", "interface_down", map[string]string{"interface": "GigabitEthernet0/0/2"}},
				{"%%01IFNET/1/IF_LINKUP(l)[8]:OID 1.3.6.1.6.3.1.1.5.4 Interface 8 turned into UP state.(AdminStatus=1,OperStatus=1,InterfaceName=GigabitEthernet0/0/2)", "interface_up", map[string]string{"interface": "GigabitEthernet0/0/2"}},
				{"IFNET/1/IF_PVCDOWN:OID 1.3.6.1.6.3.1.1.5.3 Interface 56 turned into DOWN state.(AdminStatus 1,OperStatus 2,InterfaceName GigabitEthernet1/1/8)", "interface_down", map[string]string{"interface": "GigabitEthernet1/1/8"}},
			}},
		// S-series and AR: the port's own state, IFPDT/4/IF_STATE.
		{name: "huawei_ifpdt", vendor: VendorHuawei, needs: "IFPDT/", patterns: []*regexp.Regexp{re(`IFPDT/\d/IF_STATE\b.*?:\s*Interface (?P<interface>[\w/.:-]+) has turned into (?P<state>UP|DOWN) state`)},
			states: ifStates, examples: []example{
				{"%%01IFPDT/4/IF_STATE(l)[4]:Interface GigabitEthernet0/0/1 has turned into DOWN state.", "interface_down", map[string]string{"interface": "GigabitEthernet0/0/1"}},
			}},
		// VRP8 (NE, CE and newer S series) reports a link as an alarm:
		// "IFNET/2/linkDown_active" when it goes down, "_clear" when it
		// comes back, with the state in the parameters (Huawei's log
		// reference, IFNET_1.3.6.1.6.3.1.1.5.3).
		{name: "huawei_ifnet_alarm", vendor: VendorHuawei, needs: "The interface status changes.", patterns: []*regexp.Regexp{re(`IFNET/\d/link(?:Down|Up)_(?:active|clear)\b.*?The interface status changes\. ?\(ifName=(?P<interface>[^,\s)]+), AdminStatus=\w+, OperStatus=(?P<state>UP|DOWN)\b`)},
			states: ifStates, examples: []example{
				{"IFNET/2/linkDown_active(l):CID=0x80fe0201-alarmID=0x08520003;The interface status changes. (ifName=GigabitEthernet0/3/0, AdminStatus=UP, OperStatus=DOWN, Reason=The link protocol is down, mainIfname=GigabitEthernet0/3/0)", "interface_down", map[string]string{"interface": "GigabitEthernet0/3/0"}},
				{"IFNET/2/linkDown_clear(l):CID=0x80fe0201-alarmID=0x08520003-clearType=service_cause;The interface status changes. (ifName=GE1/0/1, AdminStatus=UP, OperStatus=UP, Reason=The link protocol is up, mainIfname=GE1/0/1)", "interface_up", map[string]string{"interface": "GE1/0/1"}},
			}},
		// Huawei S-series port and PHY lines: nocproject/noc
		// .../Huawei/VRP/Network/Link/Link_Down_3_SYSLOG_.json,
		// Link_Down_SYSLOG_4.json, Link_Up_SYSLOG_4.json.
		{name: "huawei_phy", vendor: VendorHuawei, needs: "PHY/", patterns: []*regexp.Regexp{re(`PHY/\d/PHY_STATUS_\w+.*?:Slot=\d+;(?P<interface>[\w/.:-]+) change status to (?P<state>up|down)\b`)},
			states: ifStates, examples: []example{
				{"%%01PHY/4/PHY_STATUS_UP2DOWN(l)[155]:Slot=1;GigabitEthernet1/1/8 change status to down.", "interface_down", map[string]string{"interface": "GigabitEthernet1/1/8"}},
				{"%%01PHY/4/PHY_STATUS_UP(l)[157]:Slot=1;GigabitEthernet1/1/8 change status to up.", "interface_up", map[string]string{"interface": "GigabitEthernet1/1/8"}},
			}},
		{name: "huawei_drv_link", vendor: VendorHuawei, needs: "DRV/", patterns: []*regexp.Regexp{re(`DRV/\d/LINK(?P<state>DOWN|UP)\b.*?\b[Pp]ort (?P<interface>[\w/.:-]+) is (?:down|up)\b`)},
			states: ifStates, examples: []example{
				{"Aug 2 2012 09:32:31 kiev-okr4-sw8 %%01DRV/6/LINKDOWN(l): Port Ethernet0/0/3 is down because the link layer is down.", "interface_down", map[string]string{"interface": "Ethernet0/0/3"}},
			}},
		// SR OS event log lines, classic: "<seq> <date> <time> <tz>
		// WARNING: SNMP #2004 Base 1/1/3 "Interface 1/1/3 is not
		// operational"" (7750 SR Log Events Guide).
		{name: "nokia_sros_port", vendor: VendorNokia, needs: "SNMP #", patterns: []*regexp.Regexp{re(`(?i)SNMP #\d+ Base (?P<interface>\d+/\d+/[^\s:"]+):? ?"?(?:Interface|Port) (?:\S+ )?is (?P<state>not operational|operational)`)},
			states: nokiaStates, examples: []example{
				{`2 2009/01/08 09:29:43.56 UTC WARNING: SNMP #2004 Base 1/1/3 "Interface 1/1/3 is not operational"`, "interface_down", map[string]string{"interface": "1/1/3"}},
				{`3 2009/01/08 09:31:07.12 UTC WARNING: SNMP #2005 Base 1/1/3 "Interface 1/1/3 is operational"`, "interface_up", map[string]string{"interface": "1/1/3"}},
			}},
		// SR OS with MD-CLI: "<seq> Base SNMP-WARNING-linkDown-2004
		// [1/1/c1/1]:  Interface 1/1/c1/1 is not operational", as the
		// syslog message after the TMNX tag (seen on the wire).
		{name: "nokia_sros_link", vendor: VendorNokia, needs: "operational", patterns: []*regexp.Regexp{re(`(?i)\b(?:SNMP|PORT)-\w+-link(?:down|up)-\d+ \[(?:Port )?(?P<interface>[^\]\s]+)\]:\s+(?:Interface|Port) \S+ is (?P<state>not operational|operational)`)},
			states: nokiaStates, examples: []example{
				{"169 Base SNMP-WARNING-linkDown-2004 [1/1/c1/1]:  Interface 1/1/c1/1 is not operational", "interface_down", map[string]string{"interface": "1/1/c1/1"}},
				{"170 Base SNMP-WARNING-linkup-2005 [1/1/c1/1]:  Interface 1/1/c1/1 is operational", "interface_up", map[string]string{"interface": "1/1/c1/1"}},
				{"PORT-MINOR-linkDown-2004 [Port 1/1/1]:  Interface 1/1/1 is not operational", "interface_down", map[string]string{"interface": "1/1/1"}},
			}},
		// RouterOS puts the topics in front when the syslog action asks
		// for them: "interface,info ether3-TRANSIT link down" (nocproject/noc
		// .../MikroTik/RouterOS/Network/Link/Link_{Down,Up}_SYSLOG_.json).
		// After the "interface" topic any name is the interface's (RouterOS
		// lets them be renamed: "WAN1", "uplink-isp"); without topics, only
		// the default names (combo1..: the CRS312's and CCR2004's combo ports).
		{name: "mikrotik_link", vendor: VendorMikroTik, needs: " link ", patterns: []*regexp.Regexp{re(`^(?:interface(?:,[a-z]+)+ (?P<interface>\S+)|(?:[a-z]+(?:,[a-z]+)+ )?(?P<interface>(?:ether|sfp|sfp-sfpplus|combo|wlan|bridge|vlan)[\w-]*)) link (?P<state>up|down)\b`)},
			states: ifStates, examples: []example{
				{"interface,info WAN2-fiber link down", "interface_down", map[string]string{"interface": "WAN2-fiber"}},
				{"interface,info combo1 link up (speed 1G, full duplex)", "interface_up", map[string]string{"interface": "combo1"}},
				{"ether1 link down", "interface_down", map[string]string{"interface": "ether1"}},
				{"sfp-sfpplus1 link up (speed 10G, full duplex)", "interface_up", map[string]string{"interface": "sfp-sfpplus1"}},
				// A CRS312's combo (SFP+ or RJ45) port, its topics left out.
				{"combo3 link down", "interface_down", map[string]string{"interface": "combo3"}},
				{"interface,info ether3-TRANSIT link down", "interface_down", map[string]string{"interface": "ether3-TRANSIT"}},
				{"interface,info ether3-TRANSIT link up (speed 100M, full duplex)", "interface_up", map[string]string{"interface": "ether3-TRANSIT"}},
			}},
		// AOS-CX intfd events 403/404 (its event log reference); the values
		// are ours.
		{name: "aoscx_link", vendor: VendorArubaCX, needs: "Link status for interface ", patterns: []*regexp.Regexp{re(`Event\|\d+\|LOG_\w+\|[^|]*\|[^|]*\|Link status for interface (?P<interface>\S+) is (?P<state>up|down)\b`)},
			states: ifStates, examples: []example{
				{"Event|403|LOG_INFO|AMM|1/1|Link status for interface 1/1/48 is down", "interface_down", map[string]string{"interface": "1/1/48"}},
				{"Event|404|LOG_INFO|AMM|1/1|Link status for interface 1/1/48 is up", "interface_up", map[string]string{"interface": "1/1/48"}},
			}},
		// EXOS names the event before the text: "<Info:vlan.msgs.
		// portLinkStateUp> Port 1:1 link UP at speed 1 Gbps ...".
		{name: "extreme_link", vendor: VendorExtreme, needs: "vlan.msgs.portLinkState", patterns: []*regexp.Regexp{re(`(?i)<\w+:vlan\.msgs\.portLinkState\w*> Port (?P<interface>[\w/:.-]*\d) link (?P<state>up|down)\b`)},
			states: ifStates, examples: []example{
				{"<Info:vlan.msgs.portLinkStateUp> Port 1:1 link UP at speed 1 Gbps and full-duplex", "interface_up", map[string]string{"interface": "1:1"}},
				{"<Info:vlan.msgs.portLinkStateDown> Port 2 link down", "interface_down", map[string]string{"interface": "2"}},
			}},
		// HP ProCurve and ArubaOS-Switch, event 76: "ports: port 12 is
		// now off-line" (16.x with the event number first, "00076 ports:
		// ..."); the wording is theirs alone, so it tells the vendor.
		{name: "aruba_switch_port", vendor: VendorArubaSwitch, needs: "is now o", patterns: []*regexp.Regexp{re(`\bport (?P<interface>[\w/:.-]*\d) is now (?P<state>on-line|off-line)\b`)},
			states: onOffLine, examples: []example{
				{"ports: port 1/1/12 is now on-line", "interface_up", map[string]string{"interface": "1/1/12"}},
				{"ports: port A1 is now off-line", "interface_down", map[string]string{"interface": "A1"}},
			}},
		// EXOS's "Port X link down" without its event name (and other
		// cases of the ProCurve wording): without "is now" or "link", any
		// "port 8080 down" (a load balancer's health check) would be a
		// link event. No vendor: more than one writes these.
		{name: "aruba_extreme_port", needs: "ort ", patterns: []*regexp.Regexp{re(`(?i)\bport (?P<interface>[\w/:.-]*\d) (?:is now |link )(?P<state>on-line|off-line|up|down)\b`)},
			states: map[string]string{"on-line": "interface_up", "off-line": "interface_down", "up": "interface_up", "down": "interface_down"}, examples: []example{
				{"PORT 1/1/12 IS NOW ON-LINE", "interface_up", map[string]string{"interface": "1/1/12"}},
				{"Port 1:24 link down", "interface_down", map[string]string{"interface": "1:24"}},
			}},
		// Nortel Passport 8600 (the software VOSS descends from): "CPU5
		// [09/19/07 13:03:49] SNMP INFO Link Down(1/1)", a Passport-8606's
		// log in a public test fixture (DataNortelPassport.pm). Its second
		// line for the same change, "Link Down 1/1.Port is an access port",
		// has no parentheses and is left alone. No vendor: no VOSS line of
		// this kind was found to tell whether VOSS still writes it.
		{name: "passport_link", needs: "SNMP INFO Link ", patterns: []*regexp.Regexp{re(`\bSNMP INFO Link (?P<state>Down|Up)\((?P<interface>\d+/\d+(?:/\d+)?)\)`)},
			states: ifStates, examples: []example{
				{"CPU5 [09/19/07 13:03:49] SNMP INFO Link Down(1/1)", "interface_down", map[string]string{"interface": "1/1"}},
				{"CPU5 [09/19/07 13:03:50] SNMP INFO Link Up(1/1)", "interface_up", map[string]string{"interface": "1/1"}},
			}},
		// PAN-OS system log, subtype port, event link-change: "Port
		// ethernet1/3: Down 1Gb/s-full duplex".
		{name: "paloalto_link", vendor: VendorPaloAlto, needs: "link-change", patterns: []*regexp.Regexp{re(`\blink-change,.*?\bPort (?P<interface>[\w/.:-]+): (?P<state>Up|Down)\b`)},
			states: ifStates, examples: []example{
				{`1,2026/11/29 14:02:11,012345678901,SYSTEM,port,0,2026/11/29 14:02:11,,link-change,ethernet1/3,0,0,general,informational,"Port ethernet1/3: Down 1Gb/s-full duplex",12345,0x0,0,0,0,0,,fw1`, "interface_down", map[string]string{"interface": "ethernet1/3"}},
				{`1,2026/11/29 14:02:11,012345678901,SYSTEM,port,0,2026/11/29 14:02:11,,link-change,ethernet1/2,0,0,general,informational,"Port ethernet1/2: Up   10Gb/s-full duplex",12346,0x0,0,0,0,0,,fw1`, "interface_up", map[string]string{"interface": "ethernet1/2"}},
			}},
		// FortiOS event/system log "Interface status changed": the state is
		// the status key, the port an interface key or named in msg. The
		// examples: public parsers' fixtures, which differ in logid.
		{name: "fortinet_link", vendor: VendorFortinet, needs: "Interface status changed", patterns: []*regexp.Regexp{
			re(`\blogdesc="Interface status changed"`),
			re(`\bstatus="?(?P<state>UP|DOWN|up|down)\b`),
			re(`\b(?:interface="(?P<interface>[^"\s]+)"|msg="Interface (?P<interface>[\w./:-]+) )`)},
			states: ifStates, examples: []example{
				{`logid="0100020022" type="event" subtype="system" level="warning" vd="root" logdesc="Interface status changed" action="interface-stat-change" status="DOWN" msg="Interface port3 changed status to DOWN."`, "interface_down", map[string]string{"interface": "port3"}},
				{`logid="0100020007" type="event" subtype="system" level="warning" logdesc="Interface status changed" status="UP" interface="port2"`, "interface_up", map[string]string{"interface": "port2"}},
			}},
		// --- BGP ---
		// FortiOS's router log (LOG_ID_BGP_NB_STAT_CHG) carries bgpd's line
		// with the VRF, a number, before the neighbor: "BGP: %BGP-5-
		// ADJCHANGE: VRF 0 neighbor A Up" (Fortinet community article
		// 357232). VRF 0 is the default one, named as no VRF. No vendor:
		// the text alone reads as Cisco's; the log's header tells Fortinet.
		{name: "fortinet_bgp", needs: "ADJCHANGE: VRF ", patterns: []*regexp.Regexp{re(`BGP-\d-ADJCHANGE: VRF (?:0|(?P<vrf>\d+)) neighbor (?P<neighbor>` + ipish + `) (?P<state>Up|Down)\b`)},
			states: bgpStates, examples: []example{
				{"BGP: %BGP-5-ADJCHANGE: VRF 0 neighbor 1.1.1.254 Up ", "bgp_peer_up", map[string]string{"neighbor": "1.1.1.254", "vrf": ""}},
				{"BGP: %BGP-5-ADJCHANGE: VRF 0 neighbor 10.191.19.33 Down BGP Notification FSM-ERR", "bgp_peer_down", map[string]string{"neighbor": "10.191.19.33"}},
				{"BGP: %BGP-5-ADJCHANGE: VRF 12 neighbor 10.191.19.33 Down Hold Timer Expired", "bgp_peer_down", map[string]string{"neighbor": "10.191.19.33", "vrf": "12"}},
			}},
		// The VRF as IOS writes it ("vpn vrf X"), NX-OS ("(X) neighbor")
		// and IOS-XR ("(VRF: X) (AS: N)", with the peer's AS). IOS-XE 16
		// and later put "active" or "passive" after the address.
		{name: "cisco_bgp_adjchange", needs: "ADJCHANGE", patterns: []*regexp.Regexp{re(`BGP-\d-ADJCHANGE\s*:.*?(?:\((?P<vrf>[\w.:-]+)\)\s+)?neighbor (?P<neighbor>` + ipish + `)(?: (?:active|passive))?(?: vpn vrf (?P<vrf>\S+))? (?P<state>Up|Down)\b(?:.*?\(VRF: (?P<vrf>[^)\s]+)\)(?: \(AS: (?P<asn>\d+)\))?)?`)},
			states: bgpStates, examples: []example{
				{"%BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up", "bgp_peer_up", map[string]string{"neighbor": "10.0.0.2"}},
				{"%BGP-5-ADJCHANGE: neighbor 10.0.0.2 vpn vrf CUST-A Down BGP Notification sent", "bgp_peer_down", map[string]string{"neighbor": "10.0.0.2", "vrf": "CUST-A"}},
				// IOS-XE 16 and later say which end opened the TCP session.
				{"%BGP-5-ADJCHANGE: neighbor 172.20.4.9 active Down BGP Notification received", "bgp_peer_down", map[string]string{"neighbor": "172.20.4.9"}},
				{"%BGP-5-ADJCHANGE: neighbor 172.20.4.9 passive vpn vrf RED Up", "bgp_peer_up", map[string]string{"neighbor": "172.20.4.9", "vrf": "RED"}},
				{"%BGP-5-ADJCHANGE:  bgp-65001 [12345]  (default) neighbor 10.1.1.2 Down - sent:  holdtimer expired error", "bgp_peer_down", map[string]string{"neighbor": "10.1.1.2", "vrf": "default"}},
				{"%BGP-5-ADJCHANGE:  bgp-65001 [12345]  (CUST-B) neighbor 10.1.1.2 Up", "bgp_peer_up", map[string]string{"neighbor": "10.1.1.2", "vrf": "CUST-B"}},
				{"%ROUTING-BGP-5-ADJCHANGE : neighbor 192.0.2.1 Up (VRF: default) (AS: 65002)", "bgp_peer_up", map[string]string{"neighbor": "192.0.2.1", "vrf": "default", "asn": "65002"}},
				{"%ROUTING-BGP-5-ADJCHANGE : neighbor 10.255.0.1 Down - Peer closing down the session (VRF: CUST-A) (AS: 65001)", "bgp_peer_down", map[string]string{"neighbor": "10.255.0.1", "vrf": "CUST-A", "asn": "65001"}},
			}},
		// BFD session state lines name the interface the session runs
		// over: recognised, with no event (the interface is not down, and
		// the generic rule below would take them for it).
		{name: "cisco_bfd_session", needs: "BFD", patterns: []*regexp.Regexp{re(`BFD-\d-SESSION_STATE_(?:DOWN|UP)\s*:\s*BFD session (?:\d+ )?to neighbor (?P<neighbor>` + ipish + `) on interface (?P<interface>\S+?)[.,]? (?:has gone down|is up)`)},
			examples: []example{
				{"%BFD-5-SESSION_STATE_DOWN: BFD session 1090519041 to neighbor 169.254.32.2 on interface Vlan100 has gone down. Reason: 0x3.", "", map[string]string{"neighbor": "169.254.32.2", "interface": "Vlan100"}},
				{"%BFD-5-SESSION_STATE_UP: BFD session 1090519041 to neighbor 169.254.32.2 on interface Vlan100 is up.", "", map[string]string{"interface": "Vlan100"}},
				{"%L2-BFD-6-SESSION_STATE_DOWN : BFD session to neighbor fe80::2 on interface FourHundredGigE0/0/0/1 has gone down. Reason: Control timer expired", "", map[string]string{"neighbor": "fe80::2"}},
				{"%L2-BFD-6-SESSION_STATE_UP : BFD session to neighbor 10.0.1.1 on interface GigabitEthernet0/0/0/0 is up", "", map[string]string{"interface": "GigabitEthernet0/0/0/0"}},
			}},
		{name: "arista_bgp", needs: "ADJCHANGE: peer", patterns: []*regexp.Regexp{re(`BGP-\d-ADJCHANGE: peer (?P<neighbor>` + ipish + `) \((?:VRF (?P<vrf>\S+) )?AS (?P<asn>\d+)\) old state (?P<old>\w+) .*new state (?P<new>\w+)`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{"%BGP-5-ADJCHANGE: peer 10.3.3.3 (VRF default AS 65004) old state Established event HoldTimerExpired new state Idle", "bgp_peer_down", map[string]string{"neighbor": "10.3.3.3", "vrf": "default", "asn": "65004"}},
				{"%BGP-5-ADJCHANGE: peer 10.3.3.3 (VRF default AS 65004) old state OpenConfirm event RecvKeepAlive new state Established", "bgp_peer_up", map[string]string{"neighbor": "10.3.3.3"}},
				{"%BGP-5-ADJCHANGE: peer 10.3.3.3 (VRF default AS 65004) old state Idle event Start new state Connect", "", map[string]string{"neighbor": "10.3.3.3"}},
				// EOS releases before multi-VRF BGP leave the VRF out.
				{"%BGP-5-ADJCHANGE: peer 10.44.0.7 (AS 64620) old state Established event Stop new state Idle", "bgp_peer_down", map[string]string{"neighbor": "10.44.0.7", "asn": "64620"}},
			}},
		{name: "junos_bgp", needs: "BGP_PEER_STATE_CHANGE", patterns: []*regexp.Regexp{re(`BGP_PEER_STATE_CHANGE:? BGP peer (?P<neighbor>` + ipish + `)(?:\+\d+)? \((?:External|Internal) AS (?P<asn>\d+)\) changed state from (?P<old>\w+) to (?P<new>\w+)(?:.*?\(instance (?P<vrf>[^)\s]+)\))?`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{"BGP_PEER_STATE_CHANGE: BGP peer 10.2.2.2 (External AS 65003) changed state from Established to Idle (event HoldTime) (instance master)", "bgp_peer_down", map[string]string{"neighbor": "10.2.2.2", "asn": "65003"}},
			}},
		// The tag Junos gives a BGP session's state change in its system log
		// reference (and napalm-logs' and noc's fixtures from devices).
		{name: "junos_rpd_bgp", needs: "RPD_BGP_NEIGHBOR_STATE_CHANGED", patterns: []*regexp.Regexp{re(`RPD_BGP_NEIGHBOR_STATE_CHANGED:? BGP peer (?P<neighbor>` + ipish + `)(?:\+\d+)? \((?:External|Internal) AS (?P<asn>\d+)\) changed state from (?P<old>\w+) to (?P<new>\w+)(?:.*?\(instance (?P<vrf>[^)\s]+)\))?`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{"RPD_BGP_NEIGHBOR_STATE_CHANGED: BGP peer 172.31.9.2 (Internal AS 64700) changed state from Established to Idle (event RecvNotify) (instance master)", "bgp_peer_down", map[string]string{"neighbor": "172.31.9.2", "asn": "64700"}},
				{"RPD_BGP_NEIGHBOR_STATE_CHANGED: BGP peer 10.0.0.1 (External AS 65001) changed state from Established to Idle (event RecvNotify) (instance CUST-A)", "bgp_peer_down", map[string]string{"neighbor": "10.0.0.1", "vrf": "CUST-A"}},
				{"RPD_BGP_NEIGHBOR_STATE_CHANGED: BGP peer 172.31.9.2+179 (External AS 64701) changed state from OpenConfirm to Established (event RecvKeepAlive) (instance master)", "bgp_peer_up", map[string]string{"neighbor": "172.31.9.2", "asn": "64701"}},
			}},
		// The states as the text gives them ("changed from A to B"), or
		// as CurrentState= where it does not; InstanceName is the VPN
		// instance (Public: the default).
		{name: "huawei_bgp", vendor: VendorHuawei, needs: "BGP/", patterns: []*regexp.Regexp{re(`BGP/\d/(?:STATE_CHG_UPDOWN|BGP_STATE_CHANGE).*?[Pp]eer (?P<neighbor>` + ipish + `)(?: changed from (?P<old>\w+) to (?P<new>\w+)|.*?(?:CurrentState|current state)=(?P<new>\w+))(?:.*?\bInstanceName=(?P<vrf>[^,)\s]+))?`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{"BGP/2/STATE_CHG_UPDOWN:The status of the peer 10.1.1.1 changed from ESTABLISHED to IDLE. (InstanceName=Public, StateChangeReason=Hold Timer Expired, CurrentState=Idle)", "bgp_peer_down", map[string]string{"neighbor": "10.1.1.1", "vrf": "Public"}},
				{"BGP/3/STATE_CHG_UPDOWN(l)[6]:The status of the peer 10.1.1.2 changed from ESTABLISHED to IDLE. (InstanceName=vpn1, StateChangeReason=Hold Timer Expired)", "bgp_peer_down", map[string]string{"neighbor": "10.1.1.2", "vrf": "vpn1"}},
				{"BGP/3/STATE_CHG_UPDOWN(l)[7]:The status of the peer 10.1.1.2 changed from OPENCONFIRM to ESTABLISHED. (InstanceName=vpn1, StateChangeReason=Up)", "bgp_peer_up", map[string]string{"neighbor": "10.1.1.2", "vrf": "vpn1"}},
			}},
		// BGP/6/PEER_STATE_CHG: the message format of Huawei's NetEngine
		// 8000 log reference (a10.tagan.ru/huawei/netengine8000f1a/log/8090/
		// PEER_STATE_CHG_6.html); the values are ours.
		{name: "huawei_bgp_peer_state", vendor: VendorHuawei, needs: "PEER_STATE_CHG", patterns: []*regexp.Regexp{re(`BGP/\d/PEER_STATE_CHG\b.*?\(PrevState=(?P<old>\w+), CurrState=(?P<new>\w+),.*?\bPeer=(?P<neighbor>` + ipish + `)(?:,.*?\bVpnInstance=(?P<vrf>[^,)\s]+))?`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{"BGP/6/PEER_STATE_CHG: The state of the peer changed after receiving an event. (PrevState=Established, CurrState=Idle, InputEvent=HOLD_TIMER, Peer=10.1.1.1, SourceInterface=GigabitEthernet0/0/1, VpnInstance=CUST-A)", "bgp_peer_down", map[string]string{"neighbor": "10.1.1.1", "vrf": "CUST-A"}},
				{"BGP/6/PEER_STATE_CHG: The state of the peer changed after receiving an event. (PrevState=OpenConfirm, CurrState=Established, InputEvent=RECV_KEEPALIVE, Peer=10.1.1.1, SourceInterface=GigabitEthernet0/0/1, VpnInstance=)", "bgp_peer_up", map[string]string{"neighbor": "10.1.1.1"}},
				{"BGP/6/PEER_STATE_CHG: The state of the peer changed after receiving an event. (PrevState=Idle, CurrState=Connect, InputEvent=START, Peer=10.1.1.1, SourceInterface=GigabitEthernet0/0/1, VpnInstance=)", "", map[string]string{"neighbor": "10.1.1.1"}},
			}},
		// VRP8's BGP alarms: bgpBackwardTransition (BGP4-MIB) and
		// hwBgpBackwardTransition (HUAWEI-BGP-VPN-MIB) are raised when a
		// session leaves Established and cleared when it is back, as the
		// NetEngine 8000 log reference words them; the values are ours.
		{name: "huawei_bgp_alarm", vendor: VendorHuawei, needs: "ackwardTransition_", patterns: []*regexp.Regexp{re(`BGP/\d/(?:hwB|b)gpBackwardTransition_(?P<state>active|clear)\b.*?\(BgpPeerRemoteAddr=(?P<neighbor>` + ipish + `)[,)]`)},
			states: map[string]string{"active": "bgp_peer_down", "clear": "bgp_peer_up"}, examples: []example{
				{"BGP/2/bgpBackwardTransition_active(l):CID=0x80e1041c-alarmID=0x0879000f;The BGP FSM moves from a higher numbered state to a lower numbered state. (BgpPeerRemoteAddr=10.40.8.2, BgpPeerLastError=64, BgpPeerState=Idle, LocalIfName=100GE1/0/3, Reason=Hold timer expire, Description=to-pe7)", "bgp_peer_down", map[string]string{"neighbor": "10.40.8.2"}},
				{"BGP/2/hwBgpBackwardTransition_clear(l):CID=0x80e1041c-alarmID=0x00f1039c-clearType=service_resume;The BGP FSM enters the Established state. (BgpPeerRemoteAddr=2001:db8:40::2, InstanceId=0, BgpPeerLastError=0, BgpPeerState=Established, LocalIfName=100GE1/0/3, Reason=, Description=to-pe7)", "bgp_peer_up", map[string]string{"neighbor": "2001:db8:40::2"}},
			}},
		// The BGP4-MIB traps as VRP5 logs them: "BGP/2/ESTABLISHED:OID
		// 1.3.6.1.2.1.15.7.1 The BGP FSM enters the Established state.
		// (BgpPeerRemoteAddr=A, ...)" and BGP/2/BACKWARD with "moves from a
		// higher numbered state to a lower numbered state" (S-series and AR
		// alarm references, BGP_1.3.6.1.2.1.15.7.1/2); the values are ours.
		{name: "huawei_bgp_trap", vendor: VendorHuawei, needs: "The BGP FSM ", patterns: []*regexp.Regexp{re(`BGP/\d/(?:ESTABLISHED|BACKWARD)\b.*?The BGP FSM (?P<state>enters the Established|moves from a higher numbered state to a lower numbered) state\..*?\(BgpPeerRemoteAddr=(?P<neighbor>` + ipish + `)[,)]`)},
			states: map[string]string{"enters the established": "bgp_peer_up", "moves from a higher numbered state to a lower numbered": "bgp_peer_down"}, examples: []example{
				{"%%01BGP/2/ESTABLISHED(l)[9]:OID 1.3.6.1.2.1.15.7.1 The BGP FSM enters the Established state. (BgpPeerRemoteAddr=10.1.1.2, BgpPeerLastError=0, BgpPeerState=6)", "bgp_peer_up", map[string]string{"neighbor": "10.1.1.2"}},
				{"%%01BGP/2/BACKWARD(l)[10]:OID 1.3.6.1.2.1.15.7.2 The BGP FSM moves from a higher numbered state to a lower numbered state. (BgpPeerRemoteAddr=10.1.1.2, InstanceId=0, Afi=1, Safi=1, PeerType=1, PeerRemoteAddr=10.1.1.2, InterfaceIndex=6, BgpPeerLastError=4/0, BgpPeerState=1, BgpPeerUnavaiReason=2, InterfaceName=GigabitEthernet0/0/1)", "bgp_peer_down", map[string]string{"neighbor": "10.1.1.2"}},
			}},
		// PAN-OS system log (subtype routing, event routed-BGP-peer-enter-
		// established / -left-established), the text of its system log
		// reference; the values are ours.
		{name: "paloalto_bgp_session", vendor: VendorPaloAlto, needs: "BGP peer session ", patterns: []*regexp.Regexp{re(`BGP peer session (?P<state>enters|left) established state\. peer name: [^,]*, peer IP: (?P<neighbor>` + ipaddr + `)`)},
			states: map[string]string{"enters": "bgp_peer_up", "left": "bgp_peer_down"}, examples: []example{
				{`1,2026/03/02 08:15:11,013201009876,SYSTEM,routing,0,2026/03/02 08:15:11,,routed-BGP-peer-enter-established,TRANSIT-B,0,0,general,informational,"BGP peer session enters established state. peer name: TRANSIT-B, peer IP: 198.51.100.77.",7301,0x0,0,0,0,0,,edge-fw2`, "bgp_peer_up", map[string]string{"neighbor": "198.51.100.77"}},
				{`1,2026/03/02 08:19:40,013201009876,SYSTEM,routing,0,2026/03/02 08:19:40,,routed-BGP-peer-left-established,TRANSIT-B,0,0,general,high,"BGP peer session left established state. peer name: TRANSIT-B, peer IP: 198.51.100.77.",7302,0x0,0,0,0,0,,edge-fw2`, "bgp_peer_down", map[string]string{"neighbor": "198.51.100.77"}},
			}},
		// A phrasing many routing daemons write, so it names no vendor.
		{name: "generic_bgp_peer", needs: "BGP peer", patterns: []*regexp.Regexp{re(`(?i)BGP peer (?P<neighbor>` + ipaddr + `) (?:session )?(?:state changed )?.*?from (?P<old>\w+) to (?P<new>\w+)`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{"routed: BGP peer 10.9.0.1 state changed from Established to Idle", "bgp_peer_down", map[string]string{"neighbor": "10.9.0.1"}},
			}},
		// The event text, whatever the event's name and number
		// (bgpBackwardTransition 2002, bgpBackwardTransNotification 2039)
		// and the log's layout. The "BGP #2039"/"#2038" lines: an SR OS
		// log, pastebin.com/4Ui8Tp2G, its two lines joined.
		// The routing instance, "Base" (the default) or a VPRN's, is the
		// session's VRF: after the event number ("BGP #2039 vprn109 Peer")
		// in the classic layout, before the event's name ("10644 vprn109
		// BGP-MINOR-...") in the syslog one.
		{name: "nokia_bgp_down", vendor: VendorNokia, needs: "moved from higher state ", patterns: []*regexp.Regexp{re(`(?:\b(?:BGP #\d+ (?P<vrf>[^\s"]+) |(?P<vrf>[\w-]+) BGP-[A-Z]+-\w+-\d+ \[).*?)?\bPeer (?P<neighbor>` + ipaddr + `): moved from higher state (?P<old>\w+) to lower state (?P<new>\w+)`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{`WARNING: BGP #2039 vprn109 Peer 11: 10.158.60.200 "VR 11: Group NSG_WAN: Peer 10.158.60.200: moved from higher state ESTABLISHED to lower state IDLE due to event TCP SOCKET ERROR"`, "bgp_peer_down", map[string]string{"neighbor": "10.158.60.200", "vrf": "vprn109"}},
				{`WARNING: BGP #2039 vprn109 Peer 11: 10.158.60.200 "VR 11: Group NSG_WAN: Peer 10.158.60.200: moved from higher state OPENSENT to lower state IDLE due to event TCP SOCKET ERROR"`, "", map[string]string{"neighbor": "10.158.60.200"}},
				{"BGP-MINOR-bgpBackwardTransition-2002 [Peer 1: 10.20.1.3]: VR 1: Group ebgp: Peer 10.20.1.3: moved from higher state ESTABLISHED to lower state IDLE due to event HOLD TIME EXPIRED", "bgp_peer_down", map[string]string{"neighbor": "10.20.1.3"}},
				{"BGP-MINOR-bgpBackwardTransition-2002 [Peer 1: 10.20.1.3]: VR 1: Group ebgp: Peer 10.20.1.3: moved from higher state OPENSENT to lower state ACTIVE due to event CONNECT RETRY", "", map[string]string{"neighbor": "10.20.1.3"}},
			}},
		{name: "nokia_bgp_up", vendor: VendorNokia, needs: "moved into established state", patterns: []*regexp.Regexp{re(`(?:\b(?:BGP #\d+ (?P<vrf>[^\s"]+) |(?P<vrf>[\w-]+) BGP-[A-Z]+-\w+-\d+ \[).*?)?\bPeer (?P<neighbor>` + ipaddr + `): moved into established state`)},
			event: "bgp_peer_up", examples: []example{
				{`MINOR: BGP #2038 vprn109 Peer 11: 10.158.60.200 "VR 11: Group NSG_WAN: Peer 10.158.60.200: moved into established state"`, "bgp_peer_up", map[string]string{"neighbor": "10.158.60.200", "vrf": "vprn109"}},
				{"110 Base BGP-MINOR-bgpEstablishedNotification-2019 [Peer 1: fd00:fde8::51:13]:  (ASN 65000) VR 1: Group iBGP-DC: Peer fd00:fde8::51:13: moved into established state", "bgp_peer_up", map[string]string{"neighbor": "fd00:fde8::51:13", "vrf": "Base"}},
				{"BGP-MINOR-bgpEstablished-2001 [Peer 1: 10.20.1.3]: VR 1: Group ebgp: Peer 10.20.1.3: moved into established state", "bgp_peer_up", map[string]string{"neighbor": "10.20.1.3"}},
			}},
		// --- OSPF ---
		{name: "cisco_ospf", needs: "OSPF-", patterns: []*regexp.Regexp{re(`OSPF-\d-ADJCHG: Process \S+, Nbr (?P<neighbor>` + ipish + `) on (?P<interface>\S+) from (?P<old>[\w-]+) to (?P<new>[\w-]+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"%OSPF-5-ADJCHG: Process 1, Nbr 192.0.2.7 on GigabitEthernet0/2 from FULL to DOWN, Neighbor Down: Dead timer expired", "ospf_neighbor_down", map[string]string{"neighbor": "192.0.2.7", "interface": "GigabitEthernet0/2"}},
				{"%OSPF-5-ADJCHG: Process 1, Nbr 192.0.2.7 on GigabitEthernet0/2 from LOADING to FULL, Loading Done", "ospf_neighbor_up", map[string]string{"neighbor": "192.0.2.7"}},
			}},
		// IOS-XR (a space before the colon, the area named) and OSPFv3;
		// cisco_ospf takes the IOS lines first, faster.
		{name: "cisco_ospf_variants", needs: "-ADJCHG", patterns: []*regexp.Regexp{re(`OSPF(?:[Vv]3)?-\d-ADJCHG ?: Process \S+,(?: IPv[46],)? Nbr (?P<neighbor>` + ipish + `) on (?P<interface>\S+) (?:in area \S+ )?from (?P<old>[\w-]+) to (?P<new>[\w-]+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"%ROUTING-OSPF-5-ADJCHG : Process 1, Nbr 10.0.0.2 on GigabitEthernet0/0/0/0 in area 0 from FULL to DOWN, Neighbor Down: interface down or detached,vrf default vrfid 0x60000000", "ospf_neighbor_down", map[string]string{"neighbor": "10.0.0.2", "interface": "GigabitEthernet0/0/0/0"}},
				{"%ROUTING-OSPF-5-ADJCHG : Process 1, Nbr 10.0.0.2 on GigabitEthernet0/0/0/0 in area 0 from LOADING to FULL, Loading Done, vrf default vrfid 0x60000000", "ospf_neighbor_up", map[string]string{"neighbor": "10.0.0.2"}},
				{"%OSPFV3-5-ADJCHG: Process 1, Nbr 192.0.2.9 on GigabitEthernet0/1 from FULL to DOWN, Neighbor Down: Dead timer expired", "ospf_neighbor_down", map[string]string{"neighbor": "192.0.2.9", "interface": "GigabitEthernet0/1"}},
			}},
		// NX-OS: "%OSPF-5-ADJCHANGE: ospf-2 [3860] Nbr A on IF went DOWN",
		// and NBRSTATE in the same form or in IOS's "from A to B".
		{name: "nxos_ospf", needs: "] Nbr ", patterns: []*regexp.Regexp{re(`OSPF(?:V3|v3)?-\d-(?:NBRSTATE|ADJCHANGE): \S+ \[\d+\] Nbr (?P<neighbor>` + ipish + `) on (?P<interface>\S+) went (?P<state>\w+)`)},
			states: map[string]string{"full": "ospf_neighbor_up", "down": "ospf_neighbor_down"}, examples: []example{
				{"%OSPF-5-NBRSTATE: ospf-1 [5267] Nbr 10.10.10.2 on Vlan10 went DOWN", "ospf_neighbor_down", map[string]string{"neighbor": "10.10.10.2", "interface": "Vlan10"}},
				{"%OSPF-5-NBRSTATE: ospf-1 [5267] Nbr 10.10.10.2 on Ethernet1/1 went FULL", "ospf_neighbor_up", map[string]string{"neighbor": "10.10.10.2", "interface": "Ethernet1/1"}},
				{"%OSPF-5-NBRSTATE: ospf-1 [5267] Nbr 10.10.10.2 on Ethernet1/1 went INIT", "", nil},
				{"%OSPF-5-ADJCHANGE: ospf-2 [3860] Nbr 192.168.4.46 on port-channel10 went DOWN", "ospf_neighbor_down", map[string]string{"neighbor": "192.168.4.46", "interface": "port-channel10"}},
				{"%OSPF-5-ADJCHANGE: ospf-100 [7243] Nbr 10.0.13.2 on Ethernet1/49 went FULL", "ospf_neighbor_up", map[string]string{"neighbor": "10.0.13.2", "interface": "Ethernet1/49"}},
			}},
		{name: "nxos_ospf_from_to", needs: "-NBRSTATE: Process ", patterns: []*regexp.Regexp{re(`OSPF(?:V3|v3)?-\d-NBRSTATE: Process \S+, Nbr (?P<neighbor>` + ipish + `) on (?P<interface>\S+) from (?P<old>[\w-]+) to (?P<new>[\w-]+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"%OSPF-5-NBRSTATE: Process 2, Nbr 192.168.4.46 on port-channel10 from FULL to DOWN, DEADTIME", "ospf_neighbor_down", map[string]string{"neighbor": "192.168.4.46", "interface": "port-channel10"}},
			}},
		// EOS: "%OSPF-4-OSPF_ADJACENCY_TEARDOWN: NGB A, interface B
		// adjacency dropped" (B is the local address, not a name).
		{name: "arista_ospf", needs: "_ADJACENCY_", patterns: []*regexp.Regexp{re(`OSPF3?_ADJACENCY_(?P<state>ESTABLISHED|TEARDOWN): NGB (?P<neighbor>` + ipish + `),`)},
			states: map[string]string{"established": "ospf_neighbor_up", "teardown": "ospf_neighbor_down"}, examples: []example{
				{"%OSPF-4-OSPF_ADJACENCY_TEARDOWN: NGB 10.0.0.2, interface 172.16.0.1 adjacency dropped: inactivity timer expired, state was: FULL", "ospf_neighbor_down", map[string]string{"neighbor": "10.0.0.2"}},
				{"%OSPF-4-OSPF_ADJACENCY_ESTABLISHED: NGB 10.0.0.2, interface 172.16.0.1 adjacency established", "ospf_neighbor_up", map[string]string{"neighbor": "10.0.0.2"}},
			}},
		// The states, not the tag, decide: rpd logs RPD_OSPF_NBRUP at every
		// step up (Init to 2Way, Init to ExStart, ...), not only at Full.
		{name: "junos_ospf", needs: "RPD_OSPF_NBR", patterns: []*regexp.Regexp{re(`RPD_OSPF_NBR(?:UP|DOWN):? OSPF neighbor (?P<neighbor>` + ipish + `) \(realm \S+ (?P<interface>\S+) area \S+\) state changed from (?P<old>[\w-]+) to (?P<new>[\w-]+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"RPD_OSPF_NBRDOWN: OSPF neighbor 10.0.0.6 (realm ospf-v2 ge-0/0/2.0 area 0.0.0.0) state changed from Full to Down due to InActiveTimer (event reason: neighbor was inactive)", "ospf_neighbor_down", map[string]string{"neighbor": "10.0.0.6", "interface": "ge-0/0/2.0"}},
				// RPD_OSPF_NBRUP is logged at every step up, not only at Full
				// (napalm-logs' junos OSPF_NEIGHBOR_UP fixtures).
				{"RPD_OSPF_NBRUP: OSPF neighbor 1.1.1.1 (realm ospf-v2 ge-0/0/0.0 area 0.0.0.0) state changed from Init to ExStart due to 2WayRcvd (event reason: ExStart)", "", map[string]string{"neighbor": "1.1.1.1"}},
				{"RPD_OSPF_NBRUP: OSPF neighbor 1.1.1.1 (realm ospf-v2 ge-0/0/0.0 area 0.0.0.0) state changed from Init to 2Way due to 2WayRcvd (event reason: ExStart)", "", map[string]string{"neighbor": "1.1.1.1"}},
				{"RPD_OSPF_NBRUP: OSPF neighbor 1.1.1.1 (realm ospf-v2 ge-0/0/0.0 area 0.0.0.0) state changed from Loading to Full due to LoadDone (event reason: ExStart)", "ospf_neighbor_up", map[string]string{"neighbor": "1.1.1.1", "interface": "ge-0/0/0.0"}},
			}},
		// The Nbr* keys: OSPF/6/NBR_CHANGE in Huawei's CloudEngine and
		// NetEngine 8000 log references (support.huawei.com/enterprise/en/
		// doc/EDOC1100039602/ed39abd0/ospf-6-nbr_change); the values are ours.
		{name: "huawei_ospf", vendor: VendorHuawei, needs: "OSPF/", patterns: []*regexp.Regexp{re(`OSPF/\d/NBR_CH\w*.*?(?:NeighborAddress|NbrIpAddr)=(?P<neighbor>` + ipish + `).*?(?:Neighbor|Nbr)PreviousState=(?P<old>\w+), (?:Neighbor|Nbr)CurrentState=(?P<new>\w+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"OSPF/3/NBR_CHG_DOWN(l)[4]:Neighbor event:neighbor state changed to Down. (ProcessId=256, NeighborAddress=10.1.1.2, NeighborEvent=KillNbr, NeighborPreviousState=Full, NeighborCurrentState=Down)", "ospf_neighbor_down", map[string]string{"neighbor": "10.1.1.2"}},
				{"OSPF/6/NBR_CHANGE_E:Neighbor changes event: neighbor status changed. (ProcessId=256, NeighborAddress=10.1.1.2, NeighborEvent=LoadingDone, NeighborPreviousState=Loading, NeighborCurrentState=Full)", "ospf_neighbor_up", map[string]string{"neighbor": "10.1.1.2"}},
				{"OSPF/6/NBR_CHANGE:Neighbor changes event: neighbor status changed. (ProcessId=1, NbrIpAddr=10.1.1.2, NbrEvent=InactivityTimer, NbrPreviousState=Full, NbrCurrentState=Down)", "ospf_neighbor_down", map[string]string{"neighbor": "10.1.1.2"}},
				{"OSPF/6/NBR_CHANGE: Neighbor changes event: neighbor status changed. (ProcessId=1, NbrIpAddr=10.1.1.2, Interface=GigabitEthernet0/0/1, NbrEvent=LoadingDone, NbrPreviousState=Loading, NbrCurrentState=Full,CpuUsage=10, AreaId=0.0.0.0)", "ospf_neighbor_up", map[string]string{"neighbor": "10.1.1.2"}},
			}},
		// OSPF-MIB's ospfNbrStateChange as VRP logs it: VRP5's
		// "OSPF/2/NBRCHG:OID ... (NbrIpAddress=A, ..., NbrState=N, ...)" and
		// VRP8's "OSPF/2/ospfNbrStateChange_active"/"_clear" alarm (Huawei's
		// S-series alarm reference, OSPF_1.3.6.1.2.1.14.16.2.2, and the
		// NetEngine 8000 log reference); the values are ours. The state is
		// OSPF-MIB's number (1 down ... 8 full) or its name: full is up;
		// down, attempt and init are down, as from the trap itself.
		{name: "huawei_ospf_trap", vendor: VendorHuawei, needs: "OSPF/", patterns: []*regexp.Regexp{re(`OSPF/\d/(?:NBRCHG|ospfNbrStateChange_(?:active|clear))\b.*?\bNbrIpAddress=(?P<neighbor>` + ipish + `),.*?\bNbrState=(?P<state>\w+)`)},
			states: map[string]string{"1": "ospf_neighbor_down", "2": "ospf_neighbor_down", "3": "ospf_neighbor_down", "8": "ospf_neighbor_up",
				"down": "ospf_neighbor_down", "attempt": "ospf_neighbor_down", "init": "ospf_neighbor_down", "full": "ospf_neighbor_up"}, examples: []example{
				{"%%01OSPF/2/NBRCHG(l)[2]:OID 1.3.6.1.2.1.14.16.2.2: The status of the non-virtual neighbor changes. (NbrIpAddress=10.1.1.2, NbrAddressLessIndex=0, ProcessId=1, AreaId=0.0.0.0, IfnetIndex=6, LocalIfIpAddress=10.1.1.1, ProcessId=1, RouterId=1.1.1.1, NbrRtrId=2.2.2.2, NbrState=1, IfName=GigabitEthernet0/0/1, InstanceName=, NbrChgReason=1)", "ospf_neighbor_down", map[string]string{"neighbor": "10.1.1.2"}},
				{"%%01OSPF/2/NBRCHG(l)[3]:OID 1.3.6.1.2.1.14.16.2.2: The status of the non-virtual neighbor changes. (NbrIpAddress=10.1.1.2, NbrAddressLessIndex=0, ProcessId=1, AreaId=0.0.0.0, IfnetIndex=6, LocalIfIpAddress=10.1.1.1, ProcessId=1, RouterId=1.1.1.1, NbrRtrId=2.2.2.2, NbrState=6, IfName=GigabitEthernet0/0/1, InstanceName=, NbrChgReason=3)", "", map[string]string{"neighbor": "10.1.1.2"}},
				{"OSPF/2/ospfNbrStateChange_clear(l):CID=0x80fe0201-clearType=service_resume;The status of the non-virtual neighbor has changed. (RouterId=1.1.1.1, NbrIpAddress=10.1.1.2, NbrAddressLessIndex=0, NbrRtrId=2.2.2.2, NbrState=Full, ProcessId=1, AreaId=0.0.0.0, IfnetIndex=6, LocalIfIpAddress=10.1.1.1, IfName=GigabitEthernet0/3/0, VpnName=_public_, Reason=Alarm clear, SubReason=0)", "ospf_neighbor_up", map[string]string{"neighbor": "10.1.1.2"}},
			}},
		// ospf.neighbor.ChgState: the message text of the ExtremeXOS EMS
		// catalogue (documentation.extremenetworks.com/ems_catalog_22.1/
		// .../ospf/ospf_neighbor_ChgState.shtml); the values are ours.
		{name: "extreme_ospf", vendor: VendorExtreme, needs: "Changing the state of neighbor rtid ", patterns: []*regexp.Regexp{re(`Changing the state of neighbor rtid \S+ ipa (?P<neighbor>` + ipaddr + `) to state = (?P<state>\w+)`)},
			states: map[string]string{"full": "ospf_neighbor_up", "down": "ospf_neighbor_down"}, examples: []example{
				{"<Noti:ospf.neighbor.ChgState> Changing the state of neighbor rtid 10.0.0.2 ipa 10.1.1.2 to state = DOWN", "ospf_neighbor_down", map[string]string{"neighbor": "10.1.1.2"}},
				{"<Noti:ospf.neighbor.ChgState> Changing the state of neighbor rtid 10.0.0.2 ipa 10.1.1.2 to state = FULL", "ospf_neighbor_up", map[string]string{"neighbor": "10.1.1.2"}},
				{"<Noti:ospf.neighbor.ChgState> Changing the state of neighbor rtid 10.0.0.2 ipa 10.1.1.2 to state = EX_START", "", nil},
			}},
		// ArubaOS-Switch (ProCurve): "ADJCHG: Neighbor A on interface
		// vlan-22 moved to Down state, Inactivity Timer" (OSPFv3, HPE's
		// Aruba 16.08 guide, "logging neighbor-adjacency") and "ADJCHG:
		// Neighbor with Router ID A on vlan-850 moved to Full state -
		// adjacency formed." (OSPFv2, a 2930 stack's event log in a public
		// write-up). By default only changes into and out of Full are
		// logged; the new state alone is given, so Full is up, Down down,
		// and the steps between (with "detail") nothing.
		{name: "aruba_switch_ospf", vendor: VendorArubaSwitch, needs: "ADJCHG: Neighbor ", patterns: []*regexp.Regexp{re(`\bADJCHG: Neighbor (?:with Router ID )?(?P<neighbor>` + ipaddr + `) on (?:interface )?(?P<interface>[^\s,]+) moved to (?P<state>\w+) state\b`)},
			states: map[string]string{"full": "ospf_neighbor_up", "down": "ospf_neighbor_down"}, examples: []example{
				{"ADJCHG: Neighbor 15.255.155.1 on interface vlan-22 moved to Down state, Inactivity Timer", "ospf_neighbor_down", map[string]string{"neighbor": "15.255.155.1", "interface": "vlan-22"}},
				{"ADJCHG: Neighbor 10.10.10.45 on interface vlan-11 moved to Full state, Loading Done", "ospf_neighbor_up", map[string]string{"neighbor": "10.10.10.45", "interface": "vlan-11"}},
				{"ST1-CMDR: ADJCHG: Neighbor with Router ID 10.251.34.121 on vlan-850 moved to Full state - adjacency formed.", "ospf_neighbor_up", map[string]string{"neighbor": "10.251.34.121", "interface": "vlan-850"}},
				// A step up, with "logging neighbor-adjacency detail" (the values are ours).
				{"ADJCHG: Neighbor 10.10.10.45 on interface vlan-11 moved to Loading state, Exchange Done", "", map[string]string{"neighbor": "10.10.10.45"}},
			}},
		// RouterOS 7: "route,ospf,info <instance> { ... } <area> { ... }
		// interface { broadcast A%IF } neighbor { router-id: R state: Loading
		// } state change to Full" (a CRS326's log in a public write-up),
		// the topics left out under bsd-syslog.
		{name: "mikrotik_ospf", vendor: VendorMikroTik, needs: "} state change to ", patterns: []*regexp.Regexp{re(`(?:interface \{ [^}%]*%(?P<interface>[^\s}]+) \} )?neighbor \{ router-id: (?P<neighbor>` + ipaddr + `) state: (?P<old>[\w-]+) \} state change to (?P<new>[\w-]+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"route,ospf,info backbonev2 { version: 2 router-id: 172.16.0.1 } backbone0v2 { 0.0.0.0 } interface { broadcast 172.16.255.1%inter-router-link0 } neighbor { router-id: 172.16.0.2 state: Loading } state change to Full", "ospf_neighbor_up", map[string]string{"neighbor": "172.16.0.2", "interface": "inter-router-link0"}},
				{"backbonev2 { version: 2 router-id: 172.16.0.1 } backbone0v2 { 0.0.0.0 } interface { broadcast 172.16.255.1%inter-router-link0 } neighbor { router-id: 172.16.0.2 state: Full } state change to Down", "ospf_neighbor_down", map[string]string{"neighbor": "172.16.0.2"}},
				{"route,ospf,info backbonev2 { version: 2 router-id: 172.16.0.1 } backbone0v2 { 0.0.0.0 } interface { broadcast 172.16.255.1%inter-router-link0 } neighbor { router-id: 172.16.0.2 state: Init } state change to TwoWay", "", nil},
			}},
		// --- Restarts ---
		// IOS and IOS-XE log %SYS-5-RESTART once the image is up after a
		// boot (the version banner after "--", often cut at the line's
		// end). The restart a coldStart trap or a poll's sysUpTime tells
		// too: one event (see detector.rebootKey). %SYS-5-RELOAD is the
		// reload asked for, before it: not yet a restart.
		{name: "cisco_restart", needs: "%SYS-5-RESTART:", patterns: []*regexp.Regexp{re(`%SYS-5-RESTART: System restarted`)},
			event: "device_rebooted", examples: []example{
				{"%SYS-5-RESTART: System restarted --", "device_rebooted", nil},
				{"%SYS-5-RESTART: System restarted --\nCisco IOS Software [Cupertino], Catalyst L3 Switch Software (CAT9K_LITE_IOSXE), Version 17.9.5, RELEASE SOFTWARE (fc1)", "device_rebooted", nil},
			}},
		// Junos's snmpd logs the coldStart trap it sends after a boot.
		// Not SNMPD_TRAP_WARM_START: snmpd sends warmStart when it alone
		// restarts.
		{name: "junos_cold_start", needs: "SNMPD_TRAP_COLD_START", patterns: []*regexp.Regexp{re(`SNMPD_TRAP_COLD_START:? trap_generate_cold`)},
			event: "device_rebooted", examples: []example{
				{"snmpd[359]: SNMPD_TRAP_COLD_START: trap_generate_cold: SNMP trap: cold start", "device_rebooted", nil},
				{"snmpd[359]: %DAEMON-2-SNMPD_TRAP_COLD_START: trap_generate_cold: SNMP trap: cold start", "device_rebooted", nil},
			}},
		// EOS: SystemInitMonitor logs SYSTEM_INITIALIZED once every agent
		// is up after a boot, and is then stopped until the next one
		// (ProcLauncher's "Configuring process 'SystemInitMonitor' to stop"
		// right after it): cEOS routers' syslog in ipspace/blog
		// content/posts/2025/10/netlab-syslog-server.md and content/posts/
		// 2026/09/netlab-syslog.md, and a leaf's log in aristanetworks/anta
		// tests/units/anta_tests/test_logging.py. Not ProcMgr's
		// WORKER_WARMSTART (the same syslog) or PROCESS_RESTART (napalm-logs'
		// EOS example): one agent restarted.
		{name: "arista_system_initialized", needs: "%SYS-5-SYSTEM_INITIALIZED:", patterns: []*regexp.Regexp{re(`%SYS-5-SYSTEM_INITIALIZED: System is initialized\b`)},
			event: "device_rebooted", examples: []example{
				{"%SYS-5-SYSTEM_INITIALIZED: System is initialized", "device_rebooted", nil},
			}},
		// NX-OS: VDC_MGR logs VDC_ONLINE for vdc 1, the default VDC, as the
		// switch comes up: a Nexus 9000v's boot console in a public NX-OSv
		// write-up (which shows PLATFORM-2-PFM_SYSTEM_RESET, the reload asked
		// for, before it) and in a public POAP guide; elastic/beats
		// x-pack/filebeat/module/cisco/nexus/config/pipeline.js parses "vdc
		// N has come online". Another VDC's (a Nexus 7000's vdc 2) is that
		// VDC's start, not the switch's; MODULE-5-ACTIVE_SUP_OK comes at a
		// supervisor switchover too.
		{name: "nxos_vdc_online", needs: "-VDC_ONLINE:", patterns: []*regexp.Regexp{re(`%VDC_MGR-\d-VDC_ONLINE: vdc 1 has come online\b`)},
			event: "device_rebooted", examples: []example{
				{"%VDC_MGR-2-VDC_ONLINE: vdc 1 has come online", "device_rebooted", nil},
			}},
		// RouterOS logs "router rebooted" under system,info first thing
		// after a boot (the RouterOS manual's Log page, its /log print
		// example; a device's log in a public MCP server's tests, after
		// "installed system-7.22.1"), and "router rebooted without proper
		// shutdown, probably power outage" under system,error,critical
		// after a power loss (nocproject/noc .../MikroTik/RouterOS/System/
		// Reboot_SYSLOG_.json, and a router's log in a public write-up).
		// The topics are left out under bsd-syslog.
		{name: "mikrotik_rebooted", vendor: VendorMikroTik, needs: "router rebooted", patterns: []*regexp.Regexp{re(`^(?:[a-z]+(?:,[a-z]+)+ )?router rebooted(?: without proper shutdown(?:, probably power outage)?)?$`)},
			event: "device_rebooted", examples: []example{
				{"system,info router rebooted", "device_rebooted", nil},
				{"system,error,critical router rebooted without proper shutdown, probably power outage", "device_rebooted", nil},
				{"router rebooted", "device_rebooted", nil},
			}},
		// FortiOS: log ID 32009, LOG_ID_SYSTEM_START, "FortiGate started"
		// (FortiOS Log Message Reference, docs.fortinet.com/document/
		// fortigate/6.2.1/fortios-log-message-reference/316371/
		// 32009-log-id-system-start): the reference gives the fields, not a
		// line, so the example's values are ours. Not 32545 (a scheduled
		// reboot started: before it), 32200 (device shutdown) or 20204 (a
		// daemon started).
		{name: "fortinet_system_start", vendor: VendorFortinet, needs: "0100032009",
			pairs: map[string]string{"logid": "0100032009"},
			event: "device_rebooted", examples: []example{
				{`date=2026-11-29 time=14:02:41 devname="fw1" devid="FGT60F0000000001" eventtime=1795960961000000000 tz="+0000" logid="0100032009" type="event" subtype="system" level="information" vd="root" logdesc="FortiGate started" msg="FortiGate started"`, "device_rebooted", nil},
				{`date=2026-11-29 time=14:02:41 devname=fw1 logid=0100032009 type=event subtype=system level=information logdesc="FortiGate started"`, "device_rebooted", nil},
			}},
		// --- Configuration and logins ---
		// Without a logged-in user (no AAA) IOS names the line instead,
		// "by vty2 (A)" or "by console": no user, the address the source.
		// NX-OS's VSHD_SYSLOG_CONFIG_I says "from vty" for every session,
		// the console's too, and names the client after the user: "by
		// admin on A@pts/3", "by admin on console0". EOS's eAPI session
		// is the line command-api.
		{name: "cisco_config", needs: "Configured from", patterns: []*regexp.Regexp{re(`Configured from (?P<source>\S+) by (?:(?P<source>(?:vty|tty|aux|console)\d*)(?: \((?P<source>` + ipaddr + `)\))?(?:[\s,.]|$)|(?P<user>[^\s,]+)(?: on (?:(?:vty|tty|aux|console|command-api)\d* \((?P<source>` + ipaddr + `)\)|(?P<source>` + ipaddr + `)@|(?P<source>console\d*)(?:\s|$)))?)`)},
			event: "config_changed", examples: []example{
				{"%SYS-5-CONFIG_I: Configured from console by netops on vty0 (10.34.195.36)", "config_changed", map[string]string{"user": "netops", "source": "10.34.195.36"}},
				{"%SYS-5-CONFIG_I: Configured from console by netops on console", "config_changed", map[string]string{"user": "netops", "source": "console"}},
				{"%SYS-5-CONFIG_I: Configured from 10.1.1.1 by snmp", "config_changed", map[string]string{"user": "snmp", "source": "10.1.1.1"}},
				{"%SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)", "config_changed", map[string]string{"user": "", "source": "10.34.195.36"}},
				{"%SYS-5-CONFIG_I: Configured from console by console", "config_changed", map[string]string{"user": "", "source": "console"}},
				// The startup configuration copied in at the console: made
				// there, from NVRAM.
				{"%SYS-5-CONFIG_I: Configured from memory by console", "config_changed", map[string]string{"user": "", "source": "console"}},
				{"%SYS-5-CONFIG_I: Configured from memory by vty1", "config_changed", map[string]string{"user": "", "source": "vty1"}},
				// NX-OS: a lab's Nexus in a public write-up; Cisco's Nexus 7000
				// EEM document 118907.
				{"%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on 192.168.101.1@pts/3", "config_changed", map[string]string{"user": "admin", "source": "192.168.101.1"}},
				{"%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on console0", "config_changed", map[string]string{"user": "admin", "source": "console0"}},
				// EOS's eAPI session: its terminal is command-api, with the
				// client's address ("(unix:)" over the local socket).
				{"%SYS-5-CONFIG_I: Configured from console by admin on command-api (10.22.1.107)", "config_changed", map[string]string{"user": "admin", "source": "10.22.1.107"}},
			}},
		// EOS: a configuration session committed (CloudVision, gNMI Set,
		// "configure session"), which logs no CONFIG_I.
		{name: "arista_config_session", needs: "CONFIG_SESSION_COMMIT_SUCCESS", patterns: []*regexp.Regexp{re(`CONFIG_SESSION_COMMIT_SUCCESS: User (?P<user>\S+) committed configuration session \S+ successfully(?: on (?P<source>\S+))?`)},
			event: "config_changed", examples: []example{
				{"%SYS-5-CONFIG_SESSION_COMMIT_SUCCESS: User cvpadmin committed configuration session CVP-configtask-ff4f8885 successfully on TerminAttr (localhost)", "config_changed", map[string]string{"user": "cvpadmin", "source": "TerminAttr"}},
			}},
		// "commit confirmed" applies the change at once (and rolls it back
		// unless confirmed); "commit check" changes nothing.
		// IOS-XE configured over NETCONF or RESTCONF: no user, the agent.
		{name: "cisco_config_programmatic", needs: "Configured programmatically", patterns: []*regexp.Regexp{re(`Configured programmatically by process (?P<process>\S+) from (?P<source>\S+) as (?P<agent>\S+)`)},
			event: "config_changed", examples: []example{
				{"%SYS-5-CONFIG_P: Configured programmatically by process iosp_vty_100001_dmi_nesd from console as NETCONF on vty31266", "config_changed", map[string]string{"agent": "NETCONF", "source": "console"}},
			}},
		{name: "junos_commit", needs: "UI_COMMIT", patterns: []*regexp.Regexp{re(`UI_COMMIT:? User '(?P<user>[^']+)' requested '(?:commit|commit synchronize|commit confirmed)'`)},
			event: "config_changed", examples: []example{
				{"UI_COMMIT: User 'netops' requested 'commit' operation (comment: none)", "config_changed", map[string]string{"user": "netops"}},
				{"UI_COMMIT: User 'netadmin' requested 'commit confirmed' operation (comment: none)", "config_changed", map[string]string{"user": "netadmin"}},
			}},
		{name: "iosxr_commit", needs: "DB_COMMIT", patterns: []*regexp.Regexp{re(`DB_COMMIT ?: Configuration committed by user '(?P<user>[^']+)'`)},
			event: "config_changed", examples: []example{
				{"%MGBL-CONFIG-6-DB_COMMIT : Configuration committed by user 'netops'. Use 'show configuration commit changes 1000000123' to view the changes.", "config_changed", map[string]string{"user": "netops"}},
			}},
		// "[Source: A]": nocproject/noc .../Cisco/IOS/Security/
		// Authentication/Login_SYSLOG_.json (a device's line).
		{name: "cisco_login", needs: "LOGIN_SUCCESS", patterns: []*regexp.Regexp{re(`LOGIN_SUCCESS: Login Success \[user: (?P<user>[^\]]+)\](?: \[Source: (?P<source>` + ipish + `)\])?`)},
			event: "login_succeeded", examples: []example{
				{"%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: netops] [Source: 10.34.195.36] [localport: 22] at 14:05:30 UTC Sun Nov 29 2026", "login_succeeded", map[string]string{"user": "netops", "source": "10.34.195.36"}},
				{"%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: admin] [Source: 172.16.0.22] [localport: 22] at 13:14:14 MSK Wed Aug 3 2011", "login_succeeded", map[string]string{"user": "admin", "source": "172.16.0.22"}},
			}},
		// Cisco ASA (and PIX) 605005/605004: a management session (ssh,
		// telnet, https; the console "from serial to console") permitted
		// or denied. The user is in double quotes on the wire
		// (wazuh/wazuh's ruleset tests of ASA and PIX lines), in single
		// quotes in Cisco's message guide, bare in some parsers'
		// fixtures; it is what was typed, quotes and all, up to the
		// line's last quote.
		{name: "asa_login", needs: "605005: Login permitted from ", patterns: []*regexp.Regexp{re(`605005: Login permitted from (?:(?P<source>` + ipish + `)/\d+|\S+) to \S+ for user (?:"(?P<user>(?s:.*))"|'(?P<user>(?s:.*))'|(?P<user>\S*))\s*$`)},
			event: "login_succeeded", examples: []example{
				{`%ASA-6-605005: Login permitted from 192.168.0.1/11 to outside:192.168.0.2/ssh for user "username"`, "login_succeeded", map[string]string{"user": "username", "source": "192.168.0.1"}},
				{`%ASA-6-605005: Login permitted from 10.0.0.5/50234 to inside:10.0.0.1/https for user "admin"`, "login_succeeded", map[string]string{"user": "admin", "source": "10.0.0.5"}},
				{`%ASA-6-605005: Login permitted from serial to console for user 'admin'`, "login_succeeded", map[string]string{"user": "admin", "source": ""}},
				{`%PIX-6-605005: Login permitted from 192.168.1.2/2953 to inside:192.168.1.1/telnet for user ""`, "login_succeeded", map[string]string{"user": "", "source": "192.168.1.2"}},
			}},
		{name: "asa_login_failed", needs: "605004: Login denied from ", patterns: []*regexp.Regexp{re(`605004: Login denied from (?:(?P<source>` + ipish + `)/\d+|\S+) to \S+ for user (?:"(?P<user>(?s:.*))"|'(?P<user>(?s:.*))'|(?P<user>\S*))\s*$`)},
			event: "login_failed", examples: []example{
				{`%ASA-6-605004: Login denied from 192.168.2.10/32597 to outside:192.168.2.14/ssh for user "root"`, "login_failed", map[string]string{"user": "root", "source": "192.168.2.10"}},
				{`%PIX-6-605004: Login denied from 192.168.2.10/13528 to outside:192.168.2.14/ssh for user "dcid"`, "login_failed", map[string]string{"user": "dcid", "source": "192.168.2.10"}},
				{`%ASA-6-605004: Login denied from serial to console for user 'admin'`, "login_failed", map[string]string{"user": "admin", "source": ""}},
				{`%ASA-6-605004: Login denied from 2001:db8::9/51234 to outside:2001:db8::1/ssh for user "a"b"`, "login_failed", map[string]string{"user": `a"b`, "source": "2001:db8::9"}},
			}},
		// "[user: ]" when none was given: nocproject/noc .../Cisco/IOS/
		// Security/Authentication/Login_Failed_SYSLOG_.json (a device's line).
		// The name is what was typed, brackets and all: the source is the
		// last one, which IOS writes after it.
		{name: "cisco_login_failed", needs: "LOGIN_FAILED", patterns: []*regexp.Regexp{re(`LOGIN_FAILED: Login failed \[user: (?:(?P<user>(?s:.*))\] \[Source: (?P<source>` + ipish + `)\] \[localport: |(?P<user>[^\]]*)\])`)},
			event: "login_failed", examples: []example{
				{"%SEC_LOGIN-4-LOGIN_FAILED: Login failed [user: ] [Source: 172.16.0.22] [localport: 22] [Reason: Login Authentication Failed]", "login_failed", map[string]string{"user": "", "source": "172.16.0.22"}},
				// Cisco's "Cisco IOS Login Enhancements" guide's example.
				{"%SEC_LOGIN-4-LOGIN_FAILED: Login failed [user: cisco] [Source: 10.1.1.1] [localport: 23] [Reason: Login Authentication Failed] at 20:55:40 UTC Mon Jul 25 2005", "login_failed", map[string]string{"user": "cisco", "source": "10.1.1.1"}},
			}},
		// SSH2_USERAUTH's failed logins: .../SSH_-_Login_Failed_SYSLOG_.json
		// (a device's line). IOS logs LOGIN_FAILED for the same attempt:
		// one user, one event. The name is what the client sent, quotes
		// and all ("x' authentication ... Succeeded"): the outcome and the
		// source are those IOS writes after it, so this rule comes before
		// the login's and reads the name up to the last of them.
		{name: "cisco_ssh2_userauth_failed", needs: "SSH2_USERAUTH", patterns: []*regexp.Regexp{re(`SSH2_USERAUTH: User '(?P<user>(?s:.+))' authentication for SSH2 Session from (?P<source>` + ipish + `) \(tty = \d+\) using crypto cipher '[^']*', hmac '[^']*' Failed`)},
			event: "login_failed", examples: []example{
				{"%SSH-5-SSH2_USERAUTH: User 'admin' authentication for SSH2 Session from 172.16.0.22 (tty = 1) using crypto cipher 'aes256-cbc', hmac 'hmac-sha1' Failed", "login_failed", map[string]string{"user": "admin", "source": "172.16.0.22"}},
			}},
		// With "ip ssh logging events": SSH2_USERAUTH, nocproject/noc
		// .../Cisco/IOS/Security/Authentication/SSH_-_Login_SYSLOG_.json (a
		// device's line). "User ''" is no login; "Failed" is the rule before.
		{name: "cisco_ssh2_userauth", needs: "SSH2_USERAUTH", patterns: []*regexp.Regexp{re(`SSH2_USERAUTH: User '(?P<user>[^']+)' authentication for SSH2 Session from (?P<source>` + ipish + `) \(tty = \d+\) using crypto cipher '[^']*', hmac '[^']*' Succeeded`)},
			event: "login_succeeded", examples: []example{
				{"%SSH-5-SSH2_USERAUTH: User 'admin' authentication for SSH2 Session from 172.16.0.22 (tty = 1) using crypto cipher 'aes256-cbc', hmac 'hmac-sha1' Succeeded", "login_succeeded", map[string]string{"user": "admin", "source": "172.16.0.22"}},
			}},
		{name: "iosxr_login", needs: "AUTHEN_SUCCESS", patterns: []*regexp.Regexp{re(`AUTHEN_SUCCESS ?: Successfully authenticated user '(?P<user>[^']+)' from '(?P<source>[^']*)'`)},
			event: "login_succeeded", examples: []example{
				{"%SECURITY-LOGIN-6-AUTHEN_SUCCESS : Successfully authenticated user 'netops' from '10.34.195.36' on 'vty0'", "login_succeeded", map[string]string{"user": "netops", "source": "10.34.195.36"}},
			}},
		// OpenNMS/opennms's Cisco syslog alarm test (a router's line: the
		// user name is what was typed at the prompt, a command, quotes and
		// all: the source is the last one).
		{name: "iosxr_login_failed", needs: "AUTHEN_FAILED", patterns: []*regexp.Regexp{re(`AUTHEN_FAILED ?: Failed authentication attempt by user '(?P<user>(?s:.*))' from '(?P<source>[^']*)'`)},
			event: "login_failed", examples: []example{
				{"%SECURITY-login-4-AUTHEN_FAILED: Failed authentication attempt by user 'sh int des | in univ' from '10.0.1.1' on 'vty4'", "login_failed", map[string]string{"user": "sh int des | in univ", "source": "10.0.1.1"}},
			}},
		{name: "junos_login", needs: "UI_LOGIN_EVENT", patterns: []*regexp.Regexp{re(`UI_LOGIN_EVENT:? User '(?P<user>[^']+)' login, class '[^']*'(?: \[\d+\])?(?:, ssh-connection '(?P<source>` + ipish + `) )?`)},
			event: "login_succeeded", examples: []example{
				{"UI_LOGIN_EVENT: User 'netops' login, class 'j-super-user' [13117], ssh-connection '10.34.195.36 51234 10.0.0.1 22', client-mode 'cli'", "login_succeeded", map[string]string{"user": "netops", "source": "10.34.195.36"}},
				{"UI_LOGIN_EVENT: User 'root' login, class 'super-user' [2211], ssh-connection '', client-mode 'cli'", "login_succeeded", map[string]string{"user": "root"}},
			}},
		// Junos login(1): "LOGIN_INFORMATION: User X logged in from host A
		// on device ttyp0" (the generic rule would miss the address).
		{name: "junos_login_information", needs: "LOGIN_INFORMATION", patterns: []*regexp.Regexp{re(`LOGIN_INFORMATION:? User (?P<user>\S+) logged in from host (?P<source>` + ipish + `)`)},
			event: "login_succeeded", examples: []example{
				{"LOGIN_INFORMATION: User netops logged in from host 10.0.0.1 on device ttyp0", "login_succeeded", map[string]string{"user": "netops", "source": "10.0.0.1"}},
			}},
		// Junos sshd's own tag beside OpenSSH's "Failed password" line of
		// the same attempt (one user, one event): an MX960's log in a
		// public support write-up (SR-2022-0408-1059). The name is what
		// the client sent, quotes and all: the source is the last one.
		{name: "junos_sshd_login_failed", needs: "SSHD_LOGIN_FAILED", patterns: []*regexp.Regexp{re(`SSHD_LOGIN_FAILED:? Login failed for user '(?P<user>(?s:.*))' from host '(?P<source>` + ipish + `)'`)},
			event: "login_failed", examples: []example{
				{"SSHD_LOGIN_FAILED: Login failed for user 'mpcl' from host '106.51.66.192'", "login_failed", map[string]string{"user": "mpcl", "source": "106.51.66.192"}},
			}},
		// Junos login(1): yamangit/python_projects's Juniper log samples (a
		// router's, the address masked). The host is as the client gave
		// it, a name or an address, after the name typed: the last one.
		{name: "junos_login_failed", needs: "LOGIN_FAILED", patterns: []*regexp.Regexp{re(`\bLOGIN_FAILED:? Login failed for user (?P<user>.*) from host (?:(?P<source>` + ipaddr + `)(?:\s|$)|\S+)`)},
			event: "login_failed", examples: []example{
				{"LOGIN_FAILED: Login failed for user wow from host 45.67.8.9", "login_failed", map[string]string{"user": "wow", "source": "45.67.8.9"}},
			}},
		// Linux-based network OSes (NX-OS, EOS, SONiC, Cumulus) log PAM's
		// session line for SSH and console logins (NX-OS's sshd is
		// dcos_sshd); cron's and sudo's are not logins.
		{name: "pam_session", needs: "session opened for user ", patterns: []*regexp.Regexp{re(`pam_unix\((?:sshd|login|remote|sshd-\w+|dcos_sshd):session\): session opened for user (?P<user>[^\s(]+)`)},
			event: "login_succeeded", examples: []example{
				{"%AUTHPRIV-6-SYSTEM_MSG: pam_unix(sshd:session): session opened for user netops by (uid=0) - sshd[1234]", "login_succeeded", map[string]string{"user": "netops"}},
				{"pam_unix(sshd:session): session opened for user admin(uid=1000) by admin(uid=0)", "login_succeeded", map[string]string{"user": "admin"}},
				// NX-OS's sshd is dcos_sshd.
				{"%AUTHPRIV-6-SYSTEM_MSG: pam_unix(dcos_sshd:session): session opened for user opsbot by (uid=0) - dcos_sshd[20311]", "login_succeeded", map[string]string{"user": "opsbot"}},
			}},
		// PAM's failed authentication for an SSH or console login, which
		// pam_unix writes beside sshd's "Failed password" of the same
		// attempt: a RHEL 7 host's line in elastic/integrations
		// packages/system/data_stream/auth/_dev/test/pipeline/
		// test-secure-rhel7.log, and a server's in DanielleHuisman/
		// observium-community-edition tests/IncludesSyslogTest.php.
		// pam_unix names the user only when the account exists (user= is
		// left out for an unknown one), and such a line is left alone:
		// sshd's own lines of the attempt name the user ("Invalid user X
		// from A", "Failed password for invalid user X"), and an event about
		// the address beside them would make one attempt two events. With
		// user= it names the user sshd's line names: one user, one event.
		// rhost is the address sshd or login(1) gave PAM, or a host name
		// (UseDNS), which is no source; the last " rhost=" is taken, after
		// any ruser. sudo's and su's failures are no logins.
		{name: "pam_auth_failure", needs: "authentication failure; ", patterns: []*regexp.Regexp{re(`pam_unix\((?:sshd|login|remote|sshd-\w+|dcos_sshd):auth\): authentication failure; logname=\S* uid=\d+ euid=\d+ tty=\S* ruser=(?s:.*) rhost=(?:(?P<source>` + ipaddr + `)|\S*)\s+user=(?P<user>\S+)`)},
			event: "login_failed", examples: []example{
				{"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=202.109.143.106  user=root", "login_failed", map[string]string{"user": "root", "source": "202.109.143.106"}},
				{"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=221.194.47.243  user=root", "login_failed", map[string]string{"user": "root", "source": "221.194.47.243"}},
				// A server's under UseDNS (pastebin.com/gkt2bQ2b): a host name is no source.
				{"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=srdevbuild.cchs.com user=applmgr", "login_failed", map[string]string{"user": "applmgr", "source": ""}},
			}},
		{name: "sshd_accepted", needs: "Accepted ", patterns: []*regexp.Regexp{re(`Accepted (?:password|publickey|keyboard-interactive/pam|gssapi-with-mic) for (?:invalid user )?(?P<user>\S+)` + sshdFrom)},
			event: "login_succeeded", examples: []example{
				{"Accepted password for netops from 10.34.195.36 port 51234 ssh2", "login_succeeded", map[string]string{"user": "netops", "source": "10.34.195.36"}},
			}},
		// OpenSSH's failed logins (Linux-based NOSes, Junos, servers). A
		// known user's "Failed publickey" is no failed login: a client
		// offers its keys in turn until one is accepted (fail2ban's sshd
		// test log, gh-1263); "Failed none" is a client asking which
		// methods there are. A host name (UseDNS) is no source. An invalid
		// user's name is what the client sent, spaces and all ("x from A
		// port 1"): the source is the last "from"'s, which sshd writes.
		{name: "sshd_failed", needs: "Failed ", patterns: []*regexp.Regexp{re(`Failed (?:(?:password|keyboard-interactive(?:/pam)?|gssapi-with-mic) for (?:invalid user (?P<user>.*)|(?P<user>\S+))|publickey for invalid user (?P<user>.*))` + sshdFrom)},
			event: "login_failed", examples: []example{
				// nocproject/noc .../Juniper/JUNOS/Security/Authentication/
				// Login_Failed_1_SYSLOG_.json (a device's line).
				{"Failed password for andy from 213.42.62.191 port 56871 ssh2", "login_failed", map[string]string{"user": "andy", "source": "213.42.62.191"}},
				// wazuh/wazuh ruleset/testing/tests/sshd.ini.
				{"Failed keyboard-interactive/pam for invalid user warez from 192.241.237.101 port 54197 ssh2", "login_failed", map[string]string{"user": "warez", "source": "192.241.237.101"}},
				// fail2ban/fail2ban fail2ban/tests/files/logs/sshd.
				{"Failed publickey for invalid user graysky from 127.0.0.1 port 37954 ssh2: RSA SHA256:v3dpapGleDaUKf$4V1vKyR9ZyUgjaJAmoCTcb2PLljI", "login_failed", map[string]string{"user": "graysky", "source": "127.0.0.1"}},
				{"Failed password for invalid user ROOT from aaaa:bbbb:cccc:1234::1:1 port 50273 ssh2", "login_failed", map[string]string{"user": "ROOT", "source": "aaaa:bbbb:cccc:1234::1:1"}},
			}},
		// sshd names a user that does not exist before the attempt's
		// Failed line (or alone, when the client gives up): the same user,
		// so one event within the de-duplication window. elastic/integrations
		// packages/system/data_stream/auth/_dev/test/pipeline/test-auth.log,
		// fail2ban's sshd test log.
		{name: "sshd_invalid_user", needs: "Invalid user ", patterns: []*regexp.Regexp{re(`\bInvalid user (?P<user>.*)` + sshdFrom)},
			event: "login_failed", examples: []example{
				{"Invalid user test from 10.0.2.2", "login_failed", map[string]string{"user": "test", "source": "10.0.2.2"}},
				{"Invalid user ftp from 192.0.2.2 port 37220", "login_failed", map[string]string{"user": "ftp", "source": "192.0.2.2"}},
			}},
		// OpenSSH's PAM error for a failed password (auth-pam.c: "PAM: %s
		// for %s%.100s from %.100s", "illegal user " before a name that
		// is no account, and the client's address, never a host name).
		// Linux hosts write it beside the attempt's "Failed password" line,
		// which names the same user (one event); NX-OS writes it, with
		// " - sshd[N]" or " - dcos_sshd[N]" after it, where no Failed line
		// comes (a Nexus in Packt's Mastering Python Networking sample
		// log). An illegal user's name is what the client sent: the source
		// is the last "from"'s.
		{name: "sshd_pam_failure", needs: "PAM: Authentication failure for ", patterns: []*regexp.Regexp{re(`PAM: Authentication failure for (?:illegal user (?P<user>.*)|(?P<user>\S+))` + sshdFrom)},
			event: "login_failed", examples: []example{
				{"error: PAM: Authentication failure for root from 10.2.2.3", "login_failed", map[string]string{"user": "root", "source": "10.2.2.3"}},
				{"%DAEMON-3-SYSTEM_MSG: error: PAM: Authentication failure for illegal user AAA from 172.16.20.170 - sshd[4425]", "login_failed", map[string]string{"user": "AAA", "source": "172.16.20.170"}},
			}},
		// NX-OS's AAA PAM module (MDS and Nexus; remote AAA or local),
		// for SSH and console logins: "pam_aaa:Authentication failed from
		// A - sshd[N]" (a SAN switch's show logging, where it is the only
		// line of the attempt: no sshd error follows it there), or "for
		// user U from A". Naming no user, it is about the address, or the
		// console, as IOS's LOGIN_FAILED naming none is.
		{name: "nxos_pam_aaa_failed", needs: "pam_aaa:", patterns: []*regexp.Regexp{re(`pam_aaa: ?Authentication failed (?:for user (?P<user>\S+) from (?:(?P<source>` + ipaddr + `)(?:\s|$)|\S+)|from (?:(?P<source>` + ipaddr + `)(?:\s|$)|(?P<source>console)\b))`)},
			event: "login_failed", examples: []example{
				{"%AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed from 172.18.8.191 - sshd[21938]", "login_failed", map[string]string{"user": "", "source": "172.18.8.191"}},
				{"%AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed from console - login", "login_failed", map[string]string{"user": "", "source": "console"}},
				{"%AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed for user admin from 10.1.1.1 - dcos_sshd[14361]", "login_failed", map[string]string{"user": "admin", "source": "10.1.1.1"}},
			}},
		// VRP5's configuration change trap, HWCM/5/TRAPLOG (HUAWEI-CONFIG-
		// MAN-MIB's hwCfgManEventlog), names no user: nocproject/noc
		// .../Huawei/VRP/Config/Config_Changed_SYSLOG_.json, from a device.
		// Its data are the MIB's, runningData(2), commandSource(3),
		// startupData(4): only a running configuration written to is
		// changed; that line, running to startup, is a save, which changes
		// nothing running (as ciscoConfigManEvent's does not).
		{name: "huawei_config_trap", vendor: VendorHuawei, needs: "configure changed", patterns: []*regexp.Regexp{re(`HWCM/\d/TRAPLOG\b.*?\bconfigure changed\..*?\bConfigDestination=2\b`)},
			event: "config_changed", examples: []example{
				{"%%01HWCM/5/TRAPLOG(l)[501]:OID 1.3.6.1.4.1.2011.6.10.2.1 configure changed. (EventIndex=17, CommandSource=1, ConfigSource=3, ConfigDestination=2)", "config_changed", nil},
			}},
		// VRP8 logs each change of the running configuration, from any
		// terminal (CLI, SNMP, NETCONF), as CONFIGURATION/6/
		// NETCONF_CONFIG_CHANGE_EVENT with the user and the address (Huawei
		// NetEngine 8000 log reference). An internal change (a board
		// loading) is no one's; a change of the candidate (Storage type 2)
		// or of the startup file (3) changes nothing running.
		{name: "huawei_config_change", vendor: VendorHuawei, needs: "NETCONF_CONFIG_CHANGE_EVENT", patterns: []*regexp.Regexp{re(`CONFIGURATION/\d/NETCONF_CONFIG_CHANGE_EVENT\b.*?\(Internal change =0, User name =(?P<user>[^,\s]*), Session ID =\d*, Command source address =(?:(?P<source>` + ipish + `)|[^,]*), Storage type =1,`)},
			event: "config_changed", examples: []example{
				{"CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT:The configuration changed. (Internal change =0, User name =netops, Session ID =23, Command source address =10.1.0.5, Storage type =1, Terminal type =0)", "config_changed", map[string]string{"user": "netops", "source": "10.1.0.5"}},
			}},
		{name: "huawei_login", vendor: VendorHuawei, needs: "SSH_USER_LOGIN", patterns: []*regexp.Regexp{re(`SSH_USER_LOGIN(?:\(\w\))?(?:\[\d+\])?:.*?UserName=(?P<user>[^,)\s]+)(?:, (?:IPAddress|UserAddress)=(?P<source>` + ipish + `))?`)},
			event: "login_succeeded", examples: []example{
				{"SSH/5/SSH_USER_LOGIN(l)[3]:The SSH user succeeded in logging in. (ServiceType=stelnet, UserName=admin, IPAddress=10.1.1.100, VPNInstanceName=_public_)", "login_succeeded", map[string]string{"user": "admin", "source": "10.1.1.100"}},
				// VRP8 (NetEngine 8000 log reference): the client's address is UserAddress.
				{"SSH/5/SSH_USER_LOGIN:The SSH user succeeded in logging in. (ServiceType=stelnet, UserName=admin, UserAddress=10.1.0.5, LocalAddress=10.1.0.1, VPNInstanceName=_public_)", "login_succeeded", map[string]string{"user": "admin", "source": "10.1.0.5"}},
			}},
		// VRP8's failed SSH login, SSH/5/SSH_USER_LOGIN_FAIL: the example
		// line of Huawei's CloudEngine CE6800 V300R023C00 command reference,
		// info-center loghost domain (WheaterW/INTA-project nassim-main/
		// corpus/hw/hw_CE6800_V300R023C00/cmd_corpus/References/
		// Command_Reference/Command_Reference/System_Management/
		// Information_Management_Configuration_Commands/
		// info-center_loghost_domain.md). The NetEngine 8000 log reference
		// names the client's address UserAddress, as for SSH_USER_LOGIN.
		// The name is what the client sent, commas and all: the address is
		// the last one, which VRP writes after it.
		{name: "huawei_ssh_user_login_fail", vendor: VendorHuawei, needs: "SSH_USER_LOGIN_FAIL", patterns: []*regexp.Regexp{re(`SSH/\d/SSH_USER_LOGIN_FAIL(?:\(\w\))?(?:\[\d+\])?:.*?The SSH user failed to login\. \(.*?UserName=(?P<user>(?s:.*)), (?:IPAddress|UserAddress)=(?:(?P<source>` + ipish + `)|[^,]*)(?:, LocalAddress=[^,]*)?, VPNInstanceName=`)},
			event: "login_failed", examples: []example{
				{"May 15 2016 21:48:33 223.171 %%01SSH/5/SSH_USER_LOGIN_FAIL(s):CID=0x80932723; The SSH user failed to login. (ServiceType=**, FailedReason=Client requested disconnection, UserName=u2000test, IPAddress=22.22.23.23, VPNInstanceName=_public_.)", "login_failed", map[string]string{"user": "u2000test", "source": "22.22.23.23"}},
			}},
		// VRP5's failed SSH and telnet logins, the telnet one in two
		// wordings: nocproject/noc .../Huawei/VRP/Security/Authentication/
		// Login_Failed_{1,2,3,4}_SYSLOG_.json (devices' lines).
		{name: "huawei_ssh_login_failed", vendor: VendorHuawei, needs: "SSH_FAIL", patterns: []*regexp.Regexp{re(`SSH/\d/SSH_FAIL(?:\(\w\))?(?:\[\d+\])?:\s*Failed to login through SSH\. \(IP=(?P<source>` + ipish + `), UserName=(?P<user>[^,)\s]*)`)},
			event: "login_failed", examples: []example{
				{"%%01SSH/4/SSH_FAIL(l)[47]:Failed to login through SSH. (IP=172.25.127.55, UserName=qqq, Times=3, FailedReason=User authentication failed)", "login_failed", map[string]string{"user": "qqq", "source": "172.25.127.55"}},
				{"%%01SSH/4/SSH_FAIL(l)[47]:Failed to login through SSH. (IP=172.25.127.55, UserName=qqq, Times=3, FailedReason=User public key authentication failed)", "login_failed", map[string]string{"user": "qqq", "source": "172.25.127.55"}},
			}},
		{name: "huawei_telnet_login_failed", vendor: VendorHuawei, needs: "TELNETFAILED", patterns: []*regexp.Regexp{re(`SHELL/\d/TELNETFAILED(?:\(\w\))?(?:\[\d+\])?:\s*(?:Failed to login through telnet\. \([Ii][Pp]=(?P<source>` + ipaddr + `), UserName=(?P<user>[^,)\s]*)|Login through telnet failed\( ?ip=(?P<source>` + ipaddr + `))`)},
			event: "login_failed", examples: []example{
				{"Feb  3 2012 09:30:30 switch-test %%01SHELL/4/TELNETFAILED(l)[419]:Failed to login through telnet. (Ip=192.168.220.252, UserName=test, Times=1)", "login_failed", map[string]string{"user": "test", "source": "192.168.220.252"}},
				{"Aug  2 2012 12:08:01 od-agg-3-vilyamsa73d1 %%01SHELL/4/TELNETFAILED(l): Login through telnet failed( ip=212.40.34.7 times=3).", "login_failed", map[string]string{"user": "", "source": "212.40.34.7"}},
			}},
		// SHELL/5/LOGIN and LINE/5/VTYUSERLOGIN: nocproject/noc
		// .../Huawei/VRP/Security/Authentication/Login_{2,3}_SYSLOG_.json.
		// "VTY login from A" (Login_1_SYSLOG_.json) names the line, not a
		// user: the login, with no user.
		{name: "huawei_shell_login", vendor: VendorHuawei, needs: " login from ", patterns: []*regexp.Regexp{re(`SHELL/\d/LOGIN(?:\(\w\))?(?:\[\d+\])?:\s*(?:(?:VTY|TTY|AUX|CON)\d*|(?P<user>[^\s(]+)) login from (?P<source>` + ipaddr + `)`)},
			event: "login_succeeded", examples: []example{
				{"Jul 20 2012 11:37:29 od-agg-1-dobrovolskogo126 %%01SHELL/5/LOGIN(l):  amt login from 212.40.34.7.", "login_succeeded", map[string]string{"user": "amt", "source": "212.40.34.7"}},
				{"Feb  3 2012 05:46:46 switch-test %%01SHELL/5/LOGIN(l)[410]:VTY login from 192.168.220.252.", "login_succeeded", map[string]string{"user": "", "source": "192.168.220.252"}},
			}},
		{name: "huawei_vty_login", vendor: VendorHuawei, needs: "VTYUSERLOGIN", patterns: []*regexp.Regexp{re(`VTYUSERLOGIN:.*?A user login\. \(.*?UserName=(?P<user>[^,)\s]+)(?:, UserIP=(?P<source>` + ipish + `))?`)},
			event: "login_succeeded", examples: []example{
				{"LINE/5/VTYUSERLOGIN:OID 1.3.6.1.4.1.2011.5.25.207.2.2 A user login. (UserIndex=34, UserName=qqq, UserIP=172.25.127.37, UserChannel=VTY0)", "login_succeeded", map[string]string{"user": "qqq", "source": "172.25.127.37"}},
			}},
		{name: "nokia_login", vendor: VendorNokia, needs: "_user_login-", patterns: []*regexp.Regexp{re(`(?:cli|ssh|ftp|netconf)_user_login-\d+ \[[^\]]*\]:\s+User (?P<user>\S+) from (?:(?P<source>` + ipaddr + `)|\S+)`)},
			event: "login_succeeded", examples: []example{
				{"USER-MINOR-cli_user_login-2001 [admin]: User admin from 192.0.2.10 cli login", "login_succeeded", map[string]string{"user": "admin", "source": "192.0.2.10"}},
				{"USER-MINOR-cli_user_login-2001 [admin]: User admin from Console cli login", "login_succeeded", map[string]string{"user": "admin", "source": ""}},
				// MD-CLI releases: two spaces after the subject, "logged in".
				{"4410 management SECURITY-MINOR-ssh_user_login-2009 [noc-ro]:  User noc-ro from 10.66.1.4 logged in", "login_succeeded", map[string]string{"user": "noc-ro", "source": "10.66.1.4"}},
				// NETCONF sessions (a router's syslog capture in nokia/SReXperts
				// docs/nos/sros/beginner/57-SROS_remote_logging_with_Syslog_and_Loki.md);
				// its USER-MINOR-netconf_user_login-2018 twin, "Netconf user from
				// A logged in", names no user and is left alone.
				{"5047 management SECURITY-MINOR-netconf_user_login-2121 [admin]:  User admin from 192.168.6.102 logged in", "login_succeeded", map[string]string{"user": "admin", "source": "192.168.6.102"}},
			}},
		// SR OS: a commit to the configure datastore, SYSTEM event 2121
		// (mdCommitSucceeded), "Commit to configure by USER (CLIENT) from
		// ADDRESS succeeded." by its text, whatever the log's layout. The
		// lines: nokia/SReXperts docs/nos/sros/intermediate/
		// 56-SR_OS_Triggering_backups.md (a router's memory log, its two
		// lines joined); an EHS script's commit names no user and no
		// address, only "Cron/EHS" (other public SR OS lab logs, EHS runs).
		{name: "nokia_commit", vendor: VendorNokia, needs: "Commit to configure by ", patterns: []*regexp.Regexp{re(`\bCommit to configure by (?P<user>[^\s()]*) \((?P<agent>[^)]*)\) from (?P<source>\S+?) succeeded\b`)},
			event: "config_changed", examples: []example{
				{`52430 2026/05/06 16:04:40.962 UTC WARNING: SYSTEM #2121 Base Commit "Commit to configure by admin (MD-CLI) from 10.128.1.1 succeeded."`, "config_changed", map[string]string{"user": "admin", "agent": "MD-CLI", "source": "10.128.1.1"}},
				{`7 2025/04/01 12:47:58.070 UTC WARNING: SYSTEM #2121 Base Commit "Commit to configure by  (Cron/EHS) from Cron/EHS succeeded."`, "config_changed", map[string]string{"user": "", "agent": "Cron/EHS", "source": "Cron/EHS"}},
			}},
		{name: "extreme_login", vendor: VendorExtreme, needs: "Login passed for user ", patterns: []*regexp.Regexp{re(`Login passed for user (?P<user>\S+) through \w+ \((?P<source>` + ipish + `)\)`)},
			event: "login_succeeded", examples: []example{
				{"<Info:AAA.authPass> Login passed for user admin through ssh (10.0.0.5)", "login_succeeded", map[string]string{"user": "admin", "source": "10.0.0.5"}},
			}},
		// VOSS (VSP): "GlobalRouter SSH INFO SSH user authentication
		// succeeded for user X on host A" (Extreme's VOSS User Guide, User
		// ID Logs, a switch's lines).
		{name: "voss_ssh_login", vendor: VendorExtremeVOSS, needs: "SSH user authentication succeeded for user ", patterns: []*regexp.Regexp{re(`\bSSH user authentication succeeded for user (?P<user>\S+) on host (?P<source>` + ipaddr + `)`)},
			event: "login_succeeded", examples: []example{
				{"CP1 [08/06/15 09:43:42.230:UTC] 0x000d8602 00000000 GlobalRouter SSH INFO SSH user authentication succeeded for user rwa on host 10.68.231.194", "login_succeeded", map[string]string{"user": "rwa", "source": "10.68.231.194"}},
			}},
		// AOS-CX's failed logins: event 4656, a REST session's (an 8360's log
		// in elastic/integrations packages/hpe_aruba_cx/_dev/deploy/docker/
		// sample_logs/8360.log), and event 5210, an SSH session's (a
		// switch's line in a public Python "Log Analyzer" project's README,
		// whose repository the index does not name). The name is what the
		// client sent, spaces and all: the address is the last " login from
		// A for ... session", which the switch writes after it. Before the
		// login's rule: a failed attempt's name may read "x logged in from
		// A through SSH session.", and a failure is no login.
		{name: "aoscx_login_failed", vendor: VendorArubaCX, needs: " login from ", patterns: []*regexp.Regexp{re(`Event\|\d+\|LOG_\w+\|[^|]*\|[^|]*\|User (?P<user>(?s:.*)) login from (?P<source>` + ipaddr + `) for \w+ session (?:has )?failed\b`)},
			event: "login_failed", examples: []example{
				{"Event|4656|LOG_ERR|AMM|-|User satori login from 10.14.16.13 for REST session has failed", "login_failed", map[string]string{"user": "satori", "source": "10.14.16.13"}},
				{"Event|5210|LOG_ERR|CDTR|1|User cibadmin login from 10.30.1.43 for SSH session failed during password based authentication.", "login_failed", map[string]string{"user": "cibadmin", "source": "10.30.1.43"}},
			}},
		// AOS-CX: DanielleHuisman/observium-community-edition
		// tests/IncludesSyslogTest.php (event 5209). The user is as logged.
		{name: "aoscx_login", vendor: VendorArubaCX, needs: " logged in from ", patterns: []*regexp.Regexp{re(`Event\|\d+\|LOG_\w+\|[^|]*\|[^|]*\|User (?P<user>\S+) logged in from (?P<source>` + ipaddr + `)`)},
			event: "login_succeeded", examples: []example{
				{"Event|5209|LOG_INFO|AMM|1/5|User !raabc logged in from 10.30.2.245 through SSH session.", "login_succeeded", map[string]string{"user": "!raabc", "source": "10.30.2.245"}},
			}},
		// RouterOS logs each configuration change under "system,info":
		// "<what> added by admin", and in RouterOS 7 with the tool and the
		// address: "... changed by winbox-3.41/tcp-msg(winbox):admin@A".
		{name: "mikrotik_config", vendor: VendorMikroTik, needs: "system,info ", patterns: []*regexp.Regexp{re(`^system,info (?:[\w/ .-]+ )?(?:added|changed|removed|moved) by (?:[\w./-]+(?:\([\w-]+\))?:)?(?P<user>[^\s@:()]+)(?:@(?P<source>` + ipaddr + `))?`)},
			event: "config_changed", examples: []example{
				{"system,info filter rule added by netadmin", "config_changed", map[string]string{"user": "netadmin"}},
				{"system,info address changed by winbox-3.41/tcp-msg(winbox):netadmin@10.20.0.9 (/ip address set *3 disabled=yes)", "config_changed", map[string]string{"user": "netadmin", "source": "10.20.0.9"}},
			}},
		// RouterOS 7 with bsd-syslog sends no topics: "device changed by
		// winbox-3.42/tcp-msg(winbox):admin@A (/interface set ...)"
		// (akpw/mktxp-stack#33, from a router). The tool and "user@address"
		// tell a RouterOS change from any "X changed by Y".
		{name: "mikrotik_config_tool", vendor: VendorMikroTik, needs: "ed by ", patterns: []*regexp.Regexp{re(`^(?:[\w/ .-]+ )?(?:added|changed|removed|moved) by [\w.-]+(?:/[\w.-]+)*(?:\([\w-]+\))?:(?P<user>[^\s@:()]+)@(?P<source>` + ipaddr + `)`)},
			event: "config_changed", examples: []example{
				{"device changed by winbox-3.42/tcp-msg(winbox):admin@192.168.100.50 (/interface set ether3 disabled=no l2mtu=1598 mtu=1500 name=ether3)", "config_changed", map[string]string{"user": "admin", "source": "192.168.100.50"}},
			}},
		// ArubaOS-Switch (ProCurve) names no user for an SSH or telnet
		// session, only the address and the privilege level.
		{name: "aruba_switch_mgr_login", vendor: VendorArubaSwitch, needs: "SME ", patterns: []*regexp.Regexp{re(`\bmgr: +SME (?:SSH|TELNET) from (?P<source>` + ipaddr + `) - (?:MANAGER|OPERATOR) Mode`)},
			event: "login_succeeded", examples: []example{
				{"00179 mgr:  SME SSH from 10.31.4.22 - MANAGER Mode", "login_succeeded", map[string]string{"source": "10.31.4.22"}},
			}},
		// Logid 0100032001: FortiOS 6 and later write the client as srcip,
		// as for a failed login (the FortiOS log reference's example).
		{name: "fortinet_admin_login", needs: "action=",
			pairs: map[string]string{"action": "login", "status": "success"}, pairFields: map[string]string{"user": "user", "source": "srcip"},
			event: "login_succeeded", examples: []example{
				{`date=2026-11-29 time=14:09:10 devname="fw1" logid="0100032001" type="event" subtype="system" user="admin" ui="ssh(10.0.0.5)" action="login" status="success"`, "login_succeeded", map[string]string{"user": "admin"}},
				{`date=2019-05-13 time=11:20:54 logid="0100032001" type="event" subtype="system" level="information" vd="vdom1" eventtime=1557771654587081441 logdesc="Admin login successful" sn="1557771654" user="admin" ui="ssh(172.16.200.254)" method="ssh" srcip=172.16.200.254 dstip=172.16.200.2 action="login" status="success" reason="none" profile="super_admin" msg="Administrator admin logged in successfully from ssh(172.16.200.254)"`, "login_succeeded", map[string]string{"user": "admin", "source": "172.16.200.254"}},
			}},
		// Logid 0100032002: wazuh/wazuh ruleset/testing/tests/fortigate.ini (a
		// firewall's; no srcip before FortiOS 6) and the log FortiOS's
		// automation stitch guide quotes.
		{name: "fortinet_admin_login_failed", needs: "action=",
			pairs: map[string]string{"action": "login", "status": "failed"}, pairFields: map[string]string{"user": "user", "source": "srcip"},
			event: "login_failed", examples: []example{
				{`date=2016-06-17 time=02:37:41 devname=Mobipay_Firewall devid=FGTXXXX9999999999 logid=0100032002 type=event subtype=system level=alert vd="root" logdesc="Admin login failed" sn=0 user="root" ui=ssh(222.186.130.227) action=login status=failed reason="name_invalid" msg="Administrator root login failed from ssh(222.186.130.227) because of invalid user name"`, "login_failed", map[string]string{"user": "root"}},
				{`date=2025-02-06 time=18:32:21 devid="FGVM04TM2400xxxx" devname="FGDocs" eventtime=1738895541338331122 tz="-0800" logid="0100032002" type="event" subtype="system" level="alert" vd="root" logdesc="Admin login failed" sn="0" user="abc" ui="https(192.168.2.204)" method="https" srcip=192.168.2.204 dstip=192.168.2.87 action="login" status="failed" reason="passwd_invalid" msg="Administrator abc login failed from https(192.168.2.204) because of invalid password"`, "login_failed", map[string]string{"user": "abc", "source": "192.168.2.204"}},
			}},
		// FortiOS logs each configuration change (LOGID_EVENT_CONFIG_PATH,
		// _OBJ, _ATTR, _OBJATTR and their by-maintainer forms, log IDs
		// 44544-44550) with a config transaction id, cfgtid, that no other
		// log has; the user is the administrator. The examples: a device's
		// line (a public script's) and CVE-2024-55591's published IOC.
		{name: "fortinet_config", vendor: VendorFortinet, needs: "cfgtid=", patterns: []*regexp.Regexp{re(`(?:\buser="(?P<user>[^"]*)".*?)?\bcfgtid=\d+`)},
			event: "config_changed", examples: []example{
				{`date=2025-05-09 time=10:08:39 eventtime=1746796118774022660 tz="-0300" logid="0100044547" type="event" subtype="system" level="information" logdesc="Object attribute configured" user="ADM-Adriano" ui="fgfm_tunnel" action="Delete" cfgtid=1037172738 cfgpath="user.radius" cfgobj="RADIUS-SICOOB" msg="Delete user.radius RADIUS-SICOOB"`, "config_changed", map[string]string{"user": "ADM-Adriano"}},
				{`type="event" subtype="system" level="information" vd="root" logdesc="Object attribute configured" user="admin" ui="jsconsole(127.0.0.1)" action="Add" cfgtid=1411317760 cfgpath="system.admin" cfgobj="vOcep" cfgattr="password[*]accprofile[super_admin]vdom[root]" msg="Add system.admin vOcep"`, "config_changed", map[string]string{"user": "admin"}},
			}},
		// --- HPE Comware and H3C: the Comware 7 system log message
		// references' BGP_STATE_CHANGED, OSPF_NBR_CHG, SHELL_LOGIN and
		// CFGMAN_CFGCHANGED; Comware 5's BGP under RM/3/RMLOG (HP Comware
		// 5 debug manual). A "-Key=value;" location may come first. ---
		// "BGP.<VPN instance>: peer state has changed from A to B", the
		// instance empty for the public network.
		{name: "comware_bgp", vendor: VendorComware, needs: "BGP.", patterns: []*regexp.Regexp{re(`(?:BGP/\d/BGP_STATE_CHANGED|RM/\d/RMLOG)\b[^:]*:.*?\bBGP\.(?P<vrf>[^:\s]*):\s*(?P<neighbor>` + ipish + `)\s+(?:state has|State is) changed from (?P<old>\w+) to (?P<new>\w+)`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{"%%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from OPENCONFIRM to ESTABLISHED.", "bgp_peer_up", map[string]string{"neighbor": "3.3.3.2", "vrf": ""}},
				{"%%10BGP/5/BGP_STATE_CHANGED: BGP.vpn1: 192.99.0.2 state has changed from ESTABLISHED to IDLE.", "bgp_peer_down", map[string]string{"neighbor": "192.99.0.2", "vrf": "vpn1"}},
				{"%%10RM/3/RMLOG(l): BGP.: 10.1.1.2 State is changed from OPENCONFIRM to ESTABLISHED.", "bgp_peer_up", map[string]string{"neighbor": "10.1.1.2"}},
			}},
		// "OSPF <process> Neighbor <router ID>(<interface>) changed from A
		// to B"; OSPF_NBR_CHG_REASON, logged beside it, is left alone.
		{name: "comware_ospf", vendor: VendorComware, needs: "OSPF_NBR_CHG", patterns: []*regexp.Regexp{re(`OSPF/\d/OSPF_NBR_CHG\b[^:]*:.*?\bNeighbor (?P<neighbor>` + ipish + `)\((?P<interface>[^)\s]+)\) changed from (?P<old>\w+) to (?P<new>\w+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"%%10OSPF/5/OSPF_NBR_CHG: OSPF 1 Neighbor 2.2.2.2(Vlan-interface100) changed from LOADING to FULL.", "ospf_neighbor_up", map[string]string{"neighbor": "2.2.2.2", "interface": "Vlan-interface100"}},
				{"%%10OSPF/5/OSPF_NBR_CHG: -DevIP=10.251.0.43; OSPF 10 Neighbor 10.244.255.225(Vlan-interface408) changed from FULL to INIT.", "ospf_neighbor_down", map[string]string{"neighbor": "10.244.255.225", "interface": "Vlan-interface408"}},
			}},
		// "<user> logged in from <address or line>."; a line type (VTY,
		// Console...) where a user name would be is no user.
		{name: "comware_login", vendor: VendorComware, needs: " logged in from ", patterns: []*regexp.Regexp{re(`SHELL/\d/SHELL_LOGIN\b[^:]*:\s*(?:-[^;]*;\s*)*(?:(?:VTY|TTY|AUX|Console|CON)\d*|(?P<user>[^\s;(]+)(?:\([^)]*\))?) logged in from (?:(?P<source>` + ipaddr + `)|\S)`)},
			event: "login_succeeded", examples: []example{
				{"%%10SHELL/5/SHELL_LOGIN: admin logged in from 10.0.0.5.", "login_succeeded", map[string]string{"user": "admin", "source": "10.0.0.5"}},
				{"%%10SHELL/5/SHELL_LOGIN: -DevIP=1.1.1.1; -SN=210235A2QYB20C000001; VTY logged in from 192.168.1.26.", "login_succeeded", map[string]string{"user": "", "source": "192.168.1.26"}},
				{"%%10SHELL/5/SHELL_LOGIN: ops@system(@context10) logged in from vty1.", "login_succeeded", map[string]string{"user": "ops@system", "source": ""}},
			}},
		// "<service> user X failed to log in from A on VTY0.": SHELL_LOGINFAIL
		// (an H3C device's line in a public log-parsing script), and Comware
		// 3's LOGINFAIL, "user failed" when no name was given (nocproject/noc
		// .../HP/1910/Security/Authentication/Login_Failed_{1,3}_SYSLOG_.json).
		// The name is what the client sent: the source is the last one.
		{name: "comware_login_failed", vendor: VendorComware, needs: "LOGINFAIL", patterns: []*regexp.Regexp{re(`SHELL/\d/(?:SHELL_)?LOGINFAIL\b[^:]*:\s*(?:-[^;]*;\s*)*\w+ user (?:(?P<user>.*) )?failed to log ?in from (?:(?P<source>` + ipaddr + `)|\S)`)},
			event: "login_failed", examples: []example{
				{"%%10SHELL/5/SHELL_LOGINFAIL(l): -DevIP=101.95.104.218; SSH user admin2 failed to log in from 80.147.210.170 on VTY0..", "login_failed", map[string]string{"user": "admin2", "source": "80.147.210.170"}},
				{"Oct  5 15:05:41 2000 3Com Baseline Switch %%10SHELL/4/LOGINFAIL(l):  TELNET user wret failed to login from 192.168.1.3(c860-efbe-8bad) on VTY0.", "login_failed", map[string]string{"user": "wret", "source": "192.168.1.3"}},
				{"May  6 12:12:34 2000 3com2952 %%10SHELL/4/LOGINFAIL(l):  TELNET user failed to login from 192.168.1.3(c860-0053-8bad) on VTY0.", "login_failed", map[string]string{"user": "", "source": "192.168.1.3"}},
			}},
		// The SSH server's, "SSH user X (IP: A) didn't pass public key (or
		// password) authentication": the same script's H3C line. The name
		// is what the client sent: the source is the last one.
		{name: "comware_ssh_auth_failed", vendor: VendorComware, needs: "SSHS_AUTH_FAIL", patterns: []*regexp.Regexp{re(`SSHS/\d/SSHS_AUTH_FAIL\b[^:]*:\s*(?:-[^;]*;\s*)*SSH user (?P<user>.*) \(IP: (?P<source>` + ipaddr + `)\) didn't pass`)},
			event: "login_failed", examples: []example{
				{"%%10SSHS/6/SSHS_AUTH_FAIL: -DevIP=10.255.249.234; SSH user ubuntu (IP: 81.217.210.119) didn't pass public key authentication for wrong public key.", "login_failed", map[string]string{"user": "ubuntu", "source": "81.217.210.119"}},
			}},
		// Comware 7's LOGIN/5/LOGIN_FAILED, "<name> failed to log in from
		// <address or line>.": an H3C switch's line in shuangyangyu/
		// h3c-tv-agent agent/tests/test_syslog_watcher.py, where a command
		// was typed at the user name prompt, addresses and all; a console
		// attempt's, "from aux0", in a public H3C log-parsing script's
		// samples (an S5130's; the index names no repository). The name is
		// what was typed: the source is the last "failed to log in from".
		{name: "comware_login_failed7", vendor: VendorComware, needs: "LOGIN_FAILED", patterns: []*regexp.Regexp{re(`LOGIN/\d/LOGIN_FAILED\b[^:]*:\s*(?:-[^;]*;\s*)*(?P<user>(?s:.*)) failed to log in from (?:(?P<source>` + ipaddr + `)|\S)`)},
			event: "login_failed", examples: []example{
				{"%%10LOGIN/5/LOGIN_FAILED: -DevIP=192.168.1.254; rule 15 deny ip source 192.168.1.24 0 destination any failed to log in from 192.168.5.182.", "login_failed", map[string]string{"user": "rule 15 deny ip source 192.168.1.24 0 destination any", "source": "192.168.5.182"}},
				{"Dec 17 16:49:54 2019 sw %%10LOGIN/5/LOGIN_FAILED: a failed to log in from aux0.", "login_failed", map[string]string{"user": "a", "source": ""}},
			}},
		// hh3cCfgManEventlog's data, as VRP5's: a save (running to
		// startup, ConfigDestination=4) changes nothing running.
		{name: "comware_config", vendor: VendorComware, needs: "CFGMAN_CFGCHANGED", patterns: []*regexp.Regexp{re(`CFGMAN/\d/CFGMAN_CFGCHANGED\b.*?-ConfigDestination=2\b`)},
			event: "config_changed", examples: []example{
				{"%%10CFGMAN/5/CFGMAN_CFGCHANGED: -EventIndex=12-CommandSource=2-ConfigSource=4-ConfigDestination=2; Configuration is changed.", "config_changed", nil},
			}},
		// RouterOS: "system,info,account user X logged in from A via ssh"
		// (nocproject/noc .../MikroTik/RouterOS/Security/Authentication/
		// Login_SYSLOG_.json), the topics left out under bsd-syslog. The
		// services after "via" are RouterOS's; another system's line stays
		// generic.
		{name: "mikrotik_login", vendor: VendorMikroTik, needs: " logged in from ", patterns: []*regexp.Regexp{re(`^(?:[a-z]+(?:,[a-z]+)+ )?user (?P<user>\S+) logged in from (?P<source>` + ipaddr + `) via (?:ssh|telnet|winbox|ftp|api|api-ssl|web|www|www-ssl|dude|romon)$`)},
			event: "login_succeeded", examples: []example{
				{"system,info,account user mitya logged in from 193.34.20.2 via ssh", "login_succeeded", map[string]string{"user": "mitya", "source": "193.34.20.2"}},
				{"user admin logged in from 10.0.0.9 via winbox", "login_succeeded", map[string]string{"user": "admin", "source": "10.0.0.9"}},
			}},
		// "system,error,critical login failure for user X from A via telnet"
		// (the RouterOS manual's Command Line Interface page: the critical
		// messages a login shows); nocproject/noc .../MikroTik/RouterOS/
		// Security/Authentication/Login_Failed_SYSLOG_.json has the last
		// topic alone. The name is what the client sent: the source is the
		// last one.
		{name: "mikrotik_login_failed", vendor: VendorMikroTik, needs: "login failure for user ", patterns: []*regexp.Regexp{re(`^(?:[a-z]+(?:,[a-z]+)* )?login failure for user (?P<user>.*) from (?P<source>` + ipaddr + `) via (?:ssh|telnet|winbox|ftp|api|api-ssl|web|www|www-ssl|dude|romon)$`)},
			event: "login_failed", examples: []example{
				{"system,error,critical login failure for user root from 10.0.0.1 via telnet", "login_failed", map[string]string{"user": "root", "source": "10.0.0.1"}},
				{"critical login failure for user root from 217.119.114.126 via ssh", "login_failed", map[string]string{"user": "root", "source": "217.119.114.126"}},
			}},
		// PAN-OS: an administrator's login, a SYSTEM log of subtype general
		// (apache/metron's BasicPaloAltoFirewallParserTest, a firewall's).
		{name: "paloalto_login", vendor: VendorPaloAlto, needs: " logged in via ", patterns: []*regexp.Regexp{re(`,SYSTEM,general,.*?,"?User (?P<user>[^\s",]+) logged in via \w+ from (?P<source>` + ipaddr + `)`)},
			event: "login_succeeded", examples: []example{
				{"1,2016/03/25 00:00:56,003002112674,SYSTEM,general,0,2016/03/25 00:00:56,,general,,0,0,general,informational,User HarryPotter logged in via Web from 10.255.255.255 using http,156324,0x0,0,0,0,0,,SUNKUPAN1", "login_succeeded", map[string]string{"user": "HarryPotter", "source": "10.255.255.255"}},
			}},
		// PAN-OS: a SYSTEM log of subtype auth, event auth-fail (syslog-ng's
		// PAN-OS parser test and documentation). The source is the last
		// "From:" of the message: of the CSV field, quoted when it has a
		// comma (a name's, or newer releases' auth profile and vsys).
		{name: "paloalto_login_failed", vendor: VendorPaloAlto, needs: "failed authentication for user ", patterns: []*regexp.Regexp{re(`,SYSTEM,auth,.*?,(?:"failed authentication for user '(?P<user>[^']*)'\.(?:(?:[^"]|"")* From: (?P<source>` + ipaddr + `))?|failed authentication for user '(?P<user>[^']*)'\.(?:[^,]* From: (?P<source>` + ipaddr + `))?)`)},
			event: "login_failed", examples: []example{
				{"1,2020/04/14 16:48:54,unknown,SYSTEM,auth,0,2020/04/14 16:48:54,,auth-fail,,0,0,general,medium,failed authentication for user 'admin'. Reason: Invalid username/password. From: 10.0.10.55.,1718,0x0,0,0,0,0,,paloalto", "login_failed", map[string]string{"user": "admin", "source": "10.0.10.55"}},
			}},
		// FRRouting's bgpd and ospfd (SONiC, Cumulus Linux, VyOS, any Linux
		// router), no vendor of their own: "%ADJCHANGE: neighbor A(host) in
		// vrf V Up|Down <reason>" (bgpd/bgp_fsm.c; before FRR 3, without
		// "in vrf"); the neighbor may be an interface (unnumbered BGP).
		{name: "frr_bgp", needs: "%ADJCHANGE: neighbor ", patterns: []*regexp.Regexp{re(`%ADJCHANGE: neighbor (?P<neighbor>[^\s(]+)(?:\([^)]*\))?(?: in vrf (?P<vrf>\S+))? (?P<state>Up|Down)\b`)},
			states: bgpStates, examples: []example{
				{"%ADJCHANGE: neighbor 100.67.0.142(sp01.02.lab) in vrf Default Down Interface down", "bgp_peer_down", map[string]string{"neighbor": "100.67.0.142", "vrf": "Default"}},
				{"[M59KS-A3ZXZ] %ADJCHANGE: neighbor swp51(spine01) in vrf default Up", "bgp_peer_up", map[string]string{"neighbor": "swp51"}},
				{"%ADJCHANGE: neighbor 10.0.0.1 Down Peer closed the session", "bgp_peer_down", map[string]string{"neighbor": "10.0.0.1"}},
			}},
		// "AdjChg: Nbr <router ID>, NbrIP A (vrf) on IF:local: Full ->
		// Deleted (KillNbr)" (ospfd; FRRouting/frr issues, from routers),
		// ospf6d's "AdjChg: Nbr <router ID>%IF: ...": the address where
		// the line has one, else the router ID.
		{name: "frr_ospf", needs: "AdjChg: Nbr ", patterns: []*regexp.Regexp{re(`AdjChg: Nbr (?P<neighbor>` + ipish + `)(?:, NbrIP (?P<neighbor>` + ipish + `))?(?: ?\([^)]*\))?(?:%(?P<interface>[^\s:]+)| on (?:[^\s%:]*%)?(?P<interface>[^\s:]+)(?::\S*)?)?: (?P<old>[\w-]+) -> (?P<new>[\w-]+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"[Y05P2-YJVXY] AdjChg: Nbr 10.255.0.3, NbrIP 10.0.23.2 (default) on eth2:10.0.23.1: Full -> Deleted (KillNbr)", "ospf_neighbor_down", map[string]string{"neighbor": "10.0.23.2", "interface": "eth2"}},
				{"[Y05P2-YJVXY] AdjChg: Nbr 1.0.0.4, NbrIP 10.44.0.1 (default) on enp0s1.440:10.44.0.2: Loading -> Full (LoadingDone)", "ospf_neighbor_up", map[string]string{"neighbor": "10.44.0.1", "interface": "enp0s1.440"}},
				{"[Y05P2-YJVXY] AdjChg: Nbr 1.0.0.4, NbrIP 10.44.0.1 (default) on enp0s1.440:10.44.0.2: Exchange -> Loading (ExchangeDone)", "", map[string]string{"neighbor": "10.44.0.1"}},
				{"AdjChg: Nbr 10.0.0.2%enp7s0: Full -> Down (KillNbr)", "ospf_neighbor_down", map[string]string{"neighbor": "10.0.0.2", "interface": "enp7s0"}},
			}},
		// PAN-OS: a commit, a CONFIG log with command "commit" (Splunk
		// Connect for Syslog's test line): host, vsys, command, admin,
		// client, result. Edits of the candidate configuration, the other
		// CONFIG logs, change nothing running until then.
		{name: "paloalto_config", vendor: VendorPaloAlto, needs: ",CONFIG,", patterns: []*regexp.Regexp{re(`,CONFIG,\d*,\d*,[^,]*,(?:(?P<source>` + ipaddr + `)|[^,]*),[^,]*,commit,(?P<user>[^,]+),\w+,(?:Submitted|Succeeded),`)},
			event: "config_changed", examples: []example{
				{"1,2021/07/20 23:59:02,1234567890,CONFIG,0,0,2021/07/20 00:53:40,192.168.0.1,,commit,admin,Web,Submitted,,0,0x0", "config_changed", map[string]string{"user": "admin", "source": "192.168.0.1"}},
			}},
		// --- Generic fallbacks for BGP, OSPF and login phrasings (Aruba,
		// Extreme, MikroTik, Palo Alto and others) ---
		{name: "generic_bgp", needs: "BGP", patterns: []*regexp.Regexp{re(`BGP\b.*?\b(?:[Nn]eighbou?r|[Pp]eer) (?P<neighbor>` + ipaddr + `).*?\bfrom (?:state )?(?P<old>\w+) to (?:state )?(?P<new>\w+)`)},
			up: "bgp_peer_up", down: "bgp_peer_down", upState: "established", examples: []example{
				{"bgpd: BGP neighbor 10.0.0.2 changed state from OpenConfirm to Established", "bgp_peer_up", map[string]string{"neighbor": "10.0.0.2"}},
				{"<Info:BGP.Neighbor.StateChange> BGP neighbor 10.0.0.2 (AS 65010) state changed from Established to Idle", "bgp_peer_down", map[string]string{"neighbor": "10.0.0.2"}},
			}},
		{name: "generic_ospf", needs: "OSPF", patterns: []*regexp.Regexp{re(`OSPF(?:v[23])?\b.*?\b[Nn]eighbou?r (?P<neighbor>` + ipaddr + `).*?\bfrom (?:state )?(?P<old>[\w-]+) to (?:state )?(?P<new>[\w-]+)`)},
			up: "ospf_neighbor_up", down: "ospf_neighbor_down", upState: "full", examples: []example{
				{"OSPF-MINOR-ospfNbrStateChange-2003 [VR 1 OSPFv2 (0)]: Neighbor 10.1.1.2 state changed from full to down", "ospf_neighbor_down", map[string]string{"neighbor": "10.1.1.2"}},
				{"ospfd: OSPF neighbor 10.0.0.2 on vlan10 changed state from Loading to Full", "ospf_neighbor_up", map[string]string{"neighbor": "10.0.0.2"}},
			}},
		{name: "generic_login", needs: "logged in", patterns: []*regexp.Regexp{re(`(?i)\buser:? '?(?P<user>[\w.@-]+)'? (?:has )?logged in(?: successfully)?(?: (?:(?:via|through|on|at|to)\b[^.]*? )?from (?P<source>` + ipaddr + `)| (?:from|via|through|on|at|to)\b|[.,;]|$)`)},
			event: "login_succeeded", examples: []example{
				{"user admin logged in from 192.168.88.10", "login_succeeded", map[string]string{"user": "admin", "source": "192.168.88.10"}},
				{"User admin logged in via Web from 192.168.1.100 using https", "login_succeeded", map[string]string{"user": "admin", "source": "192.168.1.100"}},
				{"User 'netops' logged in from 10.0.0.5 through SSH session.", "login_succeeded", map[string]string{"user": "netops", "source": "10.0.0.5"}},
			}},
		// The status line of "show interfaces", which some devices also
		// log: the line protocol's state is the interface's (as
		// ifOperStatus has it), whatever the interface's own.
		{name: "generic_line_protocol", needs: "line protocol is ", patterns: []*regexp.Regexp{re(`(?i)\binterface\s+(?P<interface>[A-Za-z][\w./:-]*\d(?:\.\d+)?)\s+is\s+(?:administratively\s+)?(?:up|down),\s+line protocol is\s+(?P<state>up|down)\b`)},
			states: ifStates, examples: []example{
				{"Interface GigabitEthernet1 is up, line protocol is down", "interface_down", map[string]string{"interface": "GigabitEthernet1"}},
				{"interface Serial0/0/0 is administratively down, line protocol is down", "interface_down", map[string]string{"interface": "Serial0/0/0"}},
				{"Interface GigabitEthernet0/2 is up, line protocol is up", "interface_up", map[string]string{"interface": "GigabitEthernet0/2"}},
			}},
		// --- Generic fallback for "interface X ... down/up" phrasings ---
		// "up to" is no state ("is up to date"): Go's regexp has no
		// look-ahead, so what may follow the state is spelt out.
		{name: "generic_interface", needs: "nterface", patterns: []*regexp.Regexp{re(`(?i)\binterface\s+(?P<interface>[A-Za-z][\w./:-]*\d(?:\.\d+)?)\b[^.]*?\b(?:is|changed state to|went|state(?: changed)? to|has gone)\s+(?P<state>down|up)(?:\s*$|[^\w\s]|\s+(?:[^\st]|t(?:[^o]|o\w)))`)},
			states: ifStates, examples: []example{
				{"kernel: interface eth0 went down", "interface_down", map[string]string{"interface": "eth0"}},
				{"lldpd: Interface swp12 is up", "interface_up", map[string]string{"interface": "swp12"}},
				{"Interface eth1 is down (no carrier)", "interface_down", map[string]string{"interface": "eth1"}},
				{"Interface eth1 is down today, the cable is out", "interface_down", map[string]string{"interface": "eth1"}},
			}},
	}
}
