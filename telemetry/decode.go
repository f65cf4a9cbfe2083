package telemetry

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeLog decodes a Log record value. It takes a fast path for the flat
// objects AppendJSON writes (one string copy of data, fields as substrings)
// and falls back to encoding/json for anything else (structured data,
// unknown keys, unusual layouts), so it accepts exactly what
// json.Unmarshal accepts.
func DecodeLog(data []byte, l *Log) error {
	*l = Log{}
	if fastDecodeLog(string(data), l) {
		return nil
	}
	*l = Log{}
	return json.Unmarshal(data, l)
}

// fastDecodeLog reports false to ask for the slow path.
func fastDecodeLog(s string, l *Log) bool {
	d := lexer{s: s}
	if !d.byte('{') {
		return false
	}
	if d.peek() == '}' {
		d.i++
		d.skipSpace()
		return d.i == len(d.s)
	}
	for {
		key, ok := d.str()
		if !ok || !d.byte(':') {
			return false
		}
		switch key {
		case "v":
			n, ok := d.integer()
			if !ok {
				return false
			}
			l.V = n
		case "facility", "severity":
			n, ok := d.integer()
			if !ok {
				return false
			}
			if key == "facility" {
				l.Facility = n
			} else {
				l.Severity = n
			}
		case "time", "received_at":
			v, ok := d.str()
			if !ok {
				return false
			}
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return false
			}
			if key == "time" {
				l.Time = &t
			} else {
				l.ReceivedAt = t
			}
		case "raw_bytes":
			v, ok := d.str()
			if !ok {
				return false
			}
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return false
			}
			l.RawBytes = b
		default:
			dst := l.stringField(key)
			if dst == nil {
				return false // structured_data, or a key this version does not know
			}
			v, ok := d.str()
			if !ok {
				return false
			}
			*dst = v
		}
		switch d.next() {
		case ',':
			continue
		case '}':
			d.skipSpace()
			return d.i == len(d.s)
		default:
			return false
		}
	}
}

func (l *Log) stringField(key string) *string {
	switch key {
	case "device":
		return &l.Device
	case "format":
		return &l.Format
	case "hostname":
		return &l.Hostname
	case "app_name":
		return &l.AppName
	case "proc_id":
		return &l.ProcID
	case "msg_id":
		return &l.MsgID
	case "sequence":
		return &l.Sequence
	case "message":
		return &l.Message
	case "raw":
		return &l.Raw
	case "parse_error":
		return &l.ParseError
	case "source_addr":
		return &l.SourceAddr
	case "listener":
		return &l.Listener
	}
	return nil
}

type lexer struct {
	s string
	i int
}

func (d *lexer) skipSpace() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\n' || d.s[d.i] == '\t' || d.s[d.i] == '\r') {
		d.i++
	}
}

func (d *lexer) peek() byte {
	d.skipSpace()
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

func (d *lexer) next() byte {
	c := d.peek()
	if c != 0 {
		d.i++
	}
	return c
}

func (d *lexer) byte(c byte) bool { return d.next() == c }

func (d *lexer) integer() (int, bool) {
	d.skipSpace()
	start := d.i
	if d.i < len(d.s) && d.s[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	if d.i-digits > 1 && d.s[digits] == '0' {
		return 0, false // JSON has no leading zeros
	}
	n, err := strconv.Atoi(d.s[start:d.i])
	return n, err == nil
}

// str reads a JSON string: a substring of the input when it has no
// escapes, else an unescaped copy. Invalid escapes or UTF-8 send the caller
// to the slow path, which handles them as encoding/json does.
func (d *lexer) str() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	d.i++
	start := d.i
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			v := d.s[start:d.i]
			d.i++
			return v, utf8.ValidString(v)
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return "", false
		}
		d.i++
	}
	return "", false
}

func (d *lexer) escaped(start int) (string, bool) {
	var b strings.Builder
	b.WriteString(d.s[start:d.i])
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			v := b.String()
			return v, utf8.ValidString(v)
		case c < 0x20:
			return "", false
		case c != '\\':
			b.WriteByte(c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			return "", false
		}
		e := d.s[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				// A pair: \uD83D\uDE00. A lone surrogate is left to
				// encoding/json, which replaces it.
				if d.i+1 >= len(d.s) || d.s[d.i] != '\\' || d.s[d.i+1] != 'u' {
					return "", false
				}
				d.i += 2
				r2, ok := d.hex4()
				if !ok {
					return "", false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", false
				}
			}
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	return "", false
}

func (d *lexer) hex4() (rune, bool) {
	if d.i+4 > len(d.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(d.s[d.i:d.i+4], 16, 32)
	d.i += 4
	return rune(n), err == nil
}
