package gnmi

import (
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/configs"
)

// scriptServer runs script for each Subscribe stream.
type scriptServer struct {
	gpb.UnimplementedGNMIServer
	subscribes atomic.Int32
	script     func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error
}

func (s *scriptServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	n := int(s.subscribes.Add(1))
	return s.script(n, req, stream)
}

func startScript(t *testing.T, script func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error) (*scriptServer, string) {
	t.Helper()
	s := &scriptServer{script: script}
	return s, serveGNMI(t, s)
}

func sendUpd(stream gpb.GNMI_SubscribeServer, n *gpb.Notification) error {
	return stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}})
}

// TestOnceClosedWithoutSync: a ONCE target that sends its snapshot and
// closes the RPC (OK) without a sync_response is done, not subscribed to
// again at every backoff.
func TestOnceClosedWithoutSync(t *testing.T) {
	s, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		return sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters/in-octets"),
			Val:  &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 1}}}}})
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "o1", Address: addr, Insecure: true, Encoding: "proto",
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "once", "", 0)}}}})
	waitFor(t, 5*time.Second, "the snapshot", func() bool { return len(r.b.metrics(t)) > 0 })
	time.Sleep(time.Second) // test backoffs are milliseconds: a retry would come
	t.Logf("subscribes %d records %d status %+v", s.subscribes.Load(), len(r.b.metrics(t)), r.c.Status())
	if s.subscribes.Load() > 1 {
		t.Errorf("once target subscribed %d times", s.subscribes.Load())
	}
}
