package enrich

import (
	"testing"

	"github.com/weirnet/weir/telemetry"
)

// TestDeviceLinesCiscoConfigByLine: IOS without a logged-in user (no AAA,
// a line password) names the line that configured it, "Configured from
// console by vty2 (10.34.195.36)" or "by console" (the example in Cisco's
// configuration guides, "Configuring System Message Logging"). The line is
// no user: the change is the address's, or the line's where none is given.
func TestDeviceLinesCiscoConfigByLine(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "vty", raw: "<189>123: r1: Nov 29 14:02:11.123 UTC: %SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.36)",
			vendor: VendorCiscoIOS, event: "config_changed", object: "10.34.195.36", fields: map[string]string{"user": ""}},
		{name: "console", raw: "<189>124: r1: Nov 29 14:02:11.123 UTC: %SYS-5-CONFIG_I: Configured from console by console",
			vendor: VendorCiscoIOS, event: "config_changed", object: "console", fields: map[string]string{"user": ""}},
		// The startup configuration copied in at the console: the
		// console's change (not "memory", where it came from).
		{name: "memory", raw: "<189>125: Nov 29 14:02:11: %SYS-5-CONFIG_I: Configured from memory by console",
			vendor: VendorCiscoIOS, event: "config_changed", object: "console", fields: map[string]string{"user": ""}},
		// A user whose name starts like a line's is still the user.
		{name: "user_vty_like", raw: "<189>126: Nov 29 14:02:11: %SYS-5-CONFIG_I: Configured from console by vtyadmin on vty0 (10.0.0.5)",
			vendor: VendorCiscoIOS, event: "config_changed", object: "vtyadmin"},
	})
}

// TestDeviceLinesFRR: FRRouting (SONiC, Cumulus Linux, VyOS, and any Linux
// router) logs BGP session changes as "%ADJCHANGE: neighbor A(host) in vrf
// V Up|Down <reason>" (bgpd/bgp_fsm.c, napalm-logs' sonic fixture) and
// OSPF ones as "AdjChg: Nbr <router-id>, NbrIP A (vrf) on IF:local: Full ->
// Deleted (KillNbr)" (FRRouting/frr issues, from routers), FRR 8 and later
// with a message id in brackets first.
func TestDeviceLinesFRR(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "bgp_down_hostname", raw: "<166>1 2019-02-20T15:10:35.073589+00:00 ss12.00.lab bgpd 83 - -  %ADJCHANGE: neighbor 100.67.0.142(sp01.02.lab) in vrf Default Down Interface down",
			event: "bgp_peer_down", object: "100.67.0.142"},
		{name: "bgp_up_vrf", raw: "<30>Jun 23 09:25:12 leaf1 bgpd[1345]: [M59KS-A3ZXZ] %ADJCHANGE: neighbor 10.0.0.1(Unknown) in vrf CUST-A Up",
			event: "bgp_peer_up", object: "10.0.0.1 vrf CUST-A", fields: map[string]string{"vrf": "CUST-A"}},
		{name: "bgp_down_plain", raw: "<30>Jun 23 09:25:12 vyos1 bgpd[1345]: %ADJCHANGE: neighbor 2001:db8::1 in vrf default Down Peer closed the session",
			event: "bgp_peer_down", object: "2001:db8::1"},
		{name: "ospf_down", raw: "<29>Jun 23 09:25:12 frr-r1 ospfd[1362]: [Y05P2-YJVXY] AdjChg: Nbr 10.255.0.3, NbrIP 10.0.23.2 (default) on eth2:10.0.23.1: Full -> Deleted (KillNbr)",
			event: "ospf_neighbor_down", object: "10.0.23.2", fields: map[string]string{"interface": "eth2"}},
		{name: "ospf_full", raw: "<29>May 30 18:12:35 R2 ospfd[1022]: [Y05P2-YJVXY] AdjChg: Nbr 1.0.0.4, NbrIP 10.44.0.1 (default) on enp0s1.440:10.44.0.2: Loading -> Full (LoadingDone)",
			event: "ospf_neighbor_up", object: "10.44.0.1", fields: map[string]string{"interface": "enp0s1.440"}},
		{name: "ospf_step", raw: "<29>May 30 18:12:35 R2 ospfd[1022]: [Y05P2-YJVXY] AdjChg: Nbr 1.0.0.4, NbrIP 10.44.0.1 (default) on enp0s1.440:10.44.0.2: Exchange -> Loading (ExchangeDone)"},
	})
}

