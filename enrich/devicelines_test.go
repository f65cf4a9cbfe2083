package enrich

// Lines as devices (or their relays) put them on the wire, whole, headers
// and all, parsed by the collector's parser and classified as the worker
// does: beside the rules' examples (message text only), they check vendor
// detection, the mnemonic and the event's object. Each of these was once
// missed or misread.

import (
	"testing"

	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

type deviceLine struct {
	name   string
	raw    string
	vendor string            // "" = not checked
	event  string            // "" = no event expected
	object string            // ObjectOf, checked when event != ""
	fields map[string]string // checked when non-nil
	// mnemonic parts, checked when mnem != ""
	fac, mnem string
	sev       int
}

func checkDeviceLines(t *testing.T, cases []deviceLine) {
	t.Helper()
	c := NewClassifier()
	var p syslog.Parser
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l telemetry.Log
			p.ParseCopy([]byte(tc.raw), &l)
			info := c.Classify(&l)
			if info.Event != tc.event {
				t.Errorf("%q\n  event %q (rule %q), want %q", tc.raw, info.Event, info.Rule, tc.event)
			}
			if tc.event != "" && ObjectOf(info) != tc.object {
				t.Errorf("%q\n  object %q, want %q", tc.raw, ObjectOf(info), tc.object)
			}
			if tc.vendor != "" && info.Vendor != tc.vendor {
				t.Errorf("%q\n  vendor %q, want %q", tc.raw, info.Vendor, tc.vendor)
			}
			for k, v := range tc.fields {
				if info.Fields[k] != v {
					t.Errorf("%q\n  field %s = %q, want %q", tc.raw, k, info.Fields[k], v)
				}
			}
			if tc.mnem != "" && (info.Facility != tc.fac || info.Mnemonic != tc.mnem || info.MnemonicSeverity != tc.sev) {
				t.Errorf("%q\n  mnemonic %q/%d/%q, want %q/%d/%q", tc.raw, info.Facility, info.MnemonicSeverity, info.Mnemonic, tc.fac, tc.sev, tc.mnem)
			}
		})
	}
}

// TestDeviceLinesOSPFv3Cisco: IOS and IOS-XE write the OSPFv3 facility with a
// lower-case v ("%OSPFv3-5-ADJCHG"), and IOS 15+/IOS-XE with OSPFv3
// address families add the family after the process ("Process 1, IPv6,
// Nbr ..."); IOS-XR writes "%ROUTING-OSPFv3-5-ADJCHG". The mnemonic is
// split for all of them, so the vendor is known.
func TestDeviceLinesOSPFv3Cisco(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "ios_ospfv3_down", raw: "<189>162: Nov 29 14:02:11.123: %OSPFv3-5-ADJCHG: Process 1, Nbr 2.2.2.2 on GigabitEthernet0/1 from FULL to DOWN, Neighbor Down: Dead timer expired",
			vendor: VendorCiscoIOS, event: "ospf_neighbor_down", object: "2.2.2.2", fields: map[string]string{"interface": "GigabitEthernet0/1"}, fac: "OSPFv3", sev: 5, mnem: "ADJCHG"},
		{name: "ios_ospfv3_af_ipv6_up", raw: "<189>163: *Jul 30 19:50:16.136: %OSPFv3-5-ADJCHG: Process 1, IPv6, Nbr 2.2.2.2 on Ethernet1/0 from LOADING to FULL, Loading Done",
			vendor: VendorCiscoIOS, event: "ospf_neighbor_up", object: "2.2.2.2", fields: map[string]string{"interface": "Ethernet1/0"}},
		{name: "ios_ospfv3_af_ipv4_down", raw: "<189>164: Nov 29 14:02:11.123: %OSPFv3-5-ADJCHG: Process 10, IPv4, Nbr 2.2.2.2 on GigabitEthernet0/1 from FULL to DOWN, Neighbor Down: Interface down or detached",
			vendor: VendorCiscoIOS, event: "ospf_neighbor_down", object: "2.2.2.2"},
		{name: "iosxr_ospfv3_down", raw: "<189>1238: RP/0/RSP0/CPU0:Nov 29 14:06:00.456 UTC: ospfv3[1019]: %ROUTING-OSPFv3-5-ADJCHG : Process 1, Nbr 10.0.0.2 on Bundle-Ether10 from FULL to DOWN, Neighbor Down: dead timer expired, vrf default vrfid 0x60000000",
			vendor: VendorCiscoIOSXR, event: "ospf_neighbor_down", object: "10.0.0.2"},
	})
}

// TestDeviceLinesNXOSOSPFAdjchange: NX-OS reports an OSPF adjacency change as
// "%OSPF-5-ADJCHANGE: ospf-<tag> [<pid>] Nbr A on IF went DOWN|FULL"
// (with "%OSPF-5-NBRSTATE: Process N, Nbr A on IF from FULL to DOWN,
// DEADTIME" beside it): one change, one event (de-duplicated).
func TestDeviceLinesNXOSOSPFAdjchange(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "adjchange_down", raw: "<189>: 2026 Jun  5 22:15:47.561 UTC: %OSPF-5-ADJCHANGE: ospf-2 [3860] Nbr 192.168.4.46 on port-channel10 went DOWN",
			vendor: VendorCiscoNXOS, event: "ospf_neighbor_down", object: "192.168.4.46", fields: map[string]string{"interface": "port-channel10"}},
		{name: "adjchange_full", raw: "<189>2026 Sep 23 10:18:40 N9K-LEAF-02 %OSPF-5-ADJCHANGE: ospf-100 [7243] Nbr 10.0.13.2 on Ethernet1/49 went FULL",
			vendor: VendorCiscoNXOS, event: "ospf_neighbor_up", object: "10.0.13.2", fields: map[string]string{"interface": "Ethernet1/49"}},
		{name: "nbrstate_from_to", raw: "<189>: 2026 Jun  5 22:15:47.561 UTC: %OSPF-5-NBRSTATE: Process 2, Nbr 192.168.4.46 on port-channel10 from FULL to DOWN, DEADTIME",
			vendor: VendorCiscoNXOS, event: "ospf_neighbor_down", object: "192.168.4.46"},
	})
}

