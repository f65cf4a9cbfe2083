package syslog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	gosyslog "github.com/leodido/go-syslog/v4"
	"github.com/leodido/go-syslog/v4/rfc5424"

	"github.com/weirnet/weir/internal/corpus"
	"github.com/weirnet/weir/telemetry"
)

type corpusLine = corpus.SyslogLine

func loadCorpus(t testing.TB) []corpusLine {
	lines, err := corpus.Syslog()
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

var fixedNow = func() time.Time { return time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC) }

// checkAgainstCorpus is shared by the parser test and the end-to-end
// listener tests: format, severity and host as the corpus says, the message
// text intact, the raw bytes kept whole.
func checkAgainstCorpus(t *testing.T, c corpusLine, l *telemetry.Log) {
	t.Helper()
	if l.Format != c.Format {
		t.Errorf("%.80q: format %s, want %s (%s)", c.Raw, l.Format, c.Format, l.ParseError)
	}
	if c.Severity != nil && l.Severity != *c.Severity {
		t.Errorf("%.80q: severity %d, want %d", c.Raw, l.Severity, *c.Severity)
	}
	if l.Hostname != c.Host {
		t.Errorf("%.80q: host %q, want %q", c.Raw, l.Hostname, c.Host)
	}
	if l.Raw != c.Raw {
		t.Errorf("raw changed: %.80q", l.Raw)
	}
	if !strings.HasSuffix(c.Raw, l.Message) || (c.Raw != "" && l.Message == "" && c.Format != FormatMalformed) {
		t.Errorf("%.80q: message %.80q is not the tail of the raw line", c.Raw, l.Message)
	}
	if c.Format == FormatMalformed && l.ParseError == "" {
		t.Errorf("%.80q: malformed without parse_error", c.Raw)
	}
}

func TestParseCorpus(t *testing.T) {
	p := Parser{Now: fixedNow}
	for _, c := range loadCorpus(t) {
		var l telemetry.Log
		p.ParseCopy([]byte(c.Raw), &l)
		checkAgainstCorpus(t, c, &l)
		if c.Format != FormatMalformed && l.Time == nil {
			t.Errorf("%.80q: no device time", c.Raw)
		}
	}
}

