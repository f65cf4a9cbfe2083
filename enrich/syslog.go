// Package enrich turns raw records into enriched ones: it recognises
// vendor syslog messages (Cisco IOS/IOS-XE/NX-OS/IOS-XR, Junos, Arista EOS,
// Fortinet, and the common link, BGP, OSPF and login messages of Huawei
// VRP, Nokia SR OS, Aruba, Extreme, MikroTik and Palo Alto), splits out
// their mnemonic, facility and severity, extracts interfaces, neighbors,
// users, VRFs and AS numbers, and derives network events.
package enrich

import (
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/weirnet/weir/telemetry"
)

// Vendors detect reports.
const (
	VendorCiscoIOS   = "cisco_ios"
	VendorCiscoNXOS  = "cisco_nxos"
	VendorCiscoIOSXR = "cisco_iosxr"
	VendorCiscoASA   = "cisco_asa" // and Firepower Threat Defense
	VendorCiscoWLC   = "cisco_wlc" // AireOS wireless controllers
	VendorJunos      = "junos"
	VendorAristaEOS  = "arista_eos"
	VendorFortinet   = "fortinet"
	VendorHuawei     = "huawei_vrp"
	VendorComware    = "hpe_comware" // and H3C
	// Told by the rule a message matched, not by its header (rule.vendor).
	VendorNokia       = "nokia_sros"
	VendorMikroTik    = "mikrotik_routeros"
	VendorArubaCX     = "aruba_aoscx"
	VendorArubaSwitch = "aruba_aos_switch" // ArubaOS-Switch, once ProCurve
	VendorPaloAlto    = "paloalto_panos"
	VendorExtreme     = "extreme_exos"
	VendorExtremeVOSS = "extreme_voss" // VOSS (VSP), once Avaya VSP
	VendorGeneric     = "generic"
)

// SyslogInfo is what Classify learns from one message.
type SyslogInfo struct {
	Vendor string
	// VendorByRule: Vendor is the matching rule's (the header told
	// none), a guess the inventory's vendor for the device overrides.
	VendorByRule bool
	// Mnemonic parts of a "%FAC-SEV-MNEMONIC" (Cisco family, Arista)
	// or the Junos event tag ("BGP_PEER_STATE_CHANGE").
	Facility, Mnemonic string
	MnemonicSeverity   int // -1 if none
	Fields             map[string]string
	Event              string
	Rule               string
}

// Classifier applies the rule table. It is safe for concurrent use.
type Classifier struct {
	builtin []rule
	// rules are the table in use: a site's rules (UseSyslogRules) and
	// then builtin, swapped whole by a reload.
	rules atomic.Pointer[[]rule]
}

// NewClassifier compiles the built-in rules.
func NewClassifier() *Classifier {
	rules := syslogRules()
	prepareRules(rules)
	c := &Classifier{builtin: rules}
	c.rules.Store(&rules)
	return c
}

// prepareRules works out what each rule's matching needs beside its
// patterns.
func prepareRules(rules []rule) {
	for i := range rules {
		r := &rules[i]
		r.atNeeds = make([]bool, len(r.patterns))
		for j, p := range r.patterns {
			prefix, _ := p.LiteralPrefix()
			r.atNeeds[j] = r.needs != "" && strings.HasPrefix(prefix, r.needs)
		}
		r.fold = len(r.patterns) > 0 && strings.HasPrefix(r.patterns[0].String(), "(?i)")
		r.finder = newFinder(r.needs, r.fold)
		r.keywords = ruleKeywords(r)
		r.bigrams = ruleBigrams(r)
		r.fast = fastMatches[r.name]
	}
}

var junosDaemons = map[string]bool{
	"mib2d": true, "rpd": true, "mgd": true, "chassisd": true, "dcd": true, "kmd": true,
	"eventd": true, "jddosd": true, "bfdd": true, "lacpd": true, "ppmd": true, "alarmd": true,
}

