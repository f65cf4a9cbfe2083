package enrich

import "strings"

// A fastMatch recognises the usual shape of one rule's messages without
// running its patterns, which cost 1–3 µs a message in Go's regexp (a
// fifth of a syslog record's enrichment) where these take tens of
// nanoseconds.
//
// It reports fastMatched only when the rule's patterns match msg and give
// exactly the fields it set, and fastNoMatch only when they cannot match
// msg: it follows the patterns' leftmost-first semantics piece by piece,
// and wherever they would backtrack or search further (the anchor literal
// not where expected, a non-ASCII letter under (?i), an optional group
// that does not lead on) it gives up with fastUnsure, and the patterns
// decide. So the patterns stay the rule's definition;
// FuzzFastMatchAgreesWithPatterns checks every fastMatch against them, and
// TestFastMatchTakesExamples that each takes its rule's examples.
//
// at is where the rule's needs literal first occurs in msg; fields is
// empty and not nil.
type fastMatch func(msg string, at int, fields map[string]string) fastResult

// fastResult is what a fastMatch found.
type fastResult int8

const (
	fastUnsure  fastResult = iota // the patterns decide
	fastMatched                   // the patterns match, with the fields set
	fastNoMatch                   // the patterns do not match
)

// fastMatches are the rules that have one, by name: those of the common
// Cisco, Junos and Arista messages, and two whose literal is in many lines
// they do not match (their matchers mostly answer fastNoMatch).
var fastMatches = map[string]fastMatch{
	"cisco_lineproto":     fastLineproto,
	"cisco_link":          fastCiscoLink,
	"nxos_ethport":        fastNXOSEthport,
	"junos_snmp_link":     fastJunosSNMPLink,
	"cisco_bgp_adjchange": fastCiscoBGP,
	"arista_bgp":          fastAristaBGP,
	"junos_bgp":           fastJunosBGP,
	"junos_rpd_bgp":       fastJunosRPDBGP,
	"cisco_ospf":          fastCiscoOSPF,
	"cisco_config":        fastCiscoConfig,
	"junos_commit":        fastJunosCommit,
	"cisco_login":         fastCiscoLogin,
	"sshd_accepted":       fastSSHDAccepted,
	"aruba_extreme_port":  fastPortState,
	"generic_interface":   fastGenericInterface,
}

// ine protocol on Interface (?P<interface>[^\s,]+)(?: \([^)]*\))?, (?i:changed state to (?P<state>up|down|lowerlayerdown))
func fastLineproto(msg string, at int, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit("ine protocol on Interface ")
	ifc := c.run(notSpaceOrComma)
	// EOS's description: " (" up to the first ')' (the name ends at a
	// space or a comma, so only the group can follow it with a space).
	if c.opt(" (") {
		end := strings.IndexByte(c.s, ')')
		if end < 0 {
			return fastUnsure
		}
		c.s = c.s[end+1:]
	}
	return changedState(&c, f, ifc, "up", "down", "lowerlayerdown")
}

// Interface (?P<interface>[^\s,]+), (?i:changed state to (?P<state>administratively down|up|down))
func fastCiscoLink(msg string, _ int, f map[string]string) fastResult {
	i := strings.Index(msg, "Interface ")
	if i < 0 {
		return fastUnsure
	}
	c := newScan(msg[i+len("Interface "):])
	return interfaceChangedState(&c, f, "administratively down", "up", "down")
}

// interfaceChangedState reads `(?P<interface>[^\s,]+), (?i:changed state
// to (?P<state>states...))`.
func interfaceChangedState(c *scan, f map[string]string, states ...string) fastResult {
	return changedState(c, f, c.run(notSpaceOrComma), states...)
}

// changedState reads `, (?i:changed state to (?P<state>states...))` after
// the interface ifc.
func changedState(c *scan, f map[string]string, ifc string, states ...string) fastResult {
	c.lit(", ")
	c.litFold("changed state to ")
	state := c.oneOfFold(states...)
	if !c.ok {
		return fastUnsure
	}
	f["interface"], f["state"] = ifc, state
	return fastMatched
}

// %ETHPORT-\d-IF_(?:DOWN|UP)\S*: Interface (?P<interface>\S+) is (?P<state>down|up)
func fastNXOSEthport(msg string, at int, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit("%ETHPORT-")
	c.digit()
	c.lit("-IF_")
	c.oneOf("DOWN", "UP")
	// \S*: then a space: the colon ends the run of non-spaces.
	if run := c.span(notSpace); !strings.HasSuffix(run, ":") {
		return fastUnsure
	}
	c.lit(" Interface ")
	ifc := c.run(notSpace)
	c.lit(" is ")
	state := c.oneOf("down", "up")
	if !c.ok {
		return fastUnsure
	}
	f["interface"], f["state"] = ifc, state
	return fastMatched
}