func TestParseDetails(t *testing.T) {
	checkParseCases(t, []parseCase{
		{raw: "<189>48: edge1: Nov 29 14:03:01.004 UTC: %BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up", format: "cisco", host: "edge1", seq: "48",
			m: "%BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up", time: "2026-11-29T14:03:01.004Z"},
		{raw: "<187>1236: RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : x", format: "cisco", app: "bgp", pid: "1052", seq: "1236",
			m: "%ROUTING-BGP-5-ADJCHANGE : x", time: "2026-11-29T14:05:00.123Z"},
		// IOS-XR without "service sequence-numbers": the node first.
		{raw: "<187>RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : x", format: "cisco", app: "bgp", pid: "1052",
			m: "%ROUTING-BGP-5-ADJCHANGE : x", time: "2026-11-29T14:05:00.123Z"},
		// ASA without "logging timestamp" (its default): no time, with and without a device id.
		{raw: "<166>%ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443", format: "cisco",
			m: "%ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443"},
		{raw: "<166>fw1 : %ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443", format: "cisco", host: "fw1",
			m: "%ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443"},
		// NX-OS and AireOS with their origin host name, behind a relay's header.
		{raw: "<189>2026-12-02T06:10:54.359866+00:00 relay1 nx-leaf-101: 2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up", format: "cisco", host: "nx-leaf-101",
			m: "%ETHPORT-5-IF_UP: Interface Ethernet1/1 is up", time: "2026-11-29T14:03:01Z"},
		{raw: "<131>Nov 29 14:03:02 relay1 wlc1: *spamApTask1: Nov 29 14:03:01.553: %LWAPP-3-DISCOVERY_ERR: no response", format: "cisco", host: "wlc1", app: "spamApTask1",
			m: "%LWAPP-3-DISCOVERY_ERR: no response", time: "2026-11-29T14:03:01.553Z"},
		// An ordinary line whose message starts with a year stays as it is.
		{raw: "<13>Nov 29 14:03:02 host1 backup: 2026 archive done", format: "rfc3164", host: "host1", app: "backup",
			m: "2026 archive done", time: "2026-11-29T14:03:02Z"},
		// IOS-XR with "logging hostnameprefix pe1", and a node clock without a zone ("14:16:14.834 : ").
		{raw: "<187>2001: pe1 RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : x", format: "cisco", host: "pe1", app: "bgp", pid: "1052", seq: "2001",
			m: "%ROUTING-BGP-5-ADJCHANGE : x", time: "2026-11-29T14:05:00.123Z"},
		{raw: "<187>94307: gw2.par1 LC/0/2/CPU0:Nov  7 20:16:14.834 : ifmgr[214]: %PKT_INFRA-LINK-3-UPDOWN : Interface TenGigE0/2/0/4, changed state to Down", format: "cisco", host: "gw2.par1", app: "ifmgr", pid: "214", seq: "94307",
			m: "%PKT_INFRA-LINK-3-UPDOWN : Interface TenGigE0/2/0/4, changed state to Down", time: "2026-11-07T20:16:14.834Z"},
		{raw: "<189>: 2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up", format: "cisco", m: "%ETHPORT-5-IF_UP: Interface Ethernet1/1 is up", time: "2026-11-29T14:03:01Z"},
		// IOS/IOS-XE "service timestamps log datetime msec show-timezone year", with and without a host name.
		{raw: "<189>48: edge1: Nov 29 2026 14:03:01.004 UTC: %BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up", format: "cisco", host: "edge1", seq: "48",
			m: "%BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up", time: "2026-11-29T14:03:01.004Z"},
		{raw: "<187>47: *Nov 29 2025 14:02:11.101: %LINK-3-UPDOWN: Interface Gi1/0/24, changed state to down", format: "cisco", seq: "47",
			m: "%LINK-3-UPDOWN: Interface Gi1/0/24, changed state to down", time: "2025-11-29T14:02:11.101Z"},
		// ASA "logging timestamp", without and with "logging device-id hostname".
		// HPE Comware and H3C put the year after the time.
		{raw: "<189>Aug 27 12:21:31 2018 bd %%10IFNET/5/LINK_UPDOWN: Line protocol on the interface Ten-GigabitEthernet1/0/38 is up.", format: "cisco", host: "bd",
			m: "%%10IFNET/5/LINK_UPDOWN: Line protocol on the interface Ten-GigabitEthernet1/0/38 is up.", time: "2018-08-27T12:21:31Z"},
		// The same relayed by rsyslog, which took the year for the host
		// name and the host name for the tag: its forwarding format
		// (RFC 3339 time) and its RFC 5424 one.
		{raw: "<189>2026-04-13T20:41:09+00:00 2026 core1 %%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from OPENCONFIRM to ESTABLISHED.", format: "cisco", host: "core1",
			m: "%%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from OPENCONFIRM to ESTABLISHED.", time: "2026-04-13T20:41:09Z"},
		{raw: "<189>1 2026-04-13T20:41:09+00:00 2026 core1 - - - %%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from OPENCONFIRM to ESTABLISHED.", format: "rfc5424", host: "core1",
			m: "%%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from OPENCONFIRM to ESTABLISHED.", time: "2026-04-13T20:41:09Z"},
		{raw: "<166>Nov 29 2026 14:03:01: %ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443", format: "cisco",
			m: "%ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443", time: "2026-11-29T14:03:01Z"},
		{raw: "<164>Nov 29 2026 14:03:02 asa1 : %ASA-4-106023: Deny tcp src outside:198.51.100.7/5555 dst inside:10.0.0.5/22", format: "cisco", host: "asa1",
			m: "%ASA-4-106023: Deny tcp src outside:198.51.100.7/5555 dst inside:10.0.0.5/22", time: "2026-11-29T14:03:02Z"},
		// NX-OS with "logging origin-id hostname": the host name, then the
		// year-first timestamp, no sequence field.
		{raw: "<190>core3.sea02: 2026 Nov 28 09:12:33 UTC: %AUTHPRIV-6-SYSTEM_MSG: pam_unix(dcos_sshd:session): session opened for user jdoe by (uid=0) - dcos_sshd[4411]", format: "cisco", host: "core3.sea02",
			m: "%AUTHPRIV-6-SYSTEM_MSG: pam_unix(dcos_sshd:session): session opened for user jdoe by (uid=0) - dcos_sshd[4411]", time: "2026-11-28T09:12:33Z"},
		// Junos (and some relays) put two spaces before the host name.
		{raw: "<28>Nov  7 20:16:14  mx7 rpd[2211]: RPD_BGP_NEIGHBOR_STATE_CHANGED: BGP peer 192.0.2.9 (External AS 64512) changed state from Established to Idle", format: "rfc3164", host: "mx7", app: "rpd", pid: "2211",
			m: "RPD_BGP_NEIGHBOR_STATE_CHANGED: BGP peer 192.0.2.9 (External AS 64512) changed state from Established to Idle", time: "2026-11-07T20:16:14Z"},
		// A day not padded to two characters (NX-OS; relays that rewrite the header).
		{raw: "<189>8812: core2: Mar 3 09:15:27.118 UTC: %LINK-3-UPDOWN: Interface Gi0/3, changed state to down", format: "cisco", host: "core2", seq: "8812",
			m: "%LINK-3-UPDOWN: Interface Gi0/3, changed state to down", time: "2026-03-03T09:15:27.118Z"},
		{raw: "<30>Mar 3 09:15:27 fw3 ntpd[811]: time reset +0.2 s", format: "rfc3164", host: "fw3", app: "ntpd", pid: "811", m: "time reset +0.2 s", time: "2026-03-03T09:15:27Z"},
		// Extreme EXOS: the message starts with its severity and event
		// name in angle brackets, no tag; "<Info" is not one.
		{raw: "<134>Nov 29 10:00:00 sw1 <Info:vlan.msgs.portLinkStateUp> Port 1:1 link UP at speed 1 Gbps and full-duplex", format: "rfc3164", host: "sw1",
			m: "<Info:vlan.msgs.portLinkStateUp> Port 1:1 link UP at speed 1 Gbps and full-duplex", time: "2026-11-29T10:00:00Z"},
		// Time zone names as "clock timezone" sets them: lower case, with an
		// offset; NX-OS with a space before the colon.
		{raw: "<189>5521: edge4: Aug 12 2026 12:14:24.412 mdt: %SYS-5-CONFIG_I: Configured from console by ops on vty0", format: "cisco", host: "edge4", seq: "5521",
			m: "%SYS-5-CONFIG_I: Configured from console by ops on vty0", time: "2026-08-12T12:14:24.412Z"},
		{raw: "<189>402: edge4: May 6 16:13:09.123 UTC+1: %DOT1X-5-FAIL: Authentication failed for client (0011.2233.4455) on Interface Gi1/0/7", format: "cisco", host: "edge4", seq: "402",
			m: "%DOT1X-5-FAIL: Authentication failed for client (0011.2233.4455) on Interface Gi1/0/7", time: "2026-05-06T16:13:09.123Z"},
		{raw: "<189>403: edge4: May 6 16:13:10.001 IST+05:30: %SYS-5-CONFIG_I: Configured from console by ops on vty0", format: "cisco", host: "edge4", seq: "403",
			m: "%SYS-5-CONFIG_I: Configured from console by ops on vty0", time: "2026-05-06T16:13:10.001Z"},
		{raw: "<187>: 2026 Sep 25 08:49:23 UTC : %LOG_LOCAL7-3-SYSTEM_MSG: [F0321] fault raised on node-104", format: "cisco",
			m: "%LOG_LOCAL7-3-SYSTEM_MSG: [F0321] fault raised on node-104", time: "2026-09-25T08:49:23Z"},
		// IOS without the message counter, and ASA, with the zone shown.
		{raw: "<189>Nov 29 14:00:01.456 CDT: %SYS-5-CONFIG_I: Configured from console by ops on vty2 (192.0.2.55)", format: "cisco",
			m: "%SYS-5-CONFIG_I: Configured from console by ops on vty2 (192.0.2.55)", time: "2026-11-29T14:00:01.456Z"},
		{raw: "<166>Apr 15 2026 09:34:34 EDT: %ASA-5-106100: access-list acl_in permitted tcp inside/10.9.9.16(2241) -> outside/192.0.2.89(2000) hit-cnt 1 first hit [0x1a2b3c4d, 0x0]", format: "cisco",
			m: "%ASA-5-106100: access-list acl_in permitted tcp inside/10.9.9.16(2241) -> outside/192.0.2.89(2000) hit-cnt 1 first hit [0x1a2b3c4d, 0x0]", time: "2026-04-15T09:34:34Z"},
		// An Arista agent right after the time (no host name) stays a tag.
		{raw: "<187>Nov 29 14:07:08 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down", format: "rfc3164", app: "Ebra",
			m: "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down", time: "2026-11-29T14:07:08Z"},
		// "service sequence-numbers" and the message counter: two numbers;
		// the sequence number is the second.
		{raw: "<189>61: 000062: *Jan  2 00:00:55.733: %SYS-5-LOG_CONFIG_CHANGE: Buffer logging disabled", format: "cisco", seq: "000062",
			m: "%SYS-5-LOG_CONFIG_CHANGE: Buffer logging disabled", time: "2026-01-02T00:00:55.733Z"},
		{raw: "<190>7788: 7790: Aug 12 2026 12:15:33.963 mdt: %IOSXE-6-PLATFORM: R0/0: cpp_cp: QFP:0.0 Thread:002 TS:00000000012345678901 %FW-6-DROP_PKT: Dropping tcp pkt from Gi0/0/1 198.51.100.4:51515 => 203.0.113.8:443", format: "cisco", seq: "7790",
			m: "%IOSXE-6-PLATFORM: R0/0: cpp_cp: QFP:0.0 Thread:002 TS:00000000012345678901 %FW-6-DROP_PKT: Dropping tcp pkt from Gi0/0/1 198.51.100.4:51515 => 203.0.113.8:443", time: "2026-08-12T12:15:33.963Z"},
		{raw: "<182>: br-edge: 271828: Jan 23 14:54:28.511 CET: %FMANFP-6-IPACCESSLOGP: R0/0: fman_fp_image: list OUTSIDE-IN denied udp 198.51.100.23(5353) -> 203.0.113.9(5353), 1 packet", format: "cisco", host: "br-edge", seq: "271828",
			m: "%FMANFP-6-IPACCESSLOGP: R0/0: fman_fp_image: list OUTSIDE-IN denied udp 198.51.100.23(5353) -> 203.0.113.9(5353), 1 packet", time: "2026-01-23T14:54:28.511Z"},
		// Cisco WLC (AireOS): the task name after the host.
		{raw: "<132>wlc2: *spamApTask4: Nov 26 18:52:01.958: %CAPWAP-4-DISC_INTF_ERR2: [PA]capwap_ac_sm.c:2053 Ignoring discovery request received on a wrong VLAN (212) on interface (3) from AP 00:00:5e:00:53:10", format: "cisco", host: "wlc2", app: "spamApTask4",
			m: "%CAPWAP-4-DISC_INTF_ERR2: [PA]capwap_ac_sm.c:2053 Ignoring discovery request received on a wrong VLAN (212) on interface (3) from AP 00:00:5e:00:53:10", time: "2026-11-26T18:52:01.958Z"},
		{raw: "<179>wlc2: *Dot1x_NW_MsgTask_1: Nov 18 13:04:15.123: %DOT1X-3-INVALID_REPLAY_CTR: 1x_eapkey.c:458 Invalid replay counter from client 00:00:5e:00:53:22", format: "cisco", host: "wlc2", app: "Dot1x_NW_MsgTask_1",
			m: "%DOT1X-3-INVALID_REPLAY_CTR: 1x_eapkey.c:458 Invalid replay counter from client 00:00:5e:00:53:22", time: "2026-11-18T13:04:15.123Z"},
		// A relay (rsyslog, syslog-ng) put its BSD header in front of the
		// Cisco one: the device's time, sequence and process are kept.
		{raw: "<189>Nov  8 04:00:48 10.20.30.40 585917: Nov  8 04:00:47.272: %SEC-6-IPACCESSLOGP: list 110 denied udp 198.51.100.195(55250) -> 198.51.100.255(15600), 1 packet", format: "cisco", host: "10.20.30.40", seq: "585917",
			m: "%SEC-6-IPACCESSLOGP: list 110 denied udp 198.51.100.195(55250) -> 198.51.100.255(15600), 1 packet", time: "2026-11-08T04:00:47.272Z"},
		{raw: "<189>Nov 16 07:41:48 acc-sw7.example.net 157475316: *Nov 16 2026 07:39:09.425 UTC: %AUTHMGR-5-SECURITY_VIOLATION: Security violation on the interface GigabitEthernet1/0/13, new MAC address (0000.5e00.5301) is seen.", format: "cisco", host: "acc-sw7.example.net", seq: "157475316",
			m: "%AUTHMGR-5-SECURITY_VIOLATION: Security violation on the interface GigabitEthernet1/0/13, new MAC address (0000.5e00.5301) is seen.", time: "2026-11-16T07:39:09.425Z"},
		{raw: "<189>Nov 17 09:00:02 10.20.30.41 4411: dist3: 004412: Nov 17 09:00:01.250 CET: %SYS-5-CONFIG_I: Configured from console by ops on vty1", format: "cisco", host: "dist3", seq: "004412",
			m: "%SYS-5-CONFIG_I: Configured from console by ops on vty1", time: "2026-11-17T09:00:01.25Z"},
		{raw: "<189>May  2 15:21:27 10.9.8.7 : 2026 May  2 15:21:27.206 UTC: %ETHPORT-5-IF_DUPLEX: Interface Ethernet1/7, operational duplex mode changed to Full", format: "cisco", host: "10.9.8.7",
			m: "%ETHPORT-5-IF_DUPLEX: Interface Ethernet1/7, operational duplex mode changed to Full", time: "2026-05-02T15:21:27.206Z"},
		{raw: "<187>May  3 13:55:35 nx-core2 2026 May  3 13:55:35.928 AEST: %AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed for user ops from 192.0.2.105 - sshd[10021]", format: "cisco", host: "nx-core2",
			m: "%AUTHPRIV-3-SYSTEM_MSG: pam_aaa:Authentication failed for user ops from 192.0.2.105 - sshd[10021]", time: "2026-05-03T13:55:35.928Z"},
		{raw: "<190>Oct 7 07:19:44 pe3-mgmt RP/0/RP0/CPU0:Oct 7 07:19:43.630 UTC: ipv4_acl_mgr[310]: %ACL-IPV4_ACL-6-IPACCESSLOGP : access-list EDGE-IN deny tcp 198.51.100.8(39527) -> 203.0.113.18(1830), 1 packet", format: "cisco", host: "pe3-mgmt", app: "ipv4_acl_mgr", pid: "310",
			m: "%ACL-IPV4_ACL-6-IPACCESSLOGP : access-list EDGE-IN deny tcp 198.51.100.8(39527) -> 203.0.113.18(1830), 1 packet", time: "2026-10-07T07:19:43.63Z"},
		{raw: "<190>May 14 15:10:46 fw2.example.net : May 14 15:10:46 WEST: %ASA-6-106015: Deny TCP (no connection) from 198.51.100.44/5044 to 10.20.0.1/49786 flags ACK on interface outside", format: "cisco", host: "fw2.example.net",
			m: "%ASA-6-106015: Deny TCP (no connection) from 198.51.100.44/5044 to 10.20.0.1/49786 flags ACK on interface outside", time: "2026-05-14T15:10:46Z"},
		{raw: "<187>Jun 14 11:34:35 c6k-sr4 AEST: %SFF8472-3-THRESHOLD_VIOLATION: Te2/0/9: Rx power high warning; Operating value: -0.7 dBm, Threshold value: -1.0 dBm.", format: "cisco", host: "c6k-sr4",
			m: "%SFF8472-3-THRESHOLD_VIOLATION: Te2/0/9: Rx power high warning; Operating value: -0.7 dBm, Threshold value: -1.0 dBm.", time: "2026-06-14T11:34:35Z"},
		// Not a Cisco header after all: stays as it was.
		{raw: "<13>Nov 29 14:00:00 host1 12345: not a cisco header", format: "rfc3164", host: "host1", app: "12345", m: "not a cisco header", time: "2026-11-29T14:00:00Z"},
		{raw: "<13>Nov 29 14:00:00 host1 postfix/smtp[88]: 5C62E3: to=<a@example.net>, status=sent", format: "rfc3164", host: "host1", app: "postfix/smtp", pid: "88", m: "5C62E3: to=<a@example.net>, status=sent", time: "2026-11-29T14:00:00Z"},
		// ASA: the device id glued to the colon; no device id but " : ";
		// a message without a mnemonic after " : ".
		{raw: "<166>Oct 10 2026 10:21:36 fw-lab: %ASA-6-302021: Teardown ICMP connection for faddr 198.51.100.5/10005 gaddr 10.0.55.66/0 laddr 10.0.55.66/0", format: "cisco", host: "fw-lab",
			m: "%ASA-6-302021: Teardown ICMP connection for faddr 198.51.100.5/10005 gaddr 10.0.55.66/0 laddr 10.0.55.66/0", time: "2026-10-10T10:21:36Z"},
		{raw: "<166>Aug 15 2026 23:30:09 : %ASA-6-302016 Teardown UDP connection 40 for outside:10.44.4.4/500 to inside:10.44.2.2/500 duration 0:02:02 bytes 1416", format: "cisco",
			m: "%ASA-6-302016 Teardown UDP connection 40 for outside:10.44.4.4/500 to inside:10.44.2.2/500 duration 0:02:02 bytes 1416", time: "2026-08-15T23:30:09Z"},
		{raw: "<166>Jul  1 09:27:13 198.51.100.56 : AAA user authentication Rejected : reason = AAA failure : server = 10.1.1.9 : user = ops", format: "rfc3164", host: "198.51.100.56",
			m: "AAA user authentication Rejected : reason = AAA failure : server = 10.1.1.9 : user = ops", time: "2026-07-01T09:27:13Z"},
		// A space after the PRI.
		{raw: "<189> Nov 29 13:58:46 nx7 %MODULE-5-MOD_OK: Module 2 is online", format: "cisco", host: "nx7", m: "%MODULE-5-MOD_OK: Module 2 is online", time: "2026-11-29T13:58:46Z"},
		{raw: "<28>Nov 29 14:06:07 mx1 mib2d[1234]: SNMP_TRAP_LINK_DOWN: ifIndex 545", format: "rfc3164", host: "mx1", app: "mib2d", pid: "1234",
			m: "SNMP_TRAP_LINK_DOWN: ifIndex 545", time: "2026-11-29T14:06:07Z"},
		{raw: "<13>Nov  9 01:02:03 h t: one-digit day", format: "rfc3164", host: "h", app: "t", m: "one-digit day", time: "2026-11-09T01:02:03Z"},
		{raw: "<13>2026-11-29T14:08:10.5+01:00 h app[7]: rsyslog style", format: "rfc3164", host: "h", app: "app", pid: "7", m: "rsyslog style", time: "2026-11-29T14:08:10.5+01:00"},
		{raw: "<14>1 2026-11-29T14:08:11.5-05:00 host3 app - ID47 - \ufeffBOM message", format: "rfc5424", host: "host3", app: "app", msgid: "ID47", m: "BOM message", time: "2026-11-29T14:08:11.5-05:00"},
		{raw: "<14>1 - - - - - -", format: "rfc5424"},
	})
}

