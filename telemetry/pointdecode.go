package telemetry

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Decoder decodes metric/1 values into Points and event/1 values into
// Events for one goroutine: its scanner's scratch is reused from record to
// record, and it caches the strings that repeat from record to record
// (measurement, tag and field names, devices, tag values, event types), so
// that decoding a record allocates almost nothing. The zero Decoder is
// ready to use; it is not safe for concurrent use.
//
// Its fast paths take the common shape of the values weir writes, about
// five times faster than encoding/json; metrics of a shape it read lately
// (the rows of one table), over twenty-five times (pointshape.go;
// BenchmarkDecodeIFMIBRow). Anything else (unknown or repeated
// keys, nested values, invalid UTF-8, unpaired surrogates, nulls where a
// value is expected) goes to encoding/json, so the result never differs
// from it; fuzz tests check that.
type Decoder struct {
	s     scanner
	strs  map[string]string
	last  []string // the strings of the record before, in order
	nth   int      // strings of this record so far
	raw   [][]byte // the numbers of the fields being decoded, typed once the counters are known
	times [2]timeCache

	// The shapes of values decoded lately, for decodeShaped; and, while
	// a value is decoded token by token, where its values are and
	// whether its tags and fields came sorted.
	shapes      [maxShapes]*pointShape
	lastShape   int // the shape that matched last, tried first
	nextShape   int // the slot the next shape learnt takes
	holes       []hole
	inputSorted bool
	// How shapes did lately: a stream of more shapes than the Decoder
	// keeps (gNMI paths interleaved, say) would pay for trying and
	// learning them on every value, so then shapes rest a while.
	shapeTries, shapeHits, shapesOff int
}

// DecodePoint decodes a metric/1 value into p, reusing p's slices. Fields
// are typed the way the destinations of a metric need them consistently:
// counters (listed in Counters) as int64 (uint64 past its range), every
// other number as float64. JSON has one number type, and a gauge that
// happens to be 5 must not become an integer in one record and a float in
// the next (InfluxDB refuses a field whose type changes). An uptime that
// is no sysUpTime is no error: p has none (see Point.UptimeInvalid).
func (d *Decoder) DecodePoint(v []byte, p *Point) error {
	if d.decodePoint(v, p) {
		return nil
	}
	m, uptimeInvalid, err := decodeMetricJSON(v)
	if err != nil {
		return err
	}
	pointOf(m, p)
	p.uptimeInvalid = uptimeInvalid
	return nil
}

// DecodeEvent decodes an event/1 value into e, as json.Unmarshal into a
// zero Event would.
func (d *Decoder) DecodeEvent(v []byte, e *Event) error {
	*e = Event{}
	if d.decodeEvent(v, e) {
		return nil
	}
	*e = Event{}
	return json.Unmarshal(v, e)
}

// fieldNumber is the kind of a field while it is decoded whose number
// is not typed yet: its bits index Decoder.raw.
const fieldNumber FieldKind = 255

// timeCache remembers the last time string parsed in one position: the
// records of one poll of a device share their time.
type timeCache struct {
	lit []byte
	t   time.Time
}

// internMax bounds the string cache; past it, it starts afresh.
const internMax = 1 << 16

// str returns b as a string, from the cache when it is there. The n-th
// string of a record is first compared with the n-th of the record before:
// names come in the same order record after record, and a comparison is
// cheaper than a hash.
func (d *Decoder) str(b []byte) string {
	n := d.nth
	d.nth++
	if n < len(d.last) && d.last[n] == string(b) {
		return d.last[n]
	}
	s := d.intern(b)
	if n < len(d.last) {
		d.last[n] = s
	} else if n < maxNth {
		d.last = append(d.last, s)
	}
	return s
}

// maxNth bounds the strings of a record compared with the record before.
const maxNth = 64

func (d *Decoder) intern(b []byte) string {
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	if d.strs == nil {
		d.strs = make(map[string]string, 1024)
	} else if len(d.strs) >= internMax {
		clear(d.strs)
	}
	s := string(b)
	d.strs[s] = s
	return s
}

