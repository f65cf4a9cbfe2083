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
	b = appendMarshalString(b, ev.Type)
	b = append(b, `,"device":`...)
	b = appendMarshalString(b, ev.Device)
	if ev.Object != "" {
		b = append(b, `,"object":`...)
		b = appendMarshalString(b, ev.Object)
	}
	if ev.Severity != "" {
		b = append(b, `,"severity":`...)
		b = appendMarshalString(b, ev.Severity)
	}
	if ev.Message != "" {
		b = append(b, `,"message":`...)
		b = appendMarshalString(b, ev.Message)
	}
	if len(ev.Tags) > 0 {
		b = append(b, `,"tags":{`...)
		keys = sortedKeys(keys, ev.Tags)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendMarshalString(b, k)
			b = append(b, ':')
			b = appendMarshalString(b, ev.Tags[k])
		}
		b = append(b, '}')
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
	b = appendMarshalString(b, ev.Cause.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(ev.Cause.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, ev.Cause.Offset, 10)
	return append(b, '}', '}'), keys, nil
}
