package gnmi

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// hugeServer answers every Subscribe with one notification of a value of
// size bytes, past the receive limit (a whole RIB in one JSON value), as
// a target that sends its snapshot again at each retry.
type hugeServer struct {
	gpb.UnimplementedGNMIServer
	size int
}

func (h hugeServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	val := append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), h.size)...), `"}`...)
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
// notification and what to subscribe to instead. The limit is lowered to
// 1 MiB here, as a dial option after weir's: a 65 MiB notification took
// 14 s to two minutes under the race detector on a busy host.
func TestNotificationPastTheLimitSaysWhat(t *testing.T) {
	addr := serveGNMI(t, hugeServer{size: 2 << 20})
	var logs syncbuf.Buffer
	startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("big", addr, sub("/network-instances", "stream", "sample", time.Second))}},
		WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		WithDialOptions(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<20))))
	waitFor(t, 2*time.Minute, "the session's failure logged", func() bool { return strings.Contains(logs.String(), "ResourceExhausted") })
	if !strings.Contains(logs.String(), "narrower") {
		t.Errorf("the failure does not say what to do:\n%s", logs.String())
	}
}
