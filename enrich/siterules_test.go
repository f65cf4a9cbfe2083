package enrich

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/weirnet/weir/telemetry"
)

// TestSiteRulesExampleFile: the example file weir ships loads, and its
// rules recognise what weir's own do not.
func TestSiteRulesExampleFile(t *testing.T) {
	s, err := ReadSyslogRules("../configs/syslog-rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := NewClassifier()
	nic := telemetry.Log{Message: "i40e 0000:3b:00.1 ens1f1: NIC Link is Down"}
	meraki := telemetry.Log{Message: "events port 12 status changed from 10Gfdx to down"}
	if info := c.Classify(&nic); info.Event != "" {
		t.Fatalf("weir's own rules already give %+v: pick another example", info)
	}
	if err := c.UseSyslogRules(s); err != nil {
		t.Fatal(err)
	}
	if info := c.Classify(&nic); info.Rule != "linux_nic_link" || info.Event != "interface_down" || info.Fields["interface"] != "ens1f1" || info.Vendor != VendorGeneric {
		t.Errorf("NIC link line: %+v", info)
	}
	if info := c.Classify(&meraki); info.Rule != "meraki_port_down" || info.Event != "interface_down" || ObjectOf(info) != "12" || info.Vendor != "cisco_meraki" || !info.VendorByRule {
		t.Errorf("Meraki line: %+v", info)
	}
	// The built-in rules still run after them.
	if info := c.Classify(&telemetry.Log{Message: "%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"}); info.Rule != "cisco_link" {
		t.Errorf("a Cisco line with site rules: %+v", info)
	}
	if err := c.UseSyslogRules(nil); err != nil {
		t.Fatal(err)
	}
	if info := c.Classify(&nic); info.Event != "" {
		t.Errorf("site rules taken away, still %+v", info)
	}
}

// TestSiteRulesComeFirst: a site rule reads a message its own way even
// where a built-in rule matches it, and its fields are its own.
func TestSiteRulesComeFirst(t *testing.T) {
	s, err := ParseSyslogRules([]byte(`
rules:
  - name: lab_ports
    match: '^Port (?P<interface>\d+) link (?P<state>up|down)$'
    states: {up: interface_up, down: interface_down}
    examples:
      - {line: "Port 5 link down", event: interface_down, fields: {interface: "5", site_note: ""}}
`), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := NewClassifier()
	if info := c.Classify(&telemetry.Log{Message: "Port 5 link down"}); info.Rule == "" {
		t.Fatal("no built-in rule matches the example: pick another")
	}
	if err := c.UseSyslogRules(s); err != nil {
		t.Fatal(err)
	}
	if info := c.Classify(&telemetry.Log{Message: "Port 5 link down"}); info.Rule != "lab_ports" || info.Event != "interface_down" {
		t.Errorf("%+v", info)
	}
}

// TestSiteRulesRefused: each mistake in a site rules file is told with
// the file, the rule's line and what to do, all of them at once, and a
// refused file leaves the rules in use as they were.
func TestSiteRulesRefused(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"bad regexp", `
rules:
  - name: a
    match: 'link (down'
    event: interface_down
    examples: [{line: x}]
`, []string{"rules.yaml:4: rule \"a\": match: error parsing regexp"}},
		{"unknown event, no object group", `
rules:
  - name: a
    match: 'link (?P<port>\S+) down'
    event: link_down
    examples: [{line: "link 1 down", event: link_down}]
  - name: b
    match: 'link (?P<port>\S+) down'
    event: interface_down
    examples: [{line: "link 1 down", event: interface_down}]
`, []string{`rules.yaml:5: rule "a": event "link_down": not one syslog gives; one of`, "interface_down", `rules.yaml:8: rule "b": match: an interface_down event names its object by a (?P<interface>...) group`}},
		{"no object group for a login or a change: user, or else source", `
rules:
  - name: a
    match: 'session opened for (?P<who>\S+)'
    event: login_succeeded
    examples: [{line: "session opened for bob", event: login_succeeded}]
  - name: b
    match: 'ospf (?P<peer>\S+) (?P<state>up|down)'
    states: {up: ospf_neighbor_up}
    examples: [{line: "ospf 10.0.0.1 up", event: ospf_neighbor_up}]
`, []string{`rules.yaml:4: rule "a": match: a login_succeeded event names its object by a (?P<user>...) group, or else a (?P<source>...) one, which match has neither`,
			`rules.yaml:8: rule "b": match: an ospf_neighbor_up event names its object by a (?P<neighbor>...) group, which match has not`}},
		{"states without a state group, and event too", `
rules:
  - name: a
    match: 'link (?P<interface>\S+) (?:down|up)'
    states: {down: interface_down}
    examples: [{line: "link 1 down"}]
  - name: b
    match: 'x (?P<user>\S+)'
    event: login_succeeded
    states: {y: login_succeeded}
    examples: [{line: "x y"}]
`, []string{`rule "a": states: match has no (?P<state>...) group`, `rule "b": event and states: give one`}},
		{"names", `
rules:
  - match: 'x'
    event: config_changed
  - name: cisco_link
    match: 'x (?P<user>\S+)'
    event: config_changed
    examples: [{line: "x y", event: config_changed}]
  - name: Mine
    match: 'x (?P<user>\S+)'
    event: config_changed
    examples: [{line: "x y", event: config_changed}]
  - name: twice
    match: 'x (?P<user>\S+)'
    event: config_changed
    examples: [{line: "x y", event: config_changed}]
  - name: twice
    match: 'x (?P<user>\S+)'
    event: config_changed
    examples: [{line: "x y", event: config_changed}]
`, []string{`rules.yaml:3: rule 1: needs a name`, `rule 1: needs examples`, `rule "cisco_link": name: weir has a rule of that name`,
			`rule "Mine": name: lower-case`, `rules.yaml:17: rule "twice": name: also the name of the rule at line 13`}},
		// An error about a key is at the key's line, not the rule's
		// first: a rule of many lines had the user look for it.
		{"an unknown event in states, at the states line", `
rules:
  - name: a
    match: 'link (?P<interface>\S+) (?P<state>down|up)'
    examples: [{line: "link 1 down", event: interface_down}]
    states:
      down: interface_down
      up: interface_upp
`, []string{`rules.yaml:6: rule "a": states: up: event "interface_upp": not one syslog gives`}},
		{"unknown key", `
rules:
  - name: a
    match: 'x (?P<user>\S+)'
    evnet: config_changed
`, []string{"rules.yaml:5: field evnet: unknown key in a rule"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusedWith(t, tc.yaml, tc.want...)
		})
	}
}