// TestDeviceLinesAristaOSPF: EOS logs OSPF adjacencies as
// OSPF_ADJACENCY_ESTABLISHED / OSPF_ADJACENCY_TEARDOWN (agent Ospf or
// Rib, "Instance N:" before the mnemonic).
func TestDeviceLinesAristaOSPF(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "teardown", raw: "<188>Oct 22 11:49:57 s1 Ospf: Instance 1: %OSPF-4-OSPF_ADJACENCY_TEARDOWN: NGB 10.0.0.2, interface 172.16.0.1 adjacency dropped: inactivity timer expired, state was: FULL",
			vendor: VendorAristaEOS, event: "ospf_neighbor_down", object: "10.0.0.2"},
		{name: "established", raw: "<188>Oct 22 11:50:12 s1 Ospf: Instance 1: %OSPF-4-OSPF_ADJACENCY_ESTABLISHED: NGB 10.0.0.2, interface 172.16.0.1 adjacency established",
			vendor: VendorAristaEOS, event: "ospf_neighbor_up", object: "10.0.0.2"},
		{name: "teardown_rib_no_instance", raw: "<188>Jul 21 09:00:38 a2 Rib: %OSPF-4-OSPF_ADJACENCY_TEARDOWN: NGB 172.26.0.46, interface 172.17.254.154 adjacency dropped: inactivity timer expired, state was: FULL",
			vendor: VendorAristaEOS, event: "ospf_neighbor_down", object: "172.26.0.46"},
	})
}

// TestDeviceLinesAristaConfigSession: a change committed through a
// configuration session (CloudVision, gNMI Set, "configure session")
// logs CONFIG_SESSION_COMMIT_SUCCESS and no CONFIG_I.
func TestDeviceLinesAristaConfigSession(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "cvp", raw: "<189>May  9 16:34:19 PE-1A ConfigAgent: %SYS-5-CONFIG_SESSION_COMMIT_SUCCESS: User cvpadmin committed configuration session CVP-configtask-ff4f8885-f1bc-436b-a0da-da0ec41241bf successfully on TerminAttr (localhost)",
			vendor: VendorAristaEOS, event: "config_changed", object: "cvpadmin"},
		{name: "gnmi", raw: "<189>Sep 19 19:20:13 spine1 ConfigAgent: %SYS-5-CONFIG_SESSION_COMMIT_SUCCESS: User arista committed configuration session session11521733719371 successfully on GNMI (192.168.0.1:57388)",
			vendor: VendorAristaEOS, event: "config_changed", object: "arista"},
	})
}

// TestDeviceLinesJunosBGPInstance: Junos names the routing instance (VRF) of a
// BGP session at the end, "(instance CUST-A)": without it the sessions to
// one address in two VRFs would be one object (and never the object
// gNMI's network instance gives).
func TestDeviceLinesJunosBGPInstance(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "rpd_vrf_a", raw: "<29>Nov 29 14:06:09 mx1 rpd[2345]: RPD_BGP_NEIGHBOR_STATE_CHANGED: BGP peer 10.0.0.1 (External AS 65001) changed state from Established to Idle (event RecvNotify) (instance CUST-A)",
			vendor: VendorJunos, event: "bgp_peer_down", object: "10.0.0.1 vrf CUST-A", fields: map[string]string{"vrf": "CUST-A", "asn": "65001"}},
		{name: "rpd_vrf_b", raw: "<29>Nov 29 14:06:09 mx1 rpd[2345]: RPD_BGP_NEIGHBOR_STATE_CHANGED: BGP peer 10.0.0.1+179 (External AS 65002) changed state from OpenConfirm to Established (event RecvKeepAlive) (instance CUST-B)",
			vendor: VendorJunos, event: "bgp_peer_up", object: "10.0.0.1 vrf CUST-B", fields: map[string]string{"vrf": "CUST-B"}},
		{name: "bgp_peer_state_change_vrf", raw: "<29>Nov 29 14:06:09 mx1 rpd[2345]: BGP_PEER_STATE_CHANGE: BGP peer 10.2.2.2 (External AS 65003) changed state from Established to Idle (event HoldTime) (instance CUST-A)",
			vendor: VendorJunos, event: "bgp_peer_down", object: "10.2.2.2 vrf CUST-A", fields: map[string]string{"vrf": "CUST-A"}},
		{name: "rfc5424_sd", raw: `<28>1 2026-11-29T14:06:07.123+01:00 mx2 rpd 2345 RPD_BGP_NEIGHBOR_STATE_CHANGED [junos@2636.1.1.1.2.29 peer-name="10.0.0.1" old-state="Established" new-state="Idle"] BGP peer 10.0.0.1 (External AS 65001) changed state from Established to Idle (event RecvNotify) (instance CUST-A)`,
			vendor: VendorJunos, event: "bgp_peer_down", object: "10.0.0.1 vrf CUST-A"},
	})
}