// SNMP_TRAP_LINK_(?P<state>DOWN|UP)\b.*ifName (?P<interface>\S+)
func fastJunosSNMPLink(msg string, at int, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit("SNMP_TRAP_LINK_")
	state := c.oneOf("DOWN", "UP")
	c.boundary()
	// .* is greedy and stops at a newline: the last "ifName " before one.
	c.last("ifName ")
	ifc := c.run(notSpace) // empty: the patterns would look at an earlier one
	if !c.ok {
		return fastUnsure
	}
	f["state"], f["interface"] = state, ifc
	return fastMatched
}

// BGP-\d-ADJCHANGE\s*:.*?(?:\((?P<vrf>[\w.:-]+)\)\s+)?neighbor (?P<neighbor>ipish)(?: (?:active|passive))?(?: vpn vrf (?P<vrf>\S+))? (?P<state>Up|Down)\b(?:.*?\(VRF: (?P<vrf>[^)\s]+)\)(?: \(AS: (?P<asn>\d+)\))?)?
func fastCiscoBGP(msg string, _ int, f map[string]string) fastResult {
	c := scanFrom(msg, "BGP-")
	c.digit()
	c.lit("-ADJCHANGE")
	c.span(isSpaceRE)
	c.lit(":")
	// .*? is lazy and stops at a newline: the first "neighbor ", and the
	// patterns would try the next one if this one does not lead on.
	head := c.s
	c.first("neighbor ")
	if c.ok {
		head = head[:len(head)-len(c.s)-len("neighbor ")]
	}
	addr := c.ip()
	// IOS-XE's TCP role: taken if there, as the pattern tries it first;
	// where what follows does not lead on, the patterns decide.
	if !c.opt(" active") {
		c.opt(" passive")
	}
	var vrf string
	if c.opt(" vpn vrf ") {
		vrf = c.run(notSpace)
	}
	c.lit(" ")
	state := c.oneOf("Up", "Down")
	c.boundary()
	if !c.ok {
		return fastUnsure
	}
	// The groups set later win, as in match: NX-OS's "(VRF) " before
	// neighbor, IOS's "vpn vrf", then IOS-XR's "(VRF: X) (AS: N)".
	if v := parenBefore(head); v != "" && vrf == "" {
		vrf = v
	}
	var asn string
	tail := c.s
	if nl := strings.IndexByte(tail, '\n'); nl >= 0 {
		tail = tail[:nl]
	}
	if i := strings.Index(tail, "(VRF: "); i >= 0 {
		t := newScan(tail[i+len("(VRF: "):])
		v := t.run(func(b byte) bool { return b != ')' && !isSpaceRE(b) })
		t.lit(")")
		if !t.ok {
			return fastUnsure // the patterns would look at a later one
		}
		vrf = v
		if t.opt(" (AS: ") {
			if n := t.run(isDigit); t.ok && strings.HasPrefix(t.s, ")") {
				asn = n
			}
		}
	}
	f["neighbor"], f["state"] = addr, state
	if vrf != "" {
		f["vrf"] = vrf
	}
	if asn != "" {
		f["asn"] = asn
	}
	return fastMatched
}

// parenBefore is X of a head ending "(X)" and white space, X of
// [\w.:-]+: the optional group before "neighbor ".
func parenBefore(head string) string {
	end := len(head)
	for end > 0 && isSpaceRE(head[end-1]) {
		end--
	}
	if end == len(head) || end < 3 || head[end-1] != ')' {
		return ""
	}
	start := end - 1
	for start > 0 && (isWordByte(head[start-1]) || head[start-1] == '.' || head[start-1] == ':' || head[start-1] == '-') {
		start--
	}
	if start == 0 || start == end-1 || head[start-1] != '(' {
		return ""
	}
	return head[start : end-1]
}

