package enrich

import "testing"

// TestDeviceLinesPublicFormats: lines in the formats vendors' own log
// references and public parsers give, which weir missed or read short.
//
//   - VRP8 (NetEngine 8000, CloudEngine) names the SSH client's address
//     UserAddress, not VRP5's IPAddress: the login had no source. The keys:
//     Huawei NetEngine 8000 F1A log reference, SSH/5/SSH_USER_LOGIN and
//     SSH/5/SSH_USER_LOGOUT (a10.tagan.ru/huawei/netengine8000f1a/log/8090/).
//   - VRP8 logs each change of the running configuration as
//     CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT, whatever the terminal
//     (CLI, SNMP, NETCONF), with the user and the address (same log
//     reference, NETCONF_CONFIG_CHANGE_EVENT_6): no rule knew it. An
//     internal change (Internal change =1: a board loading) is no one's
//     change, and a change of the candidate (Storage type =2) or of the
//     startup file (3) changes nothing running: no event, as for PAN-OS's
//     candidate edits.
//   - VOSS (VSP) logs an SSH login as "GlobalRouter SSH INFO SSH user
//     authentication succeeded for user X on host A" (Extreme's VOSS User
//     Guide, User ID Logs): no rule knew it; "session closed" is no login.
//   - 3Com Baseline / HP 1910 (Comware 3) write "LINK UPDOWN" with a space
//     and a colon after the port: nocproject/noc collections/
//     fm.eventclassificationrules/HP/1910/Network/Link/Link_Down_1_SYSLOG_.json.
func TestDeviceLinesPublicFormats(t *testing.T) {
	checkDeviceLines(t, []deviceLine{
		{name: "vrp8_ssh_login_useraddress", raw: "<189>Sep 23 2026 10:16:40 HW-NE8000 %%01SSH/5/SSH_USER_LOGIN(s)[17]:The SSH user succeeded in logging in. (ServiceType=stelnet, UserName=admin, UserAddress=10.1.0.5, LocalAddress=10.1.0.1, VPNInstanceName=_public_)",
			vendor: VendorHuawei, event: "login_succeeded", object: "admin", fields: map[string]string{"source": "10.1.0.5"}},
		{name: "vrp5_ssh_login_ipaddress", raw: "<189>Sep 23 2026 10:16:40 S5720 %%01SSH/5/SSH_USER_LOGIN(l)[3]:The SSH user succeeded in logging in. (ServiceType=stelnet, UserName=admin, IPAddress=10.1.1.100, VPNInstanceName=_public_)",
			vendor: VendorHuawei, event: "login_succeeded", object: "admin", fields: map[string]string{"source": "10.1.1.100"}},
		{name: "vrp8_config_change", raw: "<190>Sep 23 2026 10:17:02 HW-NE8000 %%01CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT(l)[18]:The configuration changed. (Internal change =0, User name =netops, Session ID =23, Command source address =10.1.0.5, Storage type =1, Terminal type =0)",
			vendor: VendorHuawei, event: "config_changed", object: "netops", fields: map[string]string{"source": "10.1.0.5"}},
		{name: "vrp8_config_change_internal", raw: "<190>Sep 23 2026 10:17:02 HW-NE8000 %%01CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT(l)[19]:The configuration changed. (Internal change =1, User name =, Session ID =0, Command source address =, Storage type =1, Terminal type =65535)",
			vendor: VendorHuawei},
		{name: "vrp8_config_change_candidate", raw: "<190>Sep 23 2026 10:17:02 HW-NE8000 %%01CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT(l)[20]:The configuration changed. (Internal change =0, User name =netops, Session ID =23, Command source address =10.1.0.5, Storage type =2, Terminal type =2)",
			vendor: VendorHuawei},
		{name: "voss_ssh_login", raw: "<190>Sep 23 10:16:40 vsp1 CP1 [08/06/15 09:43:42.230:UTC] 0x000d8602 00000000 GlobalRouter SSH INFO SSH user authentication succeeded for user rwa on host 10.68.231.194",
			vendor: VendorExtremeVOSS, event: "login_succeeded", object: "rwa", fields: map[string]string{"source": "10.68.231.194"}},
		{name: "voss_ssh_closed", raw: "<190>Sep 23 10:16:40 vsp1 CP1 [08/06/15 09:43:44.021:UTC] 0x000d8602 00000000 GlobalRouter SSH INFO SSH session closed by user rwa on host 10.68.231.194"},
		{name: "comware3_link_updown_space", raw: "<188>Oct  2 19:07:53 2000 3Com Baseline Switch %%10IFNET/4/LINK UPDOWN(l):   GigabitEthernet1/0/2: link status is DOWN",
			vendor: VendorComware, event: "interface_down", object: "GigabitEthernet1/0/2"},
		// Already right; kept so they stay so: napalm-logs tests/config/
		// huawei/INTERFACE_DOWN/default/syslog.msg, and noc's Huawei/VRP/
		// Network/Link/Link_Up_3_SYSLOG_.json.
		{name: "vrp_if_state_napalm", raw: "<29>2018-7-23 01:00:34.270.1 my-awesome-huawei-switch %%01IFNET/4/IF_STATE(l)[4997]:Interface Ethernet0/0/8 has turned into DOWN state.",
			vendor: VendorHuawei, event: "interface_down", object: "Ethernet0/0/8"},
		{name: "vrp_drv_linkup", raw: "<190>Aug  2 2012 12:04:25 od-agg-3-vilyamsa73d1 %%01DRV/6/LINKUP(l): Port GigabitEthernet0/0/9 is up because the link layer is up.",
			vendor: VendorHuawei, event: "interface_up", object: "GigabitEthernet0/0/9"},
		// A description naming a state is no state change.
		{name: "description_not_state", raw: "<190>Jul 20 15:57:35 sw1 Interface GigabitEthernet0/1 description changed to uplink-down"},
	})
}
