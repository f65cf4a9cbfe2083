package gnmi

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// unreadableServer sends, after one readable update, notifications whose
// updates carry a value weir cannot read: a TypedValue of a kind newer
// than weir's gNMI (an unknown field) and an update with no value at all.
type unreadableServer struct{ gpb.UnimplementedGNMIServer }

func (unreadableServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	future := &gpb.TypedValue{}
	future.ProtoReflect().SetUnknown(protowire.AppendBytes(protowire.AppendTag(nil, 99, protowire.BytesType), []byte("v")))
	path := func(leaf string) *gpb.Path {
		return &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "Ethernet1"}}, {Name: "state"}, {Name: leaf}}}
	}
	for _, n := range []*gpb.Notification{
		{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{Path: path("mtu"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 1500}}}}},
		{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{Path: path("future"), Val: future}, {Path: path("none")}}},
	} {
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
	}
	<-stream.Context().Done()
	return nil
}

// TestUnreadableValuesCountedAndLogged: updates whose value weir cannot
// read give no field; they are counted as dropped (no_value) and logged,
// not lost without a trace while updates_total goes up.
func TestUnreadableValuesCountedAndLogged(t *testing.T) {
	addr := serveGNMI(t, unreadableServer{})
	var logs syncbuf.Buffer
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("odd", addr, sub(countersPath, "stream", "sample", time.Second))}},
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	waitFor(t, 10*time.Second, "the readable update", func() bool { return len(r.b.metrics(t)) == 1 })
	dropped := func() float64 { return testutil.ToFloat64(r.m.Dropped.WithLabelValues("odd", DropNoValue)) }
	waitFor(t, 5*time.Second, "the unreadable updates counted", func() bool { return dropped() == 2 })
	waitFor(t, 5*time.Second, "the unreadable updates logged", func() bool {
		return strings.Contains(logs.String(), "/interfaces/interface[name=Ethernet1]/state/future")
	})
	if n := len(r.b.metrics(t)); n != 1 {
		t.Errorf("%d records; want the readable one only", n)
	}
}

// TestEmptyJSONIsNoValue: a JSON value that carries nothing ({}, null, an
// object of nulls and empty objects) gives no field and no record, and is
// counted as an update with no value (no_value), not skipped silently.
// RFC 7951's [null], the value of a leaf of type empty (section 6.9), is
// a value: the leaf is there, field true.
func TestEmptyJSONIsNoValue(t *testing.T) {
	js := func(s string) *gpb.TypedValue {
		return &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: []byte(s)}}
	}
	ietf := func(s string) *gpb.TypedValue {
		return &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(s)}}
	}
	n := &gpb.Notification{
		Timestamp: 1,
		Prefix:    mustPath(t, "/interfaces/interface[name=Ethernet1]"),
		Update: []*gpb.Update{
			upd(t, "state/counters", js(`{}`)),
			upd(t, "state/description", js(`null`)),
			upd(t, "state/oper-status", ietf(` null `)),
			upd(t, "config", js(`{"a":null,"b":{},"c":{"d":null}}`)),
			upd(t, "subinterfaces", ietf(`{"openconfig-interfaces:subinterface":[{}]}`)),
			upd(t, "hold-time", ietf(`{"openconfig-interfaces:config":{}}`)),
			upd(t, "state/mtu", ietf(`1500`)),
			upd(t, "config/loopback-mode", ietf(`[null]`)),
			upd(t, "ethernet", ietf(`{"state":{"flag":[null],"x":null}}`)),
		},
	}
	ms, skipped := flatten("spine1", n, time.Unix(1, 0))
	if skipped.n != 6 {
		t.Errorf("%d updates counted with no value; want 6 ({}, null, null, the object of nulls, [{}], {config:{}})", skipped.n)
	}
	if skipped.first != n.Update[0] {
		t.Errorf("first skipped update %v; want the {} at state/counters", skipped.first)
	}
	got := map[string]map[string]any{}
	for _, m := range ms {
		if len(m.Fields) == 0 {
			t.Errorf("empty record %+v", m)
		}
		got[m.Tags["path"]] = m.Fields
	}
	want := map[string]map[string]any{
		"/interfaces/interface[name=Ethernet1]/state":    {"mtu": int64(1500)},
		"/interfaces/interface[name=Ethernet1]/config":   {"loopback-mode": true},
		"/interfaces/interface[name=Ethernet1]/ethernet": {"state/flag": true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records %v\nwant %v", got, want)
	}
}
