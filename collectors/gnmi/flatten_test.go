package gnmi

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/proto"

	"github.com/weirnet/weir/telemetry"
)

func mustPath(t testing.TB, s string) *gpb.Path {
	p, err := ParsePath(s, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func upd(t testing.TB, path string, v *gpb.TypedValue) *gpb.Update {
	return &gpb.Update{Path: mustPath(t, path), Val: v}
}

func TestFlattenTypedValues(t *testing.T) {
	recv := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ts := time.Date(2026, 1, 2, 3, 4, 0, 123, time.UTC)
	n := &gpb.Notification{
		Timestamp: ts.UnixNano(),
		Prefix:    mustPath(t, "/interfaces/interface[name=Ethernet1/1]"),
		Update: []*gpb.Update{
			upd(t, "state/counters/in-octets", &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: math.MaxUint64}}),
			upd(t, "state/counters/in-errors", &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: -7}}),
			upd(t, "state/counters/carrier-transitions", &gpb.TypedValue{Value: &gpb.TypedValue_DecimalVal{DecimalVal: &gpb.Decimal64{Digits: 12345, Precision: 2}}}),
			upd(t, "state/mtu", &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 9214}}),
			upd(t, "state/enabled", &gpb.TypedValue{Value: &gpb.TypedValue_BoolVal{BoolVal: true}}),
			upd(t, "state/description", &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "uplink"}}),
			upd(t, "state/ascii", &gpb.TypedValue{Value: &gpb.TypedValue_AsciiVal{AsciiVal: "a"}}),
			upd(t, "state/float", &gpb.TypedValue{Value: &gpb.TypedValue_FloatVal{FloatVal: 1.5}}),
			upd(t, "state/double", &gpb.TypedValue{Value: &gpb.TypedValue_DoubleVal{DoubleVal: 2.25}}),
			upd(t, "state/bytes", &gpb.TypedValue{Value: &gpb.TypedValue_BytesVal{BytesVal: []byte{0, 1, 2, 0xff}}}),
			upd(t, "state/nan", &gpb.TypedValue{Value: &gpb.TypedValue_DoubleVal{DoubleVal: math.NaN()}}),
			upd(t, "state/tpids", &gpb.TypedValue{Value: &gpb.TypedValue_LeaflistVal{LeaflistVal: &gpb.ScalarArray{Element: []*gpb.TypedValue{
				{Value: &gpb.TypedValue_StringVal{StringVal: "TPID_0X8100"}}, {Value: &gpb.TypedValue_StringVal{StringVal: "TPID_0X88A8"}}}}}}),
			upd(t, "state/vlans", &gpb.TypedValue{Value: &gpb.TypedValue_LeaflistVal{LeaflistVal: &gpb.ScalarArray{Element: []*gpb.TypedValue{
				{Value: &gpb.TypedValue_UintVal{UintVal: 10}}, {Value: &gpb.TypedValue_IntVal{IntVal: 20}}}}}}),
		},
	}
	ms := Flatten("spine1", n, recv)
	if len(ms) != 2 {
		t.Fatalf("want 2 metrics (counters, state), got %d: %+v", len(ms), ms)
	}
	byM := map[string]telemetry.Metric{}
	for _, m := range ms {
		byM[m.Measurement] = m
		if m.Device != "spine1" || !m.Time.Equal(ts) || !m.ReceivedAt.Equal(recv) || m.Source != "gnmi" || m.V != 1 || m.Tags["name"] != "Ethernet1/1" {
			t.Errorf("%s: %+v", m.Measurement, m)
		}
	}
	c := byM["interfaces_interface_state_counters"]
	if c.Tags["path"] != "/interfaces/interface[name=Ethernet1/1]/state/counters" {
		t.Errorf("path tag: %q", c.Tags["path"])
	}
	wantC := map[string]any{"in-octets": uint64(math.MaxUint64), "in-errors": int64(-7), "carrier-transitions": 123.45}
	if !reflect.DeepEqual(c.Fields, wantC) {
		t.Errorf("counters fields: %#v", c.Fields)
	}
	if !reflect.DeepEqual(c.Counters, []string{"in-errors", "in-octets"}) {
		t.Errorf("counters: %v", c.Counters)
	}
	// 64 bits wide: a counter going back is reset, not a 32-bit wrap.
	if !reflect.DeepEqual(c.Counters64, c.Counters) {
		t.Errorf("counters64: %v, want %v", c.Counters64, c.Counters)
	}
	s := byM["interfaces_interface_state"]
	wantS := map[string]any{
		"mtu": int64(9214), "enabled": true, "description": "uplink", "ascii": "a", "float": 1.5, "double": 2.25,
		"bytes": "AAEC/w==", "nan": "NaN", "tpids": `["TPID_0X8100","TPID_0X88A8"]`, "vlans": `[10,20]`,
	}
	if !reflect.DeepEqual(s.Fields, wantS) {
		t.Errorf("state fields:\n got %#v\nwant %#v", s.Fields, wantS)
	}
	if len(s.Counters) != 0 {
		t.Errorf("state counters: %v", s.Counters)
	}
	for _, m := range ms {
		if _, err := json.Marshal(m); err != nil {
			t.Errorf("encode %s: %v", m.Measurement, err)
		}
	}
}

