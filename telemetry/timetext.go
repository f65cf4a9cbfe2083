package telemetry

import "time"

// The rows of one poll share their second, and often all but the last
// digits of their received_at: the Decoder and PointEncoder reuse the
// text and the time of the row before when only the fraction of the
// second differs.

// secondPrefix is the length of `"2006-01-02T15:04:05`: a JSON time
// literal up to its seconds.
const secondPrefix = 20

// fraction finds the fraction of the second in an RFC 3339 JSON literal
// (quotes included), as [from, to) after the '.'; ok is false when it has
// none or more than nine digits.
func fraction(lit []byte) (from, to int, ok bool) {
	if len(lit) < secondPrefix+3 || lit[secondPrefix] != '.' {
		return 0, 0, false
	}
	from = secondPrefix + 1
	to = from
	for to < len(lit) && lit[to]-'0' <= 9 {
		to++
	}
	return from, to, to > from && to-from <= 9
}

// nanos reads a fraction's digits as nanoseconds.
func nanos(digits []byte) int {
	n := 0
	for _, c := range digits {
		n = n*10 + int(c-'0')
	}
	for i := len(digits); i < 9; i++ {
		n *= 10
	}
	return n
}

// sameSecondTime is the time of lit when it differs from the cached
// literal (whose time is t) only in the digits of its fraction: t with
// its nanoseconds replaced.
func sameSecondTime(lit, cached []byte, t time.Time) (time.Time, bool) {
	if len(lit) != len(cached) || string(lit[:secondPrefix+1]) != string(cached[:secondPrefix+1]) {
		return time.Time{}, false
	}
	from, to, ok := fraction(lit)
	if !ok {
		return time.Time{}, false
	}
	if cf, ct, ok := fraction(cached); !ok || cf != from || ct != to || string(lit[to:]) != string(cached[to:]) {
		return time.Time{}, false
	}
	return t.Add(time.Duration(nanos(lit[from:to]) - t.Nanosecond())), true
}

// appendSameSecond appends t's JSON text when t is in the second of
// cached, the text of c (same location): cached's text up to the
// seconds, t's fraction, cached's zone.
func appendSameSecond(b, cached []byte, c, t time.Time) ([]byte, bool) {
	if t.Unix() != c.Unix() || t.Location() != c.Location() || len(cached) < secondPrefix+2 {
		return b, false
	}
	zone := secondPrefix
	if cached[zone] == '.' {
		zone++
		for zone < len(cached) && cached[zone]-'0' <= 9 {
			zone++
		}
	}
	b = append(b, cached[:secondPrefix]...)
	if ns := t.Nanosecond(); ns != 0 {
		// RFC 3339 with nanoseconds, trailing zeros dropped, as
		// time.RFC3339Nano writes it.
		var digits [9]byte
		for i := 8; i >= 0; i-- {
			digits[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for digits[n-1] == '0' {
			n--
		}
		b = append(b, '.')
		b = append(b, digits[:n]...)
	}
	return append(b, cached[zone:]...), true
}
