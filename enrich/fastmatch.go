package enrich

import "strings"

// A fastMatch recognises the usual shape of one rule's messages without
// running its patterns, which cost 1–3 µs a message in Go's regexp (a
// third of a syslog record's enrichment) where these take tens of
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
// Cisco, Junos and Arista messages.
var fastMatches = map[string]fastMatch{
	"cisco_lineproto":     fastLineproto,
	"cisco_link":          fastCiscoLink,
	"nxos_ethport":        fastNXOSEthport,
	"junos_snmp_link":     fastJunosSNMPLink,
	"cisco_bgp_adjchange": fastCiscoBGP,
	"arista_bgp":          fastAristaBGP,
	"junos_bgp":           fastJunosBGP,
	"cisco_ospf":          fastCiscoOSPF,
	"cisco_config":        fastCiscoConfig,
	"junos_commit":        fastJunosCommit,
	"cisco_login":         fastCiscoLogin,
	"sshd_accepted":       fastSSHDAccepted,
	"aruba_extreme_port":  fastPortState,
	"generic_interface":   fastGenericInterface,
}

// ine protocol on Interface (?P<interface>[^\s,]+), (?i:changed state to (?P<state>up|down))
func fastLineproto(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "ine protocol on Interface ")
	if !ok {
		return fastUnsure
	}
	return interfaceChangedState(s, f, "up", "down")
}

// Interface (?P<interface>[^\s,]+), (?i:changed state to (?P<state>administratively down|up|down))
func fastCiscoLink(msg string, _ int, f map[string]string) fastResult {
	i := strings.Index(msg, "Interface ")
	if i < 0 {
		return fastUnsure
	}
	return interfaceChangedState(msg[i+len("Interface "):], f, "administratively down", "up", "down")
}

// interfaceChangedState matches `(?P<interface>[^\s,]+), (?i:changed
// state to (?P<state>states...))` at the start of s.
func interfaceChangedState(s string, f map[string]string, states ...string) fastResult {
	ifc, s := span(s, notSpaceOrComma)
	if ifc == "" {
		return fastUnsure
	}
	s, ok := cut(s, ", ")
	if !ok {
		return fastUnsure
	}
	if s, ok = cutFold(s, "changed state to "); !ok {
		return fastUnsure
	}
	for _, st := range states {
		if _, ok := cutFold(s, st); ok {
			f["interface"], f["state"] = ifc, s[:len(st)]
			return fastMatched
		}
	}
	return fastUnsure
}

// %ETHPORT-\d-IF_(?:DOWN|UP)\S*: Interface (?P<interface>\S+) is (?P<state>down|up)
func fastNXOSEthport(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "%ETHPORT-")
	if !ok || len(s) < 2 || !isDigit(s[0]) {
		return fastUnsure
	}
	if s, ok = cut(s[1:], "-IF_"); !ok {
		return fastUnsure
	}
	if t, ok := cut(s, "DOWN"); ok {
		s = t
	} else if s, ok = cut(s, "UP"); !ok {
		return fastUnsure
	}
	// \S*: then a space: the colon ends the run of non-spaces.
	run, s := span(s, notSpace)
	if !strings.HasSuffix(run, ":") {
		return fastUnsure
	}
	if s, ok = cut(s, " Interface "); !ok {
		return fastUnsure
	}
	ifc, s := span(s, notSpace)
	if ifc == "" {
		return fastUnsure
	}
	if s, ok = cut(s, " is "); !ok {
		return fastUnsure
	}
	for _, st := range [...]string{"down", "up"} {
		if strings.HasPrefix(s, st) {
			f["interface"], f["state"] = ifc, st
			return fastMatched
		}
	}
	return fastUnsure
}

// SNMP_TRAP_LINK_(?P<state>DOWN|UP)\b.*ifName (?P<interface>\S+)
func fastJunosSNMPLink(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "SNMP_TRAP_LINK_")
	if !ok {
		return fastUnsure
	}
	var state string
	for _, st := range [...]string{"DOWN", "UP"} {
		if strings.HasPrefix(s, st) {
			state = st
			break
		}
	}
	if state == "" {
		return fastUnsure
	}
	s = s[len(state):]
	if len(s) > 0 && isWordByte(s[0]) {
		return fastUnsure // no \b
	}
	// .* is greedy and stops at a newline: the last "ifName " before one.
	if nl := strings.IndexByte(s, '\n'); nl >= 0 {
		s = s[:nl]
	}
	i := strings.LastIndex(s, "ifName ")
	if i < 0 {
		return fastUnsure
	}
	ifc, _ := span(s[i+len("ifName "):], notSpace)
	if ifc == "" {
		return fastUnsure // the patterns would look at an earlier "ifName "
	}
	f["state"], f["interface"] = state, ifc
	return fastMatched
}

