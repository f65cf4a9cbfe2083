package syslog

import (
	"errors"
	"strings"
	"time"
	"unsafe"

	"github.com/weirnet/weir/telemetry"
)

// Formats a message is detected as.
const (
	FormatRFC5424   = "rfc5424"
	FormatRFC3164   = "rfc3164"
	FormatCisco     = "cisco"
	FormatMalformed = "malformed"
)

// Parser turns one syslog message into a telemetry.Log. It detects the
// format per message: RFC 5424, RFC 3164 (BSD) or Cisco's own header
// (`<PRI>SEQ: [host:] [*|.]timestamp: %FAC-SEV-MNEMONIC: ...`, with or without
// year, milliseconds and time zone, as IOS, IOS-XE, NX-OS, IOS-XR, ASA and
// AireOS send it, also behind a relay's BSD header; see the README).
// A message that fits none is still returned, with Format "malformed", the
// raw text as Message and ParseError saying why.
//
// The hand-written parser works on the bytes as received and allocates
// nothing on the common path; RFC 5424 structured data, when present, is
// the exception. Its results agree with go-syslog's RFC 5424 parser, which
// the tests use as the reference.
type Parser struct {
	// Now is the receive clock, used for the year of timestamps that have
	// none. Nil means time.Now.
	Now func() time.Time
}

var (
	errNoPRI        = errors.New("no <PRI> header")
	errBadPRI       = errors.New("PRI out of range 0-191")
	errNoTimestamp  = errors.New("no timestamp after PRI")
	errBadTimestamp = errors.New("invalid timestamp")
	errBadHeader    = errors.New("truncated header")
	errBadSD        = errors.New("invalid structured data")
)

// Parse parses raw into l. The strings in l point into raw (no copy): raw
// must not change while l is in use. Use ParseCopy when l must outlive raw.
func (p *Parser) Parse(raw []byte, l *telemetry.Log) {
	s := unsafe.String(unsafe.SliceData(raw), len(raw))
	p.parse(s, l)
}

// ParseCopy parses a copy of raw, so l owns its strings.
func (p *Parser) ParseCopy(raw []byte, l *telemetry.Log) { p.parse(string(raw), l) }

func (p *Parser) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Parser) parse(s string, l *telemetry.Log) {
	*l = telemetry.Log{V: telemetry.Version, Raw: s, Facility: -1, Severity: -1}
	pri, rest, err := parsePRI(s)
	if err != nil {
		if err != errNoPRI || !p.parseNoPRI(s, l) {
			malformed(l, s, err)
		}
		return
	}
	l.Facility, l.Severity = pri>>3, pri&7
	err = p.parseHeader(rest, l)
	if err == nil {
		p.unwrapRelayed(l)
	}
	if err != nil {
		fac, sev := l.Facility, l.Severity
		malformed(l, s, err)
		l.Facility, l.Severity = fac, sev
		return
	}
	if isYear(l.Hostname) {
		yearForHost(l)
	}
}

// parseHeader parses what follows the PRI: an RFC 5424, RFC 3164 or Cisco
// header and the message.
func (p *Parser) parseHeader(rest string, l *telemetry.Log) (err error) {
	switch {
	case len(rest) >= 2 && rest[0] == '1' && rest[1] == ' ':
		if err = p.parse5424(rest[2:], l); err == nil {
			p.relayed5424Cisco(l)
		}
	case startsWithCiscoSeq(rest):
		err = p.parseCisco(rest, l, 0)
	case strings.HasPrefix(rest, "%"), ciscoContinuation(rest):
		// ASA without "logging timestamp", its default: no header at all;
		// IOS's traceback without sequence numbers.
		l.Format, l.Message = FormatCisco, rest
	default:
		err = p.parse3164(rest, l)
		if err != errNoTimestamp {
			break
		}
		if i := asaDeviceID(rest); i > 0 {
			// ASA with "logging device-id" and no time: "fw1 : %ASA-...".
			l.Format, l.Hostname, l.Message, err = FormatCisco, rest[:i], rest[i+len(" : "):], nil
		} else if strings.IndexByte(rest[:min(len(rest), 128)], ':') > 0 {
			// No sequence field but a Cisco origin first: NX-OS with
			// "logging origin-id hostname" ("host: 2026 Nov 29 ...: %MSG"),
			// IOS without the message counter ("host: *Mar  1 ...: %MSG"),
			// or the uptime ("1w2d: %MSG"); the colon comes early.
			err = p.parseCiscoOrigin(rest, l, ciscoNeedHost)
		}
	}
	return err
}

// errNoPRIHeader is the parse_error of a line without a PRI whose BSD
// header was read all the same.
const errNoPRIHeader = "no <PRI> header (header parsed; facility and severity unknown)"

