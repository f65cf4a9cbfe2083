package gnmi

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// counterLeaves are OpenConfig's interface counters, 22 of them, as a
// switch sends them every sample.
var counterLeaves = []string{"in-octets", "in-pkts", "in-unicast-pkts", "in-broadcast-pkts", "in-multicast-pkts", "in-discards",
	"in-errors", "in-unknown-protos", "in-fcs-errors", "out-octets", "out-pkts", "out-unicast-pkts", "out-broadcast-pkts",
	"out-multicast-pkts", "out-discards", "out-errors", "carrier-transitions", "last-clear", "in-8021q-frames",
	"out-8021q-frames", "resets", "interface-transitions"}

func ifElems(name string) []*gpb.PathElem {
	return []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": name}}, {Name: "state"}, {Name: "counters"}}
}

// memShapes are notifications as targets send them: the counters under
// a prefix (Arista, the simulator), with whole paths (no prefix), as one
// JSON_IETF object, BGP neighbors with two keys, strings and leaf-lists,
// deletes, and an any_val.
func memShapes() map[string]*gpb.Notification {
	const ts = 1764900000123456789
	prefixed := &gpb.Notification{Timestamp: ts, Prefix: &gpb.Path{Origin: "openconfig", Elem: ifElems("Ethernet12")}}
	whole := &gpb.Notification{Timestamp: ts}
	var js strings.Builder
	js.WriteString("{")
	for i, c := range counterLeaves {
		v := uint64(1234567890123 + i)
		prefixed.Update = append(prefixed.Update, &gpb.Update{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: c}}},
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: v}}})
		whole.Update = append(whole.Update, &gpb.Update{Path: &gpb.Path{Elem: append(ifElems("Ethernet12"), &gpb.PathElem{Name: c})},
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: v}}})
		if i > 0 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, `"openconfig-interfaces:%s":"%d"`, c, v)
	}
	js.WriteString("}")
	jsonIETF := &gpb.Notification{Timestamp: ts, Prefix: &gpb.Path{Elem: ifElems("Ethernet12")[:2]},
		Update: []*gpb.Update{{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "state"}, {Name: "counters"}}},
			Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(js.String())}}}}}
	bgp := &gpb.Notification{Timestamp: ts, Prefix: &gpb.Path{Target: "leaf1", Elem: []*gpb.PathElem{
		{Name: "network-instances"}, {Name: "network-instance", Key: map[string]string{"name": "default"}},
		{Name: "protocols"}, {Name: "protocol", Key: map[string]string{"identifier": "BGP", "name": "BGP"}}, {Name: "bgp"}, {Name: "neighbors"}}}}
	for i := range 8 {
		nb := &gpb.PathElem{Name: "neighbor", Key: map[string]string{"neighbor-address": fmt.Sprintf("10.0.%d.1", i)}}
		bgp.Update = append(bgp.Update,
			&gpb.Update{Path: &gpb.Path{Elem: []*gpb.PathElem{nb, {Name: "state"}, {Name: "session-state"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "ESTABLISHED"}}},
			&gpb.Update{Path: &gpb.Path{Elem: []*gpb.PathElem{nb, {Name: "afi-safis"}, {Name: "afi-safi", Key: map[string]string{"afi-safi-name": "IPV4_UNICAST"}}, {Name: "state"}, {Name: "prefixes"}, {Name: "received"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: uint64(1000 * i)}}},
			&gpb.Update{Path: &gpb.Path{Elem: []*gpb.PathElem{nb, {Name: "state"}, {Name: "supported-capabilities"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_LeaflistVal{LeaflistVal: &gpb.ScalarArray{Element: []*gpb.TypedValue{
				{Value: &gpb.TypedValue_StringVal{StringVal: "MPBGP"}}, {Value: &gpb.TypedValue_StringVal{StringVal: "ROUTE_REFRESH"}}, {Value: &gpb.TypedValue_StringVal{StringVal: "ADD_PATHS"}}}}}}})
	}
	mixed := &gpb.Notification{Timestamp: ts, Prefix: &gpb.Path{Elem: ifElems("Ethernet1")[:2]},
		Delete: []*gpb.Path{{Elem: []*gpb.PathElem{{Name: "subinterfaces"}, {Name: "subinterface", Key: map[string]string{"index": "100"}}}}},
		Update: []*gpb.Update{
			{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "state"}, {Name: "description"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: strings.Repeat("uplink to spine1 ", 8)}}},
			{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "state"}, {Name: "mtu"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 9214}}},
			{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "state"}, {Name: "rate"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_DecimalVal{DecimalVal: &gpb.Decimal64{Digits: 12345, Precision: 2}}}},
			{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "state"}, {Name: "blob"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_AnyVal{AnyVal: &anypb.Any{TypeUrl: "type.googleapis.com/x.Y", Value: make([]byte, 300)}}}},
			{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "state"}, {Name: "raw"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_BytesVal{BytesVal: make([]byte, 1000)}}},
		}}
	return map[string]*gpb.Notification{"counters under a prefix": prefixed, "counters with whole paths": whole,
		"counters as JSON_IETF": jsonIETF, "BGP neighbors": bgp, "strings, bytes, any and a delete": mixed}
}

// heldPer decodes wire, as gRPC does, count times, and returns the heap
// each decoded notification holds: the bytes its decoding allocated
// (TotalAlloc, which only grows; the heap in use moved with the other
// tests' goroutines freeing theirs, and read negative once), the least
// of five tries, since what other goroutines allocate meanwhile only
// adds to it.
func heldPer(t testing.TB, wire []byte, count int) (float64, *gpb.Notification) {
	held := make([]*gpb.Notification, count)
	least := math.Inf(1)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range held {
			var r gpb.SubscribeResponse
			if err := proto.Unmarshal(wire, &r); err != nil {
				t.Fatal(err)
			}
			held[i] = r.GetUpdate()
		}
		runtime.ReadMemStats(&after)
		least = min(least, float64(after.TotalAlloc-before.TotalAlloc)/float64(count))
	}
	return least, held[0]
}

// TestQueueChargeIsHeldMemory: what a queued notification is charged
// against queue_bytes and queue_memory is close to the heap it holds,
// decoded, whatever its shape: charged by its size as received, a full
// queue of OpenConfig counters held 10 to 15 times its bound.
func TestQueueChargeIsHeldMemory(t *testing.T) {
	for name, n := range memShapes() {
		wire, err := proto.Marshal(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}})
		if err != nil {
			t.Fatal(err)
		}
		per, decoded := heldPer(t, wire, 4000)
		charged := float64(queueCharge(decoded))
		t.Logf("%s: %d bytes received, %.0f held decoded (x%.1f), %.0f charged", name, len(wire), per, per/float64(len(wire)), charged)
		if charged < 0.85*per || charged > 1.3*per {
			t.Errorf("%s: charged %.0f bytes for %.0f held (%.2f of it); want within 0.85 to 1.3", name, charged, per, charged/per)
		}
	}
}

// BenchmarkQueueCharge: the charge of 22 counters under a prefix, beside
// what decoding them costs (the charge is paid per notification on the
// stream's reader).
func BenchmarkQueueCharge(b *testing.B) {
	n := memShapes()["counters under a prefix"]
	wire, _ := proto.Marshal(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}})
	b.Run("charge", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			queueCharge(n)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r gpb.SubscribeResponse
			if err := proto.Unmarshal(wire, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
