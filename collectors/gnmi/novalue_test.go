package gnmi

import (
	"log/slog"
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