// parseCase is what parsing raw gives: the fields compared, and the
// device time (RFC 3339; "" for none checked).
type parseCase struct {
	raw                                   string
	format, host, app, pid, msgid, seq, m string
	time                                  string
}

// checkParseCases parses each case's raw line and compares.
func checkParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	p := Parser{Now: fixedNow}
	for _, tc := range cases {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		got := [...]string{l.Format, l.Hostname, l.AppName, l.ProcID, l.MsgID, l.Sequence, l.Message}
		want := [...]string{tc.format, tc.host, tc.app, tc.pid, tc.msgid, tc.seq, tc.m}
		if got != want {
			t.Errorf("%q:\n got %q\nwant %q (%s)", tc.raw, got, want, l.ParseError)
		}
		if tc.time != "" {
			wt, _ := time.Parse(time.RFC3339Nano, tc.time)
			if l.Time == nil || !l.Time.Equal(wt) {
				t.Errorf("%q: time %v, want %v", tc.raw, l.Time, wt)
			}
		}
	}
}

// TestYearClosestToNow: a timestamp without a year gets the year that puts
// it closest to the receive time, before or after it. It used to be moved
// only back, so a device a few seconds ahead at new year was a year off.
func TestYearClosestToNow(t *testing.T) {
	for _, tc := range []struct {
		now  time.Time
		raw  string
		want string
	}{
		{time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC), "<13>Jan  1 00:00:01 h t: device 3 s ahead", "2027-01-01T00:00:01Z"},
		{time.Date(2027, 1, 1, 0, 0, 5, 0, time.UTC), "<13>Dec 31 23:59:59 h t: sent last year", "2026-12-31T23:59:59Z"},
		{time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC), "<13>Nov 29 14:06:07 h t: this year", "2026-11-29T14:06:07Z"},
		{time.Date(2026, 12, 11, 15, 0, 0, 0, time.UTC), "<13>Dec 31 23:59:59 h t: 20 days ahead, not 11 months back", "2026-12-31T23:59:59Z"},
		{time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC), "<13>Feb 10 10:00:00 h t: 10 months back, not 2.5 ahead", "2026-02-10T10:00:00Z"},
		{time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), "<13>Aug 15 10:00:00 h t: 6.5 months back, not 5.5 ahead", "2025-08-15T10:00:00Z"},
		{time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), "<13>Jan  2 10:00:00 h t: 180 days back, not 185 ahead", "2026-01-02T10:00:00Z"},
		{time.Date(2029, 1, 10, 0, 0, 0, 0, time.UTC), "<13>Feb 29 12:00:00 h t: only a leap year has it", "2028-02-29T12:00:00Z"},
		{time.Date(2027, 12, 31, 23, 59, 59, 0, time.UTC), "<189>48: edge1: Jan  1 00:00:02.500 UTC: %SYS-5-CONFIG_I: Configured", "2028-01-01T00:00:02.5Z"},
	} {
		p := Parser{Now: func() time.Time { return tc.now }}
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		want, _ := time.Parse(time.RFC3339Nano, tc.want)
		if l.Time == nil || !l.Time.Equal(want) {
			t.Errorf("%q received %v: time %v, want %v (%s)", tc.raw, tc.now, l.Time, want, l.ParseError)
		}
	}
	var l telemetry.Log
	(&Parser{Now: fixedNow}).ParseCopy([]byte("<13>Feb 30 12:00:00 h t: no such day"), &l)
	if l.Format != FormatMalformed {
		t.Errorf("Feb 30 parsed: %v", l.Time)
	}
	// Received in a year after a leap year: not next leap year's, 364
	// days ahead (the last one is three years back: not taken either).
	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	(&Parser{Now: func() time.Time { return now }}).ParseCopy([]byte("<13>Feb 29 12:00:00 h t: clock off"), &l)
	if l.Time != nil && l.Time.After(now) {
		t.Errorf("Feb 29 received %v: %v", now, l.Time)
	}
}

