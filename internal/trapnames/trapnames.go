// Package trapnames names SNMP notifications and varbinds by OID, as
// snmptrapd prints them (linkDown, ifOperStatus.3), without any MIB: the
// standard notifications and the objects their varbinds carry. The trap
// receiver names what it receives with it (and its SNMP profiles' objects);
// enrichment names with it a raw.traps record a Kafka client wrote with
// OIDs alone.
package trapnames

import "strings"

// builtinNames are the standard notifications and the objects their
// varbinds carry, so that the common traps are named without any MIB.
var builtinNames = map[string]string{
	// SNMPv2-MIB snmpTraps (RFC 3418) and RFC 3584 varbinds.
	"1.3.6.1.6.3.1.1.5.1":     "coldStart",
	"1.3.6.1.6.3.1.1.5.2":     "warmStart",
	"1.3.6.1.6.3.1.1.5.3":     "linkDown",
	"1.3.6.1.6.3.1.1.5.4":     "linkUp",
	"1.3.6.1.6.3.1.1.5.5":     "authenticationFailure",
	"1.3.6.1.6.3.1.1.5.6":     "egpNeighborLoss",
	"1.3.6.1.2.1.1.3":         "sysUpTime",
	"1.3.6.1.6.3.1.1.4.1":     "snmpTrapOID",
	"1.3.6.1.6.3.1.1.4.3":     "snmpTrapEnterprise",
	"1.3.6.1.6.3.18.1.3":      "snmpTrapAddress",
	"1.3.6.1.6.3.18.1.4":      "snmpTrapCommunity",
	"1.3.6.1.2.1.2.2.1.1":     "ifIndex",
	"1.3.6.1.2.1.2.2.1.2":     "ifDescr",
	"1.3.6.1.2.1.2.2.1.3":     "ifType",
	"1.3.6.1.2.1.2.2.1.7":     "ifAdminStatus",
	"1.3.6.1.2.1.2.2.1.8":     "ifOperStatus",
	"1.3.6.1.2.1.31.1.1.1.1":  "ifName",
	"1.3.6.1.2.1.31.1.1.1.18": "ifAlias",
	// BGP4-MIB: the RFC 1657 forms and the RFC 4273 (BGP4-MIB v2)
	// notifications that replace them; 15.7.0.N is how a v1 trap with
	// enterprise bgpTraps converts (RFC 3584).
	"1.3.6.1.2.1.15.7.1":    "bgpEstablished",
	"1.3.6.1.2.1.15.7.2":    "bgpBackwardTransition",
	"1.3.6.1.2.1.15.7.0.1":  "bgpEstablished",
	"1.3.6.1.2.1.15.7.0.2":  "bgpBackwardTransition",
	"1.3.6.1.2.1.15.0.1":    "bgpEstablishedNotification",
	"1.3.6.1.2.1.15.0.2":    "bgpBackwardTransNotification",
	"1.3.6.1.2.1.15.3.1.1":  "bgpPeerIdentifier",
	"1.3.6.1.2.1.15.3.1.2":  "bgpPeerState",
	"1.3.6.1.2.1.15.3.1.7":  "bgpPeerRemoteAddr",
	"1.3.6.1.2.1.15.3.1.14": "bgpPeerLastError",
	// OSPF-TRAP-MIB ospfNbrStateChange (RFC 4750) and the neighbor
	// columns it carries (OSPF-MIB ospfNbrTable). ospfTraps.0.N is how a
	// v1 trap with enterprise ospfTraps converts (RFC 3584), as routers
	// configured for v1 traps send them.
	"1.3.6.1.2.1.14.16.2.2":    "ospfNbrStateChange",
	"1.3.6.1.2.1.14.16.2.0.2":  "ospfNbrStateChange",
	"1.3.6.1.2.1.14.16.2.0.1":  "ospfVirtIfStateChange",
	"1.3.6.1.2.1.14.16.2.0.16": "ospfIfStateChange",
	"1.3.6.1.2.1.14.1.1":       "ospfRouterId",
	"1.3.6.1.2.1.14.10.1.1":    "ospfNbrIpAddr",
	"1.3.6.1.2.1.14.10.1.2":    "ospfNbrAddressLessIndex",
	"1.3.6.1.2.1.14.10.1.3":    "ospfNbrRtrId",
	"1.3.6.1.2.1.14.10.1.6":    "ospfNbrState",
	"1.3.6.1.2.1.14.16.1.4":    "ospfConfigErrorType",
	"1.3.6.1.2.1.14.16.2.1":    "ospfVirtIfStateChange",
	"1.3.6.1.2.1.14.16.2.16":   "ospfIfStateChange",
	// CISCO-BGP4-MIB: IOS's BGP notifications, the cbgpPeer2 ones the
	// only ones for an IPv6 peer (the peer in the index: type, length,
	// address).
	"1.3.6.1.4.1.9.9.187.0.1":        "cbgpFsmStateChange",
	"1.3.6.1.4.1.9.9.187.0.2":        "cbgpBackwardTransition",
	"1.3.6.1.4.1.9.9.187.0.5":        "cbgpPeer2EstablishedNotification",
	"1.3.6.1.4.1.9.9.187.0.6":        "cbgpPeer2BackwardTransNotification",
	"1.3.6.1.4.1.9.9.187.0.7":        "cbgpPeer2FsmStateChange",
	"1.3.6.1.4.1.9.9.187.0.8":        "cbgpPeer2BackwardTransition",
	"1.3.6.1.4.1.9.9.187.1.2.1.1.7":  "cbgpPeerLastErrorTxt",
	"1.3.6.1.4.1.9.9.187.1.2.1.1.8":  "cbgpPeerPrevState",
	"1.3.6.1.4.1.9.9.187.1.2.5.1.3":  "cbgpPeer2State",
	"1.3.6.1.4.1.9.9.187.1.2.5.1.17": "cbgpPeer2LastError",
	"1.3.6.1.4.1.9.9.187.1.2.5.1.28": "cbgpPeer2LastErrorTxt",
	"1.3.6.1.4.1.9.9.187.1.2.5.1.29": "cbgpPeer2PrevState",
	// BGP4-V2-MIB-JUNIPER and ARISTA-BGP4V2-MIB: the BGP notifications
	// Junos and EOS send for IPv6 peers too (the peer in the index).
	"1.3.6.1.4.1.2636.5.1.1.1.0.1":      "jnxBgpM2Established",
	"1.3.6.1.4.1.2636.5.1.1.1.0.2":      "jnxBgpM2BackwardTransition",
	"1.3.6.1.4.1.2636.5.1.1.2.1.1.1.2":  "jnxBgpM2PeerState",
	"1.3.6.1.4.1.2636.5.1.1.2.1.1.1.10": "jnxBgpM2PeerRemoteAddrType",
	"1.3.6.1.4.1.2636.5.1.1.2.1.1.1.11": "jnxBgpM2PeerRemoteAddr",
	"1.3.6.1.4.1.30065.4.1.0.1":         "aristaBgp4V2EstablishedNotification",
	"1.3.6.1.4.1.30065.4.1.0.2":         "aristaBgp4V2BackwardTransitionNotification",
	"1.3.6.1.4.1.30065.4.1.1.2.1.13":    "aristaBgp4V2PeerState",
	// FRR's BGP4V2-MIB (the IETF draft's, under FRR's enterprise), which
	// SONiC, Cumulus and VyOS send; the peer in the index.
	"1.3.6.1.4.1.7336.4.2.1.0.1":      "bgp4V2EstablishedNotification",
	"1.3.6.1.4.1.7336.4.2.1.0.2":      "bgp4V2BackwardTransitionNotification",
	"1.3.6.1.4.1.7336.4.2.1.1.2.1.13": "bgp4V2PeerState",
	// ENTITY-MIB entConfigChange.
	"1.3.6.1.2.1.47.2.0.1": "entConfigChange",
	// OSPFV3-MIB (RFC 5643) ospfv3NbrStateChange and Junos's
	// OSPFV3-MIB-JUNIPER copy of it: the neighbor's router ID is the last
	// index of ospfv3NbrState (IFINDEX.INSTANCE.ROUTERID, an Unsigned32).
	"1.3.6.1.2.1.191.0.2":            "ospfv3NbrStateChange",
	"1.3.6.1.2.1.191.1.1.1":          "ospfv3RouterId",
	"1.3.6.1.2.1.191.1.9.1.8":        "ospfv3NbrState",
	"1.3.6.1.4.1.2636.5.4.1.0.2":     "jnxOspfv3NbrStateChange",
	"1.3.6.1.4.1.2636.5.4.1.1.9.1.8": "jnxOspfv3NbrState",
	// CISCO-IF-EXTENSION-MIB cieLinkDown/cieLinkUp, which NX-OS sends
	// (with ifIndex, ifAdminStatus, ifOperStatus, ifName, ifType), and
	// OLD-CISCO-INTERFACES-MIB locIfReason, which IOS adds to linkDown.
	"1.3.6.1.4.1.9.9.276.0.1":  "cieLinkDown",
	"1.3.6.1.4.1.9.9.276.0.2":  "cieLinkUp",
	"1.3.6.1.4.1.9.2.2.1.1.20": "locIfReason",
	// CISCO-CONFIG-MAN-MIB: a configuration event (a change, a save, a
	// copy, or a "show running-config") with the ccmHistoryEventTable
	// columns it carries, and IOS-XE's and NX-OS's running-config change.
	"1.3.6.1.4.1.9.9.43.2.0.1":      "ciscoConfigManEvent",
	"1.3.6.1.4.1.9.9.43.2.0.2":      "ccmCLIRunningConfigChanged",
	"1.3.6.1.4.1.9.9.43.1.1.1":      "ccmHistoryRunningLastChanged",
	"1.3.6.1.4.1.9.9.43.1.1.6.1.3":  "ccmHistoryEventCommandSource",
	"1.3.6.1.4.1.9.9.43.1.1.6.1.4":  "ccmHistoryEventConfigSource",
	"1.3.6.1.4.1.9.9.43.1.1.6.1.5":  "ccmHistoryEventConfigDestination",
	"1.3.6.1.4.1.9.9.43.1.1.6.1.6":  "ccmHistoryEventTerminalType",
	"1.3.6.1.4.1.9.9.43.1.1.6.1.8":  "ccmHistoryEventTerminalUser",
	"1.3.6.1.4.1.9.9.43.1.1.6.1.9":  "ccmHistoryEventTerminalLocation",
	"1.3.6.1.4.1.9.9.43.1.1.6.1.17": "ccmHistoryEventCommandSourceAddrRev1",
	// JUNIPER-CFGMGMT-MIB: a commit (jnxCmCfgChange, with its user) and
	// the rescue configuration saved or deleted.
	"1.3.6.1.4.1.2636.4.5.0.1":      "jnxCmCfgChange",
	"1.3.6.1.4.1.2636.4.5.0.2":      "jnxCmRescueChange",
	"1.3.6.1.4.1.2636.3.18.1.7.1.2": "jnxCmCfgChgEventTime",
	"1.3.6.1.4.1.2636.3.18.1.7.1.3": "jnxCmCfgChgEventDate",
	"1.3.6.1.4.1.2636.3.18.1.7.1.4": "jnxCmCfgChgEventSource",
	"1.3.6.1.4.1.2636.3.18.1.7.1.5": "jnxCmCfgChgEventUser",
	"1.3.6.1.4.1.2636.3.18.1.7.1.6": "jnxCmCfgChgEventLog",
	// JUNIPER-MIB chassis alarms and the objects naming the part; sent as
	// v1 traps their enterprise is juniperMIB (JUNIPER-V1-TRAPS-CHAS:
	// 2636.0.N). Named only: the design has no hardware event.
	"1.3.6.1.4.1.2636.4.1.1":      "jnxPowerSupplyFailure",
	"1.3.6.1.4.1.2636.4.1.2":      "jnxFanFailure",
	"1.3.6.1.4.1.2636.4.1.3":      "jnxOverTemperature",
	"1.3.6.1.4.1.2636.0.1":        "jnxPowerSupplyFailure",
	"1.3.6.1.4.1.2636.0.2":        "jnxFanFailure",
	"1.3.6.1.4.1.2636.0.3":        "jnxOverTemperature",
	"1.3.6.1.4.1.2636.3.1.8.1.6":  "jnxContentsDescr",
	"1.3.6.1.4.1.2636.3.1.13.1.6": "jnxOperatingState",
	// NET-SNMP-AGENT-MIB: snmpd (Linux hosts, appliances built on it)
	// started, stopping, reloaded. Named only: a start comes with
	// coldStart, which raises device_rebooted.
	"1.3.6.1.4.1.8072.4.0.1": "nsNotifyStart",
	"1.3.6.1.4.1.8072.4.0.2": "nsNotifyShutdown",
	"1.3.6.1.4.1.8072.4.0.3": "nsNotifyRestart",
}