// TestDeviceLinesMikroTikOSPF: RouterOS 7 logs each OSPF neighbor state
// change under "route,ospf,info" with the instance, area, interface and
// neighbor in braces: "... neighbor { router-id: B state: Loading } state
// change to Full" (a router's log in a public write-up of a CRS326 lab).
func TestDeviceLinesMikroTikOSPF(t *testing.T) {
	const head = "<30>Aug 15 00:48:09 crs1 route,ospf,info backbonev2 { version: 2 router-id: 172.16.0.1 } backbone0v2 { 0.0.0.0 } interface { broadcast 172.16.255.1%inter-router-link0 } neighbor { router-id: 172.16.0.2 "
	checkDeviceLines(t, []deviceLine{
		{name: "full", raw: head + "state: Loading } state change to Full",
			vendor: VendorMikroTik, event: "ospf_neighbor_up", object: "172.16.0.2", fields: map[string]string{"interface": "inter-router-link0"}},
		{name: "down", raw: head + "state: Full } state change to Down",
			vendor: VendorMikroTik, event: "ospf_neighbor_down", object: "172.16.0.2"},
		{name: "step", raw: head + "state: Init } state change to TwoWay", vendor: VendorMikroTik},
		{name: "not_a_change", raw: head + "state: Exchange } exchange done"},
	})
}

// TestDeviceLinesPaloAltoCommit: PAN-OS logs a commit in its CONFIG log
// (command "commit", the administrator, the client, the result: a Splunk
// Connect for Syslog test's line); edits to the candidate configuration
// ("clone", "set", ...: a Sumo Logic sample) change nothing running yet.
func TestDeviceLinesPaloAltoCommit(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "commit", raw: "<14>Jul 20 23:59:02 pa1 1,2021/07/20 23:59:02,1234567890,CONFIG,0,0,2021/07/20 00:53:40,192.168.0.1,,commit,admin,Web,Submitted,,0,0x0",
			vendor: VendorPaloAlto, event: "config_changed", object: "admin", fields: map[string]string{"source": "192.168.0.1"}},
		{name: "candidate_edit", raw: "<14>Oct 14 11:37:34 pa1 1,2019/10/14 11:37:34,001234567890001,CONFIG,0,0,2019/10/14 11:37:34,195.186.216.125,,clone,dduc,Web,Succeeded, config shared reports,,,0123456789,0x8000000000000000,0,0,0,0,,SumoRedfw01a"},
	})
}

// TestDeviceLinesCiscoLoginSource: IOS's login line names the address the
// user came from, "[Source: A]", and with "ip ssh logging events" IOS also
// logs SSH2_USERAUTH for each SSH authentication, naming the user and the
// address; a failed one with no user yet is no event (a wrong password's
// names the user: login_failed).
// The lines: nocproject/noc collections/fm.eventclassificationrules/Cisco/
// IOS/Security/Authentication/{Login,SSH_-_Login}_SYSLOG_.json (devices'
// lines), a Catalyst's log in a public DNA Center onboarding write-up, and
// a public parser's comment (the failed one); the headers are IOS's.
func TestDeviceLinesCiscoLoginSource(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "login_success_source", raw: "<189>000215: Jul 20 19:26:08.457: %SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: dnac] [Source: 172.16.202.101] [localport: 22] at 19:26:08 UTC Thu Jul 20 2023",
			vendor: VendorCiscoIOS, event: "login_succeeded", object: "dnac", fields: map[string]string{"source": "172.16.202.101"}},
		{name: "ssh2_userauth", raw: "<189>4423: Aug 23 00:16:18.200: %SSH-5-SSH2_USERAUTH: User 'admin' authentication for SSH2 Session from 172.16.0.22 (tty = 1) using crypto cipher 'aes256-cbc', hmac 'hmac-sha1' Succeeded",
			vendor: VendorCiscoIOS, event: "login_succeeded", object: "admin", fields: map[string]string{"source": "172.16.0.22"}},
		{name: "ssh2_userauth_failed", raw: "<189>4424: Aug 23 00:16:19.200: %SSH-5-SSH2_USERAUTH: User '' authentication for SSH2 Session from 10.109.21.149 (tty = 0) using crypto cipher 'aes256-ctr', hmac 'hmac-sha1' Failed",
			vendor: VendorCiscoIOS},
	})
}