func TestStructuredData(t *testing.T) {
	var p Parser
	var l telemetry.Log
	p.ParseCopy([]byte(`<165>1 2026-11-29T14:06:07.123+00:00 mx2 mib2d 1234 LINK [junos@2636 a="1" b="q\"uote\]" c=""][origin ip="10.0.0.5"] text`), &l)
	if l.ParseError != "" {
		t.Fatal(l.ParseError)
	}
	if got := l.StructuredData["junos@2636"]["b"]; got != `q"uote]` {
		t.Fatalf("escaped param %q", got)
	}
	if l.StructuredData["origin"]["ip"] != "10.0.0.5" || l.Message != "text" {
		t.Fatalf("%+v", l)
	}
}

// TestRFC5424AgreesWithGoSyslog compares our RFC 5424 fields with
// go-syslog's parser on every corpus line and on variations.
func TestRFC5424AgreesWithGoSyslog(t *testing.T) {
	inputs := []string{
		`<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - BOM'su root' failed`,
		`<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.`,
		`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]`,
		`<0>1 - - - - - -`,
	}
	for _, c := range loadCorpus(t) {
		inputs = append(inputs, c.Raw)
	}
	ref := rfc5424.NewParser()
	var p Parser
	for _, in := range inputs {
		checkRFC5424Agreement(t, ref, &p, in)
	}
}

