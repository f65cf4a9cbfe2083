package telemetry

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Point is a metric/1 record decoded flat, for the destinations that only
// walk a metric's tags and fields (InfluxDB, Prometheus, remote write): tags
// and fields are slices sorted by key, field values are typed without
// boxing, and nothing is a map. The framework reuses Points (and their
// slices) from one batch to the next, so a destination must not keep a
// *Point or its slices after Write returns; the strings in it are ordinary
// immutable strings and may be kept.
//
// It holds what decoding the value into Metric would give:
// fields typed the same way (counters as integers, other numbers as
// floats), Metric() rebuilds that Metric and PointOf makes a
// Point of one.
type Point struct {
	V           int
	Measurement string
	Device      string
	// Tags sorted by key, keys unique.
	Tags []Tag
	// Fields sorted by key, keys unique.
	Fields []Field
	// Counters and Counters64 as the record lists them.
	Counters   []string
	Counters64 []string
	Time       time.Time
	ReceivedAt time.Time
	Uptime     uint32
	Source     string

	// Whether the value had tags, fields and counters (possibly empty)
	// rather than none or null: Metric tells nil from empty.
	hasTags, hasFields, hasCounters, hasCounters64 bool
	// uptimeInvalid: the value's uptime was no TimeTicks (see
	// UptimeInvalid).
	uptimeInvalid bool
}

// UptimeInvalid reports whether the decoded value's uptime was no
// sysUpTime (a TimeTicks: a whole number from 0 to 2^32-1), such as -1,
// 1.5, "x", true or 2^32 from a producer other than weir's collectors:
// Uptime is 0 then (unknown), and the rest of the metric is decoded as
// ever. A null or missing uptime is none, not invalid.
func (p *Point) UptimeInvalid() bool { return p.uptimeInvalid }

// Tag is one tag of a Point.
type Tag struct{ Key, Value string }

// FieldKind is the type of a field's value.
type FieldKind uint8

// Field kinds: what Metric's field values hold.
const (
	FieldNull FieldKind = iota
	FieldFloat
	FieldInt
	FieldUint
	FieldBool
	FieldString
	// FieldInvalid only comes from PointOf given a value of another
	// type; Str describes it.
	FieldInvalid
)

// Field is one field of a Point.
type Field struct {
	Key  string
	Kind FieldKind
	// Counter: the key is listed in the metric's Counters (whatever its
	// value's type); Counter64 in its Counters64.
	Counter, Counter64 bool
	bits               uint64 // float64 bits, int64, uint64 or bool
	// Str is the value of a FieldString.
	Str string
}

// FloatField, IntField, UintField, BoolField and StringField make fields.
func FloatField(k string, v float64) Field {
	return Field{Key: k, Kind: FieldFloat, bits: math.Float64bits(v)}
}
func IntField(k string, v int64) Field   { return Field{Key: k, Kind: FieldInt, bits: uint64(v)} }
func UintField(k string, v uint64) Field { return Field{Key: k, Kind: FieldUint, bits: v} }
func StringField(k, v string) Field      { return Field{Key: k, Kind: FieldString, Str: v} }
func BoolField(k string, v bool) Field {
	f := Field{Key: k, Kind: FieldBool}
	if v {
		f.bits = 1
	}
	return f
}

// Float is the value of a FieldFloat.
func (f *Field) Float() float64 { return math.Float64frombits(f.bits) }

// Int is the value of a FieldInt.
func (f *Field) Int() int64 { return int64(f.bits) }

// Uint is the value of a FieldUint.
func (f *Field) Uint() uint64 { return f.bits }

// Bool is the value of a FieldBool.
func (f *Field) Bool() bool { return f.bits != 0 }

// Number is the value as a float64 (booleans 0 or 1); ok is false for
// strings, nulls and invalid values.
func (f *Field) Number() (x float64, ok bool) {
	switch f.Kind {
	case FieldFloat:
		return f.Float(), true
	case FieldInt:
		return float64(f.Int()), true
	case FieldUint:
		return float64(f.bits), true
	case FieldBool:
		return float64(f.bits), true
	}
	return 0, false
}

// Value is the value as Metric holds it: float64, int64, uint64,
// bool, string or nil.
func (f *Field) Value() any {
	switch f.Kind {
	case FieldFloat:
		return f.Float()
	case FieldInt:
		return f.Int()
	case FieldUint:
		return f.bits
	case FieldBool:
		return f.Bool()
	case FieldString:
		return f.Str
	}
	return nil // FieldNull, FieldInvalid
}

// Tag returns the value of tag k.
func (p *Point) Tag(k string) (string, bool) {
	// slices.BinarySearchFunc's search, with one string comparison a
	// step where cmp.Compare makes two: enrichment looks up a dozen tags
	// and fields a row.
	i, j := 0, len(p.Tags)
	for i < j {
		h := int(uint(i+j) >> 1)
		if p.Tags[h].Key < k {
			i = h + 1
		} else {
			j = h
		}
	}
	if i < len(p.Tags) && p.Tags[i].Key == k {
		return p.Tags[i].Value, true
	}
	return "", false
}