// TestDeviceLinesHuawei: S-series and AR routers report a port going down or
// up as IFPDT/4/IF_STATE ("Interface X has turned into DOWN state."), as
// well as IFNET/; Huawei's "%%01MODULE/SEV/BRIEF" is split as Cisco's
// mnemonic is; a BGP session's InstanceName is its VRF.
func TestDeviceLinesHuawei(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "ifpdt_down", raw: "<188>Sep 13 2021 00:19:26-08:00 R1 %%01IFPDT/4/IF_STATE(l)[4]:Interface GigabitEthernet0/0/1 has turned into DOWN state.",
			vendor: VendorHuawei, event: "interface_down", object: "GigabitEthernet0/0/1"},
		{name: "ifpdt_up", raw: "<188>Apr 16 2024 03:33:48-08:00 Huawei %%01IFPDT/4/IF_STATE(l)[0]:Interface GigabitEthernet0/0/0 has turned into UP state.",
			vendor: VendorHuawei, event: "interface_up", object: "GigabitEthernet0/0/0"},
		{name: "ifnet_mnemonic", raw: "<188>Sep 13 2021 00:19:26 R1 %%01IFNET/4/LINK_STATE(l)[5]:The line protocol IP on the interface GigabitEthernet0/0/1 has entered the DOWN state.",
			vendor: VendorHuawei, event: "interface_down", object: "GigabitEthernet0/0/1", fac: "IFNET", sev: 4, mnem: "LINK_STATE"},
		{name: "bgp_instance", raw: "<188>Sep 13 2021 00:19:26 R1 %%01BGP/3/STATE_CHG_UPDOWN(l)[6]:The status of the peer 10.1.1.2 changed from ESTABLISHED to IDLE. (InstanceName=vpn1, StateChangeReason=Hold Timer Expired)",
			vendor: VendorHuawei, event: "bgp_peer_down", object: "10.1.1.2 vrf vpn1", fields: map[string]string{"vrf": "vpn1"}},
	})
}

