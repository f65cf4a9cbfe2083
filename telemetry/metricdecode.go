package telemetry

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// DecodeMetric decodes a Metric record value as a json.Decoder with
// UseNumber does (field numbers become json.Number, so counters past 2^53
// stay exact). It takes a fast path for the objects Metric.AppendJSON
// writes (one string copy of data, strings as substrings of it) and falls
// back to encoding/json for anything else (escapes aside, unknown or
// repeated keys, nested field values), so the result never differs.
func DecodeMetric(data []byte, m *Metric) error {
	*m = Metric{}
	if fastDecodeMetric(string(data), m) {
		return nil
	}
	*m = Metric{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(m)
}

// metricKeyBit gives each key of a Metric a bit, to tell a repeated key.
func metricKeyBit(key string) uint16 {
	switch key {
	case "v":
		return 1 << 0
	case "measurement":
		return 1 << 1
	case "device":
		return 1 << 2
	case "tags":
		return 1 << 3
	case "fields":
		return 1 << 4
	case "counters":
		return 1 << 5
	case "time":
		return 1 << 6
	case "received_at":
		return 1 << 7
	case "uptime":
		return 1 << 8
	case "source":
		return 1 << 9
	}
	return 0
}

// fastDecodeMetric reports false to ask for the slow path.
func fastDecodeMetric(s string, m *Metric) bool {
	d := lexer{s: s}
	if !d.byte('{') {
		return false
	}
	if d.peek() == '}' {
		return false // too rare to bother
	}
	var seen uint16
	for {
		key, ok := d.str()
		if !ok || !d.byte(':') {
			return false
		}
		bit := metricKeyBit(key)
		if bit == 0 || seen&bit != 0 {
			return false // unknown, or repeated: encoding/json merges maps
		}
		seen |= bit
		switch key {
		case "v":
			n, ok := d.integer()
			if !ok {
				return false
			}
			m.V = n
		case "uptime":
			d.skipSpace()
			start := d.i
			for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
				d.i++
			}
			if d.i-start > 1 && d.s[start] == '0' {
				return false
			}
			u, err := strconv.ParseUint(d.s[start:d.i], 10, 32)
			if err != nil {
				return false
			}
			m.Uptime = uint32(u)
		case "measurement", "device", "source":
			v, ok := d.str()
			if !ok {
				return false
			}
			switch key {
			case "measurement":
				m.Measurement = v
			case "device":
				m.Device = v
			default:
				m.Source = v
			}
		case "time", "received_at":
			t, ok := d.time()
			if !ok {
				return false
			}
			if key == "time" {
				m.Time = t
			} else {
				m.ReceivedAt = t
			}
		case "tags":
			if d.peek() == 'n' {
				return false // null: left to encoding/json
			}
			tags, ok := d.stringMap(8)
			if !ok {
				return false
			}
			m.Tags = tags
		case "fields":
			if !d.byte('{') {
				return false
			}
			m.Fields = make(map[string]any, 8)
			if d.peek() == '}' {
				d.i++
				break
			}
			for {
				k, ok := d.str()
				if !ok || !d.byte(':') {
					return false
				}
				if _, dup := m.Fields[k]; dup {
					return false
				}
				v, ok := d.scalar()
				if !ok {
					return false
				}
				m.Fields[k] = v
				c := d.next()
				if c == '}' {
					break
				}
				if c != ',' {
					return false
				}
			}
		case "counters":
			if !d.byte('[') {
				return false
			}
			if d.peek() == ']' {
				d.i++
				m.Counters = []string{}
				break
			}
			for {
				v, ok := d.str()
				if !ok {
					return false
				}
				m.Counters = append(m.Counters, v)
				c := d.next()
				if c == ']' {
					break
				}
				if c != ',' {
					return false
				}
			}
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

// scalar reads a string, a number (as json.Number), true, false or null.
func (d *lexer) scalar() (any, bool) {
	switch c := d.peek(); {
	case c == '"':
		return d.str()
	case c == 't' && len(d.s)-d.i >= 4 && d.s[d.i:d.i+4] == "true":
		d.i += 4
		return true, true
	case c == 'f' && len(d.s)-d.i >= 5 && d.s[d.i:d.i+5] == "false":
		d.i += 5
		return false, true
	case c == 'n' && len(d.s)-d.i >= 4 && d.s[d.i:d.i+4] == "null":
		d.i += 4
		return nil, true
	case c == '-' || c >= '0' && c <= '9':
		n, ok := d.number()
		return json.Number(n), ok
	}
	return nil, false
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