// text is what rules match: the message, with the RFC 5424 MSGID in front
// when Junos puts its event tag there. A link trap logged with
// "structured-data brief" has no message, only the parameters: it reads
// as the message would ("SNMP_TRAP_LINK_DOWN: ifName ge-0/0/1").
func text(l *telemetry.Log) string {
	if l.MsgID != "" && junosTag(l.MsgID) != "" {
		if l.Message == "" && strings.HasPrefix(l.MsgID, "SNMP_TRAP_LINK_") {
			if name := junosSDParam(l.StructuredData, "interface-name"); name != "" {
				return l.MsgID + ": ifName " + name
			}
		}
		return l.MsgID + ": " + l.Message
	}
	if tag := relayedLinkTrap(l); tag != "" {
		return tag + l.Message
	}
	if relayedMnemonic(l) {
		// "%BGP-5-ADJCHANGE" + ":" + " neighbor 10.0.0.2 Down": as sent.
		// A relay that drops the message's first space (rsyslog's
		// pmrfc3164 remove.msgFirstSpace) leaves it out: put it back.
		if !strings.HasPrefix(l.Message, " ") {
			return l.AppName + ": " + l.Message
		}
		return l.AppName + ":" + l.Message
	}
	return l.Message
}

// relayedLinkTrap is the event tag, with its ": ", of mib2d's link trap
// whose MSGID a relay dropped (rsyslog's forwarding formats write RFC 5424
// as BSD without it): "ifIndex 545, ifAdminStatus up(1), ifOperStatus
// down(2), ifName xe-1/0/0" from mib2d. Else "".
func relayedLinkTrap(l *telemetry.Log) string {
	if l.AppName != "mib2d" || l.MsgID != "" || !strings.HasPrefix(l.Message, "ifIndex ") {
		return ""
	}
	_, st, ok := strings.Cut(l.Message, ", ifOperStatus ")
	switch {
	case !ok || !strings.Contains(st, ", ifName "):
		return ""
	case strings.HasPrefix(st, "down("):
		return "SNMP_TRAP_LINK_DOWN: "
	case strings.HasPrefix(st, "up("):
		return "SNMP_TRAP_LINK_UP: "
	}
	return ""
}

// relayedMnemonic reports whether the record's APP-NAME is a Cisco-style
// mnemonic ("%BGP-5-ADJCHANGE") its message lacks: a relay that parsed
// the device's BSD line took it for the tag, as rsyslog does and writes it
// as the APP-NAME of RFC 5424 (RSYSLOG_SyslogProtocol23Format), the rest of
// the line as the message.
func relayedMnemonic(l *telemetry.Log) bool {
	if len(l.AppName) < 2 || l.AppName[0] != '%' || strings.HasPrefix(strings.TrimLeft(l.Message, " "), "%") {
		return false
	}
	_, _, mnem, ok := mnemonicAt(l.AppName, 1)
	return ok && strings.HasSuffix(l.AppName, mnem)
}

// junosSDParam is a parameter of the junos@2636 element, or "".
func junosSDParam(sd map[string]map[string]string, name string) string {
	for id, params := range sd {
		if strings.HasPrefix(id, "junos@2636") {
			return params[name]
		}
	}
	return ""
}

// Classify recognises one log message.
func (c *Classifier) Classify(l *telemetry.Log) SyslogInfo {
	return c.ClassifyInto(l, make(map[string]string, 4))
}

// ClassifyInto is Classify with the fields put in fields, which it
// clears first: a worker reuses one map from message to message.
// info.Fields is fields when the matching rule gave any, else nil.
func (c *Classifier) ClassifyInto(l *telemetry.Log, fields map[string]string) SyslogInfo {
	clear(fields)
	info := SyslogInfo{MnemonicSeverity: -1}
	msg := text(l)
	fac, sev, mnem, hasMnemonic := mnemonic(msg)
	tag := ""
	if !hasMnemonic {
		tag = junosTag(msg)
	}
	info.Vendor = detectVendor(l, msg, hasMnemonic, tag != "")
	if hasMnemonic {
		info.Facility, info.Mnemonic, info.MnemonicSeverity = fac, mnem, sev
	} else {
		info.Mnemonic = tag
	}
	var grams bigramSet
	var lacks *absentBytes // for a text too long for grams
	filter := len(msg) <= bigramsMaxText
	if filter {
		grams.add(msg)
	} else {
		lacks = new(absentBytes)
	}
	rules := *c.rules.Load()
	for i := range rules {
		r := &rules[i]
		if filter && !grams.holds(&r.bigrams) {
			continue
		}
		at := 0
		if r.needs != "" {
			if at = r.finder.indexIn(msg, lacks); at < 0 {
				continue
			}
		}
		if !hasAll(msg, r.keywords) {
			continue
		}
		event, ok := r.apply(msg, at, fields)
		if !ok {
			continue
		}
		if len(fields) > 0 {
			info.Fields = fields
		}
		info.Event, info.Rule = event, r.name
		if info.Vendor == VendorGeneric && r.vendor != "" {
			info.Vendor, info.VendorByRule = r.vendor, true
		}
		break
	}
	return info
}