// parseNoPRI reads a line without a PRI that starts with a BSD header
// ("TIMESTAMP HOST TAG: MSG"), as a relay forwarding with a file template
// (rsyslog's RSYSLOG_FileFormat, syslog-ng's file format) or a device that
// leaves the PRI out sends it: the device's host name and time are kept,
// not lost to the relay's address. Facility and severity stay unknown (-1)
// and ParseError says why. It reports false, leaving l to be marked
// malformed, when the line has no timestamp and host name there.
func (p *Parser) parseNoPRI(s string, l *telemetry.Log) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= '0' && s[0] <= '9') {
		return false
	}
	if err := p.parse3164(s, l); err != nil || l.Hostname == "" {
		return false
	}
	if isYear(l.Hostname) {
		yearForHost(l)
	}
	l.Facility, l.Severity, l.ParseError = -1, -1, errNoPRIHeader
	return true
}

// yearForHost mends a line HPE Comware, H3C or Huawei sent with the year
// after the time ("Apr 13 20:41:09 2026 core1 %%10BGP/..."), as a relay
// that does not know that layout (rsyslog) forwards it: the year as the
// host name, and the host name as the tag (RFC 5424's APP-NAME) or the
// message's first word. The "%" of the device's MODULE/SEV/BRIEF after it
// tells it from a host named like a year.
func yearForHost(l *telemetry.Log) {
	switch {
	case l.Format == FormatRFC5424 && l.AppName != "" && l.ProcID == "" && l.MsgID == "" && strings.HasPrefix(l.Message, "%"):
		l.Hostname, l.AppName = l.AppName, ""
	case l.Format == FormatRFC3164 && l.AppName == "":
		if host, rest, ok := nextField(l.Message); ok && strings.HasPrefix(rest, "%") {
			l.Format, l.Hostname, l.Message = FormatCisco, host, rest
		}
	}
}

// isYear reports whether s is a year of the device clocks weir meets
// (1970 to 2099) written as a host name would be.
func isYear(s string) bool {
	return len(s) == 4 && isDigits(s) && (s[:2] == "19" && s[2] >= '7' || s[:2] == "20")
}

func malformed(l *telemetry.Log, s string, err error) {
	*l = telemetry.Log{V: telemetry.Version, Raw: s, Facility: -1, Severity: -1,
		Format: FormatMalformed, Message: s, ParseError: err.Error()}
}

// parsePRI reads "<N>" with N in 0..191 and no leading zeros beyond "0".
func parsePRI(s string) (int, string, error) {
	if len(s) < 3 || s[0] != '<' {
		return 0, s, errNoPRI
	}
	n, i := 0, 1
	for ; i < len(s) && i <= 4 && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if i == 1 || i > 4 || i >= len(s) || s[i] != '>' {
		return 0, s, errNoPRI
	}
	if n > 191 || (i > 2 && s[1] == '0') {
		return 0, s, errBadPRI
	}
	return n, s[i+1:], nil
}

// startsWithCiscoSeq reports whether s starts with Cisco's sequence number
// field: digits (possibly none, as NX-OS sends "<189>: ...") then ':', then
// a space or an origin like "RP/0/RSP0/CPU0:".
func startsWithCiscoSeq(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i < len(s) && s[i] == ':' && (i > 0 || (len(s) > 1 && s[1] == ' '))
}

// parse5424: VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID
// SP STRUCTURED-DATA [SP MSG]; "-" is nil.
func (p *Parser) parse5424(s string, l *telemetry.Log) error {
	l.Format = FormatRFC5424
	var ts, host, app, proc, msgid string
	var ok bool
	for _, f := range []*string{&ts, &host, &app, &proc, &msgid} {
		if *f, s, ok = nextField(s); !ok {
			return errBadHeader
		}
	}
	if ts != "-" {
		t, err := parseRFC3339(ts)
		if err != nil {
			return err
		}
		l.Time = &t
	}
	l.Hostname, l.AppName, l.ProcID, l.MsgID = nilDash(host), nilDash(app), nilDash(proc), nilDash(msgid)
	if len(s) == 0 {
		return errBadHeader
	}
	if s[0] == '-' {
		s = s[1:]
	} else {
		sd, rest, err := parseSD(s)
		if err != nil {
			return err
		}
		l.StructuredData, s = sd, rest
	}
	if len(s) > 0 {
		if s[0] != ' ' {
			return errBadSD
		}
		s = s[1:]
	}
	// A UTF-8 BOM marks the message as UTF-8; it is not part of the text.
	l.Message = strings.TrimPrefix(s, "\ufeff")
	return nil
}

func nilDash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// nextField returns the text up to the next space and what follows it.
func nextField(s string) (string, string, bool) {
	i := strings.IndexByte(s, ' ')
	if i <= 0 {
		return "", s, false
	}
	return s[:i], s[i+1:], true
}

// parseSD parses one or more SD-ELEMENTs.
func parseSD(s string) (map[string]map[string]string, string, error) {
	sd := map[string]map[string]string{}
	for len(s) > 0 && s[0] == '[' {
		s = s[1:]
		end := strings.IndexAny(s, " ]")
		if end <= 0 {
			return nil, s, errBadSD
		}
		id := s[:end]
		s = s[end:]
		params := map[string]string{}
		for len(s) > 0 && s[0] == ' ' {
			s = s[1:]
			eq := strings.IndexByte(s, '=')
			if eq <= 0 || eq+1 >= len(s) || s[eq+1] != '"' {
				return nil, s, errBadSD
			}
			name := s[:eq]
			s = s[eq+2:]
			var val strings.Builder
			closed := false
			for i := 0; i < len(s); i++ {
				c := s[i]
				if c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\' || s[i+1] == ']') {
					val.WriteByte(s[i+1])
					i++
					continue
				}
				if c == '"' {
					s = s[i+1:]
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return nil, s, errBadSD
			}
			params[name] = val.String()
		}
		if len(s) == 0 || s[0] != ']' {
			return nil, s, errBadSD
		}
		s = s[1:]
		sd[id] = params
	}
	return sd, s, nil
}