// time parses a JSON string literal (quotes included) as time.Time's
// UnmarshalJSON does (what encoding/json calls).
func (d *Decoder) time(slot int, lit []byte) (time.Time, bool) {
	c := &d.times[slot]
	if c.lit != nil && bytes.Equal(c.lit, lit) {
		return c.t, true
	}
	if c.lit != nil {
		if t, ok := sameSecondTime(lit, c.lit, c.t); ok {
			c.lit = append(c.lit[:0], lit...)
			c.t = t
			return t, true
		}
	}
	var t time.Time
	if err := t.UnmarshalJSON(lit); err != nil {
		return time.Time{}, false
	}
	c.lit = append(c.lit[:0], lit...)
	c.t = t
	return t, true
}

// timeField reads a string value and parses it as a time.
func (d *Decoder) timeField(slot int) (time.Time, bool) {
	s := &d.s
	s.ws()
	if c := &d.times[slot]; c.lit != nil && bytes.HasPrefix(s.b[s.i:], c.lit) {
		// The literal of the record before, quotes included: the same
		// string token, checked then.
		s.i += len(c.lit)
		return c.t, true
	}
	start := s.i
	v, ok := s.str()
	if !ok || s.escapedLast || len(v) == 0 {
		// time.Time gets the literal with its escapes from
		// encoding/json: leave those to it.
		return time.Time{}, false
	}
	return d.time(slot, s.b[start:s.i])
}

// known keys of metric/1 and event/1 values, one bit each, to refuse
// repeated keys (encoding/json merges or overrides them in its own way).
const (
	kV uint32 = 1 << iota
	kMeasurement
	kDevice
	kSource
	kTime
	kReceivedAt
	kUptime
	kTags
	kFields
	kCounters
	kCounters64
	kType
	kObject
	kSeverity
	kMessage
	kCount
	kCause
	kTopic
	kPartition
	kOffset
	kObjectID
)

func (d *Decoder) seen(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return true
	}
	*seen |= bit
	return false
}

// decodePoint decodes a metric/1 value into p, as decodeMetricSlow
// followed by PointOf would; false sends the value to encoding/json.
// A value of the shape of one decoded lately takes the shaped path;
// anything else is read token by token, and its shape learnt.
func (d *Decoder) decodePoint(b []byte, p *Point) bool {
	if d.shapesOff > 0 {
		d.shapesOff--
		return d.decodeTokens(b, p)
	}
	if d.decodeShaped(b, p) {
		d.shapeTally(true)
		return true
	}
	d.shapeTally(false)
	if !d.decodeTokens(b, p) {
		return false
	}
	if d.inputSorted {
		d.learnShape(b, p)
	}
	return true
}

// decodeTokens is decodePoint token by token. It notes where each value
// the shaped path reads is (d.holes), and whether tags and fields came
// sorted (d.inputSorted).
func (d *Decoder) decodeTokens(b []byte, p *Point) bool {
	p.reset()
	s := &d.s
	s.reset(b)
	d.raw = d.raw[:0]
	d.nth = 0
	d.holes = d.holes[:0]
	d.inputSorted = true
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return s.end()
	}
	var seen uint32
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return false
		}
		switch string(key) {
		case "v":
			if d.seen(&seen, kV) {
				return false
			}
			n, ok := s.int(64)
			if !ok {
				return false
			}
			p.V = int(n)
		case "uptime":
			if d.seen(&seen, kUptime) {
				return false
			}
			s.ws()
			start := s.i
			if !d.uptime(p) {
				return false
			}
			d.hole(holeUptime, 0, start)
		case "measurement":
			if d.seen(&seen, kMeasurement) {
				return false
			}
			v, ok := s.str()
			if !ok {
				return false
			}
			p.Measurement = d.str(v)
		case "device":
			if d.seen(&seen, kDevice) {
				return false
			}
			s.ws()
			start := s.i
			v, ok := s.str()
			if !ok {
				return false
			}
			p.Device = d.str(v)
			d.hole(holeDevice, 0, start)
		case "source":
			if d.seen(&seen, kSource) {
				return false
			}
			v, ok := s.str()
			if !ok {
				return false
			}
			p.Source = d.str(v)
		case "time":
			if d.seen(&seen, kTime) {
				return false
			}
			s.ws()
			start := s.i
			if p.Time, ok = d.timeField(0); !ok {
				return false
			}
			d.hole(holeTime, 0, start)
		case "received_at":
			if d.seen(&seen, kReceivedAt) {
				return false
			}
			s.ws()
			start := s.i
			if p.ReceivedAt, ok = d.timeField(1); !ok {
				return false
			}
			d.hole(holeTime, 1, start)
		case "tags":
			if d.seen(&seen, kTags) {
				return false
			}
			if s.null() {
				break
			}
			if !d.tags(&p.Tags) {
				return false
			}
			p.hasTags = true
		case "fields":
			if d.seen(&seen, kFields) {
				return false
			}
			if s.null() {
				break
			}
			if !d.fields(p) {
				return false
			}
			p.hasFields = true
		case "counters":
			if d.seen(&seen, kCounters) || !d.strList(&p.Counters, &p.hasCounters) {
				return false
			}
		case "counters64":
			if d.seen(&seen, kCounters64) || !d.strList(&p.Counters64, &p.hasCounters64) {
				return false
			}
		default:
			return false
		}
		if s.consume('}') {
			break
		}
		if !s.consume(',') {
			return false
		}
	}
	if !s.end() {
		return false
	}
	if !fieldsSorted(p.Fields) {
		d.inputSorted = false
		slices.SortFunc(p.Fields, func(a, b Field) int { return cmp.Compare(a.Key, b.Key) })
	}
	for i := 1; i < len(p.Fields); i++ {
		if p.Fields[i].Key == p.Fields[i-1].Key {
			return false
		}
	}
	markCounters(p, p.Counters, false)
	markCounters(p, p.Counters64, true)
	for i := range p.Fields {
		if f := &p.Fields[i]; f.Kind == fieldNumber && !typeNumber(f, d.raw[f.bits], f.Counter) {
			return false
		}
	}
	return true
}