// BGP-\d-ADJCHANGE: peer (?P<neighbor>ipish) \((?:VRF (?P<vrf>\S+) )?AS (?P<asn>\d+)\) old state (?P<old>\w+) .*new state (?P<new>\w+)
func fastAristaBGP(msg string, _ int, f map[string]string) fastResult {
	c := scanFrom(msg, "BGP-")
	c.digit()
	c.lit("-ADJCHANGE: peer ")
	addr := c.ip()
	c.lit(" (")
	var vrf string
	if c.opt("VRF ") {
		vrf = c.run(notSpace)
		c.lit(" ")
	}
	c.lit("AS ")
	asn := c.run(isDigit)
	c.lit(") old state ")
	old := c.run(isWordByte)
	c.lit(" ")
	// .* is greedy and stops at a newline: the last "new state ".
	c.last("new state ")
	now := c.run(isWordByte)
	if !c.ok {
		return fastUnsure
	}
	f["neighbor"], f["asn"], f["old"], f["new"] = addr, asn, old, now
	if vrf != "" {
		f["vrf"] = vrf
	}
	return fastMatched
}

// BGP_PEER_STATE_CHANGE:? BGP peer (?P<neighbor>ipish)(?:\+\d+)? \((?:External|Internal) AS (?P<asn>\d+)\) changed state from (?P<old>\w+) to (?P<new>\w+)
func fastJunosBGP(msg string, at int, f map[string]string) fastResult {
	return junosBGPAt(msg, at, "BGP_PEER_STATE_CHANGE", f)
}

// The same after RPD_BGP_NEIGHBOR_STATE_CHANGED.
func fastJunosRPDBGP(msg string, at int, f map[string]string) fastResult {
	return junosBGPAt(msg, at, "RPD_BGP_NEIGHBOR_STATE_CHANGED", f)
}

// junosBGPAt reads a Junos BGP state change after its tag, at msg[at:].
func junosBGPAt(msg string, at int, tag string, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit(tag)
	c.opt(":")
	c.lit(" BGP peer ")
	addr := c.ip()
	if c.opt("+") {
		c.run(isDigit)
	}
	c.lit(" (")
	c.oneOf("External", "Internal")
	c.lit(" AS ")
	asn := c.run(isDigit)
	c.lit(") changed state from ")
	old := c.run(isWordByte)
	c.lit(" to ")
	now := c.run(isWordByte)
	if !c.ok {
		return fastUnsure
	}
	f["neighbor"], f["asn"], f["old"], f["new"] = addr, asn, old, now
	// The routing instance, "(instance X)", later in the line: the first
	// one with a name, as the pattern's (?:.*?\(instance ([^)\s]+)\))?,
	// whose . stops at a newline.
	rest := c.s
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	for {
		k := strings.Index(rest, "(instance ")
		if k < 0 {
			break
		}
		rest = rest[k+len("(instance "):]
		n := 0
		for n < len(rest) && rest[n] != ')' && !isSpaceRE(rest[n]) {
			n++
		}
		if n > 0 && n < len(rest) && rest[n] == ')' {
			f["vrf"] = rest[:n]
			break
		}
	}
	return fastMatched
}

// OSPF-\d-ADJCHG: Process \S+, Nbr (?P<neighbor>ipish) on (?P<interface>\S+) from (?P<old>[\w-]+) to (?P<new>[\w-]+)
func fastCiscoOSPF(msg string, at int, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit("OSPF-")
	c.digit()
	c.lit("-ADJCHG: Process ")
	// \S+, then a space: the comma ends the run of non-spaces.
	if run := c.span(notSpace); len(run) < 2 || run[len(run)-1] != ',' {
		return fastUnsure
	}
	c.lit(" Nbr ")
	nbr := c.ip()
	c.lit(" on ")
	ifc := c.run(notSpace)
	c.lit(" from ")
	old := c.run(isWordOrDash)
	c.lit(" to ")
	now := c.run(isWordOrDash)
	if !c.ok {
		return fastUnsure
	}
	f["neighbor"], f["interface"], f["old"], f["new"] = nbr, ifc, old, now
	return fastMatched
}