// TestDeviceLinesFortiOSBGPVRF: FortiOS's router log (logid 0103020300,
// LOG_ID_BGP_NB_STAT_CHG) carries bgpd's own line in msg, with the VRF
// (a number, 0 the default) before the neighbor: "BGP: %BGP-5-ADJCHANGE:
// VRF 0 neighbor A Up " (Fortinet community article 357232, and a public
// FortiGate HA write-up). The Cisco rule took it and dropped the VRF, so
// the sessions to one address in two VRFs were one object. The values of
// the VRF 10 line and the headers are ours; bgpd's debug lines ("BGP: VRF
// 0 NSM withdraw: ...", from the write-up) are no session change.
func TestDeviceLinesFortiOSBGPVRF(t *testing.T) {
	const head = `<188>date=2024-11-01 time=10:00:00 devname="fw1" devid="FGT40FTK23095012" logid="0103020300" type="event" subtype="router" level="warning" vd="root" id=20300 `
	checkDeviceLines(t, []deviceLine{
		{name: "up_vrf0", raw: head + `msg="BGP: %BGP-5-ADJCHANGE: VRF 0 neighbor 1.1.1.254 Up "`,
			vendor: VendorFortinet, event: "bgp_peer_up", object: "1.1.1.254", fields: map[string]string{"vrf": ""}},
		{name: "down_vrf0", raw: head + `msg="BGP: %BGP-5-ADJCHANGE: VRF 0 neighbor 1.1.1.254 Down Peer being deleted"`,
			vendor: VendorFortinet, event: "bgp_peer_down", object: "1.1.1.254"},
		{name: "down_vrf10", raw: head + `msg="BGP: %BGP-5-ADJCHANGE: VRF 10 neighbor 10.191.19.33 Down BGP Notification FSM-ERR"`,
			vendor: VendorFortinet, event: "bgp_peer_down", object: "10.191.19.33 vrf 10", fields: map[string]string{"vrf": "10"}},
		{name: "debug_withdraw", raw: "BGP: VRF 0 NSM withdraw: 2.2.2.0/24"},
		{name: "debug_fsm", raw: "BGP: 1.1.1.254-Outgoing [FSM] State: Established Event: 2"},
	})
}

// TestDeviceLinesMikroTikBGPTCP: RouterOS 6 logs a BGP peer's TCP session
// under "route,bgp,info", the address on a line of its own ("TCP
// connection established", then "RemoteAddress=A": a RouterOS 6 lab's log
// in a public write-up). TCP up is not the BGP session up, and the line
// names no peer: no event. (No public line of RouterOS's own BGP session
// up/down, v6 or v7, was found to add a rule from.)
func TestDeviceLinesMikroTikBGPTCP(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "tcp_established", raw: "<30>Dec  3 12:46:51 mt1 route,bgp,info TCP connection established"},
		{name: "remote_address", raw: "<30>Dec  3 12:46:51 mt1 route,bgp,info     RemoteAddress=10.200.12.1"},
	})
}