// BGP-\d-ADJCHANGE\s*:.*?neighbor (?P<neighbor>ipish)(?: vpn vrf (?P<vrf>\S+))? (?P<state>Up|Down)\b
func fastCiscoBGP(msg string, _ int, f map[string]string) fastResult {
	i := strings.Index(msg, "BGP-")
	if i < 0 {
		return fastUnsure
	}
	s := msg[i+len("BGP-"):]
	if len(s) < 1 || !isDigit(s[0]) {
		return fastUnsure
	}
	s, ok := cut(s[1:], "-ADJCHANGE")
	if !ok {
		return fastUnsure
	}
	_, s = span(s, isSpaceRE)
	if s, ok = cut(s, ":"); !ok {
		return fastUnsure
	}
	// .*? is lazy and stops at a newline: the first "neighbor ", and the
	// patterns would try the next one if this one does not lead on.
	j := strings.Index(s, "neighbor ")
	if j < 0 || strings.IndexByte(s[:j], '\n') >= 0 {
		return fastUnsure
	}
	addr, s, ok := cutIPish(s[j+len("neighbor "):])
	if !ok {
		return fastUnsure
	}
	var vrf string
	if t, ok := cut(s, " vpn vrf "); ok {
		if vrf, s = span(t, notSpace); vrf == "" {
			return fastUnsure
		}
	}
	if s, ok = cut(s, " "); !ok {
		return fastUnsure
	}
	var state string
	for _, st := range [...]string{"Up", "Down"} {
		if strings.HasPrefix(s, st) {
			state = st
			break
		}
	}
	if state == "" || len(s) > len(state) && isWordByte(s[len(state)]) {
		return fastUnsure
	}
	f["neighbor"], f["state"] = addr, state
	if vrf != "" {
		f["vrf"] = vrf
	}
	return fastMatched
}

// BGP-\d-ADJCHANGE: peer (?P<neighbor>ipish) \(VRF (?P<vrf>\S+) AS (?P<asn>\d+)\) old state (?P<old>\w+) .*new state (?P<new>\w+)
func fastAristaBGP(msg string, _ int, f map[string]string) fastResult {
	i := strings.Index(msg, "BGP-")
	if i < 0 {
		return fastUnsure
	}
	s := msg[i+len("BGP-"):]
	if len(s) < 1 || !isDigit(s[0]) {
		return fastUnsure
	}
	s, ok := cut(s[1:], "-ADJCHANGE: peer ")
	if !ok {
		return fastUnsure
	}
	addr, s, ok := cutIPish(s)
	if !ok {
		return fastUnsure
	}
	if s, ok = cut(s, " (VRF "); !ok {
		return fastUnsure
	}
	vrf, s := span(s, notSpace)
	if vrf == "" {
		return fastUnsure
	}
	if s, ok = cut(s, " AS "); !ok {
		return fastUnsure
	}
	asn, s := span(s, isDigit)
	if asn == "" {
		return fastUnsure
	}
	if s, ok = cut(s, ") old state "); !ok {
		return fastUnsure
	}
	old, s := span(s, isWordByte)
	if old == "" {
		return fastUnsure
	}
	if s, ok = cut(s, " "); !ok {
		return fastUnsure
	}
	// .* is greedy and stops at a newline: the last "new state ".
	if nl := strings.IndexByte(s, '\n'); nl >= 0 {
		s = s[:nl]
	}
	j := strings.LastIndex(s, "new state ")
	if j < 0 {
		return fastUnsure
	}
	now, _ := span(s[j+len("new state "):], isWordByte)
	if now == "" {
		return fastUnsure
	}
	f["neighbor"], f["vrf"], f["asn"], f["old"], f["new"] = addr, vrf, asn, old, now
	return fastMatched
}

// BGP_PEER_STATE_CHANGE:? BGP peer (?P<neighbor>ipish)(?:\+\d+)? \((?:External|Internal) AS (?P<asn>\d+)\) changed state from (?P<old>\w+) to (?P<new>\w+)
func fastJunosBGP(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "BGP_PEER_STATE_CHANGE")
	if !ok {
		return fastUnsure
	}
	s, _ = cut(s, ":")
	if s, ok = cut(s, " BGP peer "); !ok {
		return fastUnsure
	}
	addr, s, ok := cutIPish(s)
	if !ok {
		return fastUnsure
	}
	if t, ok := cut(s, "+"); ok {
		var port string
		if port, s = span(t, isDigit); port == "" {
			return fastUnsure
		}
	}
	if s, ok = cut(s, " ("); !ok {
		return fastUnsure
	}
	if t, ok := cut(s, "External"); ok {
		s = t
	} else if s, ok = cut(s, "Internal"); !ok {
		return fastUnsure
	}
	if s, ok = cut(s, " AS "); !ok {
		return fastUnsure
	}
	asn, s := span(s, isDigit)
	if asn == "" {
		return fastUnsure
	}
	if s, ok = cut(s, ") changed state from "); !ok {
		return fastUnsure
	}
	old, s := span(s, isWordByte)
	if old == "" {
		return fastUnsure
	}
	if s, ok = cut(s, " to "); !ok {
		return fastUnsure
	}
	now, _ := span(s, isWordByte)
	if now == "" {
		return fastUnsure
	}
	f["neighbor"], f["asn"], f["old"], f["new"] = addr, asn, old, now
	return fastMatched
}

