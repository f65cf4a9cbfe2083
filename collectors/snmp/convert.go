package snmp

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/profile"
)

// present reports whether a varbind carries a value (not an exception).
func present(pdu gosnmp.SnmpPDU) bool {
	switch pdu.Type {
	case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView, gosnmp.Null:
		return false
	}
	return pdu.Value != nil
}

// numeric returns the varbind as int64 (signed types) or uint64 (unsigned
// SNMP types), or a float64 for Opaque floats and numeric strings.
func numeric(pdu gosnmp.SnmpPDU) (any, bool) {
	switch v := pdu.Value.(type) {
	case int:
		return int64(v), true
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case uint:
		return uint64(v), true
	case uint8:
		return uint64(v), true
	case uint16:
		return uint64(v), true
	case uint32:
		return uint64(v), true
	case uint64:
		return v, true
	case float32:
		return float64(v), true
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, false // JSON cannot carry them
		}
		return v, true
	case []byte:
		// Some vendors report gauges as DisplayString ("12.5").
		if f, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
	}
	return nil, false
}

// counterValue returns a counter as uint64; counters are never negative.
// One in text (an agent offering a 64-bit counter to SNMPv1 managers as
// an OCTET STRING) must be a whole number that fits, taken exactly: not
// through numeric's float64, which rounds past 2^53.
func counterValue(pdu gosnmp.SnmpPDU) (uint64, bool) {
	switch v := pdu.Value.(type) {
	case []byte:
		n, err := strconv.ParseUint(strings.TrimSpace(string(v)), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	v, ok := numeric(pdu)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case uint64:
		return n, true
	case int64:
		if n >= 0 {
			return uint64(n), true
		}
	case float64:
		// An Opaque float: a whole number within 64 bits (uint64 of
		// one past them is undefined), not a fraction cut off.
		if n >= 0 && n < 1<<64 && n == math.Trunc(n) {
			return uint64(n), true
		}
	}
	return 0, false
}

// text renders a varbind as a string for labels and string fields.
func text(pdu gosnmp.SnmpPDU, m *profile.Metric) string {
	if len(m.Enum) > 0 {
		if v, ok := numeric(pdu); ok {
			var key int64
			switch n := v.(type) {
			case int64:
				key = n
			case uint64:
				key = int64(n)
			}
			if name, ok := m.Enum[key]; ok {
				return name
			}
		}
	}
	switch v := pdu.Value.(type) {
	case []byte:
		return octets(v, m.Format)
	case string:
		if pdu.Type == gosnmp.ObjectIdentifier {
			return strings.TrimPrefix(v, ".")
		}
		return v
	}
	if n, ok := numeric(pdu); ok {
		return fmt.Sprint(n)
	}
	return fmt.Sprint(pdu.Value)
}

// octets renders an OCTET STRING: printable text as is (without trailing
// NULs, which some agents pad with), anything else as hex.
func octets(b []byte, format string) string {
	switch format {
	case "mac":
		return hexJoin(b, ":")
	case "hex":
		return hex.EncodeToString(b)
	case "text":
		return string(b)
	}
	t := strings.TrimRight(string(b), "\x00")
	if utf8.ValidString(t) && printable(t) {
		return t
	}
	return hexJoin(b, ":")
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return false
		}
	}
	return true
}

func hexJoin(b []byte, sep string) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteString(sep)
		}
		sb.WriteString(hex.EncodeToString([]byte{c}))
	}
	return sb.String()
}

// decodeIndex turns a row's OID suffix into index tags. A suffix that does
// not fit the declared index is kept whole under "index", so a row is
// never lost to an agent's odd indexing.
func decodeIndex(suffix string, idx []profile.Index) map[string]string {
	out := map[string]string{}
	if len(idx) == 0 {
		out["index"] = suffix
		return out
	}
	parts := strings.Split(suffix, ".")
	pos := 0
	take := func(n int) ([]string, bool) {
		if n > len(parts)-pos { // not pos+n: a length read from the OID may overflow it
			return nil, false
		}
		s := parts[pos : pos+n]
		pos += n
		return s, true
	}
	for _, ix := range idx {
		switch ix.Type {
		case profile.IndexInt:
			s, ok := take(1)
			if !ok {
				return map[string]string{"index": suffix}
			}
			out[ix.Name] = s[0]
		case profile.IndexIPv4:
			s, ok := take(4)
			if !ok {
				return map[string]string{"index": suffix}
			}
			out[ix.Name] = strings.Join(s, ".")
		case profile.IndexString:
			s, ok := take(1)
			if !ok {
				return map[string]string{"index": suffix}
			}
			n, err := strconv.Atoi(s[0])
			if err != nil || n < 0 {
				return map[string]string{"index": suffix}
			}
			chars, ok := take(n)
			if !ok {
				return map[string]string{"index": suffix}
			}
			out[ix.Name] = subidsText(chars)
		case profile.IndexImpliedString:
			out[ix.Name] = subidsText(parts[pos:])
			pos = len(parts)
		case profile.IndexOID:
			out[ix.Name] = strings.Join(parts[pos:], ".")
			pos = len(parts)
		}
	}
	if pos < len(parts) {
		// More than the index declares (ifDescr.2.5 of an ifIndex
		// table): not row 2, whose values it would overwrite.
		return map[string]string{"index": suffix}
	}
	return out
}

func subidsText(parts []string) string {
	b := make([]byte, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 {
			return strings.Join(parts, ".")
		}
		b = append(b, byte(n))
	}
	return octets(b, "")
}