// Configured from (?P<source>\S+) by (?:(?P<source>(?:vty|tty|aux|console)\d*)(?: \((?P<source>ipaddr)\))?(?:[\s,.]|$)|(?P<user>[^\s,]+)(?: on (?:(?:vty|tty|aux|console|command-api)\d* \((?P<source>ipaddr)\)|(?P<source>ipaddr)@|(?P<source>console\d*)(?:\s|$)))?)
func fastCiscoConfig(msg string, at int, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit("Configured from ")
	src := c.run(notSpace)
	c.lit(" by ")
	if !c.ok {
		return fastUnsure
	}
	if line := newScan(c.s); line.oneOf(iosLineNames...) != "" {
		// A line, no user: the source, or its address (an IPv4 one)
		// if it gives one.
		line.span(isDigit)
		src = c.s[:len(c.s)-len(line.s)]
		if line.opt(" (") {
			src = line.run(func(b byte) bool { return isDigit(b) || b == '.' })
			line.lit(")")
			if !line.ok || !isIPv4(src) {
				return fastUnsure
			}
		}
		if line.s != "" && line.s[0] != ',' && line.s[0] != '.' && !isSpaceRE(line.s[0]) {
			return fastUnsure // "vtyadmin": the user branch, or a backtrack
		}
		f["source"] = src
		return fastMatched
	}
	user := c.run(notSpaceOrComma)
	if !c.ok {
		return fastUnsure
	}
	// The user's line and its client's address: "on vty0 (A)", EOS's
	// "on command-api (A)"; NX-OS's "on A@pts/3" and "on console0".
	if on := newScan(c.s); on.opt(" on ") {
		rest := on.s
		if line := on.oneOf(userLineNames...); line != "" {
			on.span(isDigit)
			if on.opt(" (") {
				addr := on.run(func(b byte) bool { return isDigit(b) || b == '.' })
				on.lit(")")
				if !on.ok || !isIPv4(addr) {
					return fastUnsure // an IPv6 address, or none: the pattern decides
				}
				src = addr
			} else if line == "console" && (on.s == "" || isSpaceRE(on.s[0])) {
				src = rest[:len(rest)-len(on.s)]
			}
		} else {
			addr, after := span(rest, func(b byte) bool { return isDigit(b) || b == '.' })
			word, _ := span(rest, notSpace)
			switch {
			case isIPv4(addr) && strings.HasPrefix(after, "@"):
				src = addr
			case strings.IndexByte(word, '@') >= 0:
				return fastUnsure // an IPv6 address, or none: the pattern decides
			}
		}
	}
	f["source"], f["user"] = src, user
	return fastMatched
}

// iosLineNames are the line names IOS writes for a change by no user.
var iosLineNames = []string{"vty", "tty", "aux", "console"}

// userLineNames are those a user's change is made on: IOS's, and EOS's
// eAPI session, command-api.
var userLineNames = append(iosLineNames[:len(iosLineNames):len(iosLineNames)], "command-api")

// isIPv4 reports whether s is four dot-separated runs of one to three
// digits, as ipaddr's IPv4 branch reads them.
func isIPv4(s string) bool {
	parts := 0
	for p := range strings.SplitSeq(s, ".") {
		if len(p) < 1 || len(p) > 3 {
			return false
		}
		parts++
	}
	return parts == 4
}

// UI_COMMIT:? User '(?P<user>[^']+)' requested '(?:commit|commit synchronize|commit confirmed)'
func fastJunosCommit(msg string, at int, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit("UI_COMMIT")
	c.opt(":")
	c.lit(" User '")
	user := c.run(func(b byte) bool { return b != '\'' })
	c.lit("' requested 'commit")
	c.oneOf("'", " synchronize'", " confirmed'")
	if !c.ok {
		return fastUnsure
	}
	f["user"] = user
	return fastMatched
}

// LOGIN_SUCCESS: Login Success \[user: (?P<user>[^\]]+)\](?: \[Source: (?P<source>ipish)\])?
func fastCiscoLogin(msg string, at int, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit("LOGIN_SUCCESS: Login Success [user: ")
	user := c.run(func(b byte) bool { return b != ']' })
	c.lit("]")
	if !c.ok {
		return fastUnsure
	}
	// The optional group: without its literal it cannot match; with it,
	// an address not followed by ']' leaves the patterns to decide.
	if c.opt(" [Source: ") {
		src := c.ip()
		c.lit("]")
		if !c.ok {
			return fastUnsure
		}
		f["source"] = src
	}
	f["user"] = user
	return fastMatched
}

// Accepted (?:password|publickey|keyboard-interactive/pam|gssapi-with-mic) for (?:invalid user )?(?P<user>\S+) from (?:(?P<source>ipaddr)(?:\s|$)|\S+)
func fastSSHDAccepted(msg string, at int, f map[string]string) fastResult {
	c := newScan(msg[at:])
	c.lit("Accepted ")
	c.oneOf("password for ", "publickey for ", "keyboard-interactive/pam for ", "gssapi-with-mic for ")
	c.opt("invalid user ") // the patterns try the optional group first
	user := c.run(notSpace)
	c.lit(" from ")
	// An IPv4 address followed by a space or nothing; an IPv6 one, or a
	// host name (which may begin with an address), the patterns take.
	src := c.run(func(b byte) bool { return isDigit(b) || b == '.' })
	if !c.ok || !isIPv4(src) || c.s != "" && c.s[0] != ' ' {
		return fastUnsure
	}
	f["user"], f["source"] = user, src
	return fastMatched
}

