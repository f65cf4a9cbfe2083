package gnmi

import (
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestResyncDeleteNotOlderThanTargetsUpdates: a resubscription's made-up
// delete of a path gone while the stream was down is stamped no earlier
// than the target's own updates of it, as the target's own delete would
// be. A target whose clock runs ahead of weir's (30 s here, within the
// drift enrichment believes) stamped the path's last update after weir's
// time of the delete: enrichment takes a delete older than a state's last
// sample for one of the past and keeps the state, so an interface removed
// while the stream was down and made again later was compared with its
// state from before (a port-channel made again coming up DOWN raised
// interface_down), and sinks that keep series in time order left the
// delete out.
func TestResyncDeleteNotOlderThanTargetsUpdates(t *testing.T) {
	t.Run("nanoseconds", func(t *testing.T) {
		testResyncDeleteStamp(t, func(t time.Time) int64 { return t.UnixNano() })
	})
	// Some targets stamp milliseconds (see notificationTime).
	t.Run("milliseconds", func(t *testing.T) {
		testResyncDeleteStamp(t, func(t time.Time) int64 { return t.UnixMilli() })
	})
}

func testResyncDeleteStamp(t *testing.T, stamp func(time.Time) int64) {
	const ahead = 30 * time.Second
	a, b := counterPath("Ethernet1"), counterPath("Ethernet2")
	sessions := [][]string{{a, b}, {a}}
	var sent = make(chan struct{}, 2)
	_, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		for _, p := range sessions[min(n, len(sessions))-1] {
			if err := sendUpd(stream, &gpb.Notification{Timestamp: stamp(time.Now().Add(ahead)), Update: []*gpb.Update{{
				Path: mustPath(t, p), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: uint64(n)}}}}}); err != nil {
				return err
			}
		}
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
			return err
		}
		sent <- struct{}{}
		if n == 1 {
			return status.Error(codes.Unavailable, "target going away")
		}
		<-stream.Context().Done()
		return nil
	})
	r := resyncCollector(t, addr, sub(countersPath, "stream", "on_change", 0))
	<-sent
	<-sent
	waitFor(t, 30*time.Second, "the resync's delete", func() bool { return len(deletedPaths(t, r)) > 0 })
	var lastB, del time.Time
	for _, m := range r.b.metrics(t) {
		if m.Tags["name"] != "Ethernet2" {
			continue
		}
		if m.Fields["deleted"] == true {
			del = m.Time
		} else if m.Time.After(lastB) {
			lastB = m.Time
		}
	}
	if lastB.IsZero() || del.IsZero() {
		t.Fatalf("update of %s at %v, delete at %v: want both", b, lastB, del)
	}
	if del.Before(lastB) {
		t.Errorf("resync delete of %s stamped %v, %v before the target's last update of it (%v)", b, del, lastB.Sub(del), lastB)
	}
}