// TestDeviceLinesNokiaCommit: SR OS logs a commit to the configure
// datastore as SYSTEM event 2121, "Commit to configure by admin (MD-CLI)
// from 10.128.1.1 succeeded." (a router's memory log in nokia/SReXperts
// docs/nos/sros/intermediate/56-SR_OS_Triggering_backups.md); no rule
// knew it, so a configuration change on SR OS raised no event. The
// syslog header and the "SYSTEM-WARNING-mdCommitSucceeded-2121 [Commit]:"
// layout are the ones the same repository's syslog capture shows for
// other SYSTEM events (57-SROS_remote_logging_with_Syslog_and_Loki.md);
// the event text is the router's. A commit by an EHS script names no
// user: its client stands in.
func TestDeviceLinesNokiaCommit(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "md_cli", raw: "<188>May  6 16:04:40 g1-pe1 TMNX: 52430 Base SYSTEM-WARNING-mdCommitSucceeded-2121 [Commit]:  Commit to configure by admin (MD-CLI) from 10.128.1.1 succeeded.",
			vendor: VendorNokia, event: "config_changed", object: "admin", fields: map[string]string{"source": "10.128.1.1", "agent": "MD-CLI"}},
		{name: "ehs", raw: "<188>Apr  1 12:47:58 g1-pe1 TMNX: 7 Base SYSTEM-WARNING-mdCommitSucceeded-2121 [Commit]:  Commit to configure by  (Cron/EHS) from Cron/EHS succeeded.",
			vendor: VendorNokia, event: "config_changed", object: "Cron/EHS", fields: map[string]string{"user": ""}},
		// The configuration save that follows a commit is no second change.
		{name: "save_after_commit", raw: `<188>Apr 17 16:54:28 g51-pe3 TMNX: 155 Base SYSTEM-WARNING-ssiSaveIncrementConfigSucceeded-2110 [Configuration Save Succeeds]:  Incremental configuration file saved to: cf3:\.commit-history\config-2026-04-17T16-54-28.3Z-9.is`},
	})
}

// TestDeviceLinesNokiaNetconfLogin: SR OS logs a NETCONF session's login
// twice, SECURITY-MINOR-netconf_user_login-2121 ("User admin from A logged
// in") and USER-MINOR-netconf_user_login-2018 ("Netconf user from A logged
// in"); the login rule knew only CLI, SSH and FTP logins. The lines: a
// router's syslog capture in nokia/SReXperts docs/nos/sros/beginner/
// 57-SROS_remote_logging_with_Syslog_and_Loki.md (the PRI is ours, from
// its LOCAL7.ERR). One login is one event: the twin raises none.
func TestDeviceLinesNokiaNetconfLogin(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "security", raw: "<187>May  8 15:14:00 g3-pe3 TMNX: 5047 management SECURITY-MINOR-netconf_user_login-2121 [admin]:  User admin from 192.168.6.102 logged in",
			vendor: VendorNokia, event: "login_succeeded", object: "admin", fields: map[string]string{"source": "192.168.6.102"}},
		{name: "user_twin", raw: "<187>May  8 15:14:00 g3-pe3 TMNX: 5048 management USER-MINOR-netconf_user_login-2018 [admin]:  Netconf user from 192.168.6.102 logged in"},
	})
}

// TestDeviceLinesComware3Mnemonic: Comware 3 (3Com Baseline, HP 1910, old
// H3C) writes a space in some briefs, "%%10IFNET/4/LINK UPDOWN(l):"
// (nocproject/noc .../HP/1910/Network/Link/Link_Down_1_SYSLOG_.json; the
// header is Comware's loghost layout, the year after the time). The
// mnemonic stopped at the space, "LINK", a brief no Comware sends; it is
// the whole brief, as the device writes it. Comware 5 and 7 briefs, and
// VRP's, have no space and stop at "(" or ":" as before.
func TestDeviceLinesComware3Mnemonic(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "comware3_link_down", raw: "<188>Apr  2 10:12:33 2000 H3C %%10IFNET/4/LINK UPDOWN(l):   GigabitEthernet1/0/2: link status is DOWN",
			vendor: VendorComware, event: "interface_down", object: "GigabitEthernet1/0/2", fac: "IFNET", sev: 4, mnem: "LINK UPDOWN"},
		{name: "comware3_link_up_no_l", raw: "<188>Apr  2 10:12:40 2000 H3C %%10IFNET/4/LINK UPDOWN: Ethernet1/0/2: link status is UP",
			vendor: VendorComware, event: "interface_up", object: "Ethernet1/0/2", fac: "IFNET", sev: 4, mnem: "LINK UPDOWN"},
		{name: "comware5_phy_updown", raw: "<188>Apr  2 10:12:33 2011 sw1 %%10IFNET/3/PHY_UPDOWN(l): GigabitEthernet1/0/2 link status is DOWN.",
			vendor: VendorComware, event: "interface_down", object: "GigabitEthernet1/0/2", fac: "IFNET", sev: 3, mnem: "PHY_UPDOWN"},
		{name: "comware7_no_l", raw: "<188>Apr  2 10:12:33 2021 sw1 %%10IFNET/3/PHY_UPDOWN: Physical state on the interface GigabitEthernet1/0/1 changed to down.",
			vendor: VendorComware, event: "interface_down", object: "GigabitEthernet1/0/1", fac: "IFNET", sev: 3, mnem: "PHY_UPDOWN"},
		// A word after the brief that is no part of it: text, not a brief.
		{name: "vrp_text_after_brief", raw: "<189>Sep 13 2021 00:19:26 R1 %%01IFNET/4/IF_STATE Interface GigabitEthernet2/0/9 has turned into DOWN state.",
			vendor: VendorHuawei, event: "interface_down", object: "GigabitEthernet2/0/9", fac: "IFNET", sev: 4, mnem: "IF_STATE"},
	})
}

