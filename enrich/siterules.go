package enrich

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/weirnet/weir/internal/wholefile"
	"github.com/weirnet/weir/internal/yamlerr"
	"github.com/weirnet/weir/telemetry"
)

// SyslogRules are a site's own syslog rules (enrich.syslog_rules): for a
// device family or a message weir's rules do not know, added without
// rebuilding weir. They are tried before the built-in rules, in the
// file's order, and each carries example lines that must give what it
// says, checked when the file is loaded (UseSyslogRules).
type SyslogRules struct {
	path  string
	rules []rule
	lines []int // of each rule in the file
}

// Path is the file the rules were read from.
func (s *SyslogRules) Path() string { return s.path }

// Len is how many rules the file has.
func (s *SyslogRules) Len() int { return len(s.rules) }

// Warnings are what is legal in the file but likely a mistake: no rule at
// all (an empty file, or one whose rules are all commented out), so the
// config names a file that adds nothing; weir check prints them.
func (s *SyslogRules) Warnings() []string {
	if len(s.rules) == 0 {
		return []string{"no rules in the file: weir's own rules alone are used"}
	}
	return nil
}

// siteRulesFile is the file's YAML.
type siteRulesFile struct {
	Rules []siteRuleYAML `yaml:"rules"`
}

type siteRuleYAML struct {
	Name     string            `yaml:"name"`
	Vendor   string            `yaml:"vendor"`
	Match    patternList       `yaml:"match"`
	Event    string            `yaml:"event"`
	States   map[string]string `yaml:"states"`
	Examples []siteExampleYAML `yaml:"examples"`
}

type siteExampleYAML struct {
	Line   string            `yaml:"line"`
	Event  string            `yaml:"event"`
	Fields map[string]string `yaml:"fields"`
}

// The keys of a rule and of an example, as the file writes them.
var (
	siteRuleKeys    = []string{"name", "vendor", "match", "event", "states", "examples"}
	siteExampleKeys = []string{"line", "event", "fields"}
)

// siteRulesTypes word yaml.v3's Go type names for the file's writer.
var siteRulesTypes = strings.NewReplacer(
	" into enrich.siteRulesFile", " into the file's mapping (rules: and a list)",
	" into []enrich.siteRuleYAML", " into a list of rules",
	" into enrich.siteRuleYAML", " into a rule (a mapping: {name: ..., match: ...})",
	" into []enrich.siteExampleYAML", " into a list of examples",
	" into enrich.siteExampleYAML", " into an example (a mapping: {line: ..., event: ...})",
	" into map[string]string", " into a mapping (key: value)",
	" into []string", " into a list of regular expressions",
)

// siteRulesYAMLError words a YAML error of the file as the config's and
// the inventory's are: "line N: key.path: ...", an unknown key as such
// with what the file takes, no Go type names, and a hint for the
// backslash of a regular expression in double quotes.
func siteRulesYAMLError(err error, data []byte) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		// "line 4: field evnet not found in type enrich.siteRuleYAML"
		err = &yaml.TypeError{Errors: unknownKeysWorded(te, map[string]keysOf{
			"enrich.siteRulesFile":   {"at the top level", []string{"rules"}, "", "a syslog rules file has rules: and a list"},
			"enrich.siteRuleYAML":    {"in a rule", siteRuleKeys, "a rule has ", strings.Join(siteRuleKeys, ", ")},
			"enrich.siteExampleYAML": {"in an example", siteExampleKeys, "an example has ", strings.Join(siteExampleKeys, ", ")},
		})}
	}
	var root yaml.Node
	rootp := &root
	if yaml.Unmarshal(data, &root) != nil {
		rootp = nil
	}
	msg := siteRulesTypes.Replace(yamlerr.Clean(err, data, rootp).Error())
	if strings.HasSuffix(msg, "found unknown escape character") {
		msg += ` (in double quotes YAML reads the backslashes: write a regular expression in single quotes, 'link (\S+) down')`
	}
	return errors.New(msg)
}

// patternList is match: one pattern, or a list that must all match.
type patternList []string

func (p *patternList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*p = patternList{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return yamlerr.NewValueError(n, "want a regular expression or a list of them")
	}
	*p = list
	return nil
}

// ReadSyslogRules reads and parses a site rules file (see
// ParseSyslogRules).
func ReadSyslogRules(path string) (*SyslogRules, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err // names the file
	}
	if err := checkFile(path, st); err != nil {
		return nil, err
	}
	data, err := wholefile.Read(path, wholefile.MaxBytes)
	if err != nil {
		return nil, err // names the file
	}
	return ParseSyslogRules(data, path)
}