func TestFlattenJSON(t *testing.T) {
	recv := time.Now().UTC()
	n := &gpb.Notification{
		// No timestamp: receive time.
		Update: []*gpb.Update{
			{Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{
				JsonVal: []byte(`{"in-octets": 18446744073709551615, "in-errors": -1, "rate": 1.5, "up": true, "name": "x", "tpids": ["a","b"], "nothing": null}`)}}},
			{Path: mustPath(t, "/interfaces/interface[name=Ethernet2]"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{
				JsonIetfVal: []byte(`{"openconfig-interfaces:state": {"counters": {"in-octets": "123", "out-octets": 5}, "oper-status": "UP"}, "subinterfaces": {"subinterface": [{"index": 0, "state": {"enabled": true}}]}}`)}}},
			{Path: mustPath(t, "/system/state/hostname"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: []byte(`"spine1"`)}}},
			{Path: mustPath(t, "/system/state/bad"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: []byte(`{not json`)}}},
		},
	}
	ms := Flatten("d", n, recv)
	byPath := map[string]telemetry.Metric{}
	for _, m := range ms {
		byPath[m.Tags["path"]] = m
		if !m.Time.Equal(recv) {
			t.Errorf("time %v, want receive time", m.Time)
		}
	}
	e1 := byPath["/interfaces/interface[name=Ethernet1]/state/counters"]
	want1 := map[string]any{"in-octets": uint64(math.MaxUint64), "in-errors": int64(-1), "rate": 1.5, "up": true, "name": "x", "tpids": `["a","b"]`}
	if e1.Measurement != "interfaces_interface_state_counters" || !reflect.DeepEqual(e1.Fields, want1) {
		t.Errorf("json: %s %#v", e1.Measurement, e1.Fields)
	}
	e2 := byPath["/interfaces/interface[name=Ethernet2]"]
	want2 := map[string]any{
		"state/counters/in-octets": int64(123), "state/counters/out-octets": int64(5), "state/oper-status": "UP",
	}
	if e2.Measurement != "interfaces_interface" || e2.Tags["name"] != "Ethernet2" || !reflect.DeepEqual(e2.Fields, want2) {
		t.Errorf("json_ietf: %s %v %#v", e2.Measurement, e2.Tags, e2.Fields)
	}
	if !reflect.DeepEqual(e2.Counters, []string{"state/counters/in-octets", "state/counters/out-octets"}) {
		t.Errorf("json_ietf counters: %v", e2.Counters)
	}
	// Its subinterfaces: records of their own (TestFlattenJSONNestedListSplit).
	s0 := byPath["/interfaces/interface[name=Ethernet2]/subinterfaces/subinterface[index=0]"]
	if s0.Tags["name"] != "Ethernet2" || s0.Tags["index"] != "0" || !reflect.DeepEqual(s0.Fields, map[string]any{"index": int64(0), "state/enabled": true}) {
		t.Errorf("json_ietf subinterface: %+v", s0)
	}
	sys := byPath["/system/state"]
	if !reflect.DeepEqual(sys.Fields, map[string]any{"hostname": "spine1", "bad": "{not json"}) {
		t.Errorf("scalar json: %#v", sys.Fields)
	}
}

func TestFlattenDeletesAndTags(t *testing.T) {
	const ts = 1767323040000000001
	n := &gpb.Notification{
		Timestamp: ts,
		Prefix:    &gpb.Path{Origin: "openconfig", Elem: mustPath(t, "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors").Elem},
		Update: []*gpb.Update{
			upd(t, "neighbor[neighbor-address=10.0.0.1]/state/session-state", &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "ESTABLISHED"}}),
		},
		Delete: []*gpb.Path{mustPath(t, "neighbor[neighbor-address=10.0.0.2]")},
	}
	ms := Flatten("d", n, time.Now())
	if len(ms) != 2 {
		t.Fatalf("%+v", ms)
	}
	d, u := ms[0], ms[1] // deletes first, as gNMI applies them
	wantTags := map[string]string{"name": "default", "identifier": "BGP", "protocol_name": "BGP", "neighbor-address": "10.0.0.1",
		"path": "openconfig:/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.1]/state"}
	if u.Measurement != "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor_state" || !reflect.DeepEqual(u.Tags, wantTags) ||
		u.Fields["session-state"] != "ESTABLISHED" {
		t.Errorf("update: %s %v %v", u.Measurement, u.Tags, u.Fields)
	}
	if d.Measurement != "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor" || d.Tags["neighbor-address"] != "10.0.0.2" ||
		!reflect.DeepEqual(d.Fields, map[string]any{"deleted": true}) || d.Time != time.Unix(0, ts).UTC() {
		t.Errorf("delete: %+v", d)
	}
}