// TestDeviceLinesComware: HPE Comware and H3C write the year after the
// time ("Aug 27 12:21:31 2018 sw1 %%10IFNET/..."), which the header took
// for the host name, leaving the message to the Cisco and generic rules.
// Their "%%10MODULE/SEV/BRIEF" is Huawei's layout (the two share a
// lineage) but "%%" is H3C's vendor mark and 10 its log version, where
// VRP writes 01 (H3C's information center guides, "Log field
// description"): they are hpe_comware, not huawei_vrp. Routing, login and
// configuration lines are those of H3C's Comware 7 system log message
// references as devices send them (some with the optional "-DevIP=A;"
// location before the text); Comware 5 logs BGP under RM/3/RMLOG.
func TestDeviceLinesComware(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "link_up", raw: "<189>Aug 27 12:21:31 2018 bd %%10IFNET/5/LINK_UPDOWN: Line protocol on the interface Ten-GigabitEthernet1/0/38 is up.",
			vendor: VendorComware, event: "interface_up", object: "Ten-GigabitEthernet1/0/38", fac: "IFNET", sev: 5, mnem: "LINK_UPDOWN"},
		// The H3C format's example in H3C's MSR 50 user manual (System
		// information formats).
		{name: "manual_link_down", raw: "<187>Oct 13 16:48:08 2009 Sysname %%10IFNET/3/LINK_UPDOWN(l): GigabitEthernet3/1/6 link status is DOWN.",
			vendor: VendorComware, event: "interface_down", object: "GigabitEthernet3/1/6", fac: "IFNET", sev: 3, mnem: "LINK_UPDOWN"},
		{name: "bgp_public_up", raw: "<4>Jun 17 11:34:49 2020 7506X-G %%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from OPENCONFIRM to ESTABLISHED.",
			vendor: VendorComware, event: "bgp_peer_up", object: "3.3.3.2", fac: "BGP", sev: 5, mnem: "BGP_STATE_CHANGED"},
		{name: "bgp_vrf_down", raw: "<189>Apr 13 20:41:09 2026 core1 %%10BGP/5/BGP_STATE_CHANGED: BGP.extranet: 10.251.9.153  state has changed from ESTABLISHED to IDLE for hold timer expiration caused by peer device.",
			vendor: VendorComware, event: "bgp_peer_down", object: "10.251.9.153 vrf extranet", fields: map[string]string{"neighbor": "10.251.9.153", "vrf": "extranet"}},
		{name: "bgp_v6_down", raw: "<189>Apr 13 20:41:09 2026 core1 %%10BGP/5/BGP_STATE_CHANGED: -DevIP=10.0.0.1; BGP.vpn1: 2001:db8::2 state has changed from ESTABLISHED to ACTIVE.",
			vendor: VendorComware, event: "bgp_peer_down", object: "2001:db8::2 vrf vpn1"},
		{name: "bgp_no_event", raw: "<189>Apr 13 20:41:09 2026 core1 %%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from IDLE to CONNECT.",
			vendor: VendorComware},
		{name: "comware5_bgp", raw: "<187>Aug 24 14:12:13 2006 Sysname %%10RM/3/RMLOG(l): BGP.: 10.1.1.2 State is changed from OPENCONFIRM to ESTABLISHED.",
			vendor: VendorComware, event: "bgp_peer_up", object: "10.1.1.2"},
		{name: "ospf_down", raw: "<189>Apr 15 02:26:05 2026 core2 %%10OSPF/5/OSPF_NBR_CHG: -DevIP=10.251.0.43; OSPF 10 Neighbor 10.244.255.225(Vlan-interface408) changed from FULL to INIT.",
			vendor: VendorComware, event: "ospf_neighbor_down", object: "10.244.255.225", fields: map[string]string{"interface": "Vlan-interface408"}},
		{name: "ospf_up", raw: "<189>Nov  7 03:07:52 2025 SW1 %%10OSPF/5/OSPF_NBR_CHG: OSPF 1 Neighbor 192.168.1.253(Twenty-FiveGigE1/0/2) changed from LOADING to FULL.",
			vendor: VendorComware, event: "ospf_neighbor_up", object: "192.168.1.253", fields: map[string]string{"interface": "Twenty-FiveGigE1/0/2"}},
		{name: "login_user", raw: "<189>Jan  7 09:40:33 2019 DianXin-route %%10SHELL/5/SHELL_LOGIN: -DevIP=10.10.2.104; yicheng logged in from 10.10.10.10.",
			vendor: VendorComware, event: "login_succeeded", object: "yicheng", fields: map[string]string{"source": "10.10.10.10"}},
		{name: "login_domain_line", raw: "<189>Dec  4 17:43:06 2019 H3C %%10SHELL/5/SHELL_LOGIN: admgbzwy@system(@context10) logged in from vty1.",
			vendor: VendorComware, event: "login_succeeded", object: "admgbzwy@system"},
		// Comware 5 and the guides' example name the line, not a user: the
		// object is the source, as for VRP's "VTY login from A".
		{name: "login_line_only", raw: "<189>Nov 24 16:22:21 2016 Sysname %%10SHELL/5/SHELL_LOGIN: -DevIP=1.1.1.1; -SN=210235A2QYB20C000001; VTY logged in from 192.168.1.26.",
			vendor: VendorComware, event: "login_succeeded", object: "192.168.1.26", fields: map[string]string{"user": "", "source": "192.168.1.26"}},
		{name: "login_failed", raw: "<189>Jan 10 17:35:49 2020 sw2 %%10SHELL/5/SHELL_LOGINFAIL(l): SSH user xjdl failed to log in from 192.168.10.20 on VTY0..",
			vendor: VendorComware, event: "login_failed", object: "xjdl", fields: map[string]string{"source": "192.168.10.20"}},
		// Comware 7's LOGIN_FAILED as a switch sent it (shuangyangyu/
		// h3c-tv-agent agent/tests/test_syslog_watcher.py): an ACL command
		// typed at the user name prompt is the user, and its address no
		// source.
		{name: "login_failed7", raw: "<189>Aug  3 15:07:42 2026 H3C %%10LOGIN/5/LOGIN_FAILED: -DevIP=192.168.1.254; rule 15 deny ip source 192.168.1.24 0 destination any failed to log in from 192.168.5.182.",
			vendor: VendorComware, event: "login_failed", object: "rule 15 deny ip source 192.168.1.24 0 destination any", fields: map[string]string{"source": "192.168.5.182"}, fac: "LOGIN", sev: 5, mnem: "LOGIN_FAILED"},
		{name: "config", raw: "<189>Jan  1 07:30:19 2000 Sysname %%10CFGMAN/5/CFGMAN_CFGCHANGED: -EventIndex=12-CommandSource=2-ConfigSource=4-ConfigDestination=2; Configuration is changed.",
			vendor: VendorComware, event: "config_changed", fac: "CFGMAN", sev: 5, mnem: "CFGMAN_CFGCHANGED"},
		// Relayed by rsyslog, which took the year for the host name.
		{name: "relayed", raw: "<189>1 2026-04-13T20:41:09+00:00 2026 core1 - - - %%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from OPENCONFIRM to ESTABLISHED.",
			vendor: VendorComware, event: "bgp_peer_up", object: "3.3.3.2", fac: "BGP", sev: 5, mnem: "BGP_STATE_CHANGED"},
		// VRP stays VRP.
		{name: "huawei", raw: "<188>Nov 29 14:02:11 2026 ar1 %%01IFNET/4/LINK_STATE(l)[0]:The line protocol IP on the interface GigabitEthernet0/0/1 has entered the DOWN state.",
			vendor: VendorHuawei, event: "interface_down", object: "GigabitEthernet0/0/1"},
	})
}

// TestDeviceLinesPANOSLinkChange: PAN-OS SYSTEM log "link-change": "Port
// ethernet1/3: Down 1Gb/s-full duplex" / "Port ethernet1/2: Up
// 10Gb/s-full duplex".
func TestDeviceLinesPANOSLinkChange(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "down", raw: `<14>Nov 29 14:02:11 fw1 1,2026/11/29 14:02:11,012345678901,SYSTEM,port,0,2026/11/29 14:02:11,,link-change,ethernet1/3,0,0,general,informational,"Port ethernet1/3: Down 1Gb/s-full duplex",12345,0x0,0,0,0,0,,fw1`,
			event: "interface_down", object: "ethernet1/3"},
		{name: "up", raw: `<14>Nov 29 14:02:11 fw1 1,2026/11/29 14:02:11,012345678901,SYSTEM,port,0,2026/11/29 14:02:11,,link-change,ethernet1/2,0,0,general,informational,"Port ethernet1/2: Up   10Gb/s-full duplex",12346,0x0,0,0,0,0,,fw1`,
			event: "interface_up", object: "ethernet1/2"},
	})
}

