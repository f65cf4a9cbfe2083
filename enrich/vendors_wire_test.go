package enrich

import "testing"

// TestDeviceLinesMikroTikLogin: RouterOS logs a login under the
// "system,info,account" topics, "user X logged in from A via ssh" (and
// without topics under RouterOS 7's bsd-syslog). The generic login rule
// took it, so the record said vendor generic; it is RouterOS's own line.
// The message text: nocproject/noc collections/fm.eventclassificationrules/
// MikroTik/RouterOS/Security/Authentication/Login_SYSLOG_.json (a device's
// line, its topic prefix cut short); the headers are RouterOS's.
func TestDeviceLinesMikroTikLogin(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "topics", raw: "<30>Dec  3 16:20:01 mt1 system,info,account user mitya logged in from 193.34.20.2 via ssh",
			vendor: VendorMikroTik, event: "login_succeeded", object: "mitya", fields: map[string]string{"source": "193.34.20.2"}},
		{name: "no_topics_winbox", raw: "<30>Dec  3 16:20:01 mt1 user admin logged in from 10.0.0.9 via winbox",
			vendor: VendorMikroTik, event: "login_succeeded", object: "admin", fields: map[string]string{"source": "10.0.0.9"}},
		// Another system's "logged in from A via B" stays generic.
		{name: "not_routeros", raw: "<30>Dec  3 16:20:01 h1 portal: user bob logged in from 10.0.0.9 via sso",
			vendor: VendorGeneric, event: "login_succeeded", object: "bob"},
	})
}

// TestDeviceLinesPaloAltoAdminLogin: PAN-OS logs an administrator's login
// as a SYSTEM log of subtype general, "User X logged in via Web from A
// using http"; the generic login rule took it as vendor generic. The line:
// apache/metron BasicPaloAltoFirewallParserTest (a firewall's, anonymised).
func TestDeviceLinesPaloAltoAdminLogin(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "web", raw: "<14>Mar 25 00:00:56 PAN1.exampleCustomer.com 1,2016/03/25 00:00:56,003002112674,SYSTEM,general,0,2016/03/25 00:00:56,,general,,0,0,general,informational,User HarryPotter logged in via Web from 10.255.255.255 using http,156324,0x0,0,0,0,0,,SUNKUPAN1",
			vendor: VendorPaloAlto, event: "login_succeeded", object: "HarryPotter", fields: map[string]string{"source": "10.255.255.255"}},
		// PAN-OS 8 and later quote the description.
		{name: "web_quoted", raw: `<14>Sep 23 10:17:00 PA-3220 1,2026/09/23 10:17:00,012801012345,SYSTEM,general,2561,2026/09/23 10:17:00,,general,,0,0,general,medium,"User admin logged in via Web from 10.1.0.5 using https",1234,0x0,0,0,0,0,,PA-3220`,
			vendor: VendorPaloAlto, event: "login_succeeded", object: "admin", fields: map[string]string{"source": "10.1.0.5"}},
	})
}

// TestDeviceLinesFortiOSLink: FortiOS logs a port going down or up as an
// event/system log, logdesc "Interface status changed", the state in
// status; none of our rules knew it. The lines: public parsers' fixtures
// (they differ in logid and in where the port is named: msg or an
// interface field), not a capture of ours.
func TestDeviceLinesFortiOSLink(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "down_msg", raw: `<188>date=2026-09-23 time=10:30:00 devname="FGT-100F-HQ" devid="FGT1HFTK21000000" eventtime=1790134200123456789 tz="+0700" logid="0100020022" type="event" subtype="system" level="warning" vd="root" logdesc="Interface status changed" action="interface-stat-change" status="DOWN" msg="Interface port3 changed status to DOWN."`,
			vendor: VendorFortinet, event: "interface_down", object: "port3"},
		{name: "up_msg", raw: `<189>date=2026-09-23 time=10:30:40 devname="FGT-100F-HQ" devid="FGT1HFTK21000000" eventtime=1790134240123456789 tz="+0700" logid="0100020022" type="event" subtype="system" level="notice" vd="root" logdesc="Interface status changed" action="interface-stat-change" status="UP" msg="Interface port3 changed status to UP."`,
			vendor: VendorFortinet, event: "interface_up", object: "port3"},
		{name: "down_field", raw: `<188>date=2026-09-29 time=10:02:11 devname="FGT-LAB" logid="0100020007" type="event" subtype="system" level="warning" logdesc="Interface status changed" status="DOWN" interface="port2"`,
			vendor: VendorFortinet, event: "interface_down", object: "port2"},
		// Link monitor's verdict on a gateway is not the port's state.
		{name: "link_monitor", raw: `<186>date=2026-06-10 time=03:11:02 devname="FGT-A" logid="0100022921" type="event" subtype="system" level="critical" action="link-monitor" msg="Link monitor: WAN1 (wan1) is down"`,
			vendor: VendorFortinet, event: ""},
	})
}

// TestDeviceLinesIOSXRWithoutSequence: IOS-XR without "service
// sequence-numbers" starts its header with the node ("<187>RP/0/RSP0/CPU0:
// Nov 29 ..."); the parser took the line for malformed, so its events were
// lost and the vendor was read from the whole raw line.
func TestDeviceLinesIOSXRWithoutSequence(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "bgp", raw: "<187>RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 192.0.2.1 Down - BGP Notification sent, hold time expired (VRF: default) (AS: 65002)",
			vendor: VendorCiscoIOSXR, event: "bgp_peer_down", object: "192.0.2.1"},
		{name: "link", raw: "<189>RP/0/RP0/CPU0:2026 Nov 29 14:05:01.234 UTC: ifmgr[261]: %PKT_INFRA-LINK-3-UPDOWN : Interface GigabitEthernet0/0/0/1, changed state to Down",
			vendor: VendorCiscoIOSXR, event: "interface_down", object: "GigabitEthernet0/0/0/1"},
	})
}

// TestDeviceLinesExtremeEXOSLink: EXOS begins a message with its severity
// and event name, "<Info:vlan.msgs.portLinkStateUp> Port 1:1 link UP ...";
// the parser took "<Info" for a tag, and the shared port rule left the
// line vendor-less.
func TestDeviceLinesExtremeEXOSLink(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "up", raw: "<134>Nov 29 10:00:00 x460 <Info:vlan.msgs.portLinkStateUp> Port 1:1 link UP at speed 1 Gbps and full-duplex",
			vendor: VendorExtreme, event: "interface_up", object: "1:1"},
		{name: "down", raw: "<134>Nov 29 10:00:05 x460 <Info:vlan.msgs.portLinkStateDown> Port 1:1 link down",
			vendor: VendorExtreme, event: "interface_down", object: "1:1"},
	})
}

// TestDeviceLinesGenericInterfaceNotAState: the generic rule read "is up
// to date" as a state; "is upgraded" was never one.
func TestDeviceLinesGenericInterfaceNotAState(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "up_to_date", raw: "<30>Nov 29 10:00:00 h1 agent: Interface eth0 is up to date", vendor: VendorGeneric},
		{name: "upgraded", raw: "<30>Nov 29 10:00:00 h1 agent: Interface eth0 is upgraded", vendor: VendorGeneric},
		{name: "down_no_carrier", raw: "<30>Nov 29 10:00:00 h1 agent: Interface eth1 is down (no carrier)",
			vendor: VendorGeneric, event: "interface_down", object: "eth1"},
	})
}
