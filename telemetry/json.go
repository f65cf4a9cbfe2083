package telemetry

import (
	"encoding/base64"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends l as JSON to dst, the same bytes encoding/json
// produces with HTML escaping off, without reflection or allocation: the
// syslog collector encodes every message on its hot path.
func (l *Log) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"v":`...)
	dst = strconv.AppendInt(dst, int64(l.V), 10)
	dst = appendField(dst, "device", l.Device)
	dst = appendField(dst, "format", l.Format)
	dst = append(dst, `,"facility":`...)
	dst = strconv.AppendInt(dst, int64(l.Facility), 10)
	dst = append(dst, `,"severity":`...)
	dst = strconv.AppendInt(dst, int64(l.Severity), 10)
	if l.Time != nil {
		dst = append(dst, `,"time":`...)
		dst = appendTime(dst, *l.Time)
	}
	dst = appendOptField(dst, "hostname", l.Hostname)
	dst = appendOptField(dst, "relay", l.Relay)
	dst = appendOptField(dst, "app_name", l.AppName)
	dst = appendOptField(dst, "proc_id", l.ProcID)
	dst = appendOptField(dst, "msg_id", l.MsgID)
	if len(l.StructuredData) > 0 {
		dst = append(dst, `,"structured_data":{`...)
		ids := sortedKeys(make([]string, 0, len(l.StructuredData)), l.StructuredData)
		var keys []string
		for i, id := range ids {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, id)
			dst = append(dst, ':', '{')
			params := l.StructuredData[id]
			keys = sortedKeys(keys, params)
			for j, k := range keys {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = AppendString(dst, k)
				dst = append(dst, ':')
				dst = AppendString(dst, params[k])
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	dst = appendOptField(dst, "sequence", l.Sequence)
	dst = appendField(dst, "message", l.Message)
	dst = appendField(dst, "raw", l.Raw)
	if len(l.RawBytes) > 0 {
		dst = append(dst, `,"raw_bytes":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, l.RawBytes)
		dst = append(dst, '"')
	}
	dst = appendOptField(dst, "parse_error", l.ParseError)
	dst = appendField(dst, "source_addr", l.SourceAddr)
	dst = appendField(dst, "listener", l.Listener)
	dst = append(dst, `,"received_at":`...)
	dst = appendTime(dst, l.ReceivedAt)
	return append(dst, '}')
}

// AppendJSON appends e as JSON, the same bytes encoding/json produces with
// HTML escaping off (the embedded Log's fields first, then enrichment's).
func (e *EnrichedLog) AppendJSON(dst []byte) []byte {
	dst = e.Log.AppendJSON(dst)
	dst = dst[:len(dst)-1] // reopen the object
	return e.appendEnrichment(dst)
}

// AppendJSONFrom appends e as JSON like AppendJSON, but copies the Log's
// part from raw, the value DecodeLogLayout decoded e.Log from and found
// lay in, instead of encoding it again. Only e.Log.Device may have been
// changed since. The keys keep raw's order and spelling, so the bytes can
// differ from AppendJSON's, not the value. Without a copyable layout it
// is AppendJSON.
func (e *EnrichedLog) AppendJSONFrom(dst, raw []byte, lay LogLayout) []byte {
	if !lay.Copyable {
		return e.AppendJSON(dst)
	}
	if lay.DeviceStart >= 0 {
		dst = append(dst, raw[:lay.DeviceStart]...)
		dst = AppendString(dst, e.Device)
		dst = append(dst, raw[lay.DeviceEnd:lay.End]...)
	} else {
		dst = append(dst, raw[:lay.End]...)
		dst = appendField(dst, "device", e.Device)
	}
	return e.appendEnrichment(dst)
}

// appendEnrichment appends enrichment's fields and closes the object.
func (e *EnrichedLog) appendEnrichment(dst []byte) []byte {
	dst = appendField(dst, "vendor", e.Vendor)
	dst = appendOptField(dst, "severity_name", e.SeverityName)
	dst = appendOptField(dst, "facility_name", e.FacilityName)
	dst = appendOptField(dst, "mnemonic_facility", e.MnemonicFacility)
	if e.MnemonicSeverity != nil {
		dst = append(dst, `,"mnemonic_severity":`...)
		dst = strconv.AppendInt(dst, int64(*e.MnemonicSeverity), 10)
	}
	dst = appendOptField(dst, "mnemonic", e.Mnemonic)
	dst = appendStringMap(dst, "fields", e.Fields)
	dst = appendOptField(dst, "event", e.Event)
	dst = appendStringMap(dst, "tags", e.Tags)
	return append(dst, '}')
}

// AppendStringMapField appends `,"name":{...}`, m's keys sorted as
// encoding/json sorts them, or nothing for an empty map (omitempty): for
// callers that encode a map once and append the bytes to many records.
func AppendStringMapField(dst []byte, name string, m map[string]string) []byte {
	return appendStringMap(dst, name, m)
}

// appendStringMap appends a map[string]string field with sorted keys, as
// encoding/json does; an empty map is left out (omitempty).
func appendStringMap(dst []byte, name string, m map[string]string) []byte {
	if len(m) == 0 {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':', '{')
	var small [8]string
	keys := sortedKeys(small[:0], m)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, k)
		dst = append(dst, ':')
		dst = AppendString(dst, m[k])
	}
	return append(dst, '}')
}

func appendField(dst []byte, name, v string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return AppendString(dst, v)
}

func appendOptField(dst []byte, name, v string) []byte {
	if v == "" {
		return dst
	}
	return appendField(dst, name, v)
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json does
// with HTML escaping off: quotes, backslashes and control characters
// escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, false)
	return append(dst, '"')
}

// AppendMarshalString appends s as json.Marshal writes it: as AppendString
// does, and with <, > and & escaped too.
func AppendMarshalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, true)
	return append(dst, '"')
}

// AppendMarshalStringBody is AppendMarshalString without the quotes, for
// text that is part of a larger JSON string.
func AppendMarshalStringBody(dst []byte, s string) []byte { return appendEscaped(dst, s, true) }

// plainJSON and plainHTML mark the ASCII bytes encoding/json writes as
// they are, with HTML escaping off and on.
var plainJSON, plainHTML = func() (j, h [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		j[c] = c != '"' && c != '\\'
		h[c] = j[c] && c != '<' && c != '>' && c != '&'
	}
	return j, h
}()

// appendEscaped appends s escaped as encoding/json escapes a string's
// body, HTML characters too when html is set, without allocating.
func appendEscaped(dst []byte, s string, html bool) []byte {
	plain := &plainJSON
	if html {
		plain = &plainHTML
	}
	start := 0
	for i := 0; i < len(s); {
		// Fast path: runs of printable ASCII need no escaping; check
		// eight bytes at a time.
		for i+8 <= len(s) && plainASCII8(s[i:i+8], html) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			if plain[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// plainASCII8 reports whether all of s's 8 bytes are printable ASCII other
// than '"' and '\\' (and '<', '>' and '&' with html).
func plainASCII8(s string, html bool) bool {
	v := load8(s)
	flagged := unplainBytes(v)
	if html {
		flagged |= htmlBytes(v)
	}
	return flagged == 0
}

// sortedKeys returns m's keys, sorted as encoding/json orders them, in
// keys' storage (reused scratch).
func sortedKeys[V any](keys []string, m map[string]V) []string {
	keys = keys[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