// indexNeeds is where r.needs first occurs in msg, ignoring ASCII case
// when the rule's patterns do, or -1.
func (r *rule) indexNeeds(msg string) int { return r.finder.index(msg) }

// apply matches the rule and derives its event ("" when the rule matches
// but the change is not one, such as a BGP session going Idle → Connect),
// putting the rule's fields in fields, which is empty; on no match it
// leaves fields empty. needsAt is where the rule's needs literal first
// occurs in msg: a pattern that starts with that literal cannot match
// before it, so it only reads from there.
func (r *rule) apply(msg string, needsAt int, fields map[string]string) (string, bool) {
	if r.pairs != nil {
		return r.applyPairs(msg, fields)
	}
	res := fastUnsure
	if r.fast != nil {
		res = r.fast(msg, needsAt, fields)
	}
	switch res {
	case fastNoMatch:
		clear(fields)
		return "", false
	case fastUnsure:
		clear(fields) // what the fast match set
		if !r.match(msg, needsAt, fields) {
			clear(fields)
			return "", false
		}
	}
	event := r.event
	switch {
	case r.states != nil:
		event = lookupLower(r.states, fields["state"])
	case r.upState != "":
		old, now := fields["old"], fields["new"]
		oldUp, nowUp := equalLower(old, r.upState), equalLower(now, r.upState)
		switch {
		case nowUp && !oldUp:
			event = r.up
		case oldUp && !nowUp:
			event = r.down
		case old == "" && now != "" && !nowUp:
			event = r.down // only the new state is reported (Huawei)
		}
	}
	// State groups are how the rule decides, not facts for the record.
	delete(fields, "state")
	return event, true
}

// maxPatternText bounds the text a rule's patterns read: the first 4 KiB
// of the message, or of what follows the rule's needs literal when a
// pattern starts with it. Go's regexp is linear, but a line made of a
// rule's phrase repeated, each one a candidate that fails, costs up to
// about 450 ns a byte (a Comware IFNET phrase), 36 times a corpus line's:
// 20 ms for a 64 KiB line and 400 ms at the receivers' 1 MiB maximum,
// while a worker's records wait behind it. Event lines are a few
// hundred bytes; a longer line's text past the bound is kept in its record
// but not matched. The fast matchers and key=value rules are linear at
// corpus speed and read the whole line.
const maxPatternText = 4 << 10

// match runs the rule's patterns, putting their non-empty named groups
// in fields. Each reads at most maxPatternText bytes.
func (r *rule) match(msg string, needsAt int, fields map[string]string) bool {
	for j, p := range r.patterns {
		in := msg
		if r.atNeeds[j] {
			in = msg[needsAt:]
		}
		in = in[:min(len(in), maxPatternText)]
		m := p.FindStringSubmatchIndex(in)
		if m == nil {
			return false
		}
		for i, name := range p.SubexpNames() {
			if name == "" || m[2*i] < 0 || m[2*i] == m[2*i+1] {
				continue
			}
			fields[name] = in[m[2*i]:m[2*i+1]]
		}
	}
	return true
}

// lookupLower is m[strings.ToLower(s)], without allocating the lower-case
// copy when s is short ASCII, as states are.
func lookupLower(m map[string]string, s string) string {
	var buf [32]byte
	if len(s) > len(buf) || !isASCII(s) {
		return m[strings.ToLower(s)]
	}
	for i := 0; i < len(s); i++ {
		buf[i] = toLowerASCII(s[i])
	}
	return m[string(buf[:len(s)])] // a lookup by string(bytes) does not allocate
}