// isoNoZone is an ISO 8601 time without a zone; time.Parse takes a
// fraction of a second after it too.
const isoNoZone = "2006-01-02T15:04:05"

// parseRFC3339 parses the RFC 5424 timestamp: RFC 3339 with at most six
// fraction digits.
func parseRFC3339(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	// Go takes a one-digit hour ("T1:00:00Z"); RFC 3339 and 5424 do not,
	// and a relayed line's inner header must be a real one.
	if err != nil || len(s) < 14 || s[13] != ':' {
		return time.Time{}, errBadTimestamp
	}
	return t, nil
}

// parse3164: TIMESTAMP SP HOSTNAME SP TAG[PID]: MSG. The timestamp is BSD's
// "Mmm dd hh:mm:ss" (what logger and most devices send) or RFC 3339 (what
// rsyslog sends in its "BSD" template), optionally with a year ("2026 Nov 29
// 14:03:05", NX-OS; "Nov 29 2026 14:03:05", ASA). A NX-OS or ASA line whose
// body is "%FAC-SEV-MNEMONIC: ..." right after the hostname is reported as
// Cisco format.
func (p *Parser) parse3164(s string, l *telemetry.Log) error {
	l.Format = FormatRFC3164
	for len(s) > 0 && s[0] == ' ' { // "<PRI> Mmm dd ..." (NX-OS, some relays)
		s = s[1:]
	}
	cisco := false
	if len(s) > 1 && (s[0] == '*' || s[0] == '.') && s[1] >= 'A' && s[1] <= 'Z' {
		// Cisco without "service sequence-numbers": "*Mar  1 00:01:23.456[
		// UTC]: %MSG" ('*' an unsynced clock, '.' a lost sync).
		s, cisco = s[1:], true
	}
	ts := s
	t, rest, ok := p.parseBSDTime(s, cisco)
	if !ok {
		if i := strings.IndexByte(s, ' '); i > 0 {
			if tt, err := parseRFC3339(s[:i]); err == nil {
				t, rest, ok = tt, s[i+1:], true
			} else if i >= len(isoNoZone) && s[4] == '-' && s[10] == 'T' && isDigits(s[:4]) {
				tt, err := time.Parse(isoNoZone, s[:i])
				if err != nil {
					return errNoTimestamp
				}
				// ISO 8601 without a zone (H3C and HPE Comware's
				// "info-center timestamp loghost iso"): read as UTC, as
				// a BSD time without a zone is.
				t, rest, ok = tt, s[i+1:], true
			}
		}
	}
	if !ok {
		return errNoTimestamp
	}
	l.Time = &t
	// Junos and some relays put two spaces before the host name.
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	// IOS without the message counter and with "show-timezone":
	// "Mmm dd hh:mm:ss.mmm TZ: %MSG" (upper case, so that an Arista agent
	// such as "Ebra:" stays a tag).
	if j := zoneColon(rest, false); j > 0 && strings.HasPrefix(rest[j:], ": %") {
		rest = rest[j:]
	}
	s = asaColon(rest)
	// HOSTNAME, unless the next word is already the tag ("tag: msg") or
	// the message ("%ASA-6-302016 ..." after ASA's " : ").
	word, after, found := nextField(s)
	switch {
	case !found || word[0] == '%' || strings.Contains(word, "["):
	case !strings.HasSuffix(word, ":"):
		l.Hostname, s = word, asaColon(after)
		// A relay's host name in front of "TZ: %MSG" (IOS without the
		// message counter, as a relay forwards it).
		if j := zoneColon(s, false); j > 0 && strings.HasPrefix(s[j:], ": %") {
			s = s[j+2:]
		}
	case len(word) > 1 && strings.HasPrefix(after, "%") && bsdHasYear(ts):
		// ASA's device id glued to the colon: "Mmm dd yyyy hh:mm:ss fw1: %ASA-...".
		l.Hostname, s = word[:len(word)-1], after
	}
	if strings.HasPrefix(s, "%") || ciscoContinuation(s) {
		l.Format = FormatCisco
		l.Message = s
		return nil
	}
	if l.Hostname != "" {
		if p.relayedCisco(s, l) {
			return nil
		}
		s = strings.TrimPrefix(s, ": ") // ASA: "host : text"
	}
	l.AppName, l.ProcID, l.Message = splitTag(s)
	return nil
}