// TestDeviceLinesPortRuleFalsePositive: the shared port rule (ProCurve's "port X
// is now off-line", EXOS's "Port X link down") has no vendor, so a "port
// <number> down" from any host must not be a link event about an
// interface named "8080".
func TestDeviceLinesPortRuleFalsePositive(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "tcp_health_check", raw: "<14>Nov 29 14:02:11 lb1 checkd[123]: health check: tcp port 8080 down"},
	})
}

// TestDeviceLinesJunosLoginInformation: login(1) on Junos names the
// address after "from host".
func TestDeviceLinesJunosLoginInformation(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "telnet", raw: "<86>Nov 29 14:06:09 mx1 login[4312]: LOGIN_INFORMATION: User netops logged in from host 10.0.0.1 on device ttyp0",
			vendor: VendorJunos, event: "login_succeeded", object: "netops", fields: map[string]string{"source": "10.0.0.1"}},
	})
}

// TestDeviceLinesHuaweiTrapLogs: VRP sends its traps to the log host too,
// as "%%01MODULE/SEV/BRIEF(l)[n]:OID <oid> <text>. (params)" lines: the
// S-series and AR link traps IFNET/1/IF_LINKDOWN and IF_LINKUP (and
// IF_PVCDOWN, with spaces for '='), AR's PPP line protocol
// IFNET/4/LINKNO_STATE, the BGP4-MIB traps BGP/2/ESTABLISHED and
// BGP/2/BACKWARD, OSPF's NBRCHG and VRP8's ospfNbrStateChange alarm (the
// state as OSPF-MIB numbers it, or by name), and HWCM's configuration
// change trap. Formats: Huawei's S-series and AR alarm and log
// references, nocproject/noc's Huawei/VRP classification rules.
func TestDeviceLinesHuaweiTrapLogs(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "if_linkdown", raw: "<185>Sep 13 2021 00:19:26 R1 %%01IFNET/1/IF_LINKDOWN(l)[7]:OID 1.3.6.1.6.3.1.1.5.3 Interface 8 turned into DOWN state.(AdminStatus=1,OperStatus=2,InterfaceName=GigabitEthernet0/0/2)",
			vendor: VendorHuawei, event: "interface_down", object: "GigabitEthernet0/0/2"},
		{name: "if_linkup", raw: "<185>Sep 13 2021 00:19:29 R1 %%01IFNET/1/IF_LINKUP(l)[8]:OID 1.3.6.1.6.3.1.1.5.4 Interface 8 turned into UP state.(AdminStatus=1,OperStatus=1,InterfaceName=GigabitEthernet0/0/2)",
			vendor: VendorHuawei, event: "interface_up", object: "GigabitEthernet0/0/2"},
		{name: "if_pvcdown", raw: "<185>Sep 13 2021 00:19:26 R1 %%01IFNET/1/IF_PVCDOWN(l)[9]:OID 1.3.6.1.6.3.1.1.5.3 Interface 56 turned into DOWN state.(AdminStatus 1,OperStatus 2,InterfaceName GigabitEthernet1/1/8)",
			vendor: VendorHuawei, event: "interface_down", object: "GigabitEthernet1/1/8"},
		{name: "linkno_state", raw: "<188>Sep 13 2021 00:19:26 R1 %%01IFNET/4/LINKNO_STATE(l)[6]:The line protocol on the interface Serial1/0/0 has entered the DOWN state.",
			vendor: VendorHuawei, event: "interface_down", object: "Serial1/0/0"},
		{name: "bgp_established", raw: "<185>Sep 13 2021 00:19:26 R1 %%01BGP/2/ESTABLISHED(l)[9]:OID 1.3.6.1.2.1.15.7.1 The BGP FSM enters the Established state. (BgpPeerRemoteAddr=10.1.1.2, BgpPeerLastError=0, BgpPeerState=6)",
			vendor: VendorHuawei, event: "bgp_peer_up", object: "10.1.1.2"},
		{name: "bgp_backward", raw: "<185>Sep 13 2021 00:19:26 R1 %%01BGP/2/BACKWARD(l)[10]:OID 1.3.6.1.2.1.15.7.2 The BGP FSM moves from a higher numbered state to a lower numbered state. (BgpPeerRemoteAddr=10.1.1.2, InstanceId=0, Afi=1, Safi=1, PeerType=1, PeerRemoteAddr=10.1.1.2, InterfaceIndex=6, BgpPeerLastError=4/0, BgpPeerState=1, BgpPeerUnavaiReason=2, InterfaceName=GigabitEthernet0/0/1)",
			vendor: VendorHuawei, event: "bgp_peer_down", object: "10.1.1.2"},
		{name: "ospf_nbrchg_down", raw: "<185>Sep 13 2021 00:19:26 R1 %%01OSPF/2/NBRCHG(l)[2]:OID 1.3.6.1.2.1.14.16.2.2: The status of the non-virtual neighbor changes. (NbrIpAddress=10.1.1.2, NbrAddressLessIndex=0, ProcessId=1, AreaId=0.0.0.0, IfnetIndex=6, LocalIfIpAddress=10.1.1.1, ProcessId=1, RouterId=1.1.1.1, NbrRtrId=2.2.2.2, NbrState=1, IfName=GigabitEthernet0/0/1, InstanceName=, NbrChgReason=1)",
			vendor: VendorHuawei, event: "ospf_neighbor_down", object: "10.1.1.2"},
		{name: "ospf_nbrchg_full", raw: "<185>Sep 13 2021 00:19:40 R1 %%01OSPF/2/NBRCHG(l)[3]:OID 1.3.6.1.2.1.14.16.2.2: The status of the non-virtual neighbor changes. (NbrIpAddress=10.1.1.2, NbrAddressLessIndex=0, ProcessId=1, AreaId=0.0.0.0, IfnetIndex=6, LocalIfIpAddress=10.1.1.1, ProcessId=1, RouterId=1.1.1.1, NbrRtrId=2.2.2.2, NbrState=8, IfName=GigabitEthernet0/0/1, InstanceName=, NbrChgReason=102)",
			vendor: VendorHuawei, event: "ospf_neighbor_up", object: "10.1.1.2"},
		{name: "ospf_nbrchg_exchange", raw: "<185>Sep 13 2021 00:19:38 R1 %%01OSPF/2/NBRCHG(l)[3]:OID 1.3.6.1.2.1.14.16.2.2: The status of the non-virtual neighbor changes. (NbrIpAddress=10.1.1.2, NbrAddressLessIndex=0, ProcessId=1, AreaId=0.0.0.0, IfnetIndex=6, LocalIfIpAddress=10.1.1.1, ProcessId=1, RouterId=1.1.1.1, NbrRtrId=2.2.2.2, NbrState=6, IfName=GigabitEthernet0/0/1, InstanceName=, NbrChgReason=3)",
			vendor: VendorHuawei},
		{name: "ospf_alarm_active", raw: "<185>Sep 13 2021 00:19:26 NE1 %%01OSPF/2/ospfNbrStateChange_active(l):CID=0x80fe0201;The status of the non-virtual neighbor has changed. (RouterId=1.1.1.1, NbrIpAddress=10.1.1.2, NbrAddressLessIndex=0, NbrRtrId=2.2.2.2, NbrState=Down, ProcessId=1, AreaId=0.0.0.0, IfnetIndex=6, LocalIfIpAddress=10.1.1.1, IfName=GigabitEthernet0/3/0, VpnName=_public_, Reason=Adjacency HoldTimer expired, SubReason=0)",
			vendor: VendorHuawei, event: "ospf_neighbor_down", object: "10.1.1.2"},
		{name: "ospf_alarm_clear", raw: "<185>Sep 13 2021 00:19:40 NE1 %%01OSPF/2/ospfNbrStateChange_clear(l):CID=0x80fe0201-clearType=service_resume;The status of the non-virtual neighbor has changed. (RouterId=1.1.1.1, NbrIpAddress=10.1.1.2, NbrAddressLessIndex=0, NbrRtrId=2.2.2.2, NbrState=Full, ProcessId=1, AreaId=0.0.0.0, IfnetIndex=6, LocalIfIpAddress=10.1.1.1, IfName=GigabitEthernet0/3/0, VpnName=_public_, Reason=Alarm clear, SubReason=0)",
			vendor: VendorHuawei, event: "ospf_neighbor_up", object: "10.1.1.2"},
		{name: "hwcm_config", raw: "<189>Sep 13 2021 00:19:26 R1 %%01HWCM/5/TRAPLOG(l)[501]:OID 1.3.6.1.4.1.2011.6.10.2.1 configure changed. (EventIndex=17, CommandSource=1, ConfigSource=3, ConfigDestination=2)",
			vendor: VendorHuawei, event: "config_changed", object: ""},
		// No event: the save's (running to startup).
		{name: "hwcm_save", raw: "<189>Sep 13 2021 00:19:26 R1 %%01HWCM/5/TRAPLOG(l)[500]:OID 1.3.6.1.4.1.2011.6.10.2.1 configure changed. (EventIndex=16, CommandSource=1, ConfigSource=2, ConfigDestination=4)",
			vendor: VendorHuawei},
		// VRP8's failed SSH login (the rule's line is the CE6800 command
		// reference's).
		{name: "ssh_login_fail", raw: "<190>Sep 13 2021 00:19:26 R1 %%01SSH/5/SSH_USER_LOGIN_FAIL(l)[4]:The SSH user failed to login. (ServiceType=stelnet, FailedReason=Password authentication failed, UserName=admin, IPAddress=10.1.1.100, VPNInstanceName=_public_)",
			vendor: VendorHuawei, event: "login_failed", object: "admin", fields: map[string]string{"source": "10.1.1.100"}},
		// No event: a save prompt.
		{name: "savecfg", raw: "<189>Sep 13 2021 00:19:26 R1 %%01CFM/5/SAVECFG_YES(s)[3]:When being asked whether to save current configuration, the user chose Y.",
			vendor: VendorHuawei},
	})
}

