package webhook

import (
	"slices"
	"time"

	"github.com/weirnet/weir/telemetry"
)

// The alert encoder's pieces: the same bytes encoding/json writes (HTML
// characters escaped, map keys sorted), without reflection or maps;
// strings through telemetry.AppendMarshalString.

// appendKV appends "k":"v".
func appendKV(b []byte, k, v string) []byte {
	b = telemetry.AppendMarshalString(b, k)
	b = append(b, ':')
	return telemetry.AppendMarshalString(b, v)
}

// appendKVs appends an object of kvs sorted by key.
func appendKVs(b []byte, kvs []kv) []byte {
	b = append(b, '{')
	for i, x := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKV(b, x.k, x.v)
	}
	return append(b, '}')
}

// appendMap appends m as encoding/json does (null for nil).
func appendMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var small [8]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKV(b, k, m[k])
	}
	return append(b, '}')
}

// appendTime appends t as time.Time's MarshalJSON does, failing as it does
// (a year past 9999, an offset past a day).
func appendTime(b []byte, t time.Time) ([]byte, error) {
	out, err := t.AppendText(append(b, '"'))
	if err != nil {
		return b, err
	}
	return append(out, '"'), nil
}
