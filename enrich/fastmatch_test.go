package enrich

import (
	"maps"
	"strings"
	"testing"

	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// checkFastMatch: where r.fast claims msg, the patterns match it too and
// give the same fields. It reports whether fast claimed it.
func checkFastMatch(t testing.TB, r *rule, msg string) bool {
	t.Helper()
	at := strings.Index(msg, r.needs)
	if at < 0 {
		return false
	}
	got := map[string]string{}
	if !r.fast(msg, at, got) {
		return false
	}
	want := map[string]string{}
	if !r.match(msg, at, want) {
		t.Errorf("%s: fast match claims %q, the patterns do not match it", r.name, msg)
		return true
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: %q: fast match gives %v, the patterns %v", r.name, msg, got, want)
	}
	return true
}

func TestFastMatchesNameRules(t *testing.T) {
	names := map[string]bool{}
	for _, r := range NewClassifier().rules {
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
	for _, r := range c.rules {
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
	for i := range c.rules {
		r := &c.rules[i]
		if r.fast == nil {
			continue
		}
		for _, msg := range lines[r.name] {
			if !checkFastMatch(t, r, msg) {
				t.Errorf("%s: fast match gives up on %q", r.name, msg)
			}
		}
	}
}

// fastMatchSeeds are near misses: the places where a fast match must give
// up or decide exactly as the patterns do.
var fastMatchSeeds = []string{
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
	"UI_COMMIT: User 'a' requested 'commit synchronize' operation",
	"UI_COMMIT: User 'a' requested 'commit synchronise'",
	"%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: net\nops]",
	"%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: netops",
	"Accepted publickey for invalid user bob from 10.0.0.1 port 1",
	"Accepted publickey for invalid user from 10.0.0.1",
	"Accepted password for bob from 10.0.0. port 1",
}

func FuzzFastMatchAgreesWithPatterns(f *testing.F) {
	c := NewClassifier()
	for _, s := range fastMatchSeeds {
		f.Add(s)
	}
	for _, r := range c.rules {
		for _, ex := range r.examples {
			f.Add(ex.line)
		}
	}
	f.Fuzz(func(t *testing.T, msg string) {
		for i := range c.rules {
			if r := &c.rules[i]; r.fast != nil {
				checkFastMatch(t, r, msg)
			}
		}
	})
}