// TestDeviceLinesMikroTikWithoutTopics: RouterOS 7 with bsd-syslog=yes
// sends the message without its topics ("system,info"): a change made
// from Winbox reads "device changed by winbox-3.42/tcp-msg(winbox):
// admin@A (/interface set ...)" (akpw/mktxp-stack#33, from a router).
// The tool and "user@address" name it a RouterOS change; a bare "X
// changed by Y" from any host is not one.
func TestDeviceLinesMikroTikWithoutTopics(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "winbox", raw: "<30>Sep 19 00:07:13 rt01 device changed by winbox-3.42/tcp-msg(winbox):admin@192.168.100.50 (/interface set ether3 disabled=no l2mtu=1598 mtu=1500 name=ether3)",
			vendor: VendorMikroTik, event: "config_changed", object: "admin", fields: map[string]string{"source": "192.168.100.50"}},
		{name: "with_topics", raw: "<30>Sep 19 00:07:13 rt01 system,info device changed by winbox-3.42/tcp-msg(winbox):admin@192.168.100.50 (/interface set ether3 disabled=no)",
			vendor: VendorMikroTik, event: "config_changed", object: "admin"},
		{name: "plain_english", raw: "<30>Sep 19 00:07:13 app1 billing: invoice 42 changed by admin"},
	})
}