// equalLower is strings.ToLower(s) == lower, without allocating when s is
// ASCII.
func equalLower(s, lower string) bool {
	if !isASCII(s) {
		return strings.ToLower(s) == lower
	}
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if toLowerASCII(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func toLowerASCII(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

func detectVendor(l *telemetry.Log, msg string, hasMnemonic, hasJunosTag bool) string {
	switch {
	case strings.Contains(msg, "devname=") && strings.Contains(msg, "logid="):
		return VendorFortinet
	case comwareMark(msg):
		return VendorComware
	case strings.HasPrefix(msg, "%%") || strings.Contains(msg, "%%01"):
		return VendorHuawei
	case l.StructuredData != nil && hasJunosSD(l.StructuredData), junosDaemons[l.AppName]:
		return VendorJunos
	case strings.HasPrefix(msg, "%ASA-") || strings.HasPrefix(msg, "%FTD-"):
		return VendorCiscoASA // "%ASA-6-302013": a numeric mnemonic
	}
	if !hasMnemonic {
		if l.AppName != "" && hasJunosTag {
			return VendorJunos
		}
		return VendorGeneric
	}
	// The Cisco family and Arista share the %FAC-SEV-MNEMONIC body; the
	// header tells them apart.
	switch {
	case l.Format == "cisco" && l.AppName != "" && l.ProcID != "":
		return VendorCiscoIOSXR // "node:timestamp: process[pid]: %..."
	case l.Format == "cisco" && l.AppName != "":
		return VendorCiscoWLC // "host: *task: timestamp: %..."
	case l.Format == "cisco" && l.Sequence == "" && yearFirst(l.Raw):
		return VendorCiscoNXOS // "<PRI>: 2026 Nov 29 ...", "<PRI>nx1: 2026 Nov 29 ..." or "<PRI>2026 Nov 29 ... host %..."
	case l.AppName != "" && l.AppName[0] != '%' && l.Format != "cisco": // not a relayed mnemonic (relayedMnemonic)
		return VendorAristaEOS // "host Ebra: %LINEPROTO-5-UPDOWN: ..."
	case l.Sequence == "" && nxosBGP(msg):
		// A relay rewrote NX-OS's year-first header.
		return VendorCiscoNXOS
	}
	return VendorCiscoIOS
}

// nxosBGP reports whether msg has NX-OS's "bgp-ASN [pid]" right after
// its mnemonic's colon ("%BGP-5-ADJCHANGE:  bgp-65001 [12345]  ...").
func nxosBGP(msg string) bool {
	i := strings.Index(msg, "-ADJCHANGE:")
	if i < 0 {
		return false
	}
	s := strings.TrimLeft(msg[i+len("-ADJCHANGE:"):], " ")
	if !strings.HasPrefix(s, "bgp-") {
		return false
	}
	n := 4
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n > 4 && strings.HasPrefix(s[n:], " [")
}

// comwareMark reports whether msg holds "%%10" before a module name:
// H3C's vendor mark and log version, which HPE Comware and H3C devices
// put before "MODULE/SEV/BRIEF" in what they send a log host. Huawei VRP
// writes its own version there, 01.
func comwareMark(msg string) bool {
	i := strings.Index(msg, "%%10")
	return i >= 0 && i+4 < len(msg) && isUpper(msg[i+4])
}

// yearFirst reports whether the header of raw (what comes before its
// first '%') has a timestamp with the year first, "2026 Nov 29", as
// NX-OS writes it; IOS without a sequence number puts none there, or a
// year after the day. The device's timestamp ends the header, behind a
// relay's header if there is one (whose host name may be long): only
// the yearFirstReach bytes before the '%' are looked at.
func yearFirst(raw string) bool {
	end := strings.IndexByte(raw, '%')
	if end < 0 {
		end = len(raw)
	}
	for i := max(0, end-yearFirstReach); i+9 <= end; i++ {
		if raw[i] == '2' && raw[i+1] == '0' && isDigit(raw[i+2]) && isDigit(raw[i+3]) && raw[i+4] == ' ' &&
			(i == 0 || raw[i-1] == ' ' || raw[i-1] == '>') && raw[i+5] >= 'A' && raw[i+5] <= 'Z' && raw[i+8] == ' ' {
			return true
		}
	}
	return false
}

// yearFirstReach covers NX-OS's time with a zone ("2026 Nov 29
// 14:03:01.123 UTC+05:30 : ") and its BSD-like header's time and host
// name ("2026 Nov 29 14:03:05 host %").
const yearFirstReach = 128

// mnemonic finds the first "%FACILITY-SEV-MNEMONIC" in msg (Cisco family
// and Arista; facility segments joined by '-', as in
// "%PKT_INFRA-LINEPROTO-5-UPDOWN", and lower case after a segment's
// first letter, as in "%OSPFv3-5-ADJCHG"), or Huawei's
// "%%01MODULE/SEV/BRIEF" (the brief may be in mixed case:
// "linkDown_active", and Comware 3's may hold a space, briefEnd). It is
// the regular expression
//
//	%(?:%\d+)?([A-Z][A-Za-z0-9_]*(?:-[A-Z][A-Za-z0-9_]*)*)-(\d)-([A-Z][A-Z0-9_]*)|%%\d+([A-Z][A-Z0-9_]*)/(\d)/([A-Za-z][A-Za-z0-9_]*(?: [A-Z][A-Z0-9_]*[(:])?)
//
// (the brief without its "(" or ":") written out, as every message goes through it.
func mnemonic(msg string) (facility string, severity int, mnem string, ok bool) {
	for i := strings.IndexByte(msg, '%'); i >= 0; {
		p := i + 1
		if p < len(msg) && msg[p] == '%' {
			q := p + 1
			for q < len(msg) && isDigit(msg[q]) {
				q++
			}
			if q > p+1 {
				p = q
				if facility, severity, mnem, ok = huaweiMnemonicAt(msg, p); ok {
					return facility, severity, mnem, true
				}
			}
		}
		if facility, severity, mnem, ok = mnemonicAt(msg, p); ok {
			return facility, severity, mnem, true
		}
		next := strings.IndexByte(msg[i+1:], '%')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return "", -1, "", false
}

// mnemonicAt parses "FAC[-FAC...]-SEV-MNEMONIC" at msg[p:].
func mnemonicAt(msg string, p int) (string, int, string, bool) {
	start := p
	for {
		if p >= len(msg) || !isUpper(msg[p]) {
			return "", 0, "", false
		}
		p = skipMixedWord(msg, p+1)
		if p+1 >= len(msg) || msg[p] != '-' {
			return "", 0, "", false
		}
		if isDigit(msg[p+1]) {
			break // the severity: facility segments never start with a digit
		}
		p++ // another facility segment
	}
	facility, sev := msg[start:p], int(msg[p+1]-'0')
	p += 2
	if p+1 >= len(msg) || msg[p] != '-' || !isUpper(msg[p+1]) {
		return "", 0, "", false
	}
	end := skipWord(msg, p+2)
	return facility, sev, msg[p+1 : end], true
}

// huaweiMnemonicAt parses Huawei's "MODULE/SEV/BRIEF" at msg[p:].
func huaweiMnemonicAt(msg string, p int) (string, int, string, bool) {
	if p >= len(msg) || !isUpper(msg[p]) {
		return "", 0, "", false
	}
	end := skipWord(msg, p+1)
	if end+3 >= len(msg) || msg[end] != '/' || !isDigit(msg[end+1]) || msg[end+2] != '/' || !isLetter(msg[end+3]) {
		return "", 0, "", false
	}
	return msg[p:end], int(msg[end+1] - '0'), msg[end+3 : briefEnd(msg, end+4)], true
}

// briefEnd is where the brief that starts before msg[i:] ends: after
// [A-Za-z0-9_]*, and after a second upper-case word when a space parts
// the two and "(" or ":" ends the second, as in Comware 3's "%%10IFNET/4/
// LINK UPDOWN(l):" (the brief as the device writes it).
func briefEnd(msg string, i int) int {
	end := skipMixedWord(msg, i)
	if end+1 >= len(msg) || msg[end] != ' ' || !isUpper(msg[end+1]) {
		return end
	}
	second := skipWord(msg, end+2)
	if second < len(msg) && (msg[second] == '(' || msg[second] == ':') {
		return second
	}
	return end
}

// skipMixedWord skips [A-Za-z0-9_]*.
func skipMixedWord(s string, i int) int {
	for i < len(s) && (isLetter(s[i]) || isDigit(s[i]) || s[i] == '_') {
		i++
	}
	return i
}

func isLetter(c byte) bool { return isUpper(c) || c >= 'a' && c <= 'z' }

// skipWord skips [A-Z0-9_]*.
func skipWord(s string, i int) int {
	for i < len(s) && (isUpper(s[i]) || isDigit(s[i]) || s[i] == '_') {
		i++
	}
	return i
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// junosTag returns the Junos event tag ("BGP_PEER_STATE_CHANGE") msg starts
// with, followed by ':' or the end, or "": the regular expression
// ^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?::|$) written out.
func junosTag(msg string) string {
	// Without a '_' there is no tag: tell that without walking a long
	// upper-case message byte by byte.
	if msg == "" || !isUpper(msg[0]) || strings.IndexByte(msg, '_') < 0 {
		return ""
	}
	end := skipWord(msg, 1)
	if end < len(msg) && msg[end] != ':' {
		return ""
	}
	tag := msg[:end]
	if !strings.Contains(tag, "_") || strings.Contains(tag, "__") || tag[len(tag)-1] == '_' {
		return ""
	}
	return tag
}

func hasJunosSD(sd map[string]map[string]string) bool {
	for id := range sd {
		if strings.HasPrefix(id, "junos@2636") {
			return true
		}
	}
	return false
}

// FacilityNames are syslog facilities 0-23.
var FacilityNames = [24]string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
	"authpriv", "ftp", "ntp", "security", "console", "solaris-cron",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}

// ObjectOf names what an event is about: the interface of a link event, the
// neighbor of a BGP or OSPF event (a BGP session's with its VRF, see
// sessionObject), the user of a login, failed or not, or of a
// configuration change (the address it came from when it names none).
func ObjectOf(info SyslogInfo) string {
	switch {
	case strings.HasPrefix(info.Event, "interface_"):
		return info.Fields["interface"]
	case strings.HasPrefix(info.Event, "bgp_"):
		return sessionObject(info.Fields["neighbor"], info.Fields["vrf"])
	case strings.HasPrefix(info.Event, "ospf_"):
		return info.Fields["neighbor"]
	case info.Event == "login_succeeded", info.Event == "login_failed", info.Event == "config_changed":
		if user := info.Fields["user"]; user != "" {
			return user
		}
		// A login that names no user (ArubaOS-Switch's "SME SSH from
		// A"): its address, so that two sessions are two logins.
		return info.Fields["source"]
	}
	return ""
}

// applyPairs matches a key=value rule: every key of r.pairs has its value,
// and r.pairFields take theirs (a field whose key is missing or empty is
// left out, as an empty group is).
func (r *rule) applyPairs(msg string, fields map[string]string) (string, bool) {
	matched := 0
	eachPair(msg, func(k, v string) {
		if want, ok := r.pairs[k]; ok && v == want {
			matched++
		}
		for field, key := range r.pairFields {
			if key == k && v != "" {
				fields[field] = v
			}
		}
	})
	if matched < len(r.pairs) {
		clear(fields)
		return "", false
	}
	return r.event, true
}

// eachPair calls fn with each key=value pair of s, in order: keys are
// runs of letters, digits, '_' and '-' directly followed by '='; values
// are quoted ("..." without escapes) or run to the next space. Words that
// are not pairs are skipped. A key seen twice is reported twice.
func eachPair(s string, fn func(key, value string)) {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && isKeyByte(s[j]) {
			j++
		}
		if j == i || j == len(s) || s[j] != '=' {
			// Not a pair: skip the word.
			for j < len(s) && s[j] != ' ' {
				j++
			}
			i = j + 1
			continue
		}
		key := s[i:j]
		j++ // '='
		var value string
		if j < len(s) && s[j] == '"' {
			end := strings.IndexByte(s[j+1:], '"')
			if end < 0 {
				value, j = s[j+1:], len(s)
			} else {
				value, j = s[j+1:j+1+end], j+1+end+1
			}
		} else {
			end := strings.IndexByte(s[j:], ' ')
			if end < 0 {
				end = len(s) - j
			}
			value, j = s[j:j+end], j+end
		}
		fn(key, value)
		for j < len(s) && s[j] == ' ' {
			j++
		}
		i = j
	}
}

func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