// TestFlattenRootPaths: deletes of the root and an update whose container
// elements are empty get measurement "root", never an empty one (which no
// sink can write). FuzzFlatten found the delete.
func TestFlattenRootPaths(t *testing.T) {
	n := &gpb.Notification{Timestamp: 1,
		Update: []*gpb.Update{{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: ""}, {Name: ""}, {Name: "mtu"}}},
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 9000}}}},
		Delete: []*gpb.Path{{Element: []string{""}}, {}}}
	ms := Flatten("dev", n, time.Unix(1, 0))
	if len(ms) != 3 {
		t.Fatalf("%d metrics, want 3: %+v", len(ms), ms)
	}
	for _, m := range ms {
		if m.Measurement != "root" {
			t.Errorf("measurement %q, want root: %+v", m.Measurement, m)
		}
	}
}

// FuzzFlatten feeds arbitrary notifications (and JSON values) to Flatten:
// it must not panic, every field must have a documented type, and every
// record must encode.
func FuzzFlatten(f *testing.F) {
	seed := &gpb.Notification{Timestamp: 5, Prefix: &gpb.Path{Elem: []*gpb.PathElem{{Name: "a", Key: map[string]string{"k": "v"}}}},
		Update: []*gpb.Update{{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "b"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 3}}}},
		Delete: []*gpb.Path{{Element: []string{"x[y=z]", "w"}}}}
	b, _ := proto.Marshal(seed)
	f.Add(b, []byte(`{"a":{"b":[1,2]},"c":[{"d":1e400}]}`))
	f.Add([]byte{}, []byte(`[null]`))
	f.Add([]byte{}, []byte(`null`))
	f.Add([]byte{}, []byte(`{}`))
	f.Add([]byte{}, []byte(`{"a":{"b":null},"c":[{}]}`))
	f.Add([]byte{}, []byte(`{"m:interface":[{"name":"a]\\","counters":{"x":"1"}},{"name":"b","l":[{"id":1}]}],"c":{"":[{"id":2,"v":null}]},"s":3}`))
	f.Add([]byte{}, []byte(`{"x:y":{"z:":1},"":2}`))
	f.Add([]byte{}, []byte(`{"a<b>\u0000\"é\u2028":{"f":-1.5e-7,"g":1e21,"h":123456789.125,"s":"x&y"}}`))
	f.Fuzz(func(t *testing.T, pb, js []byte) {
		var n gpb.Notification
		if proto.Unmarshal(pb, &n) != nil {
			return
		}
		ju := &gpb.Update{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "j"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: js}}}
		// Alone, the JSON update gives records or is counted as giving
		// none (no_value), never both nor neither.
		if ms, skipped := flatten("dev", &gpb.Notification{Update: []*gpb.Update{ju}}, time.Unix(1, 0)); (len(ms) > 0) == (skipped.n == 1) {
			t.Fatalf("%q: %d records, %d updates counted with no value", js, len(ms), skipped.n)
		}
		n.Update = append(n.Update, ju)
		for _, m := range Flatten("dev", &n, time.Unix(1, 0)) {
			if m.Device != "dev" || m.Measurement == "" || len(m.Fields) == 0 {
				t.Fatalf("bad metric %+v", m)
			}
			for k, v := range m.Fields {
				switch v.(type) {
				case int64, uint64, float64, bool, string:
				default:
					t.Fatalf("field %q has type %T", k, v)
				}
			}
			if !sort.StringsAreSorted(m.Counters) {
				t.Fatalf("counters unsorted: %v", m.Counters)
			}
			want, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("encode: %v (%+v)", err, m)
			}
			got, _, err := m.AppendJSON(nil, nil)
			if err != nil || string(got) != string(want) {
				t.Fatalf("Metric.AppendJSON differs from json.Marshal:\n got %s (%v)\nwant %s", got, err, want)
			}
		}
	})
}

func TestQueueBounded(t *testing.T) {
	q := newQueue(maxBatch+10, 1<<30, testBudget(1<<40))
	for i := 0; i < maxBatch+10; i++ {
		if q.push(item{n: &gpb.Notification{Timestamp: int64(i)}}) != pushed {
			t.Fatalf("push %d refused", i)
		}
	}
	if q.push(item{}) == pushed {
		t.Fatal("push past the bound accepted")
	}
	ctx := t.Context()
	b, ok := q.take(ctx, nil, nil)
	if !ok || len(b) != maxBatch || b[0].n.GetTimestamp() != 0 {
		t.Fatalf("first take: %d", len(b))
	}
	b, ok = q.take(ctx, nil, b)
	if !ok || len(b) != 10 || b[0].n.GetTimestamp() != maxBatch {
		t.Fatalf("second take: %d", len(b))
	}
	if q.push(item{}) != pushed {
		t.Fatal("push after draining refused")
	}
}