// OSPF-\d-ADJCHG: Process \S+, Nbr (?P<neighbor>ipish) on (?P<interface>\S+) from (?P<old>[\w-]+) to (?P<new>[\w-]+)
func fastCiscoOSPF(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "OSPF-")
	if !ok || len(s) < 1 || !isDigit(s[0]) {
		return fastUnsure
	}
	if s, ok = cut(s[1:], "-ADJCHG: Process "); !ok {
		return fastUnsure
	}
	// \S+, then a space: the comma ends the run of non-spaces.
	run, s := span(s, notSpace)
	if len(run) < 2 || run[len(run)-1] != ',' {
		return fastUnsure
	}
	if s, ok = cut(s, " Nbr "); !ok {
		return fastUnsure
	}
	nbr, s, ok := cutIPish(s)
	if !ok {
		return fastUnsure
	}
	if s, ok = cut(s, " on "); !ok {
		return fastUnsure
	}
	ifc, s := span(s, notSpace)
	if ifc == "" {
		return fastUnsure
	}
	if s, ok = cut(s, " from "); !ok {
		return fastUnsure
	}
	old, s := span(s, isWordOrDash)
	if old == "" {
		return fastUnsure
	}
	if s, ok = cut(s, " to "); !ok {
		return fastUnsure
	}
	now, _ := span(s, isWordOrDash)
	if now == "" {
		return fastUnsure
	}
	f["neighbor"], f["interface"], f["old"], f["new"] = nbr, ifc, old, now
	return fastMatched
}

// Configured from (?P<source>\S+) by (?P<user>[^\s,]+)
func fastCiscoConfig(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "Configured from ")
	if !ok {
		return fastUnsure
	}
	src, s := span(s, notSpace)
	if src == "" {
		return fastUnsure
	}
	if s, ok = cut(s, " by "); !ok {
		return fastUnsure
	}
	user, _ := span(s, notSpaceOrComma)
	if user == "" {
		return fastUnsure
	}
	f["source"], f["user"] = src, user
	return fastMatched
}

// UI_COMMIT:? User '(?P<user>[^']+)' requested '(?:commit|commit synchronize)'
func fastJunosCommit(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "UI_COMMIT")
	if !ok {
		return fastUnsure
	}
	s, _ = cut(s, ":")
	if s, ok = cut(s, " User '"); !ok {
		return fastUnsure
	}
	user, s := span(s, func(c byte) bool { return c != '\'' })
	if user == "" {
		return fastUnsure
	}
	if s, ok = cut(s, "' requested 'commit"); !ok {
		return fastUnsure
	}
	if !strings.HasPrefix(s, "'") && !strings.HasPrefix(s, " synchronize'") {
		return fastUnsure
	}
	f["user"] = user
	return fastMatched
}

// LOGIN_SUCCESS: Login Success \[user: (?P<user>[^\]]+)\]
func fastCiscoLogin(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "LOGIN_SUCCESS: Login Success [user: ")
	if !ok {
		return fastUnsure
	}
	user, s := span(s, func(c byte) bool { return c != ']' })
	if user == "" || s == "" {
		return fastUnsure
	}
	f["user"] = user
	return fastMatched
}

// Accepted (?:password|publickey|keyboard-interactive/pam|gssapi-with-mic) for (?:invalid user )?(?P<user>\S+) from (?P<source>ipish)
func fastSSHDAccepted(msg string, at int, f map[string]string) fastResult {
	s, ok := cut(msg[at:], "Accepted ")
	if !ok {
		return fastUnsure
	}
	method := false
	for _, m := range [...]string{"password for ", "publickey for ", "keyboard-interactive/pam for ", "gssapi-with-mic for "} {
		if s, ok = cut(s, m); ok {
			method = true
			break
		}
	}
	if !method {
		return fastUnsure
	}
	s, _ = cut(s, "invalid user ") // the patterns try the optional group first
	user, s := span(s, notSpace)
	if user == "" {
		return fastUnsure
	}
	if s, ok = cut(s, " from "); !ok {
		return fastUnsure
	}
	src, _, ok := cutIPish(s)
	if !ok {
		return fastUnsure
	}
	f["user"], f["source"] = user, src
	return fastMatched
}

// (?i)\bport (?P<interface>[\w/:.-]*\d) (?:is now |link )?(?P<state>on-line|off-line|up|down)\b
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
	s, ok := cut(s, " ")
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
	// The optional group first: it leads on only if a state follows it.
	for _, opt := range [...]string{"is now ", "link "} {
		if rest, ok := cutFold(s, opt); ok {
			if try(rest) == fastMatched {
				return fastMatched
			}
			break // without it, a state cannot start with "is" or "link"
		}
	}
	return try(s)
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

// cut returns s after its prefix lit.
func cut(s, lit string) (string, bool) {
	if strings.HasPrefix(s, lit) {
		return s[len(lit):], true
	}
	return s, false
}

// cutFold is cut with ASCII case folding. (?i) also folds a few non-ASCII
// letters (K and the Kelvin sign, s and the long s): a non-ASCII byte in
// s does not match, and the patterns decide.
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
