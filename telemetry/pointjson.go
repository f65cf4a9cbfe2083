package telemetry

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
)

// AppendJSON appends p encoded as json.Marshal encodes p.Metric(): the
// value a metric/1 record carries. Tags and Fields must be sorted by key
// with unique keys, as decoding leaves them; a Point whose Fields are
// empty and that was not decoded with a fields object is written with
// "fields":null, as a Metric with nil Fields is.
func (p *Point) AppendJSON(b []byte) ([]byte, error) { return appendPoint(b, p, nil) }

// PointEncoder encodes Points as Point.AppendJSON does, for one goroutine
// writing many. It keeps what it wrote of the Points before, by
// measurement and position: tag and field keys escaped, counter lists,
// times, and the text of recent float values. The rows of one table share
// most of those, and an enriched row's interface view repeats its rates,
// so most of a value is written by copying. The zero PointEncoder is
// ready to use.
type PointEncoder struct {
	shapes    [encoderShapes]encoderShape
	nextShape int
	at        [2]timeText // time and received_at
	floats    floatCache
}

// encoderShapes bounds the measurements a PointEncoder keeps keys for.
const encoderShapes = 4

// encoderShape is what a PointEncoder keeps of the last Point of one
// measurement.
type encoderShape struct {
	measurement          string
	used                 bool
	tagKeys, fieldKeys   keyCache
	counters, counters64 listCache
}

// AppendJSON appends p encoded as p.AppendJSON encodes it.
func (e *PointEncoder) AppendJSON(b []byte, p *Point) ([]byte, error) { return appendPoint(b, p, e) }

// shape returns the keys kept for p's measurement, taking the oldest
// slot for one not kept.
func (e *PointEncoder) shape(measurement string) *encoderShape {
	for i := range e.shapes {
		if sh := &e.shapes[i]; sh.used && sh.measurement == measurement {
			return sh
		}
	}
	sh := &e.shapes[e.nextShape]
	e.nextShape = (e.nextShape + 1) % encoderShapes
	sh.measurement, sh.used = measurement, true
	return sh
}

// keyCache holds the keys of the Point before, escaped with their quotes
// and colon.
type keyCache struct {
	keys []string
	lits [][]byte
}

// maxCachedKeys bounds the keys a keyCache holds; keys past it are
// escaped each time.
const maxCachedKeys = 512

// appendKey appends `"key":` for the i-th key.
func (c *keyCache) appendKey(b []byte, i int, key string) []byte {
	if c == nil || i >= maxCachedKeys {
		return append(AppendMarshalString(b, key), ':')
	}
	if i < len(c.keys) {
		if c.keys[i] == key { // the same string is one pointer comparison
			return append(b, c.lits[i]...)
		}
	} else {
		c.keys = append(c.keys, "")
		c.lits = append(c.lits, nil)
	}
	c.keys[i] = key
	c.lits[i] = append(AppendMarshalString(c.lits[i][:0], key), ':')
	return append(b, c.lits[i]...)
}

// listCache holds a string list of the Point before, encoded.
type listCache struct {
	list []string
	text []byte
}

// appendList appends key (`,"name":[`) and list as appendStringList does.
func (c *listCache) appendList(b []byte, key string, list []string) []byte {
	if c == nil || len(list) == 0 {
		return appendStringList(b, key, list)
	}
	if !slices.Equal(list, c.list) {
		c.list = append(c.list[:0], list...)
		c.text = appendStringList(c.text[:0], key, list)
	}
	return append(b, c.text...)
}

// timeText holds a time of the Point before, encoded: the rows of a poll
// share their time, and a row's interface view both its times.
type timeText struct {
	t    time.Time
	text []byte
	ok   bool
}

