package telemetry

import (
	"errors"
	"strconv"
)

// AppendJSON appends p encoded as json.Marshal encodes p.Metric(): the
// value a metric/1 record carries. Tags and Fields must be sorted by key
// with unique keys, as decoding leaves them; a Point whose Fields are
// empty and that was not decoded with a fields object is written with
// "fields":null, as a Metric with nil Fields is.
func (p *Point) AppendJSON(b []byte) ([]byte, error) {
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
			b = AppendMarshalString(b, p.Tags[i].Key)
			b = append(b, ':')
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
			b = AppendMarshalString(b, f.Key)
			b = append(b, ':')
			var err error
			if b, err = f.appendJSON(b); err != nil {
				return b, err
			}
		}
		b = append(b, '}')
	}
	return appendMetricTail(b, p.Counters, p.Counters64, p.Time, p.ReceivedAt, p.Uptime, p.Source)
}

// appendJSON writes the field's value as json.Marshal writes Value().
func (f *Field) appendJSON(b []byte) ([]byte, error) {
	switch f.Kind {
	case FieldFloat:
		return appendMarshalFloat(b, f.Float())
	case FieldInt:
		return strconv.AppendInt(b, f.Int(), 10), nil
	case FieldUint:
		return strconv.AppendUint(b, f.bits, 10), nil
	case FieldBool:
		return strconv.AppendBool(b, f.Bool()), nil
	case FieldString:
		return AppendMarshalString(b, f.Str), nil
	case FieldNull:
		return append(b, "null"...), nil
	}
	return b, errors.New("json: unsupported value: " + f.Str)
}