// TestQueueBoundedByBytes: past its byte bound the queue refuses, an empty
// queue takes one item however large, and taking frees the bytes.
func TestQueueBoundedByBytes(t *testing.T) {
	q := newQueue(100, 1000, testBudget(1<<40))
	if q.push(item{size: 600}) != pushed || q.push(item{size: 400}) != pushed {
		t.Fatal("pushes within the bound refused")
	}
	if q.push(item{size: 1}) == pushed {
		t.Fatal("push past the byte bound accepted")
	}
	taken, ok := q.take(t.Context(), nil, nil)
	if !ok {
		t.Fatal("take")
	}
	// Taken but not published: still counted; an empty queue takes one.
	if q.push(item{size: 10}) != pushed || q.push(item{size: 10}) == pushed {
		t.Fatal("bytes taken for publishing were not counted until released")
	}
	if _, ok := q.take(t.Context(), nil, nil); !ok {
		t.Fatal("take")
	}
	q.release(taken[0].size + taken[1].size + 10)
	if q.push(item{size: 5000}) != pushed {
		t.Fatal("an empty queue refused one large item")
	}
	if q.push(item{size: 1}) == pushed {
		t.Fatal("push behind a large item accepted")
	}
}

// BenchmarkFlattenEncode: one interface's 10 counters (PROTO, as the
// simulator sends them) flattened and encoded; ns/op divided by 10 is the
// cost per update.
func BenchmarkFlattenEncode(b *testing.B) {
	n := &gpb.Notification{Timestamp: time.Now().UnixNano(), Prefix: mustPath(b, "/interfaces/interface[name=Ethernet1]/state/counters")}
	for i, c := range []string{"in-octets", "in-unicast-pkts", "in-multicast-pkts", "in-broadcast-pkts", "in-discards", "in-errors", "out-octets", "out-unicast-pkts", "out-multicast-pkts", "out-discards"} {
		n.Update = append(n.Update, &gpb.Update{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: c}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: uint64(i) << 40}}})
	}
	var buf []byte
	var keys []string
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range Flatten("spine1", n, time.Now()) {
			buf, keys, _ = m.AppendJSON(buf[:0], keys)
		}
	}
}

// TestJSONIETFQuotedCountersAreCounters: JSON_IETF (RFC 7951) quotes every
// 64-bit integer, and OpenConfig's counters are all counter64, so a target
// that follows the RFC sends {"in-octets": "1234"}. Under a counters
// container such a string reads as the number unquoted would, a counter
// (no rates came from such a target); a digit string elsewhere stays text.
func TestJSONIETFQuotedCountersAreCounters(t *testing.T) {
	flatten := func(path, blob string) telemetry.Metric {
		t.Helper()
		ms := Flatten("leaf1", &gpb.Notification{Timestamp: 1, Update: []*gpb.Update{{Path: mustPath(t, path),
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(blob)}}}}}, time.Unix(0, 1))
		if len(ms) != 1 {
			t.Fatalf("%d metrics", len(ms))
		}
		return ms[0]
	}
	for _, path := range []string{"/interfaces/interface[name=Ethernet1]/state/counters", "/interfaces/interface[name=Ethernet1]/state"} {
		prefix := ""
		if !strings.HasSuffix(path, "counters") {
			prefix = "counters/"
		}
		wrap := func(counters string) string {
			if prefix != "" {
				return `{"openconfig-interfaces:counters": ` + counters + `, "description": "12345"}`
			}
			return counters
		}
		quoted := flatten(path, wrap(`{"openconfig-interfaces:in-octets": "1234567890123", "out-octets": "18446744073709551615"}`))
		plain := flatten(path, wrap(`{"openconfig-interfaces:in-octets": 1234567890123, "out-octets": 18446744073709551615}`))
		if !reflect.DeepEqual(quoted.Fields, plain.Fields) || !slices.Equal(quoted.Counters, plain.Counters) || len(quoted.Counters) != 2 {
			t.Errorf("%s: quoted counters %v %#v, unquoted %v %#v", path, quoted.Counters, quoted.Fields, plain.Counters, plain.Fields)
		}
		if prefix != "" && quoted.Fields["description"] != "12345" {
			t.Errorf("%s: a digit string outside counters became %#v", path, quoted.Fields["description"])
		}
	}
}

