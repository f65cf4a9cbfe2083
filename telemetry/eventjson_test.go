package telemetry

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// checkEventJSON: AppendJSON writes what json.Marshal does, with the
// tags encoded on the fly and from TagsJSON.
func checkEventJSON(t *testing.T, ev Event) {
	t.Helper()
	want, werr := json.Marshal(&ev)
	got, _, gerr := ev.AppendJSON(nil, nil)
	if (gerr == nil) != (werr == nil) || gerr == nil && !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON differs from json.Marshal:\n got  %s (%v)\n want %s (%v)", got, gerr, want, werr)
	}
	ev.TagsJSON = AppendMarshalTagsField(nil, ev.Tags)
	got, _, gerr = ev.AppendJSON(nil, nil)
	if (gerr == nil) != (werr == nil) || gerr == nil && !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON with TagsJSON differs from json.Marshal:\n got  %s (%v)\n want %s (%v)", got, gerr, want, werr)
	}
}

func TestEventAppendJSONMatchesEncodingJSON(t *testing.T) {
	now := time.Date(2026, 11, 29, 14, 2, 11, 123456789, time.FixedZone("x", -5*3600))
	for _, ev := range []Event{
		{},
		{V: 1, Type: "interface_down", Device: "edge1", Object: "GigabitEthernet0/1", ObjectID: "Gi0/1", Severity: "error",
			Message: "<html> & \"quotes\" é \u2028", Tags: map[string]string{"site": "lon1", "role": "edge", "a&b": "<x>"},
			Count: 6, Time: now, Cause: Cause{Topic: TopicRawSyslog, Partition: 3, Offset: 1 << 40}},
		{V: 1, Type: "bgp_peer_flapping_cleared", Device: "d", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		checkEventJSON(t, ev)
	}
}

func FuzzEventAppendJSON(f *testing.F) {
	f.Add("interface_down", "edge1", "Gi0/1", "msg <b>", "site", "lon1", 3, int64(42), int64(1764424931))
	f.Fuzz(func(t *testing.T, typ, dev, obj, msg, tk, tv string, count int, off, sec int64) {
		checkEventJSON(t, Event{V: 1, Type: typ, Device: dev, Object: obj, ObjectID: tv + obj, Message: msg,
			Tags: map[string]string{tk: tv}, Count: count, Time: time.Unix(sec, 0).UTC(),
			Cause: Cause{Topic: typ, Partition: int32(count), Offset: off}})
	})
}
