package sinks

import (
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/weirnet/weir/telemetry"
)

// errSlowPath sends a value the fast decoder does not handle to
// encoding/json.
var errSlowPath = errors.New("not on the fast path")

// decodeMetricFast decodes the common shape of a metric/1 value, as weir's
// collectors write it, about five times faster than encoding/json, which
// is most of a sink's cost per record. Anything else (escapes in strings,
// unknown keys, nested values, invalid UTF-8) returns errSlowPath and the
// caller uses encoding/json, so the result never differs from it.
func decodeMetricFast(b []byte) (*telemetry.Metric, error) {
	s := scanner{b: b}
	m := new(telemetry.Metric)
	var raw [][2][]byte // field name, number text: typed once counters are known
	if !s.consume('{') {
		return nil, errSlowPath
	}
	if s.consume('}') {
		return m, nil
	}
	var seen uint16 // bit per known key
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return nil, errSlowPath
		}
		bit := uint16(1) << keyIndex(key)
		if seen&bit != 0 {
			// A repeated key merges or overrides in encoding/json's
			// own way: leave it to encoding/json.
			return nil, errSlowPath
		}
		seen |= bit
		switch string(key) {
		case "v":
			n, ok := s.num()
			if !ok {
				return nil, errSlowPath
			}
			v, err := strconv.Atoi(string(n))
			if err != nil {
				return nil, errSlowPath
			}
			m.V = v
		case "uptime":
			n, ok := s.num()
			if !ok {
				return nil, errSlowPath
			}
			v, err := strconv.ParseUint(string(n), 10, 32)
			if err != nil {
				return nil, errSlowPath
			}
			m.Uptime = uint32(v)
		case "measurement", "device", "source":
			v, ok := s.str()
			if !ok {
				return nil, errSlowPath
			}
			switch string(key) {
			case "measurement":
				m.Measurement = string(v)
			case "device":
				m.Device = string(v)
			default:
				m.Source = string(v)
			}
		case "time", "received_at":
			v, ok := s.str()
			if !ok {
				return nil, errSlowPath
			}
			t, err := time.Parse(time.RFC3339Nano, string(v))
			if err != nil {
				return nil, errSlowPath
			}
			if string(key) == "time" {
				m.Time = t
			} else {
				m.ReceivedAt = t
			}
		case "tags":
			if s.null() {
				continue
			}
			if !s.consume('{') {
				return nil, errSlowPath
			}
			m.Tags = make(map[string]string, 8)
			if !s.consume('}') {
				for {
					k, ok1 := s.str()
					if !ok1 || !s.consume(':') {
						return nil, errSlowPath
					}
					v, ok2 := s.str()
					if !ok2 {
						return nil, errSlowPath
					}
					if _, dup := m.Tags[string(k)]; dup {
						return nil, errSlowPath
					}
					m.Tags[string(k)] = string(v)
					if s.consume('}') {
						break
					}
					if !s.consume(',') {
						return nil, errSlowPath
					}
				}
			}
		case "fields":
			if s.null() {
				continue
			}
			if !s.consume('{') {
				return nil, errSlowPath
			}
			m.Fields = make(map[string]any, 8)
			if !s.consume('}') {
				for {
					k, ok := s.str()
					if !ok || !s.consume(':') {
						return nil, errSlowPath
					}
					if dupField(m.Fields, raw, k) {
						return nil, errSlowPath
					}
					s.ws()
					if s.i >= len(s.b) {
						return nil, errSlowPath
					}
					switch c := s.b[s.i]; {
					case c == '"':
						v, ok := s.str()
						if !ok {
							return nil, errSlowPath
						}
						m.Fields[string(k)] = string(v)
					case c == 't' || c == 'f':
						if s.lit("true") {
							m.Fields[string(k)] = true
						} else if s.lit("false") {
							m.Fields[string(k)] = false
						} else {
							return nil, errSlowPath
						}
					case c == 'n':
						if !s.lit("null") {
							return nil, errSlowPath
						}
						m.Fields[string(k)] = nil
					default:
						n, ok := s.num()
						if !ok {
							return nil, errSlowPath
						}
						raw = append(raw, [2][]byte{k, n})
					}
					if s.consume('}') {
						break
					}
					if !s.consume(',') {
						return nil, errSlowPath
					}
				}
			}
		case "counters":
			if s.null() {
				continue
			}
			if !s.consume('[') {
				return nil, errSlowPath
			}
			m.Counters = make([]string, 0, 4)
			if !s.consume(']') {
				for {
					v, ok := s.str()
					if !ok {
						return nil, errSlowPath
					}
					m.Counters = append(m.Counters, string(v))
					if s.consume(']') {
						break
					}
					if !s.consume(',') {
						return nil, errSlowPath
					}
				}
			}
		default:
			return nil, errSlowPath
		}
		if s.consume('}') {
			break
		}
		if !s.consume(',') {
			return nil, errSlowPath
		}
	}
	s.ws()
	if s.i != len(s.b) {
		return nil, errSlowPath
	}
	for _, kv := range raw {
		k, n := string(kv[0]), string(kv[1])
		v, err := typeNumber(k, n, m.Counters)
		if err != nil {
			return nil, errSlowPath
		}
		m.Fields[k] = v
	}
	return m, nil
}

var knownKeys = [...]string{"v", "uptime", "measurement", "device", "source", "time", "received_at", "tags", "fields", "counters"}

// keyIndex numbers the known keys (15 for any other).
func keyIndex(k []byte) uint {
	for i, kk := range knownKeys {
		if string(k) == kk {
			return uint(i)
		}
	}
	return 15
}

func dupField(fields map[string]any, raw [][2][]byte, k []byte) bool {
	if _, dup := fields[string(k)]; dup {
		return true
	}
	for _, kv := range raw {
		if string(kv[0]) == string(k) {
			return true
		}
	}
	return false
}

// typeNumber types a field's number as decodeMetric does.
func typeNumber(field, n string, counters []string) (any, error) {
	for _, c := range counters {
		if c == field {
			if i, err := strconv.ParseInt(n, 10, 64); err == nil {
				return i, nil
			}
			if u, err := strconv.ParseUint(n, 10, 64); err == nil {
				return u, nil
			}
			break
		}
	}
	return strconv.ParseFloat(n, 64)
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\t' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) lit(l string) bool {
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

func (s *scanner) null() bool {
	s.ws()
	return s.lit("null")
}

// str reads a string without escapes, control characters or invalid
// UTF-8; anything else is for encoding/json.
func (s *scanner) str() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// num reads a JSON number, with the grammar checked:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) num() ([]byte, bool) {
	s.ws()
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}
