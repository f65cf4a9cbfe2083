package enrich

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/telemetry"
)

// withoutKeywords is the classifier without the keyword and byte-pair
// prefilters: every rule whose needs literal is there runs its patterns.
func withoutKeywords() *Classifier {
	c := NewClassifier()
	for i := range c.builtin {
		c.builtin[i].keywords = nil
		c.builtin[i].bigrams = bigramSet{}
	}
	return c
}

// checkKeywordsChangeNothing: the prefilter gives what running every
// pattern gives.
func checkKeywordsChangeNothing(t *testing.T, fast, ref *Classifier, l *telemetry.Log) {
	t.Helper()
	if got, want := fast.Classify(l), ref.Classify(l); !reflect.DeepEqual(got, want) {
		t.Errorf("%q: with keywords %+v, without %+v", l.Message, got, want)
	}
}

func TestKeywordsAreInExamples(t *testing.T) {
	for _, r := range NewClassifier().builtin {
		for _, ex := range r.examples {
			for _, k := range r.keywords {
				if !strings.Contains(ex.line, k) {
					t.Errorf("%s: keyword %q not in example %q", r.name, k, ex.line)
				}
			}
		}
	}
}

func TestKeywordsChangeNothingOnCorpus(t *testing.T) {
	fast, ref := NewClassifier(), withoutKeywords()
	var p syslog.Parser
	for _, line := range loadCorpus(t) {
		var l telemetry.Log
		p.ParseCopy([]byte(line.Raw), &l)
		checkKeywordsChangeNothing(t, fast, ref, &l)
	}
	for _, r := range fast.builtin {
		for _, ex := range r.examples {
			checkKeywordsChangeNothing(t, fast, ref, &telemetry.Log{Message: ex.line})
		}
	}
}

func FuzzKeywordsChangeNothing(f *testing.F) {
	for _, r := range NewClassifier().builtin {
		for _, ex := range r.examples {
			f.Add("", "", ex.line)
		}
	}
	for _, line := range loadCorpus(f) {
		f.Add("", "", line.Raw)
	}
	f.Add("BGP_PEER_STATE_CHANGE", "rpd", "BGP peer 10.2.2.2 (External AS 65003) changed state from ESTABLISHED to Idle")
	fast, ref := NewClassifier(), withoutKeywords()
	f.Fuzz(func(t *testing.T, msgID, app, msg string) {
		checkKeywordsChangeNothing(t, fast, ref, &telemetry.Log{MsgID: msgID, AppName: app, Message: msg})
	})
}

// The state lookups agree with strings.ToLower, non-ASCII included.
func FuzzLowerLookups(f *testing.F) {
	for _, s := range []string{"", "Up", "DOWN", "administratively Down", "adminiſtratively down", "ESTABLISHED", "Full", "İ", "K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lower := strings.ToLower(s)
		m := map[string]string{lower: "hit"}
		if got := lookupLower(m, s); got != "hit" {
			t.Errorf("lookupLower(%q) = %q", s, got)
		}
		if got := lookupLower(ifStates, s); got != ifStates[lower] {
			t.Errorf("lookupLower(ifStates, %q) = %q, want %q", s, got, ifStates[lower])
		}
		for _, up := range []string{"established", "full", lower} {
			if got := equalLower(s, up); got != (lower == up) {
				t.Errorf("equalLower(%q, %q) = %v", s, up, got)
			}
		}
	})
}

// FuzzBigramsHoldSubstrings: a text's pair set holds every substring's,
// so the pair test never turns away a rule whose literals are there.
func FuzzBigramsHoldSubstrings(f *testing.F) {
	f.Add("Line protocol on Interface Ethernet1, changed state to down", 5, 20)
	f.Add("ab", 0, 2)
	f.Add("abc", math.MinInt, 1) // -MinInt is MinInt: negating gives no index
	f.Fuzz(func(t *testing.T, s string, i, j int) {
		if len(s) == 0 {
			return
		}
		i, j = int(uint(i)%uint(len(s))), int(uint(j)%uint(len(s)+1))
		if i > j {
			i, j = j, i
		}
		var text, sub, upper bigramSet
		text.add(s)
		sub.add(s[i:j])
		if !text.holds(&sub) {
			t.Fatalf("%q does not hold its substring %q", s, s[i:j])
		}
		// Nor in another ASCII case, for the rules that ignore case.
		upper.add(strings.ToUpper(s[i:j]))
		if isASCII(s) && !text.holds(&upper) {
			t.Fatalf("%q does not hold %q, folded", s, strings.ToUpper(s[i:j]))
		}
	})
}