// (?i)\bport (?P<interface>[\w/:.-]*\d) (?:is now |link )(?P<state>on-line|off-line|up|down)\b
//
// Its needs ("ort ") is in every line with a port number (sshd's "port
// 51234", firewalls'), so this one mostly tells that the pattern does not
// match: it tries each "port " at a word start, as the pattern does.
func fastPortState(msg string, _ int, f map[string]string) fastResult {
	if !isASCII(msg) {
		// (?i) folds a few non-ASCII letters into the literals and into
		// \w (the long s, the Kelvin sign).
		return fastUnsure
	}
	for i := 0; i+len("port ") <= len(msg); i++ {
		if c := msg[i]; c != 'p' && c != 'P' {
			continue
		}
		if i > 0 && isWordByte(msg[i-1]) {
			continue // no \b
		}
		s, ok := cutFold(msg[i:], "port ")
		if !ok {
			continue
		}
		switch res := portStateAt(s, f); res {
		case fastNoMatch:
			continue // the pattern goes on to the next position
		default:
			return res
		}
	}
	return fastNoMatch
}

// portStateAt matches what follows "port " in fastPortState's pattern.
func portStateAt(s string, f map[string]string) fastResult {
	// [\w/:.-]*\d, then a space: no byte of the class is one, so the
	// interface is the whole run, and ends in a digit.
	ifc, s := span(s, func(c byte) bool { return isWordByte(c) || c == '/' || c == ':' || c == '.' || c == '-' })
	if ifc == "" || !isDigit(ifc[len(ifc)-1]) {
		return fastNoMatch
	}
	s, ok := strings.CutPrefix(s, " ")
	if !ok {
		return fastNoMatch
	}
	try := func(s string) fastResult {
		for _, st := range [...]string{"on-line", "off-line", "up", "down"} {
			if rest, ok := cutFold(s, st); ok && (rest == "" || !isWordByte(rest[0])) {
				f["interface"], f["state"] = ifc, s[:len(st)]
				return fastMatched
			}
		}
		return fastNoMatch
	}
	// "is now " or "link ", then the state.
	for _, opt := range [...]string{"is now ", "link "} {
		if rest, ok := cutFold(s, opt); ok {
			return try(rest)
		}
	}
	return fastNoMatch
}

// (?i)\binterface\s+(?P<interface>...)\b[^.]*?\b(?:is|...)\s+(?P<state>down|up)\b
//
// The fallback rule meets every line that mentions an interface and no
// earlier rule took; most report no state. It only rules out a line with
// no "up" or "down" after white space, which the pattern needs, and
// leaves the rest to the pattern.
func fastGenericInterface(msg string, _ int, _ map[string]string) fastResult {
	if !isASCII(msg) {
		return fastUnsure // (?i): see fastPortState
	}
	for i := 1; i < len(msg); i++ {
		if !isSpaceRE(msg[i-1]) {
			continue
		}
		if _, ok := cutFold(msg[i:], "up"); ok {
			return fastUnsure
		}
		if _, ok := cutFold(msg[i:], "down"); ok {
			return fastUnsure
		}
	}
	return fastNoMatch
}

// scan reads a message the way a pattern's pieces match it, one after the
// other; the first piece that does not match stops it (ok false), and
// what follows reads nothing. Each method is a piece that cannot match in
// two ways: where a pattern could backtrack, the matcher checks by hand.
type scan struct {
	s  string
	ok bool
}

func newScan(s string) scan { return scan{s: s, ok: true} }

// scanFrom starts at the first lit in msg, past it: where an unanchored
// pattern that starts with lit starts its leftmost match, if any.
func scanFrom(msg, lit string) scan {
	i := strings.Index(msg, lit)
	if i < 0 {
		return scan{}
	}
	return newScan(msg[i+len(lit):])
}

// lit reads the literal l.
func (c *scan) lit(l string) {
	if c.ok {
		c.s, c.ok = strings.CutPrefix(c.s, l)
	}
}

// litFold reads l ignoring ASCII case (see cutFold).
func (c *scan) litFold(l string) {
	if c.ok {
		c.s, c.ok = cutFold(c.s, l)
	}
}

