package telemetry

import (
	"encoding/base64"
	"encoding/json"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// DecodeLog decodes a Log record value. It takes a fast path for the flat
// objects AppendJSON writes (one string copy of data, fields as substrings)
// and falls back to encoding/json for anything else (unknown keys, unusual
// layouts), so it accepts exactly what json.Unmarshal accepts. A record
// without "facility" or "severity" has them -1, unknown, as a line
// without a PRI.
func DecodeLog(data []byte, l *Log) error {
	_, err := DecodeLogLayout(data, l)
	return err
}

// LogLayout says where DecodeLogLayout found the parts of a record that
// an encoder may copy instead of encoding again: enrichment re-publishes
// every log record whole, and copying its bytes is most of the saving.
type LogLayout struct {
	// Copyable: the fast path decoded the record, every key was
	// distinct and facility and severity were there, so its bytes, with
	// the device value swapped, are the decoded Log.
	Copyable bool
	// DeviceStart and DeviceEnd delimit the quoted "device" value, or
	// are both -1 when the record has none.
	DeviceStart, DeviceEnd int
	// End is the index of the object's closing brace.
	End int
}

// DecodeLogLayout is DecodeLog that also reports the record's layout.
func DecodeLogLayout(data []byte, l *Log) (LogLayout, error) {
	*l = unknownPRI()
	lay := LogLayout{DeviceStart: -1, DeviceEnd: -1}
	if fastDecodeLog(string(data), l, &lay, nil, nil) {
		return lay, nil
	}
	*l = unknownPRI()
	return LogLayout{}, json.Unmarshal(data, l)
}

// DecodeLogLayoutShared is DecodeLogLayout into strings that share data's
// bytes where they can, instead of copies: they are valid only while data
// is unchanged. For a caller done with l before data is reused (enrichment
// encodes its outputs and copies what it keeps), the copy of every record
// was a tenth of its time. The device's time is decoded into *timeSlot,
// which l.Time then points at (valid until the slot is written again):
// allocating it took most records one allocation. Strings with escapes
// are unescaped into *buf, emptied first, and share its bytes likewise
// (valid until the next decode into it): a third of the corpus's records
// have some, and their copies were most of the bytes decoding allocated.
func DecodeLogLayoutShared(data []byte, l *Log, timeSlot *time.Time, buf *[]byte) (LogLayout, error) {
	*l = unknownPRI()
	lay := LogLayout{DeviceStart: -1, DeviceEnd: -1}
	*buf = (*buf)[:0]
	if fastDecodeLog(unsafe.String(unsafe.SliceData(data), len(data)), l, &lay, timeSlot, buf) {
		return lay, nil
	}
	*l = unknownPRI()
	return LogLayout{}, json.Unmarshal(data, l)
}

// unknownPRI is a Log before decoding: a record without "facility" or
// "severity" (a Kafka client's; weir's receiver writes -1 for a line
// without a PRI) has them unknown, not 0, which is kern and emergency.
func unknownPRI() Log { return Log{Facility: -1, Severity: -1} }

// keyFacility and keySeverity are logKeyBit's bits of the PRI's keys,
// which a copyable record must have.
const (
	keyFacility = 1 << 3
	keySeverity = 1 << 4
)

// logKeyBit gives each key of a Log a bit, to tell a repeated key.
func logKeyBit(key string) uint32 {
	switch key {
	case "v":
		return 1 << 0
	case "device":
		return 1 << 1
	case "format":
		return 1 << 2
	case "facility":
		return keyFacility
	case "severity":
		return keySeverity
	case "time":
		return 1 << 5
	case "hostname":
		return 1 << 6
	case "app_name":
		return 1 << 7
	case "proc_id":
		return 1 << 8
	case "msg_id":
		return 1 << 9
	case "structured_data":
		return 1 << 10
	case "sequence":
		return 1 << 11
	case "message":
		return 1 << 12
	case "raw":
		return 1 << 13
	case "raw_bytes":
		return 1 << 14
	case "parse_error":
		return 1 << 15
	case "source_addr":
		return 1 << 16
	case "listener":
		return 1 << 17
	case "received_at":
		return 1 << 18
	case "relay":
		return 1 << 19
	}
	return 0
}

// fastDecodeLog reports false to ask for the slow path. The device's time
// goes into *timeSlot, or a new time.Time when it is nil; strings with
// escapes are unescaped into *buf, or copies of their own when it is nil.
func fastDecodeLog(s string, l *Log, lay *LogLayout, timeSlot *time.Time, buf *[]byte) bool {
	d := lexer{s: s, buf: buf}
	if !d.byte('{') {
		return false
	}
	if d.peek() == '}' {
		d.i++
		d.skipSpace()
		return d.i == len(d.s) // not Copyable: too rare to bother
	}
	var seen uint32
	distinct := true
	for {
		key, ok := d.str()
		if !ok || !d.byte(':') {
			return false
		}
		bit := logKeyBit(key)
		repeated := seen&bit != 0
		distinct = distinct && !repeated
		seen |= bit
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
		case "time":
			t, ok := d.time()
			if !ok {
				return false
			}
			if timeSlot == nil {
				timeSlot = new(time.Time) // only this case allocates
			}
			*timeSlot = t
			l.Time = timeSlot
		case "received_at":
			t, ok := d.time()
			if !ok {
				return false
			}
			l.ReceivedAt = t
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
		case "structured_data":
			if repeated {
				// encoding/json merges a repeated map field.
				return false
			}
			sd, ok := d.structuredData()
			if !ok {
				return false
			}
			l.StructuredData = sd
		default:
			dst := l.stringField(key)
			if dst == nil {
				return false // a key this version does not know
			}
			d.skipSpace()
			start := d.i
			v, ok := d.str()
			if !ok {
				return false
			}
			*dst = v
			if key == "device" {
				lay.DeviceStart, lay.DeviceEnd = start, d.i
			}
		}
		switch d.next() {
		case ',':
			continue
		case '}':
			lay.End = d.i - 1
			d.skipSpace()
			// Without a PRI key the bytes hold no -1 the Log has
			// (see unknownPRI): encoded again, a reader sees it.
			lay.Copyable = distinct && seen&(keyFacility|keySeverity) == keyFacility|keySeverity
			return d.i == len(d.s)
		default:
			return false
		}
	}
}