// tags reads an object of strings into tags, sorted by key.
func (d *Decoder) tags(tags *[]Tag) bool {
	s := &d.s
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		k, ok := s.str()
		if !ok || !s.consume(':') {
			return false
		}
		key := d.str(k)
		s.ws()
		start := s.i
		v, ok := s.str()
		if !ok {
			return false
		}
		d.hole(holeTag, len(*tags), start)
		*tags = append(*tags, Tag{key, d.str(v)})
		if s.consume('}') {
			break
		}
		if !s.consume(',') {
			return false
		}
	}
	t := *tags
	if !tagsSorted(t) {
		d.inputSorted = false
		slices.SortFunc(t, func(a, b Tag) int { return cmp.Compare(a.Key, b.Key) })
	}
	for i := 1; i < len(t); i++ {
		if t[i].Key == t[i-1].Key {
			return false
		}
	}
	return true
}

// fields reads the fields object; numbers are typed once the counters are
// known (they may come after).
func (d *Decoder) fields(p *Point) bool {
	s := &d.s
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		k, ok := s.str()
		if !ok || !s.consume(':') {
			return false
		}
		f := Field{Key: d.str(k)}
		s.ws()
		start := s.i
		n, ok := d.fieldValue(&f)
		if !ok {
			return false
		}
		if n != nil {
			f.Kind, f.bits = fieldNumber, uint64(len(d.raw))
			d.raw = append(d.raw, n)
		}
		d.hole(holeField, len(p.Fields), start)
		p.Fields = append(p.Fields, f)
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// fieldValue reads a field's value into f; a number it returns untyped,
// for the caller to type once it knows whether f is a counter.
func (d *Decoder) fieldValue(f *Field) (num []byte, ok bool) {
	s := &d.s
	if s.i >= len(s.b) {
		return nil, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		f.Kind, f.Str = FieldString, d.str(v)
	case c == 't':
		if !s.lit("true") {
			return nil, false
		}
		f.Kind, f.bits = FieldBool, 1
	case c == 'f':
		if !s.lit("false") {
			return nil, false
		}
		f.Kind = FieldBool
	case c == 'n':
		if !s.lit("null") {
			return nil, false
		}
	default:
		n, ok := s.num()
		if !ok {
			return nil, false
		}
		return n, true
	}
	return nil, true
}

// uptime reads the uptime into p: a TimeTicks, a whole number from 0 to
// 2^32-1 (1.2e3 is 1200). Any other number, a string or a boolean is no
// uptime (0), noted in p.uptimeInvalid; null is none. An object or an
// array it leaves to encoding/json (false), which gives the same.
func (d *Decoder) uptime(p *Point) bool {
	s := &d.s
	from := s.i
	n, ok := s.num()
	if ok {
		p.Uptime, p.uptimeInvalid = uptimeOf(n)
		return true
	}
	s.i = from // num may have read part of a malformed number (-"x")
	s.ws()
	switch {
	case s.lit("null"):
	case s.lit("true"), s.lit("false"):
		p.uptimeInvalid = true
	default:
		if _, ok := s.str(); !ok {
			return false
		}
		p.uptimeInvalid = true
	}
	return true
}

// uptimeOf is the uptime of the JSON number n: its value when that is a
// whole number from 0 to 2^32-1 (a plain one, as weir writes it, read
// first), else 0 and invalid.
func uptimeOf(n []byte) (uptime uint32, invalid bool) {
	if v, err := strconv.ParseUint(view(n), 10, 32); err == nil {
		return uint32(v), false
	}
	if v, ok := parseWhole(n, math.MaxUint32); ok {
		return uint32(v), false
	}
	return 0, true
}

// ParseUptime is the uptime of a record's raw uptime value (a metric's, as
// Decoder.uptime reads it, or a trap's): nothing or null is none; invalid
// when it is no sysUpTime (a whole number from 0 to 2^32-1), 0 then.
func ParseUptime(raw json.RawMessage) (uptime uint32, invalid bool) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return 0, false
	case raw[0] == '-' || raw[0]-'0' <= 9:
		return uptimeOf(raw)
	}
	return 0, true
}

