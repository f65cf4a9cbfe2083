package enrich

import (
	"strings"
	"testing"

	"github.com/weirnet/weir/telemetry"
)

// TestLongLinePatternsReadTheirBound: a rule's patterns read the first
// maxPatternText bytes of a message, or of what follows the rule's needs
// literal when a pattern starts with it; a long line whose event text is
// within that is still classified.
func TestLongLinePatternsReadTheirBound(t *testing.T) {
	c := classifierWithRules(t, `
rules:
  - name: far_state
    match: '^port (?P<interface>\S+) .*state (?P<state>up|down)$'
    states: {up: interface_up, down: interface_down}
    examples: [{line: "port eth1 went to state down", event: interface_down, fields: {interface: eth1}}]
  - name: nic_first
    match: 'NIC link (?P<state>Up|Down) on (?P<interface>\S+)'
    states: {up: interface_up, down: interface_down}
    examples: [{line: "NIC link Down on eth2", event: interface_down, fields: {interface: eth2}}]
`)
	pad := func(n int) string { return strings.Repeat("filler ", n/len("filler ")) }
	for _, tc := range []struct {
		name, msg, rule, ifc string
	}{
		// The built-in Comware rule has no hand matcher: its pattern reads
		// the line.
		{"event then 60 KiB", "%%10IFNET/3/PHY_UPDOWN: Physical state on the interface GigabitEthernet1/0/1 changed to down. " + pad(60<<10), "comware_ifnet_state", "GigabitEthernet1/0/1"},
		{"needs literal after 60 KiB", pad(60<<10) + "NIC link Down on eth2", "nic_first", "eth2"},
		{"state within the bound", "port eth1 " + pad(3<<10) + "state down", "far_state", "eth1"},
		// What a pattern would need past the bound it does not read.
		{"state past the bound", "port eth1 " + pad(5<<10) + "state down", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := c.Classify(&telemetry.Log{Message: tc.msg})
			if info.Rule != tc.rule || info.Fields["interface"] != tc.ifc {
				t.Errorf("rule %q, interface %q; want %q, %q", info.Rule, info.Fields["interface"], tc.rule, tc.ifc)
			}
			if tc.rule != "" && info.Event != "interface_down" {
				t.Errorf("event %q, want interface_down", info.Event)
			}
		})
	}
}

// craftedPhrases are lines a rule's phrase repeated would make, each
// repetition a candidate its pattern tries and fails: the costliest per
// byte the rule table has (a survey of every rule's examples, repeated,
// whole and cut short).
var craftedPhrases = []struct{ name, phrase string }{
	{"comware", "%%10IFNET/5/LINK_UPDOWN: Line protocol state on the interface Gi "},
	{"huawei_trap", "%%01IFNET/1/IF_LINKDOWN(l)[7]:OID 1.3.6.1.6.3.1.1.5.3 Interface 8 turned into DOWN state.("},
	{"generic_link", "Interface ge-0/0/1 down "},
	{"cisco_link", "Interface GigabitEthernet0/1 changed state to down "},
}

// BenchmarkClassifyCraftedLine: a 64 KiB line (the receivers' default
// max_message_size) of one crafted phrase. Each op is one line.
func BenchmarkClassifyCraftedLine(b *testing.B) {
	for _, p := range craftedPhrases {
		b.Run(p.name, func(b *testing.B) {
			c := NewClassifier()
			l := telemetry.Log{Message: strings.Repeat(p.phrase, 64<<10/len(p.phrase))}
			fields := map[string]string{}
			b.SetBytes(int64(len(l.Message)))
			for b.Loop() {
				c.ClassifyInto(&l, fields)
			}
		})
	}
}