// stringMap reads an object of strings; a repeated key replaces, as in
// encoding/json. size is the map's first capacity.
func (d *lexer) stringMap(size int) (map[string]string, bool) {
	if !d.byte('{') {
		return nil, false
	}
	out := make(map[string]string, size)
	if d.peek() == '}' {
		d.i++
		return out, true
	}
	for {
		k, ok := d.str()
		if !ok || !d.byte(':') {
			return nil, false
		}
		v, ok := d.str()
		if !ok {
			return nil, false
		}
		out[k] = v
		switch d.next() {
		case ',':
			continue
		case '}':
			return out, true
		default:
			return nil, false
		}
	}
}

// time reads an RFC 3339 time string.
func (d *lexer) time() (time.Time, bool) {
	v, ok := d.str()
	if !ok {
		return time.Time{}, false
	}
	if t, ok := utcTime(v); ok {
		return t, true
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

// daysIn is the count of days of month in year.
func daysIn(month, year int) int {
	if month == 2 {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + (month+month/8)%2
}

// utcTime parses the times AppendJSON writes of UTC ones,
// 2006-01-02T15:04:05[.fraction]Z, into what time.Parse gives for them
// (ok false for any other, left to it): two a record, time.Parse was a
// sixth of decoding one.
func utcTime(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || len(s) > len("2006-01-02T15:04:05.999999999Z") ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	ok := true
	num := func(s string) int {
		n := 0
		for i := 0; i < len(s); i++ {
			c := s[i] - '0'
			ok = ok && c <= 9
			n = n*10 + int(c)
		}
		return n
	}
	year, month, day := num(s[0:4]), num(s[5:7]), num(s[8:10])
	hour, minute, sec := num(s[11:13]), num(s[14:16]), num(s[17:19])
	nsec := 0
	if frac := s[19 : len(s)-1]; frac != "" {
		if len(frac) < 2 || frac[0] != '.' {
			return time.Time{}, false
		}
		nsec = num(frac[1:])
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	if !ok || year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	// Days since 1970-01-01 of the proleptic Gregorian calendar, the
	// year begun in March (H. Hinnant's days_from_civil): time.Date took
	// most of time.Parse's time, normalizing what is valid here already.
	y := year
	if month <= 2 {
		y--
	}
	era := y / 400 // y is not negative
	yoe := y - era*400
	mp := (month + 9) % 12
	doy := (153*mp+2)/5 + day - 1
	days := era*146097 + yoe*365 + yoe/4 - yoe/100 + doy - 719468
	return time.Unix(int64(days)*86400+int64(hour*3600+minute*60+sec), int64(nsec)).UTC(), true
}

// structuredData reads an object of objects of strings, as encoding/json
// decodes it into map[string]map[string]string; anything else (null, other
// value types) is left to encoding/json.
func (d *lexer) structuredData() (map[string]map[string]string, bool) {
	if !d.byte('{') {
		return nil, false
	}
	sd := make(map[string]map[string]string, 1)
	if d.peek() == '}' {
		d.i++
		return sd, true
	}
	for {
		id, ok := d.str()
		if !ok || !d.byte(':') {
			return nil, false
		}
		params, ok := d.stringMap(2)
		if !ok {
			return nil, false
		}
		sd[id] = params // a repeated ID replaces, as in encoding/json
		switch d.next() {
		case ',':
			continue
		case '}':
			return sd, true
		default:
			return nil, false
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
	case "relay":
		return &l.Relay
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
	// buf, when not nil, is where strings with escapes are unescaped,
	// appended: see DecodeLogLayoutShared.
	buf *[]byte
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
	// Most strings are plain ASCII up to their closing quote: one pass
	// over them tells, instead of a search for the quote, one for a
	// backslash and a check of the bytes.
	if end := start + plainPrefix(d.s[start:]); end < len(d.s) && d.s[end] == '"' {
		d.i = end + 1
		return d.s[start:end], true
	}
	return d.unusualStr(start)
}

// unusualStr is str for a string with escapes, control characters or
// bytes outside ASCII, from just after its opening quote.
func (d *lexer) unusualStr(start int) (string, bool) {
	q := strings.IndexByte(d.s[start:], '"')
	if q < 0 {
		return "", false
	}
	v := d.s[start : start+q]
	if bs := strings.IndexByte(v, '\\'); bs >= 0 {
		if hasControl(v[:bs]) {
			// escaped copies the run before the escape as it is: a
			// record copied through (the layout) would not be JSON.
			return "", false
		}
		d.i = start + bs
		return d.escaped(start)
	}
	d.i = start + q + 1
	if printableASCII(v) {
		return v, true
	}
	if hasControl(v) {
		return "", false
	}
	return v, utf8.ValidString(v)
}

// hasControl reports whether s has a control character, which a JSON
// string holds only escaped.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// plainPrefix returns the length of the run of bytes s starts with that a
// JSON string holds as they are: printable ASCII other than '"' and '\\'.
// It tests eight bytes at a time (SWAR).
func plainPrefix(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if flagged := unplainBytes(load8(s[i : i+8])); flagged != 0 {
			return i + bits.TrailingZeros64(flagged)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// printableASCII reports whether s has no control characters and no bytes
// outside ASCII, eight bytes at a time.
func printableASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if controlOrHigh(load8(s[i:i+8])) != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func (d *lexer) escaped(start int) (string, bool) {
	var b []byte
	if d.buf != nil {
		b = *d.buf
	}
	from := len(b)
	if q := strings.IndexByte(d.s[d.i:], '"'); q >= 0 {
		b = slices.Grow(b, d.i-start+q) // at least this long: grow once, mostly
	}
	b = append(b, d.s[start:d.i]...)
	for d.i < len(d.s) {
		if n := plainPrefix(d.s[d.i:]); n > 0 {
			b = append(b, d.s[d.i:d.i+n]...) // a run to copy as it is
			d.i += n
			continue
		}
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			// Bytes nothing writes again: a new slice's, or those
			// of *d.buf past what its strings hold until it is reset.
			v := unsafe.String(unsafe.SliceData(b[from:]), len(b)-from)
			if d.buf != nil {
				*d.buf = b
			}
			return v, utf8.ValidString(v)
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
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
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
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
			b = utf8.AppendRune(b, r)
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
