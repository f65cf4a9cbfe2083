package telemetry

import "strconv"

// AppendJSON appends ev encoded exactly as json.Marshal encodes an Event,
// without reflection: enrichment encodes an event for about every other
// syslog message. keys is scratch space for sorting the tags, returned
// for reuse.
func (ev *Event) AppendJSON(b []byte, keys []string) ([]byte, []string, error) {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(ev.V), 10)
	b = append(b, `,"type":`...)
	b = AppendMarshalString(b, ev.Type)
	b = append(b, `,"device":`...)
	b = AppendMarshalString(b, ev.Device)
	if ev.Object != "" {
		b = append(b, `,"object":`...)
		b = AppendMarshalString(b, ev.Object)
	}
	if ev.ObjectID != "" {
		b = append(b, `,"object_id":`...)
		b = AppendMarshalString(b, ev.ObjectID)
	}
	if ev.Severity != "" {
		b = append(b, `,"severity":`...)
		b = AppendMarshalString(b, ev.Severity)
	}
	if ev.Message != "" {
		b = append(b, `,"message":`...)
		b = AppendMarshalString(b, ev.Message)
	}
	if ev.TagsJSON != nil {
		b = append(b, ev.TagsJSON...)
	} else {
		b, keys = appendMarshalTags(b, keys, ev.Tags)
	}
	if ev.Count != 0 {
		b = append(b, `,"count":`...)
		b = strconv.AppendInt(b, int64(ev.Count), 10)
	}
	b = append(b, `,"time":`...)
	var err error
	if b, err = appendMarshalTime(b, ev.Time); err != nil {
		return b, keys, err
	}
	b = append(b, `,"cause":{"topic":`...)
	b = AppendMarshalString(b, ev.Cause.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(ev.Cause.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, ev.Cause.Offset, 10)
	return append(b, '}', '}'), keys, nil
}
