package webhook

import (
	"slices"
	"time"
	"unicode/utf8"
)

// The alert encoder's pieces: the same bytes encoding/json writes (HTML
// characters escaped, map keys sorted), without reflection or maps.

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendStringBody(b, s)
	return append(b, '"')
}

// safe marks the ASCII bytes encoding/json writes as they are.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hex = "0123456789abcdef"

// appendStringBody appends s escaped as encoding/json does, without the
// quotes.
func appendStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// appendKV appends "k":"v".
func appendKV(b []byte, k, v string) []byte {
	b = appendString(b, k)
	b = append(b, ':')
	return appendString(b, v)
}

// appendKVs appends an object of kvs sorted by key.
func appendKVs(b []byte, kvs []kv) []byte {
	b = append(b, '{')
	for i, x := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKV(b, x.k, x.v)
	}
	return append(b, '}')
}

// appendMap appends m as encoding/json does (null for nil).
func appendMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var small [8]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKV(b, k, m[k])
	}
	return append(b, '}')
}

// appendTime appends t as time.Time's MarshalJSON does, failing as it does
// (a year past 9999, an offset past a day).
func appendTime(b []byte, t time.Time) ([]byte, error) {
	out, err := t.AppendText(append(b, '"'))
	if err != nil {
		return b, err
	}
	return append(out, '"'), nil
}
