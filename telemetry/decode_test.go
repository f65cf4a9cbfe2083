package telemetry

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// plainPrefixReference is plainPrefix a byte at a time.
func plainPrefixReference(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return i
		}
	}
	return len(s)
}

// strReference is lexer.str as it was before its one-pass fast path
// (and escaped before it copied runs).
func (d *lexer) strReference() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	d.i++
	start := d.i
	q := strings.IndexByte(d.s[start:], '"')
	if q < 0 {
		return "", false
	}
	v := d.s[start : start+q]
	if bs := strings.IndexByte(v, '\\'); bs >= 0 {
		for i := 0; i < bs; i++ {
			if v[i] < 0x20 {
				return "", false // a control character is no JSON, escape or not after it
			}
		}
		d.i = start + bs
		return d.escapedReference(start)
	}
	d.i = start + q + 1
	if printableASCII(v) {
		return v, true
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 {
			return "", false
		}
	}
	return v, utf8.ValidString(v)
}

// escapedReference is lexer.escaped as it was before it copied runs.
func (d *lexer) escapedReference(start int) (string, bool) {
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

// checkStr: str and plainPrefix agree with their references on s and on
// each of its suffixes (every alignment of the eight-byte words).
func checkStr(t *testing.T, s string) {
	t.Helper()
	for off := 0; off <= len(s) && off < 16; off++ {
		in := s[off:]
		if got, want := plainPrefix(in), plainPrefixReference(in); got != want {
			t.Fatalf("plainPrefix(%q) = %d, want %d", in, got, want)
		}
		fast, ref := lexer{s: in}, lexer{s: in}
		fv, fok := fast.str()
		rv, rok := ref.strReference()
		if fok != rok || fok && (fv != rv || fast.i != ref.i) {
			t.Fatalf("str(%q) = %q %v at %d, reference %q %v at %d", in, fv, fok, fast.i, rv, rok, ref.i)
		}
	}
}

func TestStrMatchesReference(t *testing.T) {
	for _, s := range []string{
		`""`, `"abc"`, ` "abcdefgh"`, `"abcdefghijklmnop"x`, `"abc\"def"`, `"tab	x"`, `"é"`, `"a\u00e9b"`,
		`"bad \xff"`, "\"ctl \x01 x\"", `"unterminated`, `"0123456\"`, `"01234567"`, `x"`, `"\ud83d\ude00"`,
		`"` + strings.Repeat("A", 9000) + `"`, `"` + strings.Repeat("a", 63) + "\x7f" + `"`,
		// A control character before an escape: taken as it was, a
		// raw.syslog record's hostname made its enriched record no JSON
		// (FuzzSyslogWorker).
		"\"\x11\\b\"", "\"ab\x01cd\\n\"",
	} {
		checkStr(t, s)
	}
}

func FuzzStr(f *testing.F) {
	f.Add(`"abcdefgh\"ijk"`)
	f.Add(`"` + strings.Repeat("x", 20) + "\x1f\"")
	f.Add(`"héllo wörld, 12345678"`)
	f.Add(`"~~~~~~~~\\"`)
	f.Fuzz(checkStr)
}

// TestPlainPrefixEveryByte puts every byte value at every place of a word,
// after plain bytes and after every byte value.
func TestPlainPrefixEveryByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		for before := 0; before < 256; before++ {
			for at := 0; at < 17; at++ {
				b := []byte(strings.Repeat("a", 20))
				b[at] = byte(c)
				if at > 0 {
					b[at-1] = byte(before)
				}
				if got, want := plainPrefix(string(b)), plainPrefixReference(string(b)); got != want {
					t.Fatalf("plainPrefix(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// TestAllDigitsEveryByte: allDigits agrees with a byte test for every
// byte in every position, among digits.
func TestAllDigitsEveryByte(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			b := []byte("01234567")
			b[pos] = byte(c)
			want := c >= '0' && c <= '9'
			if got := allDigits(binary.LittleEndian.Uint64(b)); got != want {
				t.Fatalf("byte %#x at %d: %v", c, pos, got)
			}
		}
	}
}

// checkUTCTime: utcTime gives what time.Parse gives, or leaves s to it.
func checkUTCTime(t *testing.T, s string) {
	got, ok := utcTime(s)
	if !ok {
		return
	}
	want, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || got != want {
		t.Fatalf("utcTime(%q) = %v, time.Parse %v, %v", s, got, want, err)
	}
}

// TestUTCTime: the days of months and leap years, the range of years and
// fractions, and what utcTime must leave to time.Parse.
func TestUTCTime(t *testing.T) {
	for _, s := range []string{
		"2026-11-29T14:02:11.123Z", "2026-12-07T10:00:00Z", "2024-02-29T00:00:00Z", "2000-02-29T23:59:59Z",
		"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "1969-12-31T23:59:59.5Z", "1600-03-01T00:00:00Z",
		"2026-01-31T01:02:03.000000001Z", "2026-04-30T12:00:00.12Z",
	} {
		if _, ok := utcTime(s); !ok {
			t.Errorf("utcTime(%q) left to time.Parse", s)
		}
		checkUTCTime(t, s)
	}
	for _, s := range []string{
		"2100-02-29T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
		"2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
		"2026-01-01T00:00:60Z", "0000-01-01T00:00:00Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00,5Z",
		"2026-01-01T00:00:00.1234567891Z", "2026-01-01T00:00:00+00:00", "2026-01-01t00:00:00Z",
		"2026-01-01T00:00:00z", "+026-01-01T00:00:00Z", "2026-01-01T00:00:0aZ", "2026-1-01T00:00:00Z",
	} {
		if _, ok := utcTime(s); ok {
			t.Errorf("utcTime(%q) ok", s)
		}
	}
}

func FuzzUTCTime(f *testing.F) {
	f.Add("2026-11-29T14:02:11.123Z")
	f.Add("2024-02-29T00:00:00Z")
	f.Add("0001-01-01T00:00:00.000000001Z")
	f.Fuzz(checkUTCTime)
}
