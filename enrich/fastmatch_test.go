package enrich

import (
	"maps"
	"testing"

	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// checkFastMatch: where r.fast says the patterns match msg, they do, with
// the same fields; where it says they do not, they do not. It returns
// what r.fast said.
func checkFastMatch(t testing.TB, r *rule, msg string) fastResult {
	t.Helper()
	if len(msg) > maxPatternText {
		// The patterns read a prefix (maxPatternText); a hand matcher's
		// answer, for the whole line, is the better one there.
		return fastUnsure
	}
	at := r.indexNeeds(msg)
	if at < 0 {
		return fastUnsure
	}
	got, want := map[string]string{}, map[string]string{}
	res := r.fast(msg, at, got)
	matched := r.match(msg, at, want)
	switch {
	case res == fastMatched && !matched:
		t.Errorf("%s: fast match claims %q, the patterns do not match it", r.name, msg)
	case res == fastMatched && !maps.Equal(got, want):
		t.Errorf("%s: %q: fast match gives %v, the patterns %v", r.name, msg, got, want)
	case res == fastNoMatch && matched:
		t.Errorf("%s: fast match rules out %q, the patterns match it: %v", r.name, msg, want)
	}
	return res
}

func TestFastMatchesNameRules(t *testing.T) {
	names := map[string]bool{}
	for _, r := range NewClassifier().builtin {
		names[r.name] = true
	}
	for name := range fastMatches {
		if !names[name] {
			t.Errorf("fast match for %q, which is no rule", name)
		}
	}
}

// TestFastMatchTakesExamples: each fast match takes every example of its
// rule and every corpus line the rule matches, as the patterns do; a fast
// match that gave up on them would only cost time, and would go unseen.
func TestFastMatchTakesExamples(t *testing.T) {
	c := NewClassifier()
	lines := map[string][]string{} // rule -> texts it matched
	for _, r := range c.builtin {
		for _, ex := range r.examples {
			lines[r.name] = append(lines[r.name], ex.line)
		}
	}
	var p syslog.Parser
	for _, line := range loadCorpus(t) {
		var l telemetry.Log
		p.ParseCopy([]byte(line.Raw), &l)
		if info := c.Classify(&l); info.Rule != "" {
			lines[info.Rule] = append(lines[info.Rule], text(&l))
		}
	}
	for i := range c.builtin {
		r := &c.builtin[i]
		if r.fast == nil || r.name == "generic_interface" { // only ever rules lines out
			continue
		}
		for _, msg := range lines[r.name] {
			if res := checkFastMatch(t, r, msg); res != fastMatched {
				t.Errorf("%s: fast match gives %d on %q", r.name, res, msg)
			}
		}
	}
}

// TestFastMatchRulesOutPortNumbers: the port rule's needs ("ort ") is in
// every sshd login line; its fast match tells the pattern cannot match
// them without running it.
func TestFastMatchRulesOutPortNumbers(t *testing.T) {
	c := NewClassifier()
	var r *rule
	for i := range c.builtin {
		if c.builtin[i].name == "aruba_extreme_port" {
			r = &c.builtin[i]
		}
	}
	for _, msg := range []string{
		"Accepted password for netops from 10.34.195.36 port 51234 ssh2",
		"Accepted publickey for netops from 10.0.0.5 port 50122 ssh2: ED25519 SHA256:x",
		"Disconnected from port 22 downstream", // a word after "port 22", not a state
		"support 1 up",                         // no word start
	} {
		if res := checkFastMatch(t, r, msg); res != fastNoMatch {
			t.Errorf("%q: fast match gives %d, want no match", msg, res)
		}
	}
}

// TestFastMatchRulesOutStatelessInterfaces: the fallback rule's fast
// match rules out a line about an interface with no up or down in it.
func TestFastMatchRulesOutStatelessInterfaces(t *testing.T) {
	c := NewClassifier()
	for i := range c.builtin {
		if r := &c.builtin[i]; r.name == "generic_interface" {
			if res := checkFastMatch(t, r, "lldpd: new neighbor on interface eth0, system sw2"); res != fastNoMatch {
				t.Errorf("fast match gives %d, want no match", res)
			}
			if res := checkFastMatch(t, r, "kernel: interface eth0 went down"); res != fastUnsure {
				t.Errorf("fast match gives %d on a state change, want the pattern to decide", res)
			}
		}
	}
}

// fastMatchSeeds are near misses: the places where a fast match must give
// up or decide exactly as the patterns do.
var fastMatchSeeds = []string{
	// The instance on the next line: the pattern's .*? stops at it.
	"BGP_PEER_STATE_CHANGE: BGP peer 10.2.2.2 (External AS 1) changed state from Established to Idle\n(instance CUST)",
	"RPD_BGP_NEIGHBOR_STATE_CHANGED: BGP peer 10.2.2.2 (External AS 1) changed state from Established to Idle (event x)\n(instance CUST)",
	"%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1, changed ſtate to down",
	"%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1, CHANGED STATE TO DOWNSTREAM",
	"%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1,, changed state to up",
	"%LINK-5-CHANGED: Interface Vlan10, changed state to administratively up",
	"Interface x is here. %LINK-3-UPDOWN: Interface Te1/0/24, changed state to down",
	"%ETHPORT-5-IF_DOWN_LINK_FAILURE:x: Interface Ethernet1/1 is down",
	"%ETHPORT-5-IF_DOWN: Interface Ethernet1/1 is  down",
	"%ETHPORT-x %ETHPORT-5-IF_UP: Interface Ethernet1/1 is up",
	"SNMP_TRAP_LINK_DOWNX: ifName ge-0/0/1",
	"SNMP_TRAP_LINK_UP: ifName ge-0/0/1 ifName \nifName xe-1",
	"SNMP_TRAP_LINK_UP: ifName ge-0/0/1, ifName ",
	"%BGP-5-ADJCHANGE: neighbor 10.0.0.2. Up neighbor 10.0.0.3 Down",
	// NX-OS's client after the user: an IPv6 one, a console with no address.
	"%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on fe80::1@pts/0",
	"%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on console0 (x)",
	"%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on 10.0.0.1234@pts/0",
	"%BGP-5-ADJCHANGE: neighbor 10.0.0.2 vpn vrf A Upper neighbor 10.0.0.3 Down",
	"%BGP-5-ADJCHANGE: neighbor 10.0.0.2 vpn vrf  Up",
	"%BGP-5-ADJCHANGE:\nneighbor 10.0.0.2 Up",
	"BGP-x BGP-5-ADJCHANGE : neighbor fe80::1 Down",
	"%BGP-5-ADJCHANGE: peer 10.3.3.3 (VRF default AS 65004) old state Idle event x new state Established new state -",
	"%BGP-5-ADJCHANGE: peer 10.3.3.3 (VRF a b AS 65004) old state Idle new state Connect",
	"BGP_PEER_STATE_CHANGE BGP peer 10.2.2.2+179 (Internal AS 1) changed state from Idle to Established",
	"BGP_PEER_STATE_CHANGE: BGP peer 10.2.2.2+ (External AS 1) changed state from Idle to Connect",
	"BGP_PEER_STATE_CHANGE:: BGP peer 10.2.2.2 (External AS 1) changed state from Idle to Connect",
	"%OSPF-5-ADJCHG: Process 1,, Nbr 192.0.2.7 on Gi0/2 from FULL to DOWN",
	"%OSPF-5-ADJCHG: Process ,, Nbr 192.0.2.7 on Gi0/2 from FULL to -",
	"OSPF-x %OSPF-5-ADJCHG: Process 1, Nbr 192.0.2.7 on Gi0/2 from FULL to DOWN",
	"%SYS-5-CONFIG_I: Configured from console by ,netops",
	"%SYS-5-CONFIG_I: Configured from console by vty2 (10.0.0.5)x",
	"%SYS-5-CONFIG_I: Configured from console by vty2 (10.0.0.1234)",
	"%SYS-5-CONFIG_I: Configured from console by vty2 (2001:db8::1)",
	"%SYS-5-CONFIG_I: Configured from console by vty2 (10.0.0.5",
	"%SYS-5-CONFIG_I: Configured from console by console.",
	"%SYS-5-CONFIG_I: Configured from console by console2x on vty0",
	"%SYS-5-CONFIG_I: Configured from console by vty,",
	// The user's line and address: where the optional group must give up.
	"%SYS-5-CONFIG_I: Configured from console by netops on vty0 (10.1.1.1.5)",
	"%SYS-5-CONFIG_I: Configured from console by netops on vty0 (1234.1.1.1)",
	"%SYS-5-CONFIG_I: Configured from console by netops on vty0 (10.1.1.1",
	"%SYS-5-CONFIG_I: Configured from console by netops on vty0 (10.1.1.1)x",
	"%SYS-5-CONFIG_I: Configured from console by netops on vtyX (10.1.1.1)",
	"%SYS-5-CONFIG_I: Configured from console by netops on console (10.1.1.1)",
	"%SYS-5-CONFIG_I: Configured from console by netops on vty0 (2001:db8::1)",
	"%SYS-5-CONFIG_I: Configured from console by netops on vty0 (1.2:3)",
	"%SYS-5-CONFIG_I: Configured from console by netops on vty12",
	"%SYS-5-CONFIG_I: Configured from console by netops on  vty0 (10.1.1.1)",
	"UI_COMMIT: User 'a' requested 'commit synchronize' operation",
	"UI_COMMIT: User 'a' requested 'commit synchronise'",
	"%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: net\nops]",
	"%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: netops",
	"Accepted publickey for invalid user bob from 10.0.0.1 port 1",
	"Accepted publickey for invalid user from 10.0.0.1",
	"Accepted password for bob from 10.0.0. port 1",
	"port ſ1 up; port 2 down",
	"ports: port 1/1/12 iſ now on-line",
	"Port 1:24 LINK DOWNer port 3 link down",
	"port 1/1/1a up",
	"xport 1 up, port 2 is now off-line",
	"port 1 is now link up",
	"PORT 7 Up",
	"lldp: new neighbor on interface eth0, system x",
	"Interface eth0 is\tUP",
	"interface eth0 is\nup",
	"interface eth0 went DOWN.",
	"interface eth0 isup",
	// Near misses of the VRP8 configuration change, VOSS login and
	// Comware 3 link rules.
	"CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT:The configuration changed. (Internal change =1, User name =, Session ID =0, Command source address =, Storage type =1, Terminal type =65535)",
	"CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT:The configuration changed. (Internal change =0, User name =a,b, Session ID =1, Command source address =::, Storage type =2, Terminal type =2)",
	"GlobalRouter SSH INFO SSH session closed by user rwa on host 10.68.231.194",
	"SSH user authentication succeeded for user rwa on host 10.68.231.",
	"%%10IFNET/4/LINK UPDOWN(l):   GigabitEthernet1/0/2:: link status is DOWN",
	"%%10IFNET/4/LINK UPDOWN(l): :: link status is UP",
}

func FuzzFastMatchAgreesWithPatterns(f *testing.F) {
	c := NewClassifier()
	for _, s := range fastMatchSeeds {
		f.Add(s)
	}
	for _, r := range c.builtin {
		for _, ex := range r.examples {
			f.Add(ex.line)
		}
	}
	f.Fuzz(func(t *testing.T, msg string) {
		for i := range c.builtin {
			if r := &c.builtin[i]; r.fast != nil {
				checkFastMatch(t, r, msg)
			}
		}
	})
}