// TestSiteRulesExamplesChecked: a file whose examples do not give what
// they say is refused by UseSyslogRules, naming the rule, the example and
// what it gave; the rules in use stay.
func TestSiteRulesExamplesChecked(t *testing.T) {
	c := NewClassifier()
	good, err := ParseSyslogRules([]byte(`
rules:
  - name: nic
    match: '(?P<interface>[\w.-]+): NIC Link is (?P<state>Up|Down)\b'
    states: {up: interface_up, down: interface_down}
    examples: [{line: "eth2: NIC Link is Down", event: interface_down, fields: {interface: eth2}}]
`), "good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UseSyslogRules(good); err != nil {
		t.Fatal(err)
	}
	bad, err := ParseSyslogRules([]byte(`
rules:
  - name: wide
    match: '(?P<interface>\S+): NIC Link is Down'
    event: interface_down
    examples: [{line: "eth0: NIC Link is Down", event: interface_down, fields: {interface: eth0}}]
  - name: nic
    match: '(?P<interface>[\w.-]+): NIC Link is (?P<state>Up|Down)\b'
    states: {up: interface_up, down: interface_down}
    examples:
      - {line: "eth2: NIC Link is Down", event: interface_down}
      - {line: "eth2: NIC Link is Up", event: interface_down}
      - {line: "eth2: NIC Link is Up", event: interface_up, fields: {interface: eth3}}
      - {line: "nothing to see", event: interface_up}
`), "bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = c.UseSyslogRules(bad)
	if err == nil {
		t.Fatal("taken")
	}
	for _, w := range []string{
		`bad.yaml:7: rule "nic": example "eth2: NIC Link is Down": matches rule "wide" first`,
		`example "eth2: NIC Link is Up": gives event "interface_up", not "interface_down"`,
		`field interface is "eth2", not "eth3"`,
		`example "nothing to see": matches no rule`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nwants %q", err, w)
		}
	}
	if info := c.Classify(&telemetry.Log{Message: "eth0: NIC Link is Down"}); info.Rule == "wide" {
		t.Errorf("the refused file's rules are in use: %+v", info)
	}
	if info := c.Classify(&telemetry.Log{Message: "eth9: NIC Link is Up"}); info.Rule != "nic" {
		t.Errorf("the rules in use before are not: %+v", info)
	}
}