// fieldsSorted and tagsSorted: what weir writes comes sorted already.
func fieldsSorted(f []Field) bool {
	for i := 1; i < len(f); i++ {
		if f[i].Key < f[i-1].Key {
			return false
		}
	}
	return true
}

func tagsSorted(t []Tag) bool {
	for i := 1; i < len(t); i++ {
		if t[i].Key < t[i-1].Key {
			return false
		}
	}
	return true
}

// typeNumber types a field's number as decodeMetricSlow does: a counter
// as int64 (uint64 past its range), anything else as float64.
func typeNumber(f *Field, n []byte, counter bool) bool {
	if counter {
		if i, ok := parseInt(n); ok {
			f.Kind, f.bits = FieldInt, uint64(i)
			return true
		}
		if u, ok := parseUint64(n); ok {
			f.Kind, f.bits = wholeKind(u), u
			return true
		}
		if i, err := strconv.ParseInt(view(n), 10, 64); err == nil {
			f.Kind, f.bits = FieldInt, uint64(i)
			return true
		}
		if u, ok := parseWhole(n, math.MaxUint64); ok {
			// 1000.0, 1e3: a producer's float that is a whole number.
			f.Kind, f.bits = wholeKind(u), u
			return true
		}
	}
	if u, ok := parseUint15(n); ok {
		// Exact in a float64, as ParseFloat would give.
		f.Kind, f.bits = FieldFloat, math.Float64bits(float64(u))
		return true
	}
	x, err := strconv.ParseFloat(view(n), 64)
	if err != nil {
		return false
	}
	f.Kind, f.bits = FieldFloat, math.Float64bits(x)
	return true
}

// parseInt parses -?[0-9]{1,18}, which always fits an int64.
func parseInt(n []byte) (int64, bool) {
	neg := len(n) > 0 && n[0] == '-'
	if neg {
		n = n[1:]
	}
	if len(n) == 0 || len(n) > 18 {
		return 0, false
	}
	var x int64
	for _, c := range n {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = x*10 + int64(c-'0')
	}
	if neg {
		x = -x
	}
	return x, true
}

// parseUint64 parses [0-9]+ into a uint64, false if it overflows.
func parseUint64(n []byte) (uint64, bool) {
	if len(n) == 0 || len(n) > 20 {
		return 0, false
	}
	var x uint64
	for _, c := range n {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if x > (math.MaxUint64-d)/10 {
			return 0, false
		}
		x = x*10 + d
	}
	return x, true
}