// TestLastClearIsNoCounter: OpenConfig's counters/last-clear is when the
// counters were last cleared (ns since the epoch), under the counters
// container but no counter: it is a field, not in Counters, so it gets no
// rate; as a leaf or in a JSON object alike.
func TestLastClearIsNoCounter(t *testing.T) {
	ms := Flatten("leaf1", &gpb.Notification{Timestamp: 1, Update: []*gpb.Update{
		{Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters/in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 10}}},
		{Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters/last-clear"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 1764670000000000000}}},
		{Path: mustPath(t, "/interfaces/interface[name=Ethernet2]/state"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{
			JsonIetfVal: []byte(`{"counters": {"in-octets": "10", "last-clear": "1764670000000000000"}}`)}}},
	}}, time.Unix(0, 1))
	for _, m := range ms {
		for _, c := range m.Counters {
			if strings.HasSuffix(c, "last-clear") {
				t.Errorf("%s: last-clear taken for a counter: %v", m.Tags["name"], m.Counters)
			}
		}
		if len(m.Counters) != 1 {
			t.Errorf("%s: counters %v, want in-octets alone", m.Tags["name"], m.Counters)
		}
	}
}

// TestFlattenJSONListByKey: a JSON list of entries (a YANG list: the
// subinterfaces under an interface) is named by each entry's key (the
// record of its path), so a counter is one entry's from sample to sample
// however the target orders them; a list weir finds no key in is named by
// position, and its counters are not marked for rates: the position may
// be another entry in the next sample.
func TestFlattenJSONListByKey(t *testing.T) {
	const eth1 = "/interfaces/interface[name=Ethernet1]"
	note := func(js string) map[string]telemetry.Metric {
		t.Helper()
		n := &gpb.Notification{Timestamp: 1, Update: []*gpb.Update{{Path: mustPath(t, eth1),
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}}}}
		byPath := map[string]telemetry.Metric{}
		for _, m := range Flatten("d", n, time.Now()) {
			byPath[m.Tags["path"]] = m
		}
		return byPath
	}
	a := note(`{"subinterfaces":{"subinterface":[{"index":100,"state":{"counters":{"in-octets":"9000000"}}},{"index":200,"state":{"counters":{"in-octets":"5"}}}]}}`)
	b := note(`{"subinterfaces":{"subinterface":[{"openconfig-interfaces:index":10,"state":{"counters":{"in-octets":"7"}}},{"index":100,"state":{"counters":{"in-octets":"9000100"}}},{"index":200,"state":{"counters":{"in-octets":"6"}}}]}}`)
	const p100, p200, f = eth1 + "/subinterfaces/subinterface[index=100]", eth1 + "/subinterfaces/subinterface[index=200]", "state/counters/in-octets"
	if a[p100].Fields[f] != int64(9000000) || b[p100].Fields[f] != int64(9000100) || a[p200].Fields[f] != int64(5) || b[p200].Fields[f] != int64(6) {
		t.Errorf("entries not named by key:\n%v\n%v", a, b)
	}
	if b10 := b[eth1+"/subinterfaces/subinterface[index=10]"]; !slices.Contains(b[p100].Counters, f) || !slices.Contains(b10.Counters, f) {
		t.Errorf("keyed entries' counters not marked: %v", b)
	}
	// No key weir knows (two entries share "kind"): by position, no rates.
	c := note(`{"things":{"thing":[{"kind":"x","counters":{"hits":"1"}},{"kind":"x","counters":{"hits":"2"}}]}}`)[eth1]
	if c.Fields["things/thing/1/counters/hits"] != int64(2) || len(c.Counters) != 0 {
		t.Errorf("keyless list: fields %v, counters %v", c.Fields, c.Counters)
	}
	// A key value with "]" is escaped as a path escapes it.
	d := note(`{"x":{"y":[{"name":"a]b","v":1}]}}`)
	if d[eth1+`/x/y[name=a\]b]`].Fields["v"] != int64(1) {
		t.Errorf("escaping: %v", d)
	}
}

// TestFlattenTimestampUnits: gNMI timestamps are nanoseconds, but some
// targets send seconds, milliseconds or microseconds (gnmic#169). Read as
// nanoseconds, those are instants of January 1970: Influx and Prometheus
// refuse them, and the enrichment's rates, divided by a few nanoseconds
// where seconds passed, come out 10^3 to 10^9 times too high. No real
// nanosecond stamp is that small, so the unit is told by the magnitude.
func TestFlattenTimestampUnits(t *testing.T) {
	recv := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	for _, c := range []struct {
		unit string
		ts   int64
	}{
		{"ns", at.UnixNano()},
		{"µs", at.UnixMicro()},
		{"ms", at.UnixMilli()},
		{"s", at.Unix()},
	} {
		n := &gpb.Notification{Timestamp: c.ts, Prefix: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters"),
			Update: []*gpb.Update{upd(t, "in-octets", &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 1}})},
			Delete: []*gpb.Path{mustPath(t, "in-errors")}}
		for _, m := range Flatten("spine1", n, recv) {
			if !m.Time.Equal(at) {
				t.Errorf("timestamp %d (%s): %s time %v, want %v", c.ts, c.unit, m.Measurement, m.Time, at)
			}
		}
	}
}