// TestSiteRulesSwappedWhileClassifying: a reload swaps the rules while
// workers classify (run with -race).
func TestSiteRulesSwappedWhileClassifying(t *testing.T) {
	s, err := ReadSyslogRules("../configs/syslog-rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := NewClassifier()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			fields := map[string]string{}
			for range 2000 {
				info := c.ClassifyInto(&telemetry.Log{Message: "ixgbe 0000:03:00.0 eth2: NIC Link is Down"}, fields)
				if info.Rule != "" && info.Rule != "linux_nic_link" {
					t.Errorf("%+v", info)
					return
				}
			}
		})
	}
	for i := range 200 {
		if i%2 == 1 {
			s = nil
		} else if s == nil {
			s, _ = ReadSyslogRules("../configs/syslog-rules.example.yaml")
		}
		if err := c.UseSyslogRules(s); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

// FuzzParseSyslogRules: any file is parsed or refused with an error, and
// one parsed is taken or refused the same way, without a panic.
func FuzzParseSyslogRules(f *testing.F) {
	example, err := os.ReadFile("../configs/syslog-rules.example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte("rules:\n  - name: a\n    match: [x, y]\n    event: config_changed\n    examples: [{line: x y}]\n"))
	f.Add([]byte("rules: {}\n"))
	f.Add([]byte("rules:\n  - match: {a: b}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSyslogRules(data, "fuzz.yaml")
		if err != nil {
			if s != nil {
				t.Fatal("rules and an error")
			}
			return
		}
		_ = NewClassifier().UseSyslogRules(s)
	})
}

// TestSiteRulesSecondDocumentRefused: two rules files joined, each
// starting with ---, are refused, as the config and the inventory are:
// the decoder reads the first document alone, and the second's rules
// would be dropped without a word.
func TestSiteRulesSecondDocumentRefused(t *testing.T) {
	data := []byte(`rules:
  - name: nic
    match: '(?P<interface>[\w.-]+): NIC Link is Down'
    event: interface_down
    examples: [{line: "eth2: NIC Link is Down", event: interface_down}]
---
rules:
  - name: meraki
    match: 'port (?P<interface>\d+) status changed from \S+ to down$'
    event: interface_down
    examples: [{line: "port 3 status changed from 1Gfdx to down", event: interface_down}]
`)
	s, err := ParseSyslogRules(data, "rules.yaml")
	if err == nil {
		t.Fatalf("parsed, %d rules of the file's 2", s.Len())
	}
	if want := "rules.yaml:6: a second YAML document starts here"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q\nwants %q", err, want)
	}
	// A --- that starts the file, or one ending it with nothing after, is
	// no second document.
	for _, ok := range []string{"---\nrules: []\n", "rules: []\n---\n", "rules: []\n...\n"} {
		if _, err := ParseSyslogRules([]byte(ok), "rules.yaml"); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestSiteRulesYAMLErrorsWorded: a YAML mistake in the file is told as
// the config's and the inventory's are, "FILE:LINE: key: what", without
// yaml.v3's internal marks or Go type names, and a regular expression's
// backslash in double quotes says to quote it singly.
func TestSiteRulesYAMLErrorsWorded(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"match a mapping", "rules:\n  - name: a\n    match: {x: y}\n    event: config_changed\n",
			[]string{"rules.yaml:3: rules[0].match: want a regular expression or a list of them"}},
		{"unknown key in a rule", "rules:\n  - name: a\n    match: 'x (?P<user>y)'\n    evnet: config_changed\n",
			[]string{"rules.yaml:4: field evnet: unknown key in a rule (did you mean event?"}},
		{"unknown key in an example", "rules:\n  - name: a\n    match: 'x'\n    examples: [{lin: x}]\n",
			[]string{"rules.yaml:4: field lin: unknown key in an example (did you mean line?"}},
		{"unknown top-level key", "rule:\n  - name: a\n",
			[]string{"rules.yaml:1: field rule: unknown key at the top level (did you mean rules?"}},
		{"states a list", "rules:\n  - name: a\n    match: 'x'\n    states: [up, down]\n",
			[]string{"rules.yaml:4: rules[0].states: cannot unmarshal !!seq into a mapping"}},
		{"a regexp in double quotes", "rules:\n  - name: a\n    match: \"(?P<interface>\\S+) down\"\n",
			[]string{"rules.yaml:3: found unknown escape character", "single quotes"}},
		{"a parser error's line", "rules:\n  - name: a\n    match: 'x'\n    examples: [{line: x]\n",
			[]string{"rules.yaml:4: did not find expected ',' or '}'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := refusedWith(t, tc.yaml, tc.want...)
			for _, not := range []string{"value at", "enrich.", "struct {", "   line "} {
				if strings.Contains(err.Error(), not) {
					t.Errorf("error %q has %q", err, not)
				}
			}
		})
	}
}

// TestSiteRulesStatesInTwoCases: states are looked up in any case, so
// two keys that differ only in case are one state: given two events, the
// file is refused (which one won went by Go's map order, file load to
// file load, its examples passing at one SIGHUP and failing at the
// next); given one event, it is taken.
func TestSiteRulesStatesInTwoCases(t *testing.T) {
	_, err := ParseSyslogRules([]byte(`
rules:
  - name: a
    match: 'l (?P<interface>\S+) (?P<state>\w+)'
    states: {Up: interface_up, up: interface_down, DOWN: interface_down}
    examples: [{line: l e1 up, event: interface_up}]
`), "rules.yaml")
	if want := `rules.yaml:5: rule "a": states: Up and up are one state (states are matched in any case), and give interface_up and interface_down`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwants %q", err, want)
	}
	s, err := ParseSyslogRules([]byte(`
rules:
  - name: a
    match: 'l (?P<interface>\S+) (?P<state>\w+)'
    states: {Up: interface_up, up: interface_up, down: interface_down}
    examples: [{line: l e1 UP, event: interface_up}]
`), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := NewClassifier().UseSyslogRules(s); err != nil {
		t.Error(err)
	}
}

// TestSiteRulesExampleItsMatchMisses: an example the rule's own match
// does not match, which a later rule (one of weir's) does, is told so:
// not "matches rule X first", which says the rule comes too late when
// its pattern is what is wrong.
func TestSiteRulesExampleItsMatchMisses(t *testing.T) {
	s, err := ParseSyslogRules([]byte(`
rules:
  - name: cisco_link_mine
    match: 'Interface (?P<interface>[\w/.]+) changed state to (?P<state>up|down)'
    states: {up: interface_up, down: interface_down}
    examples:
      - {line: "%LINK-3-UPDOWN: Interface Gi0/1, changed state to down", event: interface_down}
`), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = NewClassifier().UseSyslogRules(s)
	if want := `its match does not match it (weir's rule "cisco_link" does)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nwants %q", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "first") {
		t.Errorf("error %v says a rule matches first", err)
	}
}

// TestSiteRulesReadWhatWeirsRulesRead: a site rule matches the text
// weir's own rules do, which is a record's message but for a Junos record
// with its event tag in the RFC 5424 MSGID (the tag, ": " and the
// message) and a Cisco line whose mnemonic a relay took for the APP-NAME
// (the mnemonic, ":" and the message), as enrich/README.md says; and its
// state group picks the event without becoming a field.
func TestSiteRulesReadWhatWeirsRulesRead(t *testing.T) {
	c := classifierWithRules(t, `
rules:
  - name: junos_commit_by
    match: '^UI_COMMIT: User ''(?P<user>[^'']+)'' requested'
    event: config_changed
    examples: [{line: "UI_COMMIT: User 'bob' requested 'commit' operation", event: config_changed, fields: {user: bob}}]
  - name: cisco_config_by
    match: '^%SYS-5-CONFIG_I: Configured from console by (?P<user>\w+)'
    event: config_changed
    examples: [{line: "%SYS-5-CONFIG_I: Configured from console by amy on vty0", event: config_changed, fields: {user: amy}}]
  - name: lab_port
    match: '^lab port (?P<interface>\d+) (?P<state>up|down)$'
    states: {up: interface_up, down: interface_down}
    examples: [{line: "lab port 3 down", event: interface_down, fields: {interface: "3", state: ""}}]
`)
	for _, tc := range []struct {
		l    telemetry.Log
		rule string
	}{
		{telemetry.Log{AppName: "mgd", MsgID: "UI_COMMIT", Message: "User 'bob' requested 'commit' operation"}, "junos_commit_by"},
		{telemetry.Log{AppName: "%SYS-5-CONFIG_I", Message: " Configured from console by amy on vty0"}, "cisco_config_by"},
	} {
		if info := c.Classify(&tc.l); info.Rule != tc.rule || info.Event != "config_changed" {
			t.Errorf("%+v: %+v", tc.l, info)
		}
	}
	if info := c.Classify(&telemetry.Log{Message: "lab port 3 down"}); info.Event != "interface_down" || len(info.Fields) != 1 {
		t.Errorf("state group: %+v", info)
	}
}

// refusedWith parses a rules file that must be refused with an error
// holding every one of want, and returns the error.
func refusedWith(t *testing.T, yaml string, want ...string) error {
	t.Helper()
	_, err := ParseSyslogRules([]byte(yaml), "rules.yaml")
	if err == nil {
		t.Fatal("parsed")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nwants %q", err, w)
		}
	}
	return err
}

// TestSiteRulesExtensionKeys: a top-level key beginning with x- is the
// file writer's, for anchors that belong to no rule, as in the config and
// the inventory; another unknown one is still refused.
func TestSiteRulesExtensionKeys(t *testing.T) {
	s, err := ParseSyslogRules([]byte(`
x-updown: &updown {up: interface_up, down: interface_down}
rules:
  - name: nic
    match: '(?P<interface>[\w.-]+): NIC Link is (?P<state>Up|Down)\b'
    states: *updown
    examples: [{line: "eth2: NIC Link is Down", event: interface_down, fields: {interface: eth2}}]
`), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := NewClassifier().UseSyslogRules(s); err != nil {
		t.Fatal(err)
	}
	refusedWith(t, "rulez: []\n", "rules.yaml:1: field rulez: unknown key at the top level (did you mean rules?")
}

// TestSiteRulesUnlistedStateEndsTheSearch: a line whose state group holds
// a value the rule's states do not list is still the rule's (its fields,
// no event), and no later rule is tried, weir's included, as README says;
// a state listed in another case gives its event.
func TestSiteRulesUnlistedStateEndsTheSearch(t *testing.T) {
	s, err := ParseSyslogRules([]byte(`
rules:
  - name: lab_ports
    match: '^Port (?P<interface>\d+) link (?P<state>\w+)$'
    states: {up: interface_up}
    examples:
      - {line: "Port 5 link up", event: interface_up, fields: {interface: "5"}}
`), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := NewClassifier()
	if info := c.Classify(&telemetry.Log{Message: "Port 5 link down"}); info.Event != "interface_down" {
		t.Fatalf("weir's own rules give %+v for the line, not interface_down: pick another", info)
	}
	if err := c.UseSyslogRules(s); err != nil {
		t.Fatal(err)
	}
	info := c.Classify(&telemetry.Log{Message: "Port 5 link down"})
	if info.Rule != "lab_ports" || info.Event != "" || info.Fields["interface"] != "5" {
		t.Errorf("unlisted state: %+v, want rule lab_ports, no event, interface 5", info)
	}
	if info := c.Classify(&telemetry.Log{Message: "Port 5 link UP"}); info.Rule != "lab_ports" || info.Event != "interface_up" {
		t.Errorf("state in another case: %+v, want lab_ports's interface_up", info)
	}
}

// classifierWithRules is weir's classifier with the site rules of the
// YAML document rules tried first.
func classifierWithRules(t *testing.T, rules string) *Classifier {
	t.Helper()
	s, err := ParseSyslogRules([]byte(rules), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := NewClassifier()
	if err := c.UseSyslogRules(s); err != nil {
		t.Fatal(err)
	}
	return c
}