// bsdHasYear reports whether the BSD timestamp at the start of s has a
// year: "2026 Nov 29 ...", "Nov 29 2026 ..." or "Nov 9 2026 ...".
func bsdHasYear(s string) bool {
	switch {
	case len(s) > 4 && s[4] == ' ' && isDigits(s[:4]):
		return true
	case len(s) > 11 && s[6] == ' ' && s[11] == ' ' && isDigits(s[7:11]):
		return true
	}
	return len(s) > 10 && s[5] == ' ' && s[10] == ' ' && isDigits(s[6:10])
}

// relayedCisco parses s as a Cisco header that a relay (rsyslog,
// syslog-ng) has put its own BSD header in front of, taking the Cisco
// header for a tag and the rest for the message: "Mmm dd hh:mm:ss host
// 585917: Mmm dd hh:mm:ss.mmm: %MSG", "... host : 2026 Nov 29 ...: %MSG",
// "... host RP/0/RSP0/CPU0:Mmm dd ...: proc[pid]: %MSG". The device's
// time and host name, when the Cisco header has them, replace the relay's.
// It reports whether s was one, and leaves l as it was if not.
func (p *Parser) relayedCisco(s string, l *telemetry.Log) bool {
	// NX-OS's "<PRI>: 2026 ..." and ASA's "host : Mmm ..." leave ": ".
	r := strings.TrimPrefix(s, ": ")
	if len(r) < 2 {
		return false
	}
	switch c := r[0]; {
	case c >= '0' && c <= '9', c == '*', c == '.':
	case c >= 'A' && c <= 'Z' && len(r) < len(s):
		// A timestamp after " : ".
	case c >= 'A' && c <= 'Z' && xrNode(r):
		// An IOS-XR node glued to the time: "RP/0/RSP0/CPU0:Nov".
	case !originHost(r):
		return false
	}
	s = r
	host, t := l.Hostname, l.Time
	var err error
	if startsWithCiscoSeq(s) {
		err = p.parseCisco(s, l, ciscoNeedColon)
	} else {
		err = p.parseCiscoOrigin(s, l, ciscoNeedColon)
	}
	if err != nil {
		l.Format, l.Hostname, l.Sequence, l.Time = FormatRFC3164, host, "", t
		return false
	}
	return true
}

// relayed5424Cisco reads a Cisco header that rsyslog forwarded as RFC 5424
// (RSYSLOG_SyslogProtocol23Format): it took the header's first field for
// the tag, so the APP-NAME is the sequence number (nil for NX-OS's empty
// one) or the origin host ("nx1: 2026 ...", "wlc1: *task: ...") and the
// rest of the Cisco header, after a space, the message; ASA's "asa1 :
// %ASA-..." leaves a nil APP-NAME before the mnemonic. The device's time
// and host name, when the header has them, replace the relay's; l is left
// as it was when the message is no Cisco header.
func (p *Parser) relayed5424Cisco(l *telemetry.Log) {
	if l.ProcID != "" || l.MsgID != "" || l.StructuredData != nil || len(l.Message) < 2 || l.Message[0] != ' ' {
		return
	}
	msg := l.Message[1:]
	switch c := msg[0]; {
	case c == '%' && l.AppName == "":
		l.Format, l.Message = FormatCisco, msg
		return
	case l.AppName != "" && !isDigits(l.AppName) && c != '*' && c != '.' && (c < '0' || c > '9') && (c < 'A' || c > 'Z') && !ciscoContinuation(msg):
		// A tag, not an origin host: no time nor task follows (the usual
		// relayed line).
		return
	}
	keep := *l
	if isDigits(l.AppName) {
		l.Sequence = l.AppName
	} else if l.AppName != "" {
		l.Hostname = l.AppName
	}
	l.AppName = ""
	if err := p.parseCiscoOrigin(msg, l, ciscoNeedColon); err != nil {
		*l = keep
	}
}

// xrNode reports whether s starts with an IOS-XR node glued to the time
// ("RP/0/RSP0/CPU0:Nov ...").
func xrNode(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && i+1 < len(s) && s[i+1] != ' ' && strings.IndexByte(s[:i], '/') >= 0 && strings.IndexByte(s[:i], ' ') < 0
}

// originHost reports whether s starts with a Cisco device's own host name
// before a year-first time, a task or a sequence number: "nx1: 2026 Nov
// 29 ..." (NX-OS), "wlc1: *spamApTask1: ..." (AireOS), "edge1: 000045:
// *Mar ..." (IOS, "service sequence-numbers" padded to six digits with
// zeros), as a relay forwards them. Any other number is a message counter,
// which comes before the origin: "devlogs: 45: Nov 29 ...: %..." and
// "devlogs: 123456: ..." (past 99,999 messages) are a relay's tag in front
// of a whole Cisco line (see unwrapRelayed). A sequence number past 99,999
// has no zero to tell it by, and reads as a counter too.
func originHost(s string) bool {
	i := strings.IndexByte(s, ':')
	// No host name holds a '<': "devlogs<189>: 2026 ..." is a relay's tag
	// glued to a device's PRI (unwrapRelayed).
	if i <= 0 || i+3 >= len(s) || s[i+1] != ' ' || strings.ContainsAny(s[:i], " <") {
		return false
	}
	r := s[i+2:]
	if r[0] == '*' {
		return true
	}
	n := skipDigits(r, 0)
	return n == 4 && len(r) > 4 && r[4] == ' ' || n >= 6 && r[0] == '0' && n < len(r) && r[n] == ':'
}

