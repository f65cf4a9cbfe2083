package trap

import (
	"testing"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// TestVendorNotificationsNamed: the vendor notifications enrichment maps
// to events, and those it leaves as records, are named with the varbinds
// they carry (OIDs from the MIBs as pysnmp compiles them:
// CISCO-CONFIG-MAN-MIB, JUNIPER-CFGMGMT-MIB, CISCO-IF-EXTENSION-MIB,
// OSPFV3-MIB and OSPFV3-MIB-JUNIPER, JUNIPER-MIB and JUNIPER-V1-TRAPS-CHAS,
// NET-SNMP-AGENT-MIB), sent as v2c and as v1 traps by Net-SNMP's snmptrap.
func TestVendorNotificationsNamed(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	h := start(t, Config{})
	const ccm = "1.3.6.1.4.1.9.9.43.1.1.6.1."
	const jnxCm = "1.3.6.1.4.1.2636.3.18.1.7.1."
	sends := []struct {
		args []string
		name string
		vbs  []string // the names of its varbinds, in order
	}{
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.9.9.43.2.0.1",
			ccm + "3.42", "i", "1", ccm + "4.42", "i", "2", ccm + "5.42", "i", "3", ccm + "8.42", "s", "netops"},
			"ciscoConfigManEvent", []string{"ccmHistoryEventCommandSource.42", "ccmHistoryEventConfigSource.42",
				"ccmHistoryEventConfigDestination.42", "ccmHistoryEventTerminalUser.42"}},
		// v1, enterprise ciscoConfigManMIBNotificationPrefix, specific 1.
		{[]string{"-v1", "-c", "public", h.addr, "1.3.6.1.4.1.9.9.43.2", "192.0.2.7", "6", "1", "",
			ccm + "5.43", "i", "2"},
			"ciscoConfigManEvent", []string{"ccmHistoryEventConfigDestination.43"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.9.9.43.2.0.2",
			"1.3.6.1.4.1.9.9.43.1.1.1.0", "t", "1234", ccm + "6.7", "i", "5"},
			"ccmCLIRunningConfigChanged", []string{"ccmHistoryRunningLastChanged.0", "ccmHistoryEventTerminalType.7"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.2636.4.5.0.1",
			jnxCm + "2.7", "t", "12345", jnxCm + "4.7", "i", "1", jnxCm + "5.7", "s", "netops", jnxCm + "6.7", "s", "commit"},
			"jnxCmCfgChange", []string{"jnxCmCfgChgEventTime.7", "jnxCmCfgChgEventSource.7", "jnxCmCfgChgEventUser.7", "jnxCmCfgChgEventLog.7"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.9.9.276.0.1",
			"1.3.6.1.2.1.2.2.1.1.5", "i", "5", "1.3.6.1.2.1.31.1.1.1.1.5", "s", "Ethernet1/5"},
			"cieLinkDown", []string{"ifIndex.5", "ifName.5"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.6.3.1.1.5.3",
			"1.3.6.1.2.1.2.2.1.1.2", "i", "2", "1.3.6.1.4.1.9.2.2.1.1.20.2", "s", "administratively down"},
			"linkDown", []string{"ifIndex.2", "locIfReason.2"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.2.1.191.0.2",
			"1.3.6.1.2.1.191.1.1.1.0", "u", "16843009", "1.3.6.1.2.1.191.1.9.1.8.5.0.167772169", "i", "1"},
			"ospfv3NbrStateChange", []string{"ospfv3RouterId.0", "ospfv3NbrState.5.0.167772169"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.2636.5.4.1.0.2",
			"1.3.6.1.4.1.2636.5.4.1.1.9.1.8.5.0.167772169", "i", "8"},
			"jnxOspfv3NbrStateChange", []string{"jnxOspfv3NbrState.5.0.167772169"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.2636.4.1.1",
			"1.3.6.1.4.1.2636.3.1.8.1.6.2.1.0.0", "s", "PEM 1", "1.3.6.1.4.1.2636.3.1.13.1.6.2.1.0.0", "i", "6"},
			"jnxPowerSupplyFailure", []string{"jnxContentsDescr.2.1.0.0", "jnxOperatingState.2.1.0.0"}},
		// v1, enterprise juniperMIB, specific 1 (JUNIPER-V1-TRAPS-CHAS).
		{[]string{"-v1", "-c", "public", h.addr, "1.3.6.1.4.1.2636", "192.0.2.7", "6", "1", "",
			"1.3.6.1.4.1.2636.3.1.8.1.6.2.1.0.0", "s", "PEM 1"},
			"jnxPowerSupplyFailure", []string{"jnxContentsDescr.2.1.0.0"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.8072.4.0.2"}, "nsNotifyShutdown", nil},
		// CISCO-BGP4-MIB's backward transitions as IOS sends them: the
		// last error's text beside its code, IPv4 and IPv6 (cbgpPeer2).
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.9.9.187.0.2",
			"1.3.6.1.2.1.15.3.1.14.10.0.0.2", "x", "0604", "1.3.6.1.2.1.15.3.1.2.10.0.0.2", "i", "1",
			"1.3.6.1.4.1.9.9.187.1.2.1.1.7.10.0.0.2", "s", "hold time expired", "1.3.6.1.4.1.9.9.187.1.2.1.1.8.10.0.0.2", "i", "6"},
			"cbgpBackwardTransition", []string{"bgpPeerLastError.10.0.0.2", "bgpPeerState.10.0.0.2",
				"cbgpPeerLastErrorTxt.10.0.0.2", "cbgpPeerPrevState.10.0.0.2"}},
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.9.9.187.0.6",
			"1.3.6.1.4.1.9.9.187.1.2.5.1.17.1.4.10.0.0.2", "x", "0604", "1.3.6.1.4.1.9.9.187.1.2.5.1.3.1.4.10.0.0.2", "i", "1",
			"1.3.6.1.4.1.9.9.187.1.2.5.1.28.1.4.10.0.0.2", "s", "hold time expired", "1.3.6.1.4.1.9.9.187.1.2.5.1.29.1.4.10.0.0.2", "i", "6"},
			"cbgpPeer2BackwardTransNotification", []string{"cbgpPeer2LastError.1.4.10.0.0.2", "cbgpPeer2State.1.4.10.0.0.2",
				"cbgpPeer2LastErrorTxt.1.4.10.0.0.2", "cbgpPeer2PrevState.1.4.10.0.0.2"}},
		// FRR's BGP4V2-MIB (bgpd/bgp_snmp_bgp4v2.h).
		{[]string{"-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.7336.4.2.1.0.2",
			"1.3.6.1.4.1.7336.4.2.1.1.2.1.13.1.1.10.0.0.9", "i", "1"},
			"bgp4V2BackwardTransitionNotification", []string{"bgp4V2PeerState.1.1.10.0.0.9"}},
	}
	for _, s := range sends {
		snmptest.Run(t, h.dir, "snmptrap", s.args...)
	}
	trs := h.waitTraps(t, len(sends))
	for i, s := range sends {
		tr := trs[i]
		if tr.TrapName != s.name {
			t.Errorf("trap %s: named %q, want %q", tr.TrapOID, tr.TrapName, s.name)
		}
		var names []string
		for _, vb := range tr.Varbinds {
			switch vb.Name {
			case "snmpTrapAddress.0", "snmpTrapCommunity.0", "snmpTrapEnterprise.0":
				continue // a v1 trap's, appended
			}
			names = append(names, vb.Name)
		}
		if len(names) != len(s.vbs) {
			t.Errorf("%s: varbinds %q, want %q", s.name, names, s.vbs)
			continue
		}
		for j := range names {
			if names[j] != s.vbs[j] {
				t.Errorf("%s: varbinds %q, want %q", s.name, names, s.vbs)
				break
			}
		}
	}
}