// opt reads l if it is there, and says whether it was: a greedy optional
// literal, where the pattern's next piece cannot start as l does (the
// caller's to check).
func (c *scan) opt(l string) bool {
	if !c.ok {
		return false
	}
	var ok bool
	c.s, ok = strings.CutPrefix(c.s, l)
	return ok
}

// oneOf reads the first of alts that is there: an alternation whose
// branches the next piece cannot tell apart otherwise.
func (c *scan) oneOf(alts ...string) string {
	if !c.ok {
		return ""
	}
	for _, a := range alts {
		if strings.HasPrefix(c.s, a) {
			c.s = c.s[len(a):]
			return a
		}
	}
	c.ok = false
	return ""
}

// oneOfFold is oneOf ignoring ASCII case; it returns the text read.
func (c *scan) oneOfFold(alts ...string) string {
	if !c.ok {
		return ""
	}
	for _, a := range alts {
		if rest, ok := cutFold(c.s, a); ok {
			got := c.s[:len(a)]
			c.s = rest
			return got
		}
	}
	c.ok = false
	return ""
}

// span reads a run, maybe empty, of bytes in the class.
func (c *scan) span(in func(byte) bool) string {
	if !c.ok {
		return ""
	}
	var run string
	run, c.s = span(c.s, in)
	return run
}

// run reads a run of at least one byte in the class: greedy, and the
// caller's next piece must not start with one.
func (c *scan) run(in func(byte) bool) string {
	run := c.span(in)
	if run == "" {
		c.ok = false
	}
	return run
}

// digit reads one \d.
func (c *scan) digit() {
	if c.ok {
		if c.ok = c.s != "" && isDigit(c.s[0]); c.ok {
			c.s = c.s[1:]
		}
	}
}

// boundary checks \b after a word: the next byte is no word byte.
func (c *scan) boundary() {
	if c.ok && c.s != "" && isWordByte(c.s[0]) {
		c.ok = false
	}
}

// ip reads ipish (see cutIPish).
func (c *scan) ip() string {
	if !c.ok {
		return ""
	}
	var addr string
	addr, c.s, c.ok = cutIPish(c.s)
	return addr
}

// first reads up to and past the first l before a newline: `.*?l`.
func (c *scan) first(l string) {
	if !c.ok {
		return
	}
	i := strings.Index(c.s, l)
	if c.ok = i >= 0 && strings.IndexByte(c.s[:i], '\n') < 0; c.ok {
		c.s = c.s[i+len(l):]
	}
}

// last reads up to and past the last l before a newline: `.*l`.
func (c *scan) last(l string) {
	if !c.ok {
		return
	}
	line := c.s
	if nl := strings.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	i := strings.LastIndex(line, l)
	if c.ok = i >= 0; c.ok {
		c.s = line[i+len(l):]
	}
}

// cutFold is strings.CutPrefix with ASCII case folding. (?i) also folds a
// few non-ASCII letters (K and the Kelvin sign, s and the long s): a
// non-ASCII byte in s does not match, and the patterns decide.
func cutFold(s, lit string) (string, bool) {
	if len(s) < len(lit) {
		return s, false
	}
	for i := 0; i < len(lit); i++ {
		if toLowerASCII(s[i]) != toLowerASCII(lit[i]) {
			return s, false
		}
	}
	return s[len(lit):], true
}

// span splits s after its leading run of bytes in the class. Byte by byte
// is the patterns' rune by rune here: the classes are ASCII, and no byte
// of a multi-byte rune is.
func span(s string, in func(byte) bool) (run, rest string) {
	i := 0
	for i < len(s) && in(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// cutIPish matches the pattern ipish, [0-9A-Fa-f:.]*[0-9A-Fa-f], at the
// start of s: the longest run of those bytes, cut back to its last hex
// digit. ok is false where the patterns would go on to backtrack: when the
// run does not end in a hex digit.
func cutIPish(s string) (addr, rest string, ok bool) {
	run, rest := span(s, func(c byte) bool { return isHex(c) || c == ':' || c == '.' })
	if run == "" || !isHex(run[len(run)-1]) {
		return "", s, false
	}
	return run, rest, true
}

// isSpaceRE is \s of Go's regexp: [\t\n\f\r ].
func isSpaceRE(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func notSpace(c byte) bool        { return !isSpaceRE(c) }
func notSpaceOrComma(c byte) bool { return c != ',' && !isSpaceRE(c) }
func isWordOrDash(c byte) bool    { return c == '-' || isWordByte(c) }

// isWordByte is \w: [0-9A-Za-z_].
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