func checkRFC5424Agreement(t testing.TB, ref gosyslog.Machine, p *Parser, in string) {
	t.Helper()
	var l telemetry.Log
	p.ParseCopy([]byte(in), &l)
	m, err := ref.Parse([]byte(in))
	if err != nil || m == nil {
		return // go-syslog is stricter in places; we only compare what it accepts
	}
	sm, ok := m.(*rfc5424.SyslogMessage)
	if !ok || !sm.Valid() || sm.Version != 1 {
		// go-syslog takes any VERSION of up to three digits; RFC 5424
		// defines 1 alone, and weir reads "<PRI>1 " only.
		return
	}
	if l.Relay != "" {
		// Read as a relayed device's line (unwrapRelayed), which
		// go-syslog knows nothing of: the relay is its host name, and
		// the device's line its message.
		if l.Relay != str(sm.Hostname) || !strings.HasSuffix(str(sm.Message), l.Message) {
			t.Errorf("%.80q: relayed from %q with message %q; go-syslog: host %q, message %q", in, l.Relay, l.Message, str(sm.Hostname), str(sm.Message))
		}
		return
	}
	if l.Format != FormatRFC5424 {
		t.Errorf("%.80q: go-syslog parses it as RFC 5424, we say %s (%s)", in, l.Format, l.ParseError)
		return
	}
	got := [...]string{l.Hostname, l.AppName, l.ProcID, l.MsgID, l.Message}
	want := [...]string{str(sm.Hostname), str(sm.Appname), str(sm.ProcID), str(sm.MsgID), strings.TrimPrefix(str(sm.Message), "\ufeff")}
	if got != want {
		t.Errorf("%.80q:\n ours     %q\n go-syslog %q", in, got, want)
	}
	if sm.Priority != nil && l.Severity != int(*sm.Severity) {
		t.Errorf("%.80q: severity %d vs %d", in, l.Severity, *sm.Severity)
	}
	if (sm.Timestamp == nil) != (l.Time == nil) || (sm.Timestamp != nil && !sm.Timestamp.Equal(*l.Time)) {
		t.Errorf("%.80q: time %v vs %v", in, l.Time, sm.Timestamp)
	}
	var refSD map[string]map[string]string
	if sm.StructuredData != nil {
		refSD = *sm.StructuredData
	}
	if len(refSD) != len(l.StructuredData) {
		t.Errorf("%.80q: structured data %v vs %v", in, l.StructuredData, refSD)
	}
	for id, params := range refSD {
		for k, v := range params {
			if l.StructuredData[id][k] != v {
				t.Errorf("%.80q: SD %s %s = %q vs %q", in, id, k, l.StructuredData[id][k], v)
			}
		}
	}
}

// FuzzRFC5424AgainstGoSyslog: whatever go-syslog accepts as RFC 5424, we
// parse to the same fields.
func FuzzRFC5424AgainstGoSyslog(f *testing.F) {
	f.Add(`<165>1 2003-10-11T22:14:15.003Z host app 12 ID47 [a@1 x="1" y="\"q\""] msg`)
	f.Add(`<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed`)
	ref := rfc5424.NewParser()
	var p Parser
	f.Fuzz(func(t *testing.T, in string) {
		checkRFC5424Agreement(t, ref, &p, in)
	})
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func BenchmarkParseCorpus(b *testing.B) {
	lines := loadCorpus(b)
	raws := make([][]byte, len(lines))
	for i, c := range lines {
		raws[i] = []byte(c.Raw)
	}
	p := Parser{Now: fixedNow}
	var l telemetry.Log
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Parse(raws[i%len(raws)], &l)
	}
}

// BenchmarkParseEncodeCorpus is parse plus the JSON encoding the collector
// does for every message.
func BenchmarkParseEncodeCorpus(b *testing.B) {
	lines := loadCorpus(b)
	raws := make([][]byte, len(lines))
	for i, c := range lines {
		raws[i] = []byte(c.Raw)
	}
	p := Parser{Now: fixedNow}
	var l telemetry.Log
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Parse(raws[i%len(raws)], &l)
		buf = l.AppendJSON(buf[:0])
	}
}