// ciscoContinuation reports whether s is one of the lines IOS sends after
// some messages, each a message of its own with the header (sequence
// number, host name) but no time nor mnemonic: the process
// ("-Process= \"IP Input\", ipl= 0, pid= 72") and its stack
// ("-Traceback= 0x6017F4C4 0x60189B08 ...").
func ciscoContinuation(s string) bool {
	return strings.HasPrefix(s, "-Traceback= ") || strings.HasPrefix(s, "-Process= ")
}

// asaDeviceID is the length of the device id that starts s when s is an
// ASA header of a device id and no time ("fw1 : %ASA-..."), else 0.
func asaDeviceID(s string) int {
	i := strings.IndexByte(s[:min(len(s), 72)], ' ')
	if i <= 0 || !strings.HasPrefix(s[i:], " : %") || strings.ContainsAny(s[:i], ":<>[]") {
		return 0
	}
	return i
}

// asaColon drops the ": " that ends a Cisco ASA header before "%ASA-..."
// ("Mmm dd yyyy hh:mm:ss[ device-id ]: %ASA-6-302013: ...").
func asaColon(s string) string {
	if strings.HasPrefix(s, ": %") {
		return s[2:]
	}
	return s
}

// maxTag is the longest tag splitTag takes (RFC 3164 allows 32 bytes;
// some senders write longer ones).
const maxTag = 48

// splitTag splits "tag[pid]: msg" or "tag: msg"; text without a tag is all
// message.
func splitTag(s string) (app, pid, msg string) {
	// '<' ends no tag but is none of its bytes: "devlogs<189>48: ..." is a
	// relay's tag without its colon glued to a device's PRI (unwrapRelayed).
	end := strings.IndexAny(s, ":[ <")
	if end <= 0 || end > maxTag || s[0] == '<' {
		// "<Info:vlan.msgs...> ...": Extreme EXOS's severity and event
		// name begin the message; no tag starts with '<'.
		return "", "", s
	}
	app = s[:end]
	rest := s[end:]
	if rest[0] == '[' {
		close := strings.IndexByte(rest, ']')
		if close < 0 {
			return "", "", s
		}
		pid = rest[1:close]
		rest = rest[close+1:]
		// "tag[pid] msg": rsyslog's forwarding formats write an RFC 5424
		// line's APP-NAME and PROCID so, without the colon.
		if pid != "" && strings.HasPrefix(rest, " ") && strings.IndexByte(pid, ' ') < 0 {
			return app, pid, rest[1:]
		}
	}
	if !strings.HasPrefix(rest, ":") {
		return "", "", s
	}
	return app, pid, strings.TrimPrefix(rest[1:], " ")
}

// parseCisco: [SEQ: ][host: | node:] [SEQ: ][*task: ][*|.]TIMESTAMP: [process[pid]: ] %MSG.
// TIMESTAMP may be the device's uptime ("00:01:23", "1w2d": "service
// timestamps log uptime", a device without a clock); the message then has
// no device time.
func (p *Parser) parseCisco(s string, l *telemetry.Log, mode ciscoMode) error {
	if ciscoUptime(s) > 0 {
		// No sequence field, the uptime first: "<PRI>00:01:23: %MSG".
		return p.parseCiscoOrigin(s, l, mode)
	}
	colon := strings.IndexByte(s, ':')
	l.Sequence = s[:colon]
	return p.parseCiscoOrigin(strings.TrimPrefix(s[colon+1:], " "), l, mode)
}

// ciscoMode makes a Cisco header parse stricter where the header is not
// recognisably Cisco from its start.
type ciscoMode uint8

const (
	// ciscoNeedHost: no host name (nor uptime) is an error; there is no
	// sequence field either.
	ciscoNeedHost ciscoMode = 1 << iota
	// ciscoNeedColon: the timestamp must end with ':', as Cisco's does;
	// the header follows a relay's BSD header.
	ciscoNeedColon
)

