package influxdb

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weirnet/weir/telemetry"
)

// The line-protocol encoder: the bytes, checks and refusals of
// line-protocol/v2's Encoder (a test checks they agree), without its
// per-string counting passes and the copy of every string value.

// Characters escaped, by the escape's second byte, in each part of a line.
var measurementEsc, keyEsc, stringEsc = escapes(" ,", " ,=", "\\\"")

func escapes(meas, key, str string) (m, k, s [256]byte) {
	for _, c := range []byte(meas) {
		m[c] = c
	}
	for _, c := range []byte(key) {
		k[c] = c
	}
	// InfluxDB (1.x and 2.x) unescapes only \\ and \" in a string field
	// and takes newlines, returns and tabs in it as they are; line-protocol/v2
	// writes them as \n, \r and \t, which InfluxDB would store as a
	// backslash and a letter.
	for _, c := range []byte(str) {
		s[c] = c
	}
	return m, k, s
}

// errOutOfRange: a time line protocol cannot carry in nanoseconds.
var errOutOfRange = errors.New("line-protocol value out of range")

var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// appendName appends a measurement, key or tag value escaped with esc;
// false if line protocol cannot carry it: empty, invalid UTF-8, a control
// character or a trailing backslash (which cannot be read back).
func appendName(b []byte, s string, esc *[256]byte) ([]byte, bool) {
	if s == "" || s[len(s)-1] == '\\' {
		return b, false
	}
	start := 0
	ascii := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return b, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		} else if e := esc[c]; e != 0 {
			b = append(b, s[start:i]...)
			b = append(b, '\\', e)
			start = i + 1
		}
	}
	if !ascii && !utf8.ValidString(s) {
		return b, false
	}
	return append(b, s[start:]...), true
}

// printable is s with its control characters as spaces: a tag value is
// the device's text (an interface description with a tab in it), which
// should not cost the whole point; line protocol cannot carry them.
func printable(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] != 0x7f {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i] < 0x20 || b[i] == 0x7f {
			b[i] = ' '
		}
	}
	return string(b)
}