// FuzzFinder: a finder finds what strings.Index does, on the text
// lowered when it ignores case, whichever byte it anchors on.
func FuzzFinder(f *testing.F) {
	f.Add("xx INTERFACE eth0", "nterface", true)
	f.Add("nNnNnterfaceX", "Nterface", true)
	f.Add("a", "", false)
	f.Add("AAAADJCHANGEADJCHANGE", "ADJCHANGE", false)
	f.Add("%ETH%ETHPORT-", "%ETHPORT-", false)
	f.Add("ort ORT port", "ort ", true)
	f.Add("AAAAAAAA", "adjchange", true)
	f.Add("AAAAAAAA", "aa", true)
	f.Fuzz(func(t *testing.T, s, lit string, fold bool) {
		want := strings.Index(s, lit)
		if fold {
			if !isASCII(s) || !isASCII(lit) {
				return
			}
			want = strings.Index(strings.ToLower(s), strings.ToLower(lit))
		}
		fd := newFinder(lit, fold)
		if got := fd.index(s); got != want {
			t.Fatalf("finder(%q, fold %v, anchor %q at %d).index(%q) = %d, want %d", lit, fold, fd.lo, fd.at, s, got, want)
		}
		// The same asking absentBytes, fresh and as another rule's search
		// left it (every byte looked up): a long line's search.
		var fresh, used absentBytes
		for c := range 256 {
			used.lacks(s, byte(c))
		}
		for _, a := range []*absentBytes{&fresh, &used} {
			if got := fd.indexIn(s, a); got != want {
				t.Fatalf("finder(%q, fold %v, anchor %q at %d).indexIn(%q) = %d, want %d", lit, fold, fd.lo, fd.at, s, got, want)
			}
		}
	})
}

// TestFinderAnchorsOnRareBytes: the anchor is a byte a text without the
// literal seldom has, and, ignoring case, one that has no case if it can.
func TestFinderAnchorsOnRareBytes(t *testing.T) {
	for _, tc := range []struct {
		lit  string
		fold bool
		want byte
	}{
		{"ADJCHANGE", false, 'J'},
		{"%ETHPORT-", false, '%'},
		{"SNMP #", true, '#'},
		{"changed state to", false, 'g'},
		{"logged in", true, 'g'},
	} {
		if f := newFinder(tc.lit, tc.fold); f.lo != tc.want {
			t.Errorf("newFinder(%q, %v) anchors on %q, want %q", tc.lit, tc.fold, f.lo, tc.want)
		}
	}
}

// BenchmarkClassifyLongLine: the rule table on a 9 KB line of one letter
// (the corpus has one), where searching from each literal's first byte
// found a candidate at every position.
func BenchmarkClassifyLongLine(b *testing.B) {
	c := NewClassifier()
	l := telemetry.Log{Message: strings.Repeat("A", 9000)}
	fields := map[string]string{}
	for b.Loop() {
		c.ClassifyInto(&l, fields)
	}
}

// TestFoldRulesIgnoreCase: a rule whose patterns ignore case finds its
// literal in any ASCII case, as its patterns would match.
func TestFoldRulesIgnoreCase(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct{ msg, rule, event string }{
		{"INTERFACE eth0 IS DOWN", "generic_interface", "interface_down"},
		{"PORT 1/1/2 IS NOW OFF-LINE", "aruba_extreme_port", "interface_down"},
		{"User admin Logged In from 10.0.0.5", "generic_login", "login_succeeded"},
		{"routed: bgp PEER 10.9.0.1 state changed from Established to Idle", "generic_bgp_peer", "bgp_peer_down"},
	} {
		info := c.Classify(&telemetry.Log{Message: tc.msg})
		if info.Rule != tc.rule || info.Event != tc.event {
			t.Errorf("%q: rule %q event %q, want %q %q", tc.msg, info.Rule, info.Event, tc.rule, tc.event)
		}
	}
}

// TestGenericPhrasingsClaimNoVendor: a rule for a phrasing many systems
// write (a routing daemon's "BGP peer X state changed from A to B") names
// no vendor, so a line of a device the header does not tell is generic,
// not one vendor's (the inventory's vendor takes its place); a vendor's
// own wording still names it.
func TestGenericPhrasingsClaimNoVendor(t *testing.T) {
	c := NewClassifier()
	for _, tc := range []struct{ msg, rule, vendor string }{
		{"routed: BGP peer 10.9.0.1 state changed from Established to Idle", "generic_bgp_peer", VendorGeneric},
		{"bgpd[812]: BGP peer 192.0.2.9 state changed from Idle to Established", "generic_bgp_peer", VendorGeneric},
		{"interface eth0 is down", "generic_interface", VendorGeneric},
		{`1,2026/03/02 08:19:40,013201009876,SYSTEM,routing,0,2026/03/02 08:19:40,,routed-BGP-peer-left-established,TRANSIT-B,0,0,general,high,"BGP peer session left established state. peer name: TRANSIT-B, peer IP: 198.51.100.77.",7302,0x0,0,0,0,0,,edge-fw2`, "paloalto_bgp_session", VendorPaloAlto},
	} {
		info := c.Classify(&telemetry.Log{Message: tc.msg})
		if info.Rule != tc.rule || info.Vendor != tc.vendor {
			t.Errorf("%q: rule %q vendor %q, want %q %q", tc.msg, info.Rule, info.Vendor, tc.rule, tc.vendor)
		}
	}
}
