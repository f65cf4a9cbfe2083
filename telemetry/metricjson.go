package telemetry

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// AppendJSON appends m encoded exactly as json.Marshal encodes a Metric
// (HTML escaping included; gNMI's FuzzFlatten checks the two agree),
// without reflection: encoding is the larger part of a collector's CPU at
// high rates. keys is scratch space for sorting map keys, returned for
// reuse.
func (m *Metric) AppendJSON(b []byte, keys []string) ([]byte, []string, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(m.V), 10)
	b = append(b, `,"measurement":`...)
	b = AppendMarshalString(b, m.Measurement)
	b = append(b, `,"device":`...)
	b = AppendMarshalString(b, m.Device)
	b, keys = appendMarshalTags(b, keys, m.Tags)
	b = append(b, `,"fields":`...)
	if m.Fields == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		keys = sortedKeys(keys, m.Fields)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendMarshalString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendMarshalValue(b, m.Fields[k]); err != nil {
				return b, keys, err
			}
		}
		b = append(b, '}')
	}
	b, err := appendMetricTail(b, m.Counters, m.Counters64, m.Time, m.ReceivedAt, m.Uptime, m.Source)
	return b, keys, err
}

// appendMetricTail writes the members of a metric that follow its fields,
// and closes it.
func appendMetricTail(b []byte, counters, counters64 []string, at, receivedAt time.Time, uptime uint32, source string) ([]byte, error) {
	b = appendStringList(b, `,"counters":[`, counters)
	b = appendStringList(b, `,"counters64":[`, counters64)
	return appendMetricTimes(b, nil, nil, at, receivedAt, uptime, source)
}

// appendMetricTimes writes the members of a metric that follow its
// counter lists, and closes it; c and rc (if not nil) cache the times'
// text.
func appendMetricTimes(b []byte, c, rc *timeText, at, receivedAt time.Time, uptime uint32, source string) ([]byte, error) {
	var err error
	b = append(b, `,"time":`...)
	timeAt := len(b)
	if b, err = c.appendTime(b, at); err != nil {
		return b, err
	}
	timeEnd := len(b)
	b = append(b, `,"received_at":`...)
	if receivedAt == at {
		// Often the same (a poll's time), and == (not Equal) means the
		// same location too, so the same text: copy it.
		b = append(b, b[timeAt:timeEnd]...)
	} else if b, err = rc.appendTime(b, receivedAt); err != nil {
		return b, err
	}
	if uptime != 0 {
		b = append(b, `,"uptime":`...)
		b = appendUint(b, uint64(uptime))
	}
	b = append(b, `,"source":`...)
	b = AppendMarshalString(b, source)
	return append(b, '}'), nil
}

// AppendMarshalTagsField appends tags as the `,"tags":{...}` field that
// json.Marshal writes for an Event's (nothing when there are none), for
// Event.TagsJSON.
func AppendMarshalTagsField(b []byte, tags map[string]string) []byte {
	b, _ = appendMarshalTags(b, nil, tags)
	if b == nil {
		b = []byte{} // set, and empty
	}
	return b
}

// appendMarshalTags writes `,"tags":{...}` as json.Marshal writes a
// map[string]string field with omitempty, keys sorted; keys is scratch.
func appendMarshalTags(b []byte, keys []string, tags map[string]string) ([]byte, []string) {
	if len(tags) == 0 {
		return b, keys
	}
	b = append(b, `,"tags":{`...)
	keys = sortedKeys(keys, tags)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendMarshalString(b, k)
		b = append(b, ':')
		b = AppendMarshalString(b, tags[k])
	}
	return append(b, '}'), keys
}

func appendMarshalTime(b []byte, t time.Time) ([]byte, error) {
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 || t.Year() < 0 || t.Year() > 9999 {
		v, err := json.Marshal(t) // reports the error json.Marshal would
		return append(b, v...), err
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

func appendMarshalValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case int64:
		return appendInt(b, x), nil
	case uint64:
		return appendUint(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return AppendMarshalString(b, x), nil
	case float64:
		return appendMarshalFloat(b, x)
	case json.Number:
		if x != "" && validNumber(string(x)) {
			return append(b, x...), nil
		}
	}
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// appendMarshalFloat writes f as encoding/json writes a float64: the
// shortest 'f' form, or 'e' for very small or large magnitudes with a
// two-digit-at-least exponent trimmed ("1e-07", not "1e-007"); NaN and
// infinities are errors.
func appendMarshalFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		_, err := json.Marshal(f) // the error json.Marshal reports
		return b, err
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 && (f != 0 || !math.Signbit(f)) {
		// An integer: its digits are the shortest form, and AppendInt is
		// several times cheaper than the float algorithm.
		return appendInt(b, int64(f)), nil
	}
	if b, ok := appendShortFloat(b, f); ok {
		return b, nil
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// validNumber reports whether s is a JSON number, as json.Number must be
// to be written as it is.
func validNumber(s string) bool {
	d := lexer{s: s}
	n, ok := d.number()
	return ok && len(n) == len(s)
}

// number reads a JSON number's text: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *lexer) number() (string, bool) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.s) && d.s[d.i] == '-' {
		d.i++
	}
	intStart := d.i
	if n := digits(); n == 0 || n > 1 && d.s[intStart] == '0' {
		return "", false
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return "", false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return "", false
		}
	}
	return d.s[start:d.i], true
}

// appendStringList appends key (`,"name":[`) and the list, nothing when it
// is empty (omitempty).
func appendStringList(b []byte, key string, list []string) []byte {
	if len(list) == 0 {
		return b
	}
	b = append(b, key...)
	for i, c := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendMarshalString(b, c)
	}
	return append(b, ']')
}