// appendLine appends p as one line (nothing for a metric without fields):
// measurement, tags in key order with the device as tag "device" (unless
// a tag of that name gives it), fields in key order, typed, and the
// device's time (else the receive time) in nanoseconds. On an error the
// buffer is as it was.
func appendLine(b []byte, p *telemetry.Point) ([]byte, error) {
	if len(p.Fields) == 0 {
		return b, nil
	}
	start := len(b)
	fail := func(err error) ([]byte, error) { return b[:start], err }
	var ok bool
	if strings.HasPrefix(p.Measurement, "#") {
		// InfluxDB reads the line as a comment, answers 204 and stores
		// nothing: refuse it (a dead letter) rather than lose it silently.
		return fail(fmt.Errorf("invalid measurement %q: a line starting with # is a comment", p.Measurement))
	}
	if b, ok = appendName(b, p.Measurement, &measurementEsc); !ok {
		return fail(fmt.Errorf("invalid measurement %q", p.Measurement))
	}
	device := p.Device
	if _, ok := p.Tag("device"); ok {
		device = "" // the tag's own value wins
	}
	tag := func(k, v string) error {
		// A trailing backslash would escape the separator after it, and
		// no escape of it reads back: trimmed, as Telegraf trims it (a
		// Windows drive's "C:\" is "C:"), rather than refusing every
		// point of the interface or drive. A value of backslashes alone
		// is no value: the tag is left out, as an empty one is. Not the
		// device's: trimmed, "sw1\" would be written into sw1's series
		// and "\" as a point of no device; refused, as before.
		v = printable(validUTF8(v))
		if trimmed := strings.TrimRight(v, `\`); len(trimmed) < len(v) {
			if k == "device" {
				return fmt.Errorf("invalid tag value %s=%q: a device ending in a backslash", k, v)
			}
			v = trimmed
		}
		if v == "" {
			return nil
		}
		b = append(b, ',')
		if b, ok = appendName(b, k, &keyEsc); !ok {
			return fmt.Errorf("invalid tag key %q", k)
		}
		b = append(b, '=')
		if b, ok = appendName(b, v, &keyEsc); !ok {
			return fmt.Errorf("invalid tag value %s=%q", k, v)
		}
		return nil
	}
	for i := range p.Tags {
		t := &p.Tags[i]
		if device != "" && t.Key > "device" {
			if err := tag("device", device); err != nil {
				return fail(err)
			}
			device = ""
		}
		// Line protocol has no empty tag values; an absent tag means
		// the same to InfluxDB.
		if t.Value != "" {
			if err := tag(t.Key, t.Value); err != nil {
				return fail(err)
			}
		}
	}
	if device != "" {
		if err := tag("device", device); err != nil {
			return fail(err)
		}
	}
	fieldsAt := len(b)
	for i := range p.Fields {
		f := &p.Fields[i]
		if f.Kind == telemetry.FieldString && nonFinite(f.Str) {
			// A float NaN or infinity, as the gnmi collector writes
			// it: line protocol has no such number, and written as a
			// string the field would be a string in InfluxDB, which
			// then refuses its every float (a field type conflict).
			// Left out, as Telegraf leaves such a field out.
			continue
		}
		if f.Kind == telemetry.FieldUint {
			// A counter past 2^63-1: InfluxDB 1.x has no unsigned
			// type and refuses the line (its other fields too), 2.x
			// refuses it in a field of integers. Left out, as a NaN
			// is: capped at 2^63-1, as Telegraf does, it would read
			// as a counter that stopped, a port without traffic.
			continue
		}
		if len(b) == fieldsAt {
			b = append(b, ' ')
		} else {
			b = append(b, ',')
		}
		if b, ok = appendName(b, f.Key, &keyEsc); !ok {
			return fail(fmt.Errorf("invalid field key %q", f.Key))
		}
		b = append(b, '=')
		switch f.Kind {
		case telemetry.FieldFloat:
			x := f.Float()
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return fail(fmt.Errorf("field %q: value %v (float) has no line-protocol type", f.Key, x))
			}
			b = strconv.AppendFloat(b, x, 'g', -1, 64)
		case telemetry.FieldInt:
			b = append(strconv.AppendInt(b, f.Int(), 10), 'i')
		case telemetry.FieldBool:
			b = strconv.AppendBool(b, f.Bool())
		case telemetry.FieldString:
			// Line protocol strings are UTF-8; keep what we can.
			s := validUTF8(f.Str)
			b = append(b, '"')
			from := 0
			for j := 0; j < len(s); j++ {
				if e := stringEsc[s[j]]; e != 0 {
					b = append(b, s[from:j]...)
					b = append(b, '\\', e)
					from = j + 1
				}
			}
			b = append(b, s[from:]...)
			b = append(b, '"')
		default:
			return fail(fmt.Errorf("field %q: value %v (%s) has no line-protocol type", f.Key, f.Value(), kindName(f)))
		}
	}
	if len(b) == fieldsAt {
		return b[:start], nil // only values left out: no line
	}
	t := p.Time
	if t.IsZero() {
		t = p.ReceivedAt
	}
	if !t.IsZero() {
		if t.Before(minTime) || t.After(maxTime) {
			return fail(fmt.Errorf("timestamp %s: %w", t.Format(time.RFC3339), errOutOfRange))
		}
		b = append(b, ' ')
		b = strconv.AppendInt(b, t.UnixNano(), 10)
	}
	return append(b, '\n'), nil
}

// nonFinite reports whether s is how weir writes a float NaN or infinity
// (the gnmi collector's "NaN", "+Inf" and "-Inf").
func nonFinite(s string) bool {
	return len(s) <= 4 && (s == "NaN" || s == "+Inf" || s == "-Inf")
}

func kindName(f *telemetry.Field) string {
	switch f.Kind {
	case telemetry.FieldNull:
		return "null"
	case telemetry.FieldInvalid:
		return f.Str
	}
	return "value"
}