// siteRuleName is what a rule's name may be: errors and logs name it.
var siteRuleName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// ParseSyslogRules parses a site rules file's data (name is the file, for
// errors): every rule needs a name, one or more patterns (Go's RE2
// syntax; named groups become fields), an event or states, and examples.
// Whether the examples give what they say is UseSyslogRules' check, made
// against the rules they run among.
func ParseSyslogRules(data []byte, name string) (*SyslogRules, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f siteRulesFile
	err := withoutExtensionKeys(dec.Decode(&f), "enrich.siteRulesFile") // x- keys: the writer's anchors
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, errors.New(yamlerr.WithFile(name, siteRulesYAMLError(err, data).Error()))
	}
	// The decoder reads the first document alone: the rules of a second
	// (two files joined, each starting with ---) would be lost.
	if err == nil {
		if err := yamlerr.NextDocument(dec, "a syslog rules file is one document"); err != nil {
			return nil, errors.New(yamlerr.WithFile(name, err.Error()))
		}
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root) // it decoded above: for the rules' lines
	lines, keyLines := ruleLines(&root)
	builtin, events := map[string]bool{}, map[string]bool{}
	// weir's rules, compiled once a parse: their names, which a site's
	// may not take, and the events they give, which a site's may give
	// too (the event detector knows what to do with them).
	for _, r := range syslogRules() {
		builtin[r.name] = true
		for _, ev := range ruleEvents(&r) {
			events[ev] = true
		}
	}
	s := &SyslogRules{path: name}
	seen := map[string]int{}
	var errs []error
	for i, y := range f.Rules {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		whereAt := func(line int) string {
			if y.Name == "" {
				return fmt.Sprintf("%s:%d: rule %d", name, line, i+1)
			}
			return fmt.Sprintf("%s:%d: rule %q", name, line, y.Name)
		}
		where := whereAt(line)
		fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(where+": "+format, args...)) }
		// failAt is fail at the line of the rule's key, where it has one
		// of its own (a block mapping's; a flow one's keys share the
		// rule's line anyway).
		failAt := func(key, format string, args ...any) {
			at := where
			if i < len(keyLines) && keyLines[i][key] > line {
				at = whereAt(keyLines[i][key])
			}
			errs = append(errs, fmt.Errorf(at+": "+format, args...))
		}
		switch {
		case y.Name == "":
			fail("needs a name")
		case !siteRuleName.MatchString(y.Name):
			failAt("name", "name: lower-case letters, digits, _ . and - only")
		case builtin[y.Name]:
			failAt("name", "name: weir has a rule of that name; give yours another")
		case seen[y.Name] > 0:
			failAt("name", "name: also the name of the rule at line %d", seen[y.Name])
		}
		seen[y.Name] = max(line, 1)
		r := rule{name: y.Name, vendor: y.Vendor, event: y.Event}
		groups := map[string]bool{}
		if len(y.Match) == 0 {
			fail("needs match: a regular expression the message must match")
		}
		for _, m := range y.Match {
			p, err := regexp.Compile(m)
			if err != nil {
				failAt("match", "match: %v", err)
				continue
			}
			r.patterns = append(r.patterns, p)
			for _, g := range p.SubexpNames() {
				groups[g] = true
			}
		}
		switch {
		case y.Event != "" && y.States != nil:
			fail("event and states: give one (a fixed event, or events by the state group)")
		case y.Event == "" && y.States == nil:
			fail("needs event (a fixed event) or states (events by the state group's value)")
		case y.Event != "" && !events[y.Event]:
			failAt("event", "event %q: not one syslog gives; one of %s", y.Event, eventList(events))
		case y.States != nil:
			if len(y.Match) > 0 && len(r.patterns) == len(y.Match) && !groups["state"] {
				failAt("states", "states: match has no (?P<state>...) group to look them up by")
			}
			r.states = make(map[string]string, len(y.States))
			// In sorted order: errors come out the same each time, and
			// two keys in two cases are told in the file's terms.
			key := map[string]string{} // lower-case -> the key as written
			for _, st := range slices.Sorted(maps.Keys(y.States)) {
				ev := y.States[st]
				if ev != "" && !events[ev] {
					failAt("states", "states: %s: event %q: not one syslog gives; one of %s", st, ev, eventList(events))
				}
				lower := strings.ToLower(st)
				if was, ok := key[lower]; ok && r.states[lower] != ev {
					failAt("states", "states: %s and %s are one state (states are matched in any case), and give %s and %s", was, st, orNone(r.states[lower]), orNone(ev))
					continue
				}
				key[lower] = st
				r.states[lower] = ev
			}
		}
		for _, ev := range ruleEvents(&r) {
			if g := objectGroup(ev); g != "" && len(r.patterns) == len(y.Match) && !groups[g] && !(g == "user" && groups["source"]) {
				article := "a"
				if strings.ContainsRune("aeiou", rune(ev[0])) {
					article = "an" // an interface_down, an ospf_neighbor_up
				}
				if g == "user" {
					failAt("match", "match: %s %s event names its object by a (?P<user>...) group, or else a (?P<source>...) one, which match has neither", article, ev)
				} else {
					failAt("match", "match: %s %s event names its object by a (?P<%s>...) group, which match has not", article, ev, g)
				}
			}
		}
		if len(y.Examples) == 0 {
			fail("needs examples: message lines and what each gives, checked when the file is loaded")
		}
		for _, ex := range y.Examples {
			r.examples = append(r.examples, example{line: ex.Line, event: ex.Event, fields: ex.Fields})
		}
		s.rules = append(s.rules, r)
		s.lines = append(s.lines, line)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for i := range s.rules {
		s.rules[i].needs = longestLiteral(s.rules[i].patterns)
	}
	prepareRules(s.rules)
	return s, nil
}