// parseWhole parses the JSON number n when its value is a whole number
// from 0 to max, judged from its text, exactly (not from the float64
// nearest it): 1000.0, 1e3, 1.5e3, 9007199254740993.0; and -0.0 as 0, as
// -0 is. A fraction, a negative number or one past max is none. For the
// counters (and uptimes) that producers other than weir's collectors
// write as floats, such as Python's json.dumps: weir writes integers,
// which never come here.
func parseWhole(n []byte, max uint64) (uint64, bool) {
	neg := len(n) > 0 && n[0] == '-'
	if neg {
		n = n[1:]
	}
	i := 0
	for i < len(n) && n[i]-'0' <= 9 {
		i++
	}
	intPart, frac := n[:i], n[:0]
	if i < len(n) && n[i] == '.' {
		j := i + 1
		for j < len(n) && n[j]-'0' <= 9 {
			j++
		}
		frac, i = n[i+1:j], j
	}
	exp := 0
	if i < len(n) && (n[i] == 'e' || n[i] == 'E') {
		i++
		expNeg := i < len(n) && n[i] == '-'
		if i < len(n) && (n[i] == '+' || n[i] == '-') {
			i++
		}
		if i == len(n) {
			return 0, false
		}
		for ; i < len(n); i++ {
			if n[i]-'0' > 9 {
				return 0, false
			}
			if exp < 1e9 { // past any number's digits: saturated
				exp = exp*10 + int(n[i]-'0')
			}
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(n) || len(intPart) == 0 {
		return 0, false
	}
	// The digits are intPart then frac, the decimal point after point
	// of them; lead are zeros, and so are those from end on.
	digit := func(k int) byte {
		if k < len(intPart) {
			return intPart[k]
		}
		return frac[k-len(intPart)]
	}
	total := len(intPart) + len(frac)
	lead := 0
	for lead < total && digit(lead) == '0' {
		lead++
	}
	if lead == total {
		return 0, true // zero, whatever its sign and exponent
	}
	if neg {
		return 0, false
	}
	end := total
	for digit(end-1) == '0' {
		end--
	}
	point := len(intPart) + exp
	if end > point || point-lead > 20 {
		return 0, false // a fraction, or 10^20 or more
	}
	var x uint64
	for k := lead; k < point; k++ {
		var d uint64
		if k < end {
			d = uint64(digit(k) - '0')
		}
		if x > (max-d)/10 {
			return 0, false
		}
		x = x*10 + d
	}
	return x, true
}

// wholeKind is the kind of a counter of value u: FieldInt, FieldUint past
// int64's range.
func wholeKind(u uint64) FieldKind {
	if u <= math.MaxInt64 {
		return FieldInt
	}
	return FieldUint
}

// parseUint15 parses [0-9]{1,15}, exact in a float64.
func parseUint15(n []byte) (uint64, bool) {
	if len(n) == 0 || len(n) > 15 {
		return 0, false
	}
	var x uint64
	for _, c := range n {
		if c < '0' || c > '9' {
			return 0, false
		}
		x = x*10 + uint64(c-'0')
	}
	return x, true
}

// view is b as a string without a copy, for parsing functions only: the
// string must not outlive b's current contents.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// decodeEvent decodes an event/1 value into e (which must be zero), as
// json.Unmarshal would; false sends the value to encoding/json.
func (d *Decoder) decodeEvent(b []byte, e *Event) bool {
	s := &d.s
	s.reset(b)
	d.nth = 0
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return s.end()
	}
	var seen uint32
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return false
		}
		var dst *string
		intern := true
		switch string(key) {
		case "v":
			if d.seen(&seen, kV) {
				return false
			}
			n, ok := s.int(64)
			if !ok {
				return false
			}
			e.V = int(n)
		case "count":
			if d.seen(&seen, kCount) {
				return false
			}
			n, ok := s.int(64)
			if !ok {
				return false
			}
			e.Count = int(n)
		case "type":
			if d.seen(&seen, kType) {
				return false
			}
			dst = &e.Type
		case "device":
			if d.seen(&seen, kDevice) {
				return false
			}
			dst = &e.Device
		case "object":
			if d.seen(&seen, kObject) {
				return false
			}
			dst = &e.Object
		case "object_id":
			if d.seen(&seen, kObjectID) {
				return false
			}
			dst = &e.ObjectID
		case "severity":
			if d.seen(&seen, kSeverity) {
				return false
			}
			dst = &e.Severity
		case "message":
			if d.seen(&seen, kMessage) {
				return false
			}
			dst, intern = &e.Message, false
		case "time":
			if d.seen(&seen, kTime) {
				return false
			}
			if e.Time, ok = d.timeField(0); !ok {
				return false
			}
		case "tags":
			if d.seen(&seen, kTags) {
				return false
			}
			if s.null() {
				break
			}
			if !s.consume('{') {
				return false
			}
			e.Tags = make(map[string]string, 4)
			if s.consume('}') {
				break
			}
			for {
				k, ok := s.str()
				if !ok || !s.consume(':') {
					return false
				}
				key := d.str(k)
				v, ok := s.str()
				if !ok {
					return false
				}
				if _, dup := e.Tags[key]; dup {
					return false
				}
				e.Tags[key] = d.str(v)
				if s.consume('}') {
					break
				}
				if !s.consume(',') {
					return false
				}
			}
		case "cause":
			if d.seen(&seen, kCause) {
				return false
			}
			if !d.cause(&e.Cause) {
				return false
			}
		default:
			return false
		}
		if dst != nil {
			v, ok := s.str()
			if !ok {
				return false
			}
			if intern {
				*dst = d.str(v)
			} else {
				*dst = string(v)
			}
		}
		if s.consume('}') {
			break
		}
		if !s.consume(',') {
			return false
		}
	}
	return s.end()
}