// TestDeviceLinesProCurvePorts: HP ProCurve and ArubaOS-Switch log a
// port's link as "ports: port 12 is now off-line" / "on-line" (event 76;
// ArubaOS-Switch 16.x puts the event number first, "00076 ports: ...", as
// its event log shows it; the syslog headers are ours). They came out
// "generic": the port rule, shared with EXOS's "Port X link down", names
// no vendor. The "is now on-line" wording is ArubaOS-Switch's alone. The
// port is the interface; modular and stacked switches name it "A1",
// "1/12".
func TestDeviceLinesProCurvePorts(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "off_line", raw: "<14>Nov 29 10:00:00 sw1 ports: port 12 is now off-line",
			vendor: VendorArubaSwitch, event: "interface_down", object: "12"},
		{name: "on_line", raw: "<14>Nov 29 10:00:05 sw1 ports: port 12 is now on-line",
			vendor: VendorArubaSwitch, event: "interface_up", object: "12"},
		{name: "event_number_modular", raw: "<14>Nov 29 10:00:00 10.0.0.5 00076 ports: port A1 is now off-line",
			vendor: VendorArubaSwitch, event: "interface_down", object: "A1"},
		{name: "stacked", raw: "<14>Nov 29 10:00:00 sw2 ports: port 1/12 is now on-line",
			vendor: VendorArubaSwitch, event: "interface_up", object: "1/12"},
		// EXOS's line stays the shared rule's, and names no vendor.
		{name: "exos_link_down", raw: "<14>Nov 29 10:00:00 x440 Port 1:24 link down",
			vendor: VendorGeneric, event: "interface_down", object: "1:24"},
	})
}

// TestDeviceLinesRelayTagWithoutColon: rsyslog's imfile with a Tag
// without its colon (Tag="devlogs") forwards a device's line as "vm
// devlogs <189>52: ..." or, with a template of "%syslogtag%%msg%", "vm
// devlogs<189>52: ..." (a real rsyslogd 8.2302's bytes). The second was
// classified as Arista's (the tag "devlogs<189>52" before a mnemonic);
// both are the device's IOS line.
func TestDeviceLinesRelayTagWithoutColon(t *testing.T) {
	const line = "<189>52: edge1: Nov 29 10:00:00.123: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down"
	checkDeviceLines(t, []deviceLine{
		{name: "space", raw: "<133>Dec  5 03:35:59 vm devlogs " + line,
			vendor: VendorCiscoIOS, event: "interface_down", object: "GigabitEthernet0/1", fac: "LINK", sev: 3, mnem: "UPDOWN"},
		{name: "glued", raw: "<133>Dec  5 03:40:20 vm devlogs" + line,
			vendor: VendorCiscoIOS, event: "interface_down", object: "GigabitEthernet0/1", fac: "LINK", sev: 3, mnem: "UPDOWN"},
	})
}