// longestLiteral is the longest literal the patterns require, a site
// rule's needs: searched for with the finder, a message without it
// costs the rule one pass.
func longestLiteral(patterns []*regexp.Regexp) string {
	best := ""
	for _, p := range patterns {
		for _, lit := range requiredLiterals(p) {
			if len(lit) > len(best) {
				best = lit
			}
		}
	}
	return best
}

// ruleLines are the lines of the rules list's entries in the file, and of
// each entry's keys.
func ruleLines(root *yaml.Node) (lines []int, keys []map[string]int) {
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "rules" && m.Content[i+1].Kind == yaml.SequenceNode {
			for _, n := range m.Content[i+1].Content {
				lines = append(lines, n.Line)
				k := map[string]int{}
				for j := 0; n.Kind == yaml.MappingNode && j+1 < len(n.Content); j += 2 {
					k[n.Content[j].Value] = n.Content[j].Line
				}
				keys = append(keys, k)
			}
			return lines, keys
		}
	}
	return nil, nil
}

// ruleEvents are the events a rule can give.
func ruleEvents(r *rule) []string {
	var out []string
	for _, ev := range append([]string{r.event, r.up, r.down}, mapValues(r.states)...) {
		if ev != "" && !slices.Contains(out, ev) {
			out = append(out, ev)
		}
	}
	return out
}

// orNone is an event for a message: "none" for "".
func orNone(event string) string {
	if event == "" {
		return "none"
	}
	return event
}

func mapValues(m map[string]string) []string { return slices.Sorted(maps.Values(m)) }

// objectGroup is the group naming an event's object (ObjectOf).
func objectGroup(event string) string {
	switch {
	case strings.HasPrefix(event, "interface_"):
		return "interface"
	case strings.HasPrefix(event, "bgp_"), strings.HasPrefix(event, "ospf_"):
		return "neighbor"
	case event == "login_succeeded", event == "login_failed", event == "config_changed":
		return "user"
	}
	return ""
}

// eventList names events for an error, sorted.
func eventList(events map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(events)), ", ")
}

// UseSyslogRules puts the site's rules before the built-in ones (nil:
// the built-in ones alone), once every example of every site rule gives,
// among them, that rule, its event and its fields; else it returns what
// did not and the rules in use stay. Safe while Classify runs.
func (c *Classifier) UseSyslogRules(s *SyslogRules) error {
	rules := c.builtin
	if s != nil && len(s.rules) > 0 {
		rules = append(slices.Clone(s.rules), c.builtin...)
	}
	next := &Classifier{builtin: c.builtin}
	next.rules.Store(&rules)
	if s != nil {
		var errs []error
		for i := range s.rules {
			r := &s.rules[i]
			for _, ex := range r.examples {
				if msg := checkExample(next, r, ex); msg != "" {
					errs = append(errs, fmt.Errorf("%s:%d: rule %q: example %q: %s", s.path, s.lines[i], r.name, ex.line, msg))
				}
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	c.rules.Store(&rules)
	return nil
}

// checkExample is what is wrong with what c makes of r's example ex, or
// "".
func checkExample(c *Classifier, r *rule, ex example) string {
	l := telemetry.Log{Message: ex.line}
	info := c.Classify(&l)
	switch {
	case info.Rule == "":
		return "matches no rule"
	case info.Rule != r.name:
		if _, ok := r.apply(ex.line, 0, map[string]string{}); !ok {
			// A rule after r took it: r's pattern is what is wrong,
			// not its place.
			whose := "rule"
			if slices.ContainsFunc(c.builtin, func(b rule) bool { return b.name == info.Rule }) {
				whose = "weir's rule"
			}
			return fmt.Sprintf("its match does not match it (%s %q does)", whose, info.Rule)
		}
		return fmt.Sprintf("matches rule %q first", info.Rule)
	case info.Event != ex.event:
		if ex.event == "" {
			return fmt.Sprintf("gives event %q, and the example says none", info.Event)
		}
		return fmt.Sprintf("gives event %q, not %q", info.Event, ex.event)
	}
	var wrong []string
	for _, k := range slices.Sorted(maps.Keys(ex.fields)) {
		if got := info.Fields[k]; got != ex.fields[k] {
			wrong = append(wrong, fmt.Sprintf("field %s is %q, not %q", k, got, ex.fields[k]))
		}
	}
	if info.Event != "" && ObjectOf(info) == "" {
		wrong = append(wrong, fmt.Sprintf("its %s event names no object (group %s empty)", info.Event, objectGroup(info.Event)))
	}
	return strings.Join(wrong, "; ")
}