func (d *Decoder) cause(c *Cause) bool {
	s := &d.s
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	var seen uint32
	for {
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return false
		}
		switch string(key) {
		case "topic":
			if d.seen(&seen, kTopic) {
				return false
			}
			v, ok := s.str()
			if !ok {
				return false
			}
			c.Topic = d.str(v)
		case "partition":
			if d.seen(&seen, kPartition) {
				return false
			}
			n, ok := s.int(32)
			if !ok {
				return false
			}
			c.Partition = int32(n)
		case "offset":
			if d.seen(&seen, kOffset) {
				return false
			}
			n, ok := s.int(64)
			if !ok {
				return false
			}
			c.Offset = n
		default:
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// scanner reads JSON tokens; strings with escapes are unescaped into esc,
// which grows for the whole record (slices returned stay valid until the
// next reset).
type scanner struct {
	b           []byte
	i           int
	esc         []byte
	escapedLast bool // the last string read had escapes
}

func (s *scanner) reset(b []byte) {
	s.b, s.i, s.esc = b, 0, s.esc[:0]
}

// end: only white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

func (s *scanner) ws() {
	i, b := s.i, s.b
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	s.i = i
}

func (s *scanner) consume(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return s.consumeAfterSpace(c)
}

func (s *scanner) consumeAfterSpace(c byte) bool {
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

// str reads a string. Control characters and invalid UTF-8 are for
// encoding/json (which replaces invalid bytes), and so are \u escapes of
// surrogates (which it replaces when unpaired).
func (s *scanner) str() ([]byte, bool) {
	s.escapedLast = false
	if !s.consume('"') {
		return nil, false
	}
	b, start := s.b, s.i
	i := start
	ascii := true
	for {
		// Eight plain bytes at a time.
		for i+8 <= len(b) && plain8(b[i:i+8]) {
			i += 8
		}
		if i >= len(b) {
			return nil, false
		}
		c := b[i]
		switch {
		case c == '"':
			v := b[start:i]
			s.i = i + 1
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c == '\\':
			s.i = i
			return s.escaped(start)
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		i++
	}
}

// plain8 reports whether b's 8 bytes are all plain in a JSON string.
func plain8(b []byte) bool { return unplainBytes(binary.LittleEndian.Uint64(b)) == 0 }

func (s *scanner) escaped(start int) ([]byte, bool) {
	s.escapedLast = true
	from := len(s.esc)
	s.esc = append(s.esc, s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			v := s.esc[from:len(s.esc):len(s.esc)]
			if !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			s.esc = append(s.esc, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return nil, false
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			s.esc = append(s.esc, e)
		case 'b':
			s.esc = append(s.esc, '\b')
		case 'f':
			s.esc = append(s.esc, '\f')
		case 'n':
			s.esc = append(s.esc, '\n')
		case 'r':
			s.esc = append(s.esc, '\r')
		case 't':
			s.esc = append(s.esc, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok || utf16.IsSurrogate(r) {
				return nil, false
			}
			s.esc = utf8.AppendRune(s.esc, r)
		default:
			return nil, false
		}
	}
	return nil, false
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.i += 4
	return r, true
}

// num reads a JSON number, with the grammar checked:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) num() ([]byte, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if s.digits() == 0 {
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// plainUint reads a number of one to eighteen digits, no sign, fraction
// or exponent (what counters and most gauges are), with its value; it
// reads nothing and returns false for any other token, valid or not.
func (s *scanner) plainUint() (u uint64, digits int, ok bool) {
	b, i := s.b, s.i
	if i >= len(b) || b[i]-'0' > 9 {
		return 0, 0, false
	}
	start := i
	for i < len(b) && b[i]-'0' <= 9 {
		u = u*10 + uint64(b[i]-'0')
		i++
	}
	digits = i - start
	if digits > 18 || digits > 1 && b[start] == '0' || i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, 0, false
	}
	s.i = i
	return u, digits, true
}

func (s *scanner) digits() int {
	b, i := s.b, s.i
	for i+8 <= len(b) && allDigits(binary.LittleEndian.Uint64(b[i:])) {
		i += 8 // counters run to ten or twenty digits
	}
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	n := i - s.i
	s.i = i
	return n
}

// int reads a number into an integer of bits bits, as encoding/json
// decodes one into an int field (no fraction, no exponent).
func (s *scanner) int(bits int) (int64, bool) {
	n, ok := s.num()
	if !ok {
		return 0, false
	}
	if i, ok := parseInt(n); ok && bits == 64 {
		return i, true
	}
	i, err := strconv.ParseInt(view(n), 10, bits)
	return i, err == nil
}

// decodeMetricSlow decodes a metric with encoding/json, keeping its
// numbers exact, then types the fields the way the destinations need them
// consistently: counters (listed in Counters) as int64 (uint64 past its
// range), every other number as float64. JSON has one number type, and a
// gauge that happens to be 5 must not become an integer in one write and a
// float in the next (InfluxDB refuses a field whose type changes). The
// decoder's fast path gives the same for the values weir writes.
func decodeMetricSlow(v []byte) (*Metric, error) {
	m, _, err := decodeMetricJSON(v)
	return m, err
}

// metricJSON is a Metric as decodeMetricJSON reads it: any uptime value,
// judged as Decoder.uptime judges it (its field hides Metric's).
type metricJSON struct {
	Metric
	Uptime json.RawMessage `json:"uptime"`
}

// decodeMetricJSON is decodeMetricSlow, also saying whether the uptime
// was invalid (see Point.UptimeInvalid): decoded as none.
func decodeMetricJSON(v []byte) (m *Metric, uptimeInvalid bool, err error) {
	w := new(metricJSON)
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(w); err != nil {
		return nil, false, err
	}
	// One value, as json.Unmarshal takes: a Decoder reads the first of a
	// stream and would leave the rest (a second metric) unseen.
	if _, err := d.Token(); err != io.EOF {
		return nil, false, errors.New("data after the metric: one record holds one metric")
	}
	m = &w.Metric
	m.Uptime, uptimeInvalid = ParseUptime(w.Uptime)
	for k, f := range m.Fields {
		n, ok := f.(json.Number)
		if !ok {
			continue
		}
		x, err := typeNumberSlow(k, string(n), m.Counters)
		if err != nil {
			return nil, false, fmt.Errorf("field %s: %w", k, err)
		}
		m.Fields[k] = x
	}
	return m, uptimeInvalid, nil
}

// typeNumberSlow types a field's number for decodeMetricSlow.
func typeNumberSlow(field, n string, counters []string) (any, error) {
	if slices.Contains(counters, field) {
		if i, err := strconv.ParseInt(n, 10, 64); err == nil {
			return i, nil
		}
		if u, ok := parseWhole([]byte(n), math.MaxUint64); ok { // past int64's range too
			if u <= math.MaxInt64 {
				return int64(u), nil
			}
			return u, nil
		}
	}
	return strconv.ParseFloat(n, 64)
}

// markCounters sets Counter (or, wide, Counter64) on p's fields named in
// counters. The collectors write counters sorted, as p's fields are: then
// one merge pass, not a search per name.
func markCounters(p *Point, counters []string, wide bool) {
	mark := func(f *Field) {
		if wide {
			f.Counter64 = true
		} else {
			f.Counter = true
		}
	}
	if !slices.IsSorted(counters) {
		for _, c := range counters {
			if f, ok := p.Field(c); ok {
				mark(f)
			}
		}
		return
	}
	fs, i := p.Fields, 0
	for _, c := range counters {
		for i < len(fs) && fs[i].Key < c {
			i++
		}
		if i < len(fs) && fs[i].Key == c {
			mark(&fs[i])
		}
	}
}

// strList reads null or an array of strings into list, setting has when
// it is an array (Metric tells nil from empty).
func (d *Decoder) strList(list *[]string, has *bool) bool {
	s := &d.s
	if s.null() {
		return true
	}
	if !s.consume('[') {
		return false
	}
	*has = true
	if s.consume(']') {
		return true
	}
	for {
		v, ok := s.str()
		if !ok {
			return false
		}
		*list = append(*list, d.str(v))
		if s.consume(']') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}