// TestDeviceLinesJunosOSPFSteps: rpd logs RPD_OSPF_NBRUP at each step
// of an adjacency coming up (Init to 2Way, Init to ExStart, ...) and
// RPD_OSPF_NBRDOWN going down, with the states in the text (napalm-logs'
// junos OSPF_NEIGHBOR_UP/DOWN fixtures): only reaching Full is up and
// only leaving it is down, as for IOS.
func TestDeviceLinesJunosOSPFSteps(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "init_to_2way", raw: "<29>Jun 21 14:03:12  vmx01 rpd[2902]: RPD_OSPF_NBRUP: OSPF neighbor 1.1.1.1 (realm ospf-v2 ge-0/0/0.0 area 0.0.0.0) state changed from Init to 2Way due to 2WayRcvd (event reason: ExStart)",
			vendor: VendorJunos},
		{name: "init_to_exstart", raw: "<29>Jun 21 14:03:12  vmx01 rpd[2902]: RPD_OSPF_NBRUP: OSPF neighbor 1.1.1.1 (realm ospf-v2 ge-0/0/0.0 area 0.0.0.0) state changed from Init to ExStart due to 2WayRcvd (event reason: ExStart)",
			vendor: VendorJunos},
		{name: "exchange_to_full", raw: "<29>Jun 21 14:03:12  vmx01 rpd[2902]: RPD_OSPF_NBRUP: OSPF neighbor 1.1.1.1 (realm ospf-v2 ge-0/0/0.0 area 0.0.0.0) state changed from Exchange to Full due to ExchangeDone (event reason: ExStart)",
			vendor: VendorJunos, event: "ospf_neighbor_up", object: "1.1.1.1", fields: map[string]string{"interface": "ge-0/0/0.0"}},
		{name: "full_to_down", raw: "<29>Jun 21 14:03:12  vmx01 rpd[2902]: RPD_OSPF_NBRDOWN: OSPF neighbor 1.1.1.1 (realm ospf-v2 ge-0/0/0.0 area 0.0.0.0) state changed from Full to Down due to KillNbr (event reason: neighbor down)",
			vendor: VendorJunos, event: "ospf_neighbor_down", object: "1.1.1.1"},
	})
}

// TestDeviceLinesFortinet: FortiOS logs a configuration change with a
// config transaction id (cfgtid=) and the administrator as user=
// (LOGID_EVENT_CONFIG_OBJATTR, 44547: a device's line from a public
// script); its router log carries the BGP daemon's own ADJCHANGE line in
// msg= (Fortinet community article 357232).
func TestDeviceLinesFortinet(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "config_objattr", raw: `<189>timestamp=1746785319 devname="1001-3260-25" devid="FGT40FTK23095012" vd="root" date=2025-05-09 time=10:08:39 eventtime=1746796118774022660 tz="-0300" logid="0100044547" type="event" subtype="system" level="information" logdesc="Object attribute configured" user="ADM-Adriano" ui="fgfm_tunnel" action="Delete" cfgtid=1037172738 cfgpath="user.radius" cfgobj="RADIUS-SICOOB" msg="Delete user.radius RADIUS-SICOOB"`,
			vendor: VendorFortinet, event: "config_changed", object: "ADM-Adriano"},
		{name: "bgp_adjchange", raw: `<188>date=2024-11-01 time=10:00:00 devname="fw1" devid="FGT40FTK23095012" logid="0103020300" type="event" subtype="router" level="warning" vd="root" id=20300 msg="BGP: %BGP-5-ADJCHANGE: VRF 0 neighbor 10.191.19.33 Down Hold Timer Expired"`,
			vendor: VendorFortinet, event: "bgp_peer_down", object: "10.191.19.33"},
	})
}

// TestDeviceLinesNXOSConfigSource: NX-OS logs a configuration change as
// "%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by USER on A@pts/N"
// (a lab's Nexus log in a public GitHub write-up: "... by admin on
// 192.168.101.1@pts/3"; Observium's IncludesSyslogTest.php has the same
// layout, the address masked) or "... on console0" (Cisco's Nexus 7000 EEM
// document 118907, as Packt's Mastering Python Networking quotes it). The
// "from vty" is NX-OS's word for any session, the console's too: the
// client is after "on", as IOS writes it in "on vty0 (A)". weir gave
// source "vty" for both.
func TestDeviceLinesNXOSConfigSource(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "ssh", raw: "<189>: 2022 Jul 30 21:22:56 UTC: %VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on 192.168.101.1@pts/3",
			vendor: VendorCiscoNXOS, event: "config_changed", object: "admin", fields: map[string]string{"user": "admin", "source": "192.168.101.1"}},
		{name: "console", raw: "<189>: 2014 Jun 29 19:20:57 UTC: %VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on console0",
			vendor: VendorCiscoNXOS, event: "config_changed", object: "admin", fields: map[string]string{"user": "admin", "source": "console0"}},
	})
}