// parseCiscoOrigin parses what follows the sequence field: [host: | node:]
// TIMESTAMP: ...; mode makes it stricter.
func (p *Parser) parseCiscoOrigin(s string, l *telemetry.Log, mode ciscoMode) error {
	l.Format = FormatCisco
	if ciscoContinuation(s) {
		// Before the origin: an IOS-XE stack has colons, no host name.
		l.Message = s
		return nil
	}
	// Origin: "edge1: " (a host name), "RP/0/RSP0/CPU0:" (an IOS-XR
	// node, glued to the timestamp), or both as IOS-XR writes them with
	// "logging hostnameprefix": "pe1 RP/0/RSP0/CPU0:".
	xrNodeFirst := false
	if i := strings.IndexByte(s, ':'); i > 0 {
		word := s[:i]
		host, node, spaced := strings.Cut(word, " ")
		switch {
		case !spaced && strings.Contains(word, "/"):
			s = s[i+1:] // IOS-XR node id: not a host name
			xrNodeFirst = true
		case !spaced && i+1 < len(s) && s[i+1] == ' ' && !isDigits(word) && word[0] != '*' && ciscoUptime(s) == 0:
			// Not "*task:", an AireOS task name (below).
			l.Hostname, s = word, s[i+2:]
		case spaced && host != "" && strings.Contains(node, "/") && !strings.ContainsAny(node, " "):
			l.Hostname, s = host, s[i+1:]
		}
	}
	// With "service sequence-numbers" IOS numbers its messages after the
	// origin, and the leading field is then the message counter:
	// "<189>52: edge1: 000045: *Mar  1 ...". Sequence is the second number.
	if n := skipDigits(s, 0); n > 0 && n+1 < len(s) && s[n] == ':' && s[n+1] == ' ' {
		l.Sequence, s = s[:n], s[n+2:]
	}
	if ciscoContinuation(s) {
		l.Message = s // no time
		return nil
	}
	// A Cisco wireless controller (AireOS) names the task after the host:
	// "wlc1: *spamApTask1: Mmm dd ...". A timestamp has a space before its
	// first colon.
	task := ""
	if len(s) > 1 && s[0] == '*' {
		if i := strings.IndexByte(s, ':'); i > 1 && i+1 < len(s) && s[i+1] == ' ' && strings.IndexByte(s[:i], ' ') < 0 {
			task, s = s[1:i], s[i+2:]
		}
	}
	if mode&ciscoNeedHost != 0 && l.Hostname == "" && ciscoUptime(s) == 0 {
		if task == "" && !xrNodeFirst {
			return errNoTimestamp
		}
		// A task name or an IOS-XR node alone (IOS-XR without "service
		// sequence-numbers"): Cisco if the time ends as Cisco's does.
		mode |= ciscoNeedColon
	}
	// '*' means the clock is not authoritative, '.' that it lost sync.
	s = strings.TrimLeft(s, "*.")
	t, rest, ok := p.parseBSDTime(s, true)
	switch {
	case ok:
		if mode&ciscoNeedColon != 0 && !strings.HasPrefix(strings.TrimPrefix(rest, " "), ":") {
			return errNoTimestamp
		}
		l.Time = &t
	case ciscoUptime(s) > 0:
		rest = s[ciscoUptime(s):]
	default:
		return errNoTimestamp
	}
	// IOS-XR without a time zone leaves a space before the colon.
	s = strings.TrimPrefix(strings.TrimPrefix(rest, " "), ":")
	s = strings.TrimPrefix(s, " ")
	if task != "" {
		l.AppName = task
	} else if !strings.HasPrefix(s, "%") {
		// IOS-XR: "process[pid]: %MSG".
		if app, pid, msg := splitTag(s); app != "" {
			l.AppName, l.ProcID, s = app, pid, msg
		}
	}
	l.Message = s
	return nil
}

// ciscoUptime is the length of a Cisco uptime timestamp at the start of s,
// followed by ':' ("00:01:23", "00:01:23.456", "1w2d", "2d03h",
// "1y12w"), or 0 if there is none.
func ciscoUptime(s string) int {
	i := skipDigits(s, 0)
	if i == 0 || i == len(s) {
		return 0
	}
	if s[i] == ':' { // hh:mm:ss[.fff]
		j := skipDigits(s, i+1)
		if j == i+1 || j == len(s) || s[j] != ':' {
			return 0
		}
		k := skipDigits(s, j+1)
		if k == j+1 {
			return 0
		}
		if k < len(s) && s[k] == '.' {
			if m := skipDigits(s, k+1); m > k+1 {
				k = m
			}
		}
		if k < len(s) && s[k] == ':' {
			return k
		}
		return 0
	}
	for { // groups of digits and a unit: 1y12w, 2d03h
		if !strings.ContainsRune("ywdhm", rune(s[i])) {
			return 0
		}
		i++
		if i < len(s) && s[i] == ':' {
			return i
		}
		j := skipDigits(s, i)
		if j == i || j == len(s) {
			return 0
		}
		i = j
	}
}