// TestPassportLinkLines: the Nortel Passport 8600 (software 3.5, the line
// VOSS's software descends from) logs a port's link as "SNMP INFO Link
// Down(1/1)" and "Link Up(1/1)", and after a down a second line, "Link
// Down 1/1.Port is an access port", for the same change. The lines: a
// Passport-8606's "show tech" log in a public Perl test fixture
// (DataNortelPassport.pm, $responsesNortelPassport->{tech}). No rule knew
// them. The second line and the fan's "Fan Up(...)" are no link event.
// No VOSS (VSP) link line was found in public sources, so the rule names
// no vendor.
func TestPassportLinkLines(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct {
		msg, event, iface string
	}{
		{"CPU5 [09/19/07 13:03:49] SNMP INFO Link Down(1/1)", "interface_down", "1/1"},
		{"CPU5 [09/19/07 13:03:50] SNMP INFO Link Down(1/48)", "interface_down", "1/48"},
		{"CPU5 [09/19/07 13:03:50] SNMP INFO Link Up(1/1)", "interface_up", "1/1"},
		{"CPU5 [09/19/07 13:03:49] SNMP INFO Link Down 1/1.Port is an access port", "", ""},
		{"CPU5 [09/19/07 13:03:50] SNMP INFO Fan Up(FanId=1, OperStatus=2)", "", ""},
	} {
		l := telemetry.Log{Message: tc.msg}
		info := c.Classify(&l)
		if info.Event != tc.event || ObjectOf(info) != tc.iface {
			t.Errorf("%q: event %q object %q (rule %q), want %q %q", tc.msg, info.Event, ObjectOf(info), info.Rule, tc.event, tc.iface)
		}
	}
}

// TestDeviceLinesComware5LineProtocol: Comware 5's line protocol change
// (an HP 1910's "%%10IFNET/5/LINEPROTO_UPDOWN(l): Line protocol on the
// interface Vlan-interface200 is DOWN.", nocproject/noc's
// HP/1910/Network/Link/Link_Down_3_SYSLOG_.json) is a link event of the
// interface, with the vendor named; no Comware rule takes LINEPROTO, so
// the generic "interface X ... down" fallback must.
func TestDeviceLinesComware5LineProtocol(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "down", raw: "<188>Jan  1 00:22:54 2000 HP1910 %%10IFNET/5/LINEPROTO_UPDOWN(l): Line protocol on the interface Vlan-interface200 is DOWN.",
			vendor: VendorComware, event: "interface_down", object: "Vlan-interface200"},
		{name: "up", raw: "<188>Jan  1 00:22:58 2000 HP1910 %%10IFNET/5/LINEPROTO_UPDOWN(l): Line protocol on the interface Vlan-interface200 is UP.",
			vendor: VendorComware, event: "interface_up", object: "Vlan-interface200"},
	})
}

// TestDeviceLinesNXOSPortChannelMember: NX-OS logs a port-channel member
// going down or up in it as "%ETH_PORT_CHANNEL-5-PORT_DOWN: port-channel23:
// Ethernet1/15 is down" (syslog-ng's patterndb tests; OpenNMS's Nexus
// events, "<189>: <time>: %ETH_PORT_CHANNEL-5-PORT_UP: port-channel2: X is
// up"): the member's link, with its port-channel. It raised nothing.
func TestDeviceLinesNXOSPortChannelMember(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "member_down", raw: "<189>: 2026 Dec  6 14:02:11 UTC: %ETH_PORT_CHANNEL-5-PORT_DOWN: port-channel23: Ethernet1/15 is down",
			vendor: VendorCiscoNXOS, event: "interface_down", object: "Ethernet1/15", fields: map[string]string{"port_channel": "port-channel23"}},
		{name: "member_up", raw: "<189>: 2026 Dec  6 14:02:41 UTC: %ETH_PORT_CHANNEL-5-PORT_UP: port-channel2: Ethernet1/2 is up",
			vendor: VendorCiscoNXOS, event: "interface_up", object: "Ethernet1/2", fields: map[string]string{"port_channel": "port-channel2"}},
	})
}