// TestDeviceLinesArubaSwitchOSPF: ArubaOS-Switch (ProCurve) logs an OSPF
// adjacency into or out of Full as "ADJCHG: Neighbor A on interface
// vlan-22 moved to Down state, Inactivity Timer" (OSPFv3: HPE's Aruba
// 16.08 multicast and routing guide, "logging neighbor-adjacency", its
// "show log -r OSPF3" example) and, for OSPFv2, "ADJCHG: Neighbor with
// Router ID A on vlan-850 moved to Full state - adjacency formed." after
// the stack member's name (a 2930 stack's "show logging -r" in a public
// GitHub write-up on OSPF authentication). No rule knew the wording: no
// event.
func TestDeviceLinesArubaSwitchOSPF(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "ospf3_down", raw: "<14>May  1 15:21:09 sw1 OSPF3: ADJCHG: Neighbor 15.255.155.1 on interface vlan-22 moved to Down state, Inactivity Timer",
			vendor: VendorArubaSwitch, event: "ospf_neighbor_down", object: "15.255.155.1", fields: map[string]string{"interface": "vlan-22"}},
		{name: "ospf3_full", raw: "<14>Apr 27 14:36:48 sw1 02809 OSPF3: ADJCHG: Neighbor 10.10.10.45 on interface vlan-11 moved to Full state, Loading Done",
			vendor: VendorArubaSwitch, event: "ospf_neighbor_up", object: "10.10.10.45", fields: map[string]string{"interface": "vlan-11"}},
		{name: "ospf2_full_stack", raw: "<14>Nov  5 22:47:22 10.251.34.122 02703 OSPF: ST1-CMDR: ADJCHG: Neighbor with Router ID 10.251.34.121 on vlan-850 moved to Full state - adjacency formed.",
			vendor: VendorArubaSwitch, event: "ospf_neighbor_up", object: "10.251.34.121", fields: map[string]string{"interface": "vlan-850"}},
	})
}

// TestDeviceLinesMikroTikComboPorts: a CRS312's combo ports (SFP+ or
// RJ45, default names combo1..combo4) log "interface,info combo3 link
// down" and "combo3 link up (speed 10G, full duplex)" (a CRS312 on
// RouterOS 7.6 in the MikroTik forum's long "severe port flapping" thread,
// as a public GitHub archive of it has the log); with bsd-syslog RouterOS 7
// sends them without the topics, where the link rule takes only default
// interface names, and "combo" was not one of them: no event.
func TestDeviceLinesMikroTikComboPorts(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "topics", raw: "<30>Dec 28 02:56:02 CRS312 interface,info combo3 link down",
			vendor: VendorMikroTik, event: "interface_down", object: "combo3"},
		{name: "bsd_down", raw: "<30>Dec 28 02:56:02 CRS312 combo3 link down",
			vendor: VendorMikroTik, event: "interface_down", object: "combo3"},
		{name: "bsd_up", raw: "<30>Dec 28 02:56:02 CRS312 combo3 link up (speed 10G, full duplex)",
			vendor: VendorMikroTik, event: "interface_up", object: "combo3"},
	})
}

// TestDeviceLinesNokiaBGPVPRN: SR OS names the routing instance of a BGP
// event after its number (classic log layout, "BGP #2038 vprn109 Peer 11:
// A", an SR OS router's log in pastebin.com/4Ui8Tp2G, its two lines
// joined) or after the sequence number (syslog layout, "TMNX: 10644
// vprn109 BGP-MINOR-...-2038 [Peer 11: A]:", as the SReXperts syslog
// capture, nokia/SReXperts docs/nos/sros/beginner/
// 57-SROS_remote_logging_with_Syslog_and_Loki.md, shows its "vprn300" and
// "Base" events; the BGP event is the paste's). The session to A in
// VPRN 109 was named "A", as the default instance's: a PE's sessions to one
// address in two VPRNs were one object. "Base" is the default instance.
func TestDeviceLinesNokiaBGPVPRN(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "classic_up", raw: `<187>Jun 22 10:27:15 pe1 10644 2018/06/22 10:27:15.844 UTC MINOR: BGP #2038 vprn109 Peer 11: 10.158.60.200 "VR 11: Group NSG_WAN: Peer 10.158.60.200: moved into established state"`,
			vendor: VendorNokia, event: "bgp_peer_up", object: "10.158.60.200 vrf vprn109", fields: map[string]string{"vrf": "vprn109"}},
		{name: "classic_down", raw: `<188>Jun 22 10:26:24 pe1 10639 2018/06/22 10:26:24.466 UTC WARNING: BGP #2039 vprn109 Peer 11: 10.158.60.200 "VR 11: Group NSG_WAN: Peer 10.158.60.200: moved from higher state ESTABLISHED to lower state IDLE due to event TCP SOCKET ERROR"`,
			vendor: VendorNokia, event: "bgp_peer_down", object: "10.158.60.200 vrf vprn109", fields: map[string]string{"vrf": "vprn109"}},
		{name: "syslog_vprn_up", raw: "<187>Jun 22 10:27:15 pe1 TMNX: 10644 vprn109 BGP-MINOR-bgpEstablishedNotification-2038 [Peer 11: 10.158.60.200]:  VR 11: Group NSG_WAN: Peer 10.158.60.200: moved into established state",
			vendor: VendorNokia, event: "bgp_peer_up", object: "10.158.60.200 vrf vprn109", fields: map[string]string{"vrf": "vprn109"}},
		{name: "syslog_base_up", raw: "<187>Apr 10 16:20:29 g51-pe3 TMNX: 110 Base BGP-MINOR-bgpEstablishedNotification-2019 [Peer 1: fd00:fde8::51:13]:  (ASN 65000) VR 1: Group iBGP-DC: Peer fd00:fde8::51:13: moved into established state",
			vendor: VendorNokia, event: "bgp_peer_up", object: "fd00:fde8::51:13"},
	})
}