func FuzzParse(f *testing.F) {
	seeds := append(append([]string(nil), relayedCiscoShapes...), tracebackLines...)
	for _, c := range loadCorpus(f) {
		seeds = append(seeds, c.Raw)
	}
	for _, raw := range seeds {
		f.Add([]byte(raw))
		// Behind a relay's header (see relayWrappers).
		for _, w := range relayWrappers {
			if raw, ok := wrap(raw, w.head, w.keepPRI); ok {
				f.Add([]byte(raw))
			}
		}
	}
	p := Parser{Now: fixedNow}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var l telemetry.Log
		p.Parse(raw, &l)
		if l.Raw != string(raw) {
			t.Fatal("raw not kept")
		}
		// A parse error is a malformed line's, or a line's without a
		// PRI whose header was read (format rfc3164 or cisco).
		if l.Format == "" || (l.Format == FormatMalformed) != (l.ParseError != "" && l.ParseError != errNoPRIHeader) {
			t.Fatalf("format %q with parse error %q", l.Format, l.ParseError)
		}
		if l.ParseError == errNoPRIHeader && (l.Hostname == "" || l.Time == nil || l.Facility != -1 || l.Severity != -1) {
			t.Fatalf("no PRI: host %q time %v facility %d severity %d, want a host, a time and -1 -1", l.Hostname, l.Time, l.Facility, l.Severity)
		}
		if !strings.HasSuffix(string(raw), l.Message) {
			t.Fatalf("message %q not from the input", l.Message)
		}
		if l.Relay != "" && (l.Hostname == "" || l.Format == FormatMalformed) {
			t.Fatalf("relay %q with host %q, format %s", l.Relay, l.Hostname, l.Format)
		}
		if l.Severity < -1 || l.Severity > 7 || l.Facility < -1 || l.Facility > 23 {
			t.Fatalf("pri %d/%d", l.Facility, l.Severity)
		}
		if !utf8.Valid(raw) {
			l.RawBytes = raw // as the publisher does
		}
		var back telemetry.Log
		if err := json.Unmarshal(l.AppendJSON(nil), &back); err != nil {
			t.Fatalf("JSON does not decode: %v", err)
		}
		// The record carries what was parsed: every field decodes back
		// as it was (text not UTF-8 as JSON carries it, U+FFFD for the
		// bad bytes; raw_bytes has them exactly).
		valid := func(s string) string { return string([]rune(s)) } // U+FFFD for each bad byte, as JSON has it
		if back.Raw != valid(l.Raw) || string(back.RawBytes) != string(l.RawBytes) || back.Message != valid(l.Message) ||
			back.Hostname != valid(l.Hostname) || back.AppName != valid(l.AppName) || back.ProcID != valid(l.ProcID) ||
			back.MsgID != valid(l.MsgID) || back.Sequence != valid(l.Sequence) || back.Relay != valid(l.Relay) || back.Format != l.Format ||
			back.Facility != l.Facility || back.Severity != l.Severity || back.ParseError != l.ParseError {
			t.Fatalf("%q: JSON round trip\n got %+v\nwant %+v", raw, back, l)
		}
		if (back.Time == nil) != (l.Time == nil) || l.Time != nil && !back.Time.Equal(*l.Time) {
			t.Fatalf("%q: time %v, decoded %v", raw, l.Time, back.Time)
		}
		if !utf8.Valid(raw) {
			return // two SD names may differ only in bad bytes; raw_bytes has them
		}
		if len(back.StructuredData) != len(l.StructuredData) {
			t.Fatalf("%q: structured data %v, decoded %v", raw, l.StructuredData, back.StructuredData)
		}
		for id, params := range l.StructuredData {
			for k, v := range params {
				if got, ok := back.StructuredData[id][k]; !ok || got != v {
					t.Fatalf("%q: SD %s %s = %q, decoded %q", raw, id, k, v, got)
				}
			}
		}
	})
}