// IsDelete reports whether p is a delete: the single field deleted=true,
// as the gNMI collector publishes a path the target removed (with its
// path tag) and enrich the end of an interface's "interface" records.
func (p *Point) IsDelete() bool {
	return len(p.Fields) == 1 && p.Fields[0].Key == "deleted" && p.Fields[0].Kind == FieldBool && p.Fields[0].Bool()
}

// EnsureFields makes p have a fields object even when it has no field:
// AppendJSON then writes "fields":{} rather than null.
func (p *Point) EnsureFields() { p.hasFields = true }

// Field returns field k.
func (p *Point) Field(k string) (*Field, bool) {
	i, j := 0, len(p.Fields) // as Tag searches
	for i < j {
		h := int(uint(i+j) >> 1)
		if p.Fields[h].Key < k {
			i = h + 1
		} else {
			j = h
		}
	}
	if i < len(p.Fields) && p.Fields[i].Key == k {
		return &p.Fields[i], true
	}
	return nil, false
}

// reset empties p for reuse, keeping its slices' storage.
func (p *Point) reset() {
	*p = Point{Tags: p.Tags[:0], Fields: p.Fields[:0], Counters: p.Counters[:0], Counters64: p.Counters64[:0]}
}

// Metric is p as a Metric, as encoding/json would decode the same value
// (nil and empty maps told apart for a decoded Point).
func (p *Point) Metric() *Metric {
	m := &Metric{V: p.V, Measurement: p.Measurement, Device: p.Device, Time: p.Time, ReceivedAt: p.ReceivedAt,
		Uptime: p.Uptime, Source: p.Source}
	if p.hasTags || len(p.Tags) > 0 {
		m.Tags = make(map[string]string, len(p.Tags))
		for _, t := range p.Tags {
			m.Tags[t.Key] = t.Value
		}
	}
	if p.hasFields || len(p.Fields) > 0 {
		m.Fields = make(map[string]any, len(p.Fields))
		for i := range p.Fields {
			m.Fields[p.Fields[i].Key] = p.Fields[i].Value()
		}
	}
	if p.hasCounters || len(p.Counters) > 0 {
		m.Counters = append(make([]string, 0, len(p.Counters)), p.Counters...)
	}
	if p.hasCounters64 || len(p.Counters64) > 0 {
		m.Counters64 = append(make([]string, 0, len(p.Counters64)), p.Counters64...)
	}
	return m
}

// PointOf makes a Point of m, for callers that have a Metric.
// Integer values of any Go integer type become FieldInt or FieldUint,
// float32 FieldFloat; a value of any other type is FieldInvalid.
func PointOf(m *Metric) *Point {
	p := new(Point)
	pointOf(m, p)
	return p
}

func pointOf(m *Metric, p *Point) {
	p.reset()
	p.V, p.Measurement, p.Device, p.Time, p.ReceivedAt, p.Uptime, p.Source =
		m.V, m.Measurement, m.Device, m.Time, m.ReceivedAt, m.Uptime, m.Source
	p.hasTags, p.hasFields, p.hasCounters, p.hasCounters64 = m.Tags != nil, m.Fields != nil, m.Counters != nil, m.Counters64 != nil
	for k, v := range m.Tags {
		p.Tags = append(p.Tags, Tag{k, v})
	}
	slices.SortFunc(p.Tags, func(a, b Tag) int { return cmp.Compare(a.Key, b.Key) })
	for k, v := range m.Fields {
		var f Field
		switch v := v.(type) {
		case nil:
			f = Field{Kind: FieldNull}
		case float64:
			f = FloatField(k, v)
		case float32:
			f = FloatField(k, float64(v))
		case int64:
			f = IntField(k, v)
		case int:
			f = IntField(k, int64(v))
		case int32:
			f = IntField(k, int64(v))
		case int16:
			f = IntField(k, int64(v))
		case int8:
			f = IntField(k, int64(v))
		case uint64:
			f = UintField(k, v)
		case uint:
			f = UintField(k, uint64(v))
		case uint32:
			f = UintField(k, uint64(v))
		case uint16:
			f = UintField(k, uint64(v))
		case uint8:
			f = UintField(k, uint64(v))
		case bool:
			f = BoolField(k, v)
		case string:
			f = StringField(k, v)
		default:
			f = Field{Kind: FieldInvalid, Str: invalidValue(v)}
		}
		f.Key = k
		f.Counter = slices.Contains(m.Counters, k)
		f.Counter64 = slices.Contains(m.Counters64, k)
		p.Fields = append(p.Fields, f)
	}
	slices.SortFunc(p.Fields, func(a, b Field) int { return cmp.Compare(a.Key, b.Key) })
	p.Counters = append(p.Counters, m.Counters...)
	p.Counters64 = append(p.Counters64, m.Counters64...)
}

// invalidValue describes a field value no metric holds, for errors: what
// JSON called it, where it came from JSON.
func invalidValue(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a value of type %T", v)
}