// TestFlattenFloat32: a float_val (32 bits) is the number the target
// meant, 36.6, not its float32's binary expansion widened to 64 bits
// (36.599998474121094), in a field and in a leaf-list alike.
func TestFlattenFloat32(t *testing.T) {
	n := &gpb.Notification{
		Timestamp: 1,
		Prefix:    mustPath(t, "/components/component[name=CPU0]/state/temperature"),
		Update: []*gpb.Update{
			upd(t, "instant", &gpb.TypedValue{Value: &gpb.TypedValue_FloatVal{FloatVal: 36.6}}),
			upd(t, "small", &gpb.TypedValue{Value: &gpb.TypedValue_FloatVal{FloatVal: 0.1}}),
			upd(t, "list", &gpb.TypedValue{Value: &gpb.TypedValue_LeaflistVal{LeaflistVal: &gpb.ScalarArray{Element: []*gpb.TypedValue{
				{Value: &gpb.TypedValue_FloatVal{FloatVal: 0.3}}, {Value: &gpb.TypedValue_FloatVal{FloatVal: 1e-3}}}}}}),
			upd(t, "inf", &gpb.TypedValue{Value: &gpb.TypedValue_FloatVal{FloatVal: float32(math.Inf(-1))}}),
		},
	}
	ms := Flatten("d", n, time.Now())
	if len(ms) != 1 {
		t.Fatalf("want 1 metric, got %+v", ms)
	}
	want := map[string]any{"instant": 36.6, "small": 0.1, "list": "[0.3,0.001]", "inf": "-Inf"}
	if !reflect.DeepEqual(ms[0].Fields, want) {
		t.Errorf("fields:\n got %#v\nwant %#v", ms[0].Fields, want)
	}
}

// TestFlattenJSONTopLevelList: a JSON value at a list's path without keys
// (/interfaces/interface) is the list itself, an array of entries (RFC
// 7951): each entry is a record of its own, its key in the path and
// tags as when the target names the entry in the update's path, its
// counters marked; not one string field holding the whole subtree.
func TestFlattenJSONTopLevelList(t *testing.T) {
	n := &gpb.Notification{Timestamp: 1, Prefix: mustPath(t, "/interfaces"), Update: []*gpb.Update{{Path: mustPath(t, "interface"),
		Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(
			`[{"name":"Ethernet1","state":{"counters":{"in-octets":"5"}}},{"openconfig-interfaces:name":"Ethernet2","state":{"counters":{"in-octets":"7"}}}]`)}}}}}
	ms := Flatten("d", n, time.Now())
	byPath := map[string]telemetry.Metric{}
	for _, m := range ms {
		byPath[m.Tags["path"]] = m
	}
	if len(ms) != 2 {
		t.Fatalf("want a record per entry, got %d: %+v", len(ms), ms)
	}
	for name, want := range map[string]int64{"Ethernet1": 5, "Ethernet2": 7} {
		m := byPath["/interfaces/interface[name="+name+"]"]
		if m.Measurement != "interfaces_interface" || m.Tags["name"] != name || m.Fields["state/counters/in-octets"] != want ||
			!slices.Equal(m.Counters, []string{"state/counters/in-octets"}) {
			t.Errorf("%s: %s %v %v counters %v", name, m.Measurement, m.Tags, m.Fields, m.Counters)
		}
	}
	// Without a key weir knows: the entries by position under the list's
	// name, as inside an object, with no rates.
	n = &gpb.Notification{Timestamp: 1, Update: []*gpb.Update{{Path: mustPath(t, "/things/thing"),
		Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: []byte(`[{"kind":"x","counters":{"hits":1}},{"kind":"x","counters":{"hits":2}}]`)}}}}}
	ms = Flatten("d", n, time.Now())
	if len(ms) != 1 || ms[0].Tags["path"] != "/things" || ms[0].Fields["thing/1/counters/hits"] != int64(2) || len(ms[0].Counters) != 0 {
		t.Errorf("keyless list: %+v", ms)
	}
}