// skipDigits returns the index of the first non-digit of s at or after i.
func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseBSDTime parses "[YYYY ]Mmm dd [YYYY ]hh:mm:ss[.fff][ YYYY][ TZ]" at
// the start of s, the day padded with a space or not ("Nov  9", "Nov 9")
// (the year before the month is NX-OS's, after the day Cisco
// IOS/IOS-XE's "service timestamps ... year" and ASA's, after the time
// HPE Comware's and H3C's) and returns the rest
// after it (and after one following space); zone allows a time zone name
// (Cisco's "show-timezone"). Without a year, the year is the one that puts
// the time closest to now, and not more than a month ahead (a message
// from Dec 31 arriving on Jan 1 is last year's). Zone names other than UTC/GMT/Z are left in the message's
// interpretation as UTC.
func (p *Parser) parseBSDTime(s string, zone bool) (time.Time, string, bool) {
	year := -1
	if len(s) > 5 && isDigits(s[:4]) && s[4] == ' ' {
		year = atoi(s[:4])
		s = s[5:]
	}
	if len(s) < 7 || s[3] != ' ' {
		return time.Time{}, s, false
	}
	mon := 0
	for i, m := range months {
		if s[:3] == m {
			mon = i + 1
			break
		}
	}
	var dayStr string
	switch {
	case s[6] == ' ': // "Nov 29", "Nov  9"
		dayStr = s[4:6]
		if dayStr[0] == ' ' {
			dayStr = dayStr[1:]
		}
		s = s[7:]
	case s[5] == ' ' && s[4] != ' ': // "Nov 9", not padded (NX-OS, some relays)
		dayStr = s[4:5]
		s = s[6:]
	default:
		return time.Time{}, s, false
	}
	if year < 0 && len(s) > 5 && isDigits(s[:4]) && s[4] == ' ' {
		year = atoi(s[:4])
		s = s[5:]
	}
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return time.Time{}, s, false
	}
	if mon == 0 || !isDigits(dayStr) || !isDigits(s[0:2]) || !isDigits(s[3:5]) || !isDigits(s[6:8]) {
		return time.Time{}, s, false
	}
	day, hh, mm, ss := atoi(dayStr), atoi(s[0:2]), atoi(s[3:5]), atoi(s[6:8])
	if day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60 {
		return time.Time{}, s, false
	}
	s = s[8:]
	nsec := 0
	if len(s) > 1 && s[0] == '.' {
		i := 1
		for i < len(s) && i <= 9 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac := s[1:i]
		nsec = atoi(frac)
		for k := len(frac); k < 9; k++ {
			nsec *= 10
		}
		s = s[i:]
	}
	// An offset glued to the time: Huawei VRP set to the host's time zone
	// ("Jan  8 2013 03:58:15+07:00 HUAWEI %%01..."). Skipped, not
	// applied: the time is UTC and the offset says the host's zone
	// (Huawei's log format documentation: that line was logged at local
	// time 10:58:15).
	if len(s) >= 6 && (s[0] == '+' || s[0] == '-') && s[3] == ':' && isDigits(s[1:3]) && isDigits(s[4:6]) && (len(s) == 6 || s[6] == ' ') {
		s = s[6:]
	}
	// A year after the time: HPE Comware and H3C ("Aug 27 12:21:31 2018
	// sw1 %%10IFNET/..."). A host named like a year of these is rarer
	// than such a header.
	if year < 0 && len(s) >= 6 && s[0] == ' ' && isDigits(s[1:5]) && s[5] == ' ' {
		if y := atoi(s[1:5]); y >= 1990 && y <= 2100 {
			year = y
			s = s[5:]
		}
	}
	// Optional zone name in Cisco headers: " UTC", " CET"..., followed by
	// the colon that ends the header. BSD headers have none, and there an
	// upper-case host name must not be taken for a zone.
	if zone && len(s) > 1 && s[0] == ' ' {
		if j := zoneColon(s[1:], true); j > 0 {
			s = s[1+j:]
		}
	}
	if year >= 0 {
		t := time.Date(year, time.Month(mon), day, hh, mm, ss, nsec, time.UTC)
		if t.Day() != day {
			return time.Time{}, s, false // Feb 30
		}
		return t, strings.TrimPrefix(s, " "), true
	}
	// No year: the closest to now of last year, this year and next year,
	// so both a message from Dec 31 received on Jan 1 and one from a
	// device a few seconds ahead at new year land next to the receive
	// time. Only real dates count (Feb 29 exists in leap years only), and
	// none more than a month ahead: a message comes from the past, and a
	// device clock months ahead is rarer than an old message (a "Feb 29"
	// received in a year after a leap year is not next leap year's).
	now := p.now().UTC()
	var t time.Time
	var best time.Duration = -1
	for y := now.Year() - 1; y <= now.Year()+1; y++ {
		c := time.Date(y, time.Month(mon), day, hh, mm, ss, nsec, time.UTC)
		if c.Day() != day || c.Sub(now) > maxAhead {
			continue
		}
		if d := c.Sub(now).Abs(); best < 0 || d < best {
			t, best = c, d
		}
	}
	if best < 0 {
		return time.Time{}, s, false // Feb 30
	}
	return t, strings.TrimPrefix(s, " "), true
}

// zoneColon is the index of the colon that ends a Cisco header after the
// time zone name at the start of s, or 0 if s does not start with one. The
// name is what "clock timezone" set: 2 to 7 letters ("UTC", "CEST"; lower
// case only if lower), possibly with an offset ("UTC+1", "UTC+05:30");
// NX-OS may put a space before the colon ("UTC :").
func zoneColon(s string, lower bool) int {
	j := 0
	for j < len(s) && j < 7 && (s[j] >= 'A' && s[j] <= 'Z' || lower && s[j] >= 'a' && s[j] <= 'z') {
		j++
	}
	if j < 2 || j == len(s) {
		return 0
	}
	if s[j] == '+' || s[j] == '-' {
		k := skipDigits(s, j+1)
		if k == j+1 || k > j+3 {
			return 0
		}
		if k+2 < len(s) && s[k] == ':' && skipDigits(s, k+1) == k+3 {
			k += 3 // "+05:30"
		}
		j = k
	}
	if j < len(s) && s[j] == ' ' {
		j++
	}
	if j < len(s) && s[j] == ':' {
		return j
	}
	return 0
}