func (c *timeText) appendTime(b []byte, t time.Time) ([]byte, error) {
	if c == nil {
		return appendMarshalTime(b, t)
	}
	if !c.ok || c.t != t { // == (not Equal): the same location too, so the same text
		if c.ok {
			start := len(b)
			if b, ok := appendSameSecond(b, c.text, c.t, t); ok {
				c.t, c.text = t, append(c.text[:0], b[start:]...)
				return b, nil
			}
		}
		text, err := appendMarshalTime(c.text[:0], t)
		if err != nil {
			c.ok = false
			return b, err
		}
		c.t, c.text, c.ok = t, text, true
	}
	return append(b, c.text...), nil
}

// floatCache holds the text of recent float values, by their bits: an
// interface row's normalised rates repeat its counters' rates, and its
// view repeats them again, and shortest float formatting is the dearest
// part of writing them.
type floatCache [64]floatText

type floatText struct {
	bits uint64
	n    uint8 // 0: empty
	text [32]byte
}

// appendFloat appends f as appendMarshalFloat does.
func (c *floatCache) appendFloat(b []byte, f float64) ([]byte, error) {
	if c == nil || f == math.Trunc(f) {
		return appendMarshalFloat(b, f) // whole numbers (and NaN, infinities) are cheap
	}
	bits := math.Float64bits(f)
	e := &c[(bits*0x9e3779b97f4a7c15)>>58]
	if e.n != 0 && e.bits == bits {
		return append(b, e.text[:e.n]...), nil
	}
	start := len(b)
	b, err := appendMarshalFloat(b, f)
	if err == nil && len(b)-start <= len(e.text) {
		e.bits, e.n = bits, uint8(copy(e.text[:], b[start:]))
	}
	return b, err
}

// appendPoint writes p, with e's caches when e is not nil.
func appendPoint(b []byte, p *Point, e *PointEncoder) ([]byte, error) {
	var tagKeys, fieldKeys *keyCache
	var counters, counters64 *listCache
	var at, receivedAt *timeText
	var floats *floatCache
	if e != nil {
		sh := e.shape(p.Measurement)
		tagKeys, fieldKeys, counters, counters64 = &sh.tagKeys, &sh.fieldKeys, &sh.counters, &sh.counters64
		at, receivedAt, floats = &e.at[0], &e.at[1], &e.floats
	}
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(p.V), 10)
	b = append(b, `,"measurement":`...)
	b = AppendMarshalString(b, p.Measurement)
	b = append(b, `,"device":`...)
	b = AppendMarshalString(b, p.Device)
	if len(p.Tags) > 0 {
		b = append(b, `,"tags":{`...)
		for i := range p.Tags {
			if i > 0 {
				b = append(b, ',')
			}
			b = tagKeys.appendKey(b, i, p.Tags[i].Key)
			b = AppendMarshalString(b, p.Tags[i].Value)
		}
		b = append(b, '}')
	}
	b = append(b, `,"fields":`...)
	if len(p.Fields) == 0 && !p.hasFields {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i := range p.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			f := &p.Fields[i]
			b = fieldKeys.appendKey(b, i, f.Key)
			var err error
			if b, err = f.appendJSON(b, floats); err != nil {
				return b, err
			}
		}
		b = append(b, '}')
	}
	b = counters.appendList(b, `,"counters":[`, p.Counters)
	b = counters64.appendList(b, `,"counters64":[`, p.Counters64)
	return appendMetricTimes(b, at, receivedAt, p.Time, p.ReceivedAt, p.Uptime, p.Source)
}

// appendJSON writes the field's value as json.Marshal writes Value();
// floats (if not nil) caches float texts.
func (f *Field) appendJSON(b []byte, floats *floatCache) ([]byte, error) {
	switch f.Kind {
	case FieldFloat:
		return floats.appendFloat(b, f.Float())
	case FieldInt:
		return appendInt(b, f.Int()), nil
	case FieldUint:
		return appendUint(b, f.bits), nil
	case FieldBool:
		return strconv.AppendBool(b, f.Bool()), nil
	case FieldString:
		return AppendMarshalString(b, f.Str), nil
	case FieldNull:
		return append(b, "null"...), nil
	}
	return b, errors.New("json: unsupported value: " + f.Str)
}