// TestFlattenRepeatedLeafCounterFollowsLastValue: a leaf sent twice in one
// notification keeps its last value, and is listed as a counter as that
// value is: a counter listed with a string value is no counter to
// enrichment (counted in weir_enrich_invalid_counters_total), and an integer sent after a
// string is one.
func TestFlattenRepeatedLeafCounterFollowsLastValue(t *testing.T) {
	u := func(leaf string, v *gpb.TypedValue) *gpb.Update { return upd(t, leaf, v) }
	n := &gpb.Notification{Timestamp: 1, Prefix: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters"), Update: []*gpb.Update{
		u("in-octets", &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 5}}),
		u("in-octets", &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "n/a"}}),
		u("out-octets", &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "n/a"}}),
		u("out-octets", &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 9}}),
	}}
	ms := Flatten("d", n, time.Now())
	if len(ms) != 1 {
		t.Fatalf("%+v", ms)
	}
	m := ms[0]
	if m.Fields["in-octets"] != "n/a" || m.Fields["out-octets"] != uint64(9) || !slices.Equal(m.Counters, []string{"out-octets"}) ||
		!slices.Equal(m.Counters64, []string{"out-octets"}) {
		t.Errorf("fields %v, counters %v, counters64 %v; want counters [out-octets]", m.Fields, m.Counters, m.Counters64)
	}
}

// TestFlattenJSONContainerOfList: a value at a container's path holding a
// keyed YANG list (/interfaces answered with {"interface":[...]}, as a
// target sends a subscription to /interfaces in JSON) gives each entry
// its own record, as the list's own path does and as the path form
// /interfaces/interface[name=X]/... would: tag name, fields below the
// entry, counters marked. So does a list further down containers (the
// root, answered with {"openconfig-interfaces:interfaces":{...}}); the
// container's other leaves stay its fields. A list weir finds no key in
// stays fields by position, and the lists inside an entry stay its fields
// named by their key.
func TestFlattenJSONContainerOfList(t *testing.T) {
	flat := func(path string, ietf bool, js string) map[string]telemetry.Metric {
		t.Helper()
		v := &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: []byte(js)}}
		if ietf {
			v = &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}
		}
		ms, skipped := flatten("d", &gpb.Notification{Timestamp: 1, Update: []*gpb.Update{{Path: mustPath(t, path), Val: v}}}, time.Unix(1, 0))
		if skipped.n != 0 {
			t.Errorf("%s: %d updates counted with no value", path, skipped.n)
		}
		byPath := map[string]telemetry.Metric{}
		for _, m := range ms {
			byPath[m.Tags["path"]] = m
		}
		if len(byPath) != len(ms) {
			t.Errorf("%s: two records of one path: %+v", path, ms)
		}
		return byPath
	}
	const entries = `[{"name":"Ethernet1","state":{"counters":{"in-octets":"5"},"oper-status":"UP"},"subinterfaces":{"subinterface":[{"index":0,"state":{"counters":{"in-octets":"1"}}}]}},` +
		`{"name":"Ethernet2","state":{"counters":{"in-octets":"7"},"oper-status":"DOWN"}}]`
	want := flat("/interfaces/interface", true, entries) // the list at its own path
	if len(want) != 3 {                                  // the two interfaces and Ethernet1's subinterface
		t.Fatalf("the list at its own path: %+v", want)
	}
	e1 := want["/interfaces/interface[name=Ethernet1]"]
	if e1.Measurement != "interfaces_interface" || e1.Tags["name"] != "Ethernet1" || e1.Fields["state/oper-status"] != "UP" ||
		!slices.Equal(e1.Counters, []string{"state/counters/in-octets"}) {
		t.Fatalf("the list at its own path: %+v", e1)
	}
	same := func(what string, got map[string]telemetry.Metric) {
		t.Helper()
		for p, w := range want {
			g, ok := got[p]
			if !ok || g.Measurement != w.Measurement || !reflect.DeepEqual(g.Tags, w.Tags) || !reflect.DeepEqual(g.Fields, w.Fields) || !slices.Equal(g.Counters, w.Counters) {
				t.Errorf("%s: record %s\n got %+v\nwant %+v", what, p, g, w)
			}
		}
	}
	got := flat("/interfaces", false, `{"interface":`+entries+`}`)
	same("/interfaces, json", got)
	if len(got) != 3 {
		t.Errorf("/interfaces, json: %d records, want 3: %+v", len(got), got)
	}
	got = flat("/interfaces", true, `{"openconfig-interfaces:interface":`+entries+`}`)
	same("/interfaces, json_ietf", got)
	got = flat("/", true, `{"openconfig-interfaces:interfaces":{"interface":`+entries+`},"openconfig-system:system":{"state":{"hostname":"spine1"}}}`)
	same("/, json_ietf", got)
	if root := got["/"]; len(got) != 4 || !reflect.DeepEqual(root.Fields, map[string]any{"system/state/hostname": "spine1"}) {
		t.Errorf("/, json_ietf: want the entries and the root's other leaves, got %+v", got)
	}
	// Keyed lists further down, below a container of the update's path:
	// BGP neighbors, with the network instance's and protocol's keys.
	const bgp = "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp"
	got = flat(bgp, true, `{"global":{"state":{"as":65000}},"neighbors":{"neighbor":[{"neighbor-address":"10.0.0.1","state":{"session-state":"ESTABLISHED"}}]}}`)
	n := got[bgp+"/neighbors/neighbor[neighbor-address=10.0.0.1]"]
	if len(got) != 2 || n.Measurement != "network_instances_network_instance_protocols_protocol_bgp_neighbors_neighbor" ||
		n.Tags["neighbor-address"] != "10.0.0.1" || n.Tags["name"] != "default" || n.Fields["state/session-state"] != "ESTABLISHED" ||
		got[bgp].Fields["global/state/as"] != int64(65000) {
		t.Errorf("BGP neighbors under %s: %+v", bgp, got)
	}
	// No key weir knows: the entries by position, fields of the container.
	got = flat("/things", false, `{"thing":[{"kind":"x","counters":{"hits":1}},{"kind":"x","counters":{"hits":2}}]}`)
	if len(got) != 1 || got["/things"].Fields["thing/1/counters/hits"] != int64(2) {
		t.Errorf("keyless list: %+v", got)
	}
}