// maxAhead is how far past the receive time a timestamp without a year
// may be put.
const maxAhead = 31 * 24 * time.Hour

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// unwrapRelayed reads the message of l as a device's whole line when a
// relay read that line from a file and put its own header in front
// (rsyslog's imfile, syslog-ng's file source, logger --prio-prefix -f):
// "<PRI>Dec  5 00:57:12 relay1 devlogs: [<PRI>]48: edge1: Nov 29 ...:
// %BGP-...". The relay's header has a host name and a tag; the message
// starts with a syslog header with a time of its own. l becomes the
// device's line as if sent directly, with the relay's host name in Relay
// (and as the host name when the device's header names none), and the
// device's PRI where the relay kept it. A message that only starts like a
// header ("cron: Nov 29 ran") leaves l as it was. The relay's tag may lack
// its colon (rsyslog's imfile with Tag="devlogs": "relay1 devlogs <PRI>48:
// ...", or "devlogs<PRI>48: ..." from a template of "%syslogtag%%msg%"),
// which leaves the BSD line without a tag.
func (p *Parser) unwrapRelayed(l *telemetry.Log) {
	if l.Hostname == "" || l.Format == FormatCisco {
		return
	}
	msg := l.Message
	if l.AppName == "" {
		if l.Format != FormatRFC3164 {
			return
		}
		msg = afterBareTag(msg)
	}
	if !startsLikeHeader(msg) {
		return
	}
	in := telemetry.Log{V: l.V, Raw: l.Raw, Facility: l.Facility, Severity: l.Severity}
	if pri, rest, err := parsePRI(msg); err == nil {
		in.Facility, in.Severity, msg = pri>>3, pri&7, rest
	} else if err != errNoPRI {
		return
	}
	if err := p.parseHeader(msg, &in); err != nil {
		return
	}
	if isYear(in.Hostname) {
		yearForHost(&in) // Comware's year after the time, as parse mends it
	}
	switch in.Format {
	case FormatRFC3164:
		// A time, a host name and a tag, as a device's BSD header has.
		if in.Hostname == "" || in.AppName == "" {
			return
		}
	case FormatCisco:
		// A time or an uptime (parseCisco's error when there is none),
		// and the mnemonic every Cisco line has after its header: without
		// it "job 00:01:23: elapsed" would be an uptime and a message.
		// IOS's traceback and process lines have neither.
		if !strings.HasPrefix(in.Message, "%") && !ciscoContinuation(in.Message) {
			return
		}
	case FormatRFC5424:
		// Strict enough, but for the SD field that parse5424 lets a
		// sender's own line leave out ("msgid  text", an empty map):
		// a relayed header has "-" or an element there.
		if in.StructuredData != nil && len(in.StructuredData) == 0 {
			return
		}
	default:
		return
	}
	in.Relay = l.Hostname
	if in.Hostname == "" {
		in.Hostname = l.Hostname
	}
	*l = in
}

// afterBareTag is what follows the first word of s when that word may be
// a tag written without its colon: up to a space, which is dropped, or a
// '<' (a PRI glued to the tag); else "".
func afterBareTag(s string) string {
	i := strings.IndexAny(s, " <")
	if i <= 0 || i > maxTag || strings.ContainsAny(s[:i], ":[") {
		return ""
	}
	if s[i] == ' ' {
		i++
	}
	return s[i:]
}

// startsLikeHeader reports whether s may start with a syslog header (the
// PRI optional): a PRI, RFC 5424's version, a Cisco sequence field or
// uptime, a year, a month, Cisco's clock marks, an AireOS task, an
// IOS-XR node, ASA's device id, ASA's mnemonic with no header, or a Cisco
// origin host; one space may come first, as NX-OS writes it after its
// PRI. It is the cheap test before a full parse.
func startsLikeHeader(s string) bool {
	if len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	if len(s) < 4 {
		return false
	}
	switch c := s[0]; {
	case c == '<':
		return s[1] >= '0' && s[1] <= '9'
	case c == '1' && s[1] == ' ':
		return true // RFC 5424
	case c >= '0' && c <= '9':
		return startsWithCiscoSeq(s) || ciscoUptime(s) > 0 || len(s) > 5 && isDigits(s[:4]) && (s[4] == ' ' || s[4] == '-')
	case c == ':':
		return s[1] == ' ' // NX-OS's empty sequence field
	case c == '*':
		return s[1] >= 'A' && s[1] <= 'Z' || s[1] >= 'a' && s[1] <= 'z' // a clock mark or an AireOS task
	case c == '.':
		return s[1] >= 'A' && s[1] <= 'Z'
	case c == '-':
		return ciscoContinuation(s)
	case c == '%':
		// ASA sends no header by default; no other mnemonic is a whole
		// line (Arista's follows its agent's tag: "Ebra: %LINEPROTO-...").
		return strings.HasPrefix(s, "%ASA-") || strings.HasPrefix(s, "%FTD-")
	case c >= 'A' && c <= 'Z' && s[3] == ' ':
		for _, m := range months {
			if s[:3] == m {
				return true
			}
		}
	}
	return originHost(s) || xrNode(s) || asaDeviceID(s) > 0
}
