package gnmi

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// hugeServer answers every Subscribe with one notification past gRPC's
// receive limit (a whole RIB in one JSON value), as a target that sends
// its snapshot again at each retry.
type hugeServer struct{ gpb.UnimplementedGNMIServer }

func (hugeServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	val := append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), 65<<20)...), `"}`...)
	n := &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
		Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "network-instances"}}},
		Val:  &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: val}}}}}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// TestNotificationPastTheLimitSaysWhat: a notification larger than the
// 64 MiB weir receives fails the session with gRPC's ResourceExhausted,
// which names two numbers and no way out; the error says it is one
// notification and what to subscribe to instead.
func TestNotificationPastTheLimitSaysWhat(t *testing.T) {
	addr := serveGNMI(t, hugeServer{})
	var logs syncbuf.Buffer
	startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("big", addr, sub("/network-instances", "stream", "sample", time.Second))}},
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	waitFor(t, 2*time.Minute, "the session's failure logged", func() bool { return strings.Contains(logs.String(), "ResourceExhausted") })
	if !strings.Contains(logs.String(), "narrower") {
		t.Errorf("the failure does not say what to do:\n%s", logs.String())
	}
}