// TestFlattenJSONNestedListSplit: a keyed list inside a list entry (an
// interface's subinterfaces) is split as a list in a container is, one
// record per nested entry at its own path with the parent's keys and its
// own, so the records are the same whichever level one subscribes at:
// /interfaces, the interface entry, its subinterfaces container or the
// subinterface list itself.
func TestFlattenJSONNestedListSplit(t *testing.T) {
	flat := func(path, js string) map[string]telemetry.Metric {
		t.Helper()
		v := &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js)}}
		ms, skipped := flatten("d", &gpb.Notification{Timestamp: 1, Update: []*gpb.Update{{Path: mustPath(t, path), Val: v}}}, time.Unix(1, 0))
		if skipped.n != 0 {
			t.Errorf("%s: %d updates counted with no value", path, skipped.n)
		}
		byPath := map[string]telemetry.Metric{}
		for _, m := range ms {
			byPath[m.Tags["path"]] = m
		}
		return byPath
	}
	const sub0 = "/interfaces/interface[name=Ethernet1]/subinterfaces/subinterface[index=0]"
	const sub1 = "/interfaces/interface[name=Ethernet1]/subinterfaces/subinterface[index=1]"
	const subs = `[{"index":0,"state":{"counters":{"in-octets":"1"}}},{"index":1,"state":{"counters":{"in-octets":"2"}}}]`
	want := flat("/interfaces/interface[name=Ethernet1]/subinterfaces/subinterface", subs) // the list at its own path
	s0, s1 := want[sub0], want[sub1]
	if len(want) != 2 || s1.Fields["state/counters/in-octets"] != int64(2) || s0.Measurement != "interfaces_interface_subinterfaces_subinterface" ||
		!reflect.DeepEqual(s0.Tags, map[string]string{"name": "Ethernet1", "index": "0", "path": sub0}) ||
		s0.Fields["state/counters/in-octets"] != int64(1) || !slices.Equal(s0.Counters, []string{"state/counters/in-octets"}) {
		t.Fatalf("the subinterface list at its own path: %+v", want)
	}
	for _, c := range []struct{ path, js string }{
		{"/interfaces/interface[name=Ethernet1]/subinterfaces", `{"subinterface":` + subs + `}`},
		{"/interfaces/interface[name=Ethernet1]", `{"name":"Ethernet1","state":{"counters":{"in-octets":"5"}},"subinterfaces":{"subinterface":` + subs + `}}`},
		{"/interfaces", `{"interface":[{"name":"Ethernet1","state":{"counters":{"in-octets":"5"}},"subinterfaces":{"subinterface":` + subs + `}}]}`},
		{"/interfaces/interface", `[{"name":"Ethernet1","state":{"counters":{"in-octets":"5"}},"subinterfaces":{"subinterface":` + subs + `}}]`},
	} {
		got := flat(c.path, c.js)
		for p, w := range want {
			g, ok := got[p]
			if !ok || g.Measurement != w.Measurement || !reflect.DeepEqual(g.Tags, w.Tags) || !reflect.DeepEqual(g.Fields, w.Fields) || !slices.Equal(g.Counters, w.Counters) {
				t.Errorf("at %s: record %s\n got %+v\nwant %+v", c.path, p, g, w)
			}
		}
		if e, ok := got["/interfaces/interface[name=Ethernet1]"]; ok {
			for f := range e.Fields {
				if strings.HasPrefix(f, "subinterfaces/") {
					t.Errorf("at %s: the interface keeps field %s of a subinterface", c.path, f)
				}
			}
			if e.Fields["state/counters/in-octets"] != int64(5) || !slices.Equal(e.Counters, []string{"state/counters/in-octets"}) {
				t.Errorf("at %s: the interface's own record %+v", c.path, e)
			}
		}
	}
}