// Names maps OIDs to names: the built-in table plus every scalar and
// column of the profiles. It is read-only once built.
type Names struct {
	byOID map[string]string
	// depth is the most sub-identifiers a known OID has: Object looks
	// up no longer prefix, so a varbind named by a very long OID costs
	// a few lookups, not one per sub-identifier.
	depth int
}

// New builds the table: the built-in names, and extra's (OID to name)
// where the built-in table has none. extra may be nil.
func New(extra map[string]string) *Names {
	n := &Names{byOID: make(map[string]string, len(builtinNames)+len(extra))}
	for oid, name := range extra {
		n.byOID[oid] = name
	}
	// The built-in names win: they are the standard ones.
	for oid, name := range builtinNames {
		n.byOID[oid] = name
	}
	for oid := range n.byOID {
		n.depth = max(n.depth, strings.Count(oid, ".")+1)
	}
	return n
}

// Notification names a notification OID exactly.
func (n *Names) Notification(oid string) string { return n.byOID[oid] }

// Object names a varbind OID as NAME.INSTANCE (ifOperStatus.3), the way
// snmptrapd prints it, from the longest known prefix; "" if none.
func (n *Names) Object(oid string) string {
	if name, ok := n.byOID[oid]; ok {
		return name
	}
	prefix := oid
	// Past depth sub-identifiers no prefix is known.
	for i, dots := 0, 0; i < len(prefix); i++ {
		if prefix[i] == '.' {
			if dots++; dots == n.depth {
				prefix = prefix[:i+1] // the loop below cuts the '.'
				break
			}
		}
	}
	for {
		i := strings.LastIndexByte(prefix, '.')
		if i <= 0 {
			return ""
		}
		prefix = prefix[:i]
		if name, ok := n.byOID[prefix]; ok {
			return name + oid[i:]
		}
	}
}
