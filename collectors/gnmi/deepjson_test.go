package gnmi

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// deepServer sends one notification of a readable leaf beside a JSON
// value nested depth levels deep ({"a":{"a":...1...}}).
type deepServer struct {
	gpb.UnimplementedGNMIServer
	depth int
}

func (s deepServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	deep := strings.Repeat(`{"a":`, s.depth) + "1" + strings.Repeat("}", s.depth)
	n := &gpb.Notification{Timestamp: time.Now().UnixNano(), Prefix: &gpb.Path{Elem: []*gpb.PathElem{
		{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "Ethernet1"}}, {Name: "state"}}},
		Update: []*gpb.Update{
			{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "mtu"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 1500}}},
			{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "deep"}}}, Val: &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(deep)}}},
		}}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// TestDeeplyNestedJSONDroppedWithAReason: a JSON value nested thousands
// of levels deep (no YANG model nests past a few dozen) is dropped,
// counted no_value and logged saying so; the leaf beside it is published.
// Expanded, naming each leaf by its path cost the square of the depth:
// 54 KB nested 9,000 deep allocated 85 MB and took 60 ms of a core, and a
// 64 MiB notification of such values over a minute.
func TestDeeplyNestedJSONDroppedWithAReason(t *testing.T) {
	addr := serveGNMI(t, deepServer{depth: 9000})
	var logs syncbuf.Buffer
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("deep", addr, sub(countersPath, "stream", "sample", time.Second))}},
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	waitFor(t, 10*time.Second, "the readable leaf", func() bool { return len(r.b.metrics(t)) == 1 })
	waitFor(t, 5*time.Second, "the deep value counted", func() bool {
		return testutil.ToFloat64(r.m.Dropped.WithLabelValues("deep", DropNoValue)) == 1
	})
	waitFor(t, 5*time.Second, "the deep value logged", func() bool {
		return strings.Contains(logs.String(), "JSON nested deeper than 128 levels")
	})
	for _, m := range r.b.metrics(t) {
		if _, ok := m.Fields["mtu"]; !ok || len(m.Fields) != 1 {
			t.Errorf("record %v; want the mtu alone", m.Fields)
		}
	}
}

// TestJSONDepthBound: nesting up to maxJSONDepth is expanded, one level
// more is too deep; brackets inside strings, escaped quotes among them,
// do not count.
func TestJSONDepthBound(t *testing.T) {
	nest := func(d int) string { return strings.Repeat(`{"a":[`, d/2) + "1" + strings.Repeat("]}", d/2) }
	if jsonTooDeep([]byte(nest(maxJSONDepth))) {
		t.Errorf("depth %d refused", maxJSONDepth)
	}
	if !jsonTooDeep([]byte(nest(maxJSONDepth + 2))) {
		t.Errorf("depth %d taken", maxJSONDepth+2)
	}
	if s := `{"x":"\"` + strings.Repeat("{[", maxJSONDepth) + `"}`; jsonTooDeep([]byte(s)) {
		t.Errorf("brackets in a string counted: %s", s)
	}
	ms := Flatten("d", &gpb.Notification{Timestamp: 1, Update: []*gpb.Update{{
		Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "x"}}},
		Val:  &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: []byte(strings.Repeat(`{"a":`, maxJSONDepth) + "1" + strings.Repeat("}", maxJSONDepth))}},
	}}}, time.Unix(1, 0))
	if len(ms) != 1 || len(ms[0].Fields) != 1 {
		t.Errorf("a value nested %d deep gave %v", maxJSONDepth, ms)
	}
}