// TestCiscoUptimeAndUnsyncedClock: a Cisco device without a clock stamps
// its uptime ("service timestamps log uptime"), and one without "service
// sequence-numbers" starts with the time, '*' when it is not synced: all
// parse as Cisco, the uptime ones with no device time.
func TestCiscoUptimeAndUnsyncedClock(t *testing.T) {
	for _, tc := range []struct {
		raw, host, time string
	}{
		{"<189>48: 1w2d: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "", ""},
		{"<189>48: 00:01:23: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "", ""},
		{"<189>48: 00:01:23.456: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "", ""},
		{"<189>48: edge1: 2d03h: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "edge1", ""},
		{"<189>48: edge1: 1y12w: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "edge1", ""},
		// With the sequence number after the host, or no sequence field.
		{"<189>48: edge1: 000051: 3y12w: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "edge1", ""},
		{"<189>00:01:23: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "", ""},
		{"<189>1w2d: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "", ""},
		{"<189>edge1: 00:01:23: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "edge1", ""},
		{"<189>*Nov 29 14:00:01.456: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "", "2026-11-29T14:00:01.456Z"},
		{"<189>.Nov 29 14:00:01: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "", "2026-11-29T14:00:01Z"},
		{"<189>*Nov 29 14:00:01.456 UTC: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", "", "2026-11-29T14:00:01.456Z"},
	} {
		var l telemetry.Log
		(&Parser{Now: fixedNow}).ParseCopy([]byte(tc.raw), &l)
		got := ""
		if l.Time != nil {
			got = l.Time.UTC().Format(time.RFC3339Nano)
		}
		if l.Format != FormatCisco || l.Hostname != tc.host || got != tc.time ||
			l.Message != "%LINK-3-UPDOWN: Interface Gi0/1, changed state to down" {
			t.Errorf("%q: format %s host %q time %q message %q (%s)", tc.raw, l.Format, l.Hostname, got, l.Message, l.ParseError)
		}
	}
	for _, raw := range []string{"<189>48: 1w: %X-1-Y: z", "<189>48: 12:34: %X-1-Y: z", "<189>48: w2d: %X-1-Y: z"} {
		var l telemetry.Log
		(&Parser{Now: fixedNow}).ParseCopy([]byte(raw), &l)
		if l.Time != nil {
			t.Errorf("%q: time %v", raw, l.Time)
		}
	}
}

// TestAireOSTaskIsNoHost: an AireOS task name ("*spamApTask4:") is the
// application, never the host, also where no host name comes before it:
// the controller sent none, or a relay put its own BSD header in front.
func TestAireOSTaskIsNoHost(t *testing.T) {
	p := Parser{Now: fixedNow}
	for _, tc := range []struct{ raw, host, app string }{
		{"<132>Nov 26 18:52:01 wlc2 *spamApTask4: Nov 26 18:52:01.958: %CAPWAP-4-DISC_INTF_ERR2: [PA]capwap_ac_sm.c:2053 Ignoring discovery request", "wlc2", "spamApTask4"},
		{"<132>*spamApTask4: Nov 26 18:52:01.958: %CAPWAP-4-DISC_INTF_ERR2: [PA]capwap_ac_sm.c:2053 Ignoring discovery request", "", "spamApTask4"},
		{"<179>*Dot1x_NW_MsgTask_1: Nov 18 13:04:15.123: %DOT1X-3-INVALID_REPLAY_CTR: 1x_eapkey.c:458 Invalid replay counter", "", "Dot1x_NW_MsgTask_1"},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		if l.Format != FormatCisco || l.Hostname != tc.host || l.AppName != tc.app || !strings.HasPrefix(l.Message, "%") || l.Time == nil || l.Time.Nanosecond() == 0 {
			t.Errorf("%.60q: format %s host %q app %q time %v message %.30q, want cisco host %q app %q, the device's time", tc.raw, l.Format, l.Hostname, l.AppName, l.Time, l.Message, tc.host, tc.app)
		}
	}
	// Still no Cisco header: a '*' word without a Cisco time after it.
	var l telemetry.Log
	p.ParseCopy([]byte("<13>*note: Nov 26 18:52:01 disk almost full"), &l)
	if l.Format != FormatMalformed {
		t.Errorf("%q: format %s, want malformed", l.Raw, l.Format)
	}
}

// TestRelayedAsRFC5424Cisco: rsyslog's RSYSLOG_SyslogProtocol23Format (its
// usual template for TCP and TLS) takes a Cisco line's sequence field for
// the tag, so the counter becomes the APP-NAME (nil for NX-OS's empty
// one) and the rest of the Cisco header the message, after a space. The
// device's host, time and sequence are read from it, as behind a BSD
// header; a plain RFC 5424 line with a numeric APP-NAME stays as it is.
func TestRelayedAsRFC5424Cisco(t *testing.T) {
	checkParseCases(t, []parseCase{
		{raw: "<189>1 2026-12-03T22:33:22.764898+00:00 relay1 48 - - -  edge1: Nov 29 14:03:01.004 UTC: %BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up", format: "cisco", host: "edge1", seq: "48",
			m: "%BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up", time: "2026-11-29T14:03:01.004Z"},
		{raw: "<187>1 2026-12-03T22:33:22.764898+00:00 relay1 47 - - -  *Nov 29 14:02:11.101: %LINK-3-UPDOWN: Interface Te1/0/24, changed state to down", format: "cisco", host: "relay1", seq: "47",
			m: "%LINK-3-UPDOWN: Interface Te1/0/24, changed state to down", time: "2026-11-29T14:02:11.101Z"},
		{raw: "<189>1 2026-12-03T22:33:22.764898+00:00 relay1 - - - -  2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/1 is down (Link failure)", format: "cisco", host: "relay1",
			m: "%ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/1 is down (Link failure)", time: "2026-11-29T14:03:01Z"},
		{raw: "<189>1 2026-12-03T22:33:22.764898+00:00 relay1 1234 - - -  RP/0/RP0/CPU0:2026 Nov 29 14:05:01.234 UTC: ifmgr[261]: %PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, changed state to Down", format: "cisco", host: "relay1", app: "ifmgr", pid: "261", seq: "1234",
			m: "%PKT_INFRA-LINK-3-UPDOWN : Interface Gi0/0/0/1, changed state to Down", time: "2026-11-29T14:05:01.234Z"},
		// An origin host ("nx1: 2026 ...", "wlc1: *task: ...", "edge8:
		// *Nov ..."): rsyslog takes it for the tag, so it is the APP-NAME.
		{raw: "<189>1 2026-12-03T22:47:08.185268+00:00 relay1 nx-leaf-101 - - -  2026 Nov 29 14:03:01 UTC: %ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/7 is down (Link failure)", format: "cisco", host: "nx-leaf-101",
			m: "%ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/7 is down (Link failure)", time: "2026-11-29T14:03:01Z"},
		{raw: "<131>1 2026-12-03T22:47:08.185268+00:00 relay1 wlc1 - - -  *spamApTask1: Nov 29 14:03:01.553: %LWAPP-3-DISCOVERY_ERR: no response", format: "cisco", host: "wlc1", app: "spamApTask1",
			m: "%LWAPP-3-DISCOVERY_ERR: no response", time: "2026-11-29T14:03:01.553Z"},
		{raw: "<189>1 2026-12-03T22:47:08.185268+00:00 relay1 edge8 - - -  *Nov 29 14:03:09.000: %LINK-3-UPDOWN: Interface Gi0/8, changed state to down", format: "cisco", host: "edge8",
			m: "%LINK-3-UPDOWN: Interface Gi0/8, changed state to down", time: "2026-11-29T14:03:09Z"},
		// ASA's "asa1 : %ASA-...": rsyslog takes the ":" for an empty tag.
		{raw: "<166>1 2026-11-29T14:03:02+00:00 asa1 - - - -  %ASA-4-106023: Deny tcp src outside:198.51.100.7/5555 dst inside:10.0.0.5/22", format: "cisco", host: "asa1",
			m: "%ASA-4-106023: Deny tcp src outside:198.51.100.7/5555 dst inside:10.0.0.5/22", time: "2026-11-29T14:03:02Z"},
		// Not Cisco: kept as sent.
		{raw: "<14>1 2026-11-29T14:08:11Z host3 app - - -  Nov 29 was a good day", format: "rfc5424", host: "host3", app: "app",
			m: " Nov 29 was a good day", time: "2026-11-29T14:08:11Z"},
		{raw: "<14>1 2026-11-29T14:08:11Z host3 1234 - - - Nov 29 was a good day", format: "rfc5424", host: "host3", app: "1234",
			m: "Nov 29 was a good day", time: "2026-11-29T14:08:11Z"},
		{raw: "<14>1 2026-11-29T14:08:11Z host3 1234 77 - - edge1: Nov 29 14:03:01.004 UTC: %BGP-5-ADJCHANGE: x", format: "rfc5424", host: "host3", app: "1234", pid: "77",
			m: "edge1: Nov 29 14:03:01.004 UTC: %BGP-5-ADJCHANGE: x", time: "2026-11-29T14:08:11Z"},
	})
}

// TestRelayedTagWithoutColon: rsyslog's forwarding formats
// (RSYSLOG_ForwardFormat, RSYSLOG_TraditionalForwardFormat) write an RFC
// 5424 line's APP-NAME and PROCID as "app[pid]" with no colon after it.
// The tag is still the app and pid, not part of the message.
func TestRelayedTagWithoutColon(t *testing.T) {
	p := Parser{Now: fixedNow}
	for _, tc := range []struct{ raw, host, app, pid, m string }{
		{"<165>2026-11-29T14:06:07.123+00:00 mx2 mib2d[1234] ifIndex 545, ifOperStatus down(2), ifName xe-1/0/0", "mx2", "mib2d", "1234", "ifIndex 545, ifOperStatus down(2), ifName xe-1/0/0"},
		{"<189>Nov 29 14:10:00 leaf2 Ebra[2010] %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet49/1, changed state to down", "leaf2", "Ebra", "2010", "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet49/1, changed state to down"},
		{"<13>Nov 29 14:10:00 h1 app[7]: with colon", "h1", "app", "7", "with colon"},
		// Brackets that are no pid stay in the message.
		{"<13>Nov 29 14:10:00 h1 disk[sda full", "h1", "", "", "disk[sda full"},
		{"<13>Nov 29 14:10:00 h1 [warn] disk full", "h1", "", "", "[warn] disk full"},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		got := [...]string{l.Format, l.Hostname, l.AppName, l.ProcID, l.Message}
		want := [...]string{"rfc3164", tc.host, tc.app, tc.pid, tc.m}
		if got != want {
			t.Errorf("%q:\n got %q\nwant %q (%s)", tc.raw, got, want, l.ParseError)
		}
	}
}

// TestNoPRIWithBSDHeader: a relay forwarding with a file template
// (rsyslog's RSYSLOG_FileFormat, syslog-ng's file format) or a device that
// leaves the PRI out sends "TIMESTAMP HOST TAG: MSG". The header is read
// (the device's host and time, not the relay's address), facility and
// severity stay unknown and parse_error says why; a line without a header
// after the missing PRI stays malformed.
func TestNoPRIWithBSDHeader(t *testing.T) {
	p := Parser{Now: fixedNow}
	for _, tc := range []struct {
		raw, format, host, app, msg string
		time                        time.Time
	}{
		{"2026-11-29T14:07:08+00:00 leaf1 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet3, changed state to down",
			FormatRFC3164, "leaf1", "Ebra", "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet3, changed state to down",
			time.Date(2026, 11, 29, 14, 7, 8, 0, time.UTC)},
		{"Nov 29 14:06:07 mx1 mib2d[1234]: SNMP_TRAP_LINK_DOWN: ifIndex 545, ifName ge-0/0/1",
			FormatRFC3164, "mx1", "mib2d", "SNMP_TRAP_LINK_DOWN: ifIndex 545, ifName ge-0/0/1",
			time.Date(2026, 11, 29, 14, 6, 7, 0, time.UTC)},
		{"2026-11-29T14:03:05+00:00 nx1 %BGP-5-ADJCHANGE:  bgp-65001 [12345]  (default) neighbor 10.1.1.2 Up",
			FormatCisco, "nx1", "", "%BGP-5-ADJCHANGE:  bgp-65001 [12345]  (default) neighbor 10.1.1.2 Up",
			time.Date(2026, 11, 29, 14, 3, 5, 0, time.UTC)},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		if l.Format != tc.format || l.Hostname != tc.host || l.AppName != tc.app || l.Message != tc.msg {
			t.Errorf("%.60q: format %s host %q app %q message %.50q, want %s %q %q %.50q (%s)",
				tc.raw, l.Format, l.Hostname, l.AppName, l.Message, tc.format, tc.host, tc.app, tc.msg, l.ParseError)
		}
		if l.Time == nil || !l.Time.Equal(tc.time) {
			t.Errorf("%.60q: time %v, want %v", tc.raw, l.Time, tc.time)
		}
		if l.Facility != -1 || l.Severity != -1 {
			t.Errorf("%.60q: facility %d severity %d, want -1 -1 (no PRI)", tc.raw, l.Facility, l.Severity)
		}
		if l.ParseError == "" {
			t.Errorf("%.60q: no parse_error saying the PRI is missing", tc.raw)
		}
	}
	for _, raw := range []string{"no priority at all, just text", "Nov 29 is not a header", "2026-13-45T99:99:99Z x y", ""} {
		var l telemetry.Log
		p.ParseCopy([]byte(raw), &l)
		if l.Format != FormatMalformed || l.Hostname != "" || l.Message != raw {
			t.Errorf("%q: format %s host %q message %q, want malformed, whole", raw, l.Format, l.Hostname, l.Message)
		}
	}
}

// TestISOTimeWithoutZone: H3C and HPE Comware with "info-center timestamp
// loghost iso" send ISO 8601 without a zone ("<189>2003-05-30T06:42:44
// Sysname %%10FTPD/5/..."); like a BSD time without one, it is read as UTC,
// and the header (host name, body) is kept, not the line made malformed.
func TestISOTimeWithoutZone(t *testing.T) {
	p := Parser{Now: fixedNow}
	for _, tc := range []struct{ raw, format, host, app, msg, time string }{
		{"<189>2026-11-29T06:42:44 sw1 %%10FTPD/5/FTPD_LOGIN(l): User ftp (192.168.1.23) has logged in successfully.",
			FormatCisco, "sw1", "", "%%10FTPD/5/FTPD_LOGIN(l): User ftp (192.168.1.23) has logged in successfully.", "2026-11-29T06:42:44Z"},
		{"<13>2026-11-29T14:00:00.123 host app[7]: iso ms no zone", FormatRFC3164, "host", "app", "iso ms no zone", "2026-11-29T14:00:00.123Z"},
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(tc.raw), &l)
		tm := ""
		if l.Time != nil {
			tm = l.Time.Format(time.RFC3339Nano)
		}
		if l.Format != tc.format || l.Hostname != tc.host || l.AppName != tc.app || l.Message != tc.msg || tm != tc.time {
			t.Errorf("%.60q: format %s host %q app %q time %q message %.40q, want %s %q %q %q %.40q (%s)",
				tc.raw, l.Format, l.Hostname, l.AppName, tm, l.Message, tc.format, tc.host, tc.app, tc.time, tc.msg, l.ParseError)
		}
	}
	var l telemetry.Log
	p.ParseCopy([]byte("<13>2026-13-45T99:99:99 host app: impossible"), &l)
	if l.Format != FormatMalformed {
		t.Errorf("an impossible ISO time: format %s, want malformed", l.Format)
	}
}

// TestHuaweiOffsetAfterTime: Huawei VRP (CloudEngine, NE) set to the
// host's time zone glue its offset to the time ("Jan  8 2013
// 03:58:15+07:00 HUAWEI %%01HWCM/5/EXIT(l)[1]: ..."): the offset is
// skipped as a Cisco zone name is, so the host name is HUAWEI, not
// "+07:00", and the body keeps its %%01.
func TestHuaweiOffsetAfterTime(t *testing.T) {
	p := Parser{Now: fixedNow}
	for _, raw := range []string{
		"<187>Nov 29 2026 14:02:11+08:00 HUAWEI %%01IFNET/4/LINK_STATE(l)[0]:The line protocol IP on the interface GigabitEthernet0/0/1 has entered the DOWN state.",
		"<187>Nov 29 2026 14:02:11-08:00 HUAWEI %%01IFNET/4/LINK_STATE(l)[0]:The line protocol IP on the interface GigabitEthernet0/0/1 has entered the DOWN state.",
	} {
		var l telemetry.Log
		p.ParseCopy([]byte(raw), &l)
		if l.Format != FormatCisco || l.Hostname != "HUAWEI" || !strings.HasPrefix(l.Message, "%%01IFNET/4/LINK_STATE(l)") {
			t.Errorf("%.60q: format %s host %q message %.40q, want cisco, HUAWEI, %%%%01IFNET…", raw, l.Format, l.Hostname, l.Message)
		}
		if l.Time == nil || !l.Time.Equal(time.Date(2026, 11, 29, 14, 2, 11, 0, time.UTC)) {
			t.Errorf("%.60q: time %v, want 2026-11-29 14:02:11 (the offset skipped, as a zone name is)", raw, l.Time)
		}
	}
}
