package gnmi

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weirnet/weir/collectors/gnmi/sim"
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

// TestPollTargetAnswersOnlyPolls: a POLL target that sends nothing until it
// is polled (the specification's "on reception of a Poll message, the
// target MUST generate updates"; NX-OS documents it so) is polled, not
// taken for stalled and resubscribed for ever with no data.
func TestPollTargetAnswersOnlyPolls(t *testing.T) {
	s, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		for v := uint64(1); ; v++ {
			r, err := stream.Recv()
			if err != nil {
				return nil
			}
			if r.GetPoll() == nil {
				return status.Error(codes.InvalidArgument, "a POLL subscription takes only Poll requests")
			}
			if err := sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
				Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters/in-octets"),
				Val:  &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: v}}}}}); err != nil {
				return err
			}
			if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
				return err
			}
		}
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "p1", Address: addr, Insecure: true, Encoding: "proto",
		Timeout:       configs.Duration(500 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "poll", "", 200*time.Millisecond)}}}})
	waitFor(t, 5*time.Second, "3 polls answered", func() bool { return len(r.b.metrics(t)) >= 3 })
	if n := s.subscribes.Load(); n != 1 {
		t.Errorf("subscribed %d times, want once: %+v", n, r.c.Status())
	}
}

// TestOnceOpenWithoutSync: a ONCE target that sends its snapshot and then
// neither a sync_response nor the end of the RPC has sent its snapshot
// all the same: weir does not take it for stalled and fetch the snapshot
// again at every backoff (duplicates for ever, each counted as an error).
func TestOnceOpenWithoutSync(t *testing.T) {
	s, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		if err := sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters/in-octets"),
			Val:  &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 1}}}}}); err != nil {
			return err
		}
		<-stream.Context().Done()
		return nil
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "o1", Address: addr, Insecure: true, Encoding: "proto",
		Timeout:       configs.Duration(200 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "once", "", 0)}}}})
	waitFor(t, 5*time.Second, "the snapshot", func() bool { return len(r.b.metrics(t)) > 0 })
	time.Sleep(1500 * time.Millisecond) // several timeouts and test backoffs
	if n := s.subscribes.Load(); n > 1 {
		t.Errorf("once target subscribed %d times, %d records: %+v", n, len(r.b.metrics(t)), r.c.Status())
	}
}

// TestErrorMessageCounted: a target that answers with an in-band Error
// message (gNMI before 0.7, still sent by some) and then closes the RPC is
// counted under the Error's code, and its message is the target's last
// error, not only "stream closed by the target" (Unavailable).
func TestErrorMessageCounted(t *testing.T) {
	_, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		return stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Error{Error: &gpb.Error{Code: uint32(codes.NotFound), Message: "path not found"}}})
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "e1", Address: addr, Insecure: true, Encoding: "proto",
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "stream", "sample", time.Second)}}}})
	waitFor(t, 5*time.Second, "an error counted under NotFound", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("e1", "NotFound")) > 0
	})
	st := r.c.Status()[0]
	if st.LastError == nil || !strings.Contains(st.LastError.Error(), "path not found") {
		t.Errorf("last error %v, want the target's message", st.LastError)
	}
}

// TestSlowPollNotPiledUp: a POLL target slower to answer than
// poll_interval is not sent a Poll at every interval meanwhile: each is a
// full snapshot to send, and they piled up (twenty while one answer took
// a second at a 50 ms interval).
func TestSlowPollNotPiledUp(t *testing.T) {
	var during atomic.Int64 // polls that came while the first was unanswered
	_, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		if _, err := stream.Recv(); err != nil { // the first poll
			return nil
		}
		answering := make(chan struct{})
		go func() {
			for {
				if _, err := stream.Recv(); err != nil {
					return
				}
				select {
				case <-answering:
				default:
					during.Add(1)
				}
			}
		}()
		time.Sleep(time.Second) // twenty intervals
		close(answering)
		if err := sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters/in-octets"),
			Val:  &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 1}}}}}); err != nil {
			return err
		}
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
			return err
		}
		<-stream.Context().Done()
		return nil
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "p1", Address: addr, Insecure: true, Encoding: "proto",
		Timeout:       configs.Duration(10 * time.Second),
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "poll", "", 50*time.Millisecond)}}}})
	waitFor(t, 10*time.Second, "the slow answer", func() bool { return len(r.b.metrics(t)) >= 1 })
	if n := during.Load(); n > 0 {
		t.Errorf("%d more polls sent while the first was unanswered, want none", n)
	}
}

// TestPollAnsweredWithoutSync: a POLL target that answers each Poll with
// its updates and no sync_response is polled again (after a few
// intervals), not left waiting for a sync_response that never comes.
func TestPollAnsweredWithoutSync(t *testing.T) {
	_, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		for v := uint64(1); ; v++ {
			if _, err := stream.Recv(); err != nil {
				return nil
			}
			if err := sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
				Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters/in-octets"),
				Val:  &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: v}}}}}); err != nil {
				return err
			}
		}
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "p1", Address: addr, Insecure: true, Encoding: "proto",
		Timeout:       configs.Duration(10 * time.Second),
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "poll", "", 50*time.Millisecond)}}}})
	waitFor(t, 20*time.Second, "3 polls answered", func() bool { return len(r.b.metrics(t)) >= 3 })
}

// exportedFor reports whether r exports the metric name for target.
func exportedFor(t *testing.T, r *running, name, target string) bool {
	t.Helper()
	_, ok := gathered(t, r.reg, name, target)
	return ok
}

// snapshotOfOne is a target's script that answers with one counter and
// sync_response, as a ONCE subscription's snapshot.
func snapshotOfOne(t *testing.T) func(int, *gpb.SubscribeRequest, gpb.GNMI_SubscribeServer) error {
	return func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		if err := sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters/in-octets"),
			Val:  &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 1}}}}}); err != nil {
			return err
		}
		return stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}})
	}
}

// TestOnceCompleteIsNotDown: a ONCE target that delivered its snapshot
// has disconnected by design: it is not shown as a target down
// (weir_gnmi_connected 0, what an alert on a down target fires on), and
// its status says it completed, synced, with no error.
func TestOnceCompleteIsNotDown(t *testing.T) {
	// The snapshot waits for the test to have seen the series: a target
	// answering at once completed (and hid it) before the test looked,
	// now and then, on a loaded machine.
	snapshot, release := snapshotOfOne(t), make(chan struct{})
	_, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		select {
		case <-release:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
		return snapshot(n, req, stream)
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "o1", Address: addr, Insecure: true, Encoding: "proto",
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "once", "", 0)}}}})
	waitFor(t, 30*time.Second, "weir_gnmi_connected exported before the snapshot", func() bool { return exportedFor(t, r, "weir_gnmi_connected", "o1") })
	close(release)
	waitFor(t, 30*time.Second, "the snapshot published and the subscription ended", func() bool {
		return len(r.b.metrics(t)) > 0 && !r.c.Status()[0].Connected
	})
	waitFor(t, 30*time.Second, "weir_gnmi_connected gone", func() bool { return !exportedFor(t, r, "weir_gnmi_connected", "o1") })
	st := r.c.Status()[0]
	if !st.Completed || !st.Synced || st.LastError != nil || st.Sessions != 1 {
		t.Errorf("status of a completed once target: %+v", st)
	}
	if !exportedFor(t, r, "weir_gnmi_last_update_timestamp_seconds", "o1") {
		t.Error("weir_gnmi_last_update_timestamp_seconds gone")
	}
}

// TestReloadKeepsStateSeriesHidden: a reload that leaves a target as it
// was does not bring back the weir_gnmi_connected 0 (or the last-update
// 0) of a target that has it hidden: a ONCE target that completed, or, with
// shared targets, one another process owns. Building the reload's targets
// must not make their series again: the running targets are kept and
// nothing would delete them, so the "down" target stayed until restart.
func TestReloadKeepsStateSeriesHidden(t *testing.T) {
	_, addr := startScript(t, snapshotOfOne(t))
	_, simAddr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 2})
	timeout := configs.Duration(5 * time.Second)
	once := configs.GNMITarget{Name: "o1", Address: addr, Insecure: true, Encoding: "proto", Timeout: timeout,
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "once", "", 0)}}
	other := simTarget("elsewhere", simAddr, sub(countersPath, "stream", "sample", 50*time.Millisecond))
	other.Timeout = timeout
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{once, other}}, WithOwner(newFakeOwner("o1", "added")))
	waitFor(t, 30*time.Second, "o1's snapshot and its weir_gnmi_connected gone", func() bool {
		return len(r.b.metrics(t)) > 0 && !exportedFor(t, r, "weir_gnmi_connected", "o1")
	})
	waitFor(t, 30*time.Second, "the series of the target owned elsewhere gone", func() bool {
		return !exportedFor(t, r, "weir_gnmi_connected", "elsewhere") && !exportedFor(t, r, "weir_gnmi_last_update_timestamp_seconds", "elsewhere")
	})

	// The same two, and one added: once it streams, the reload is applied.
	added := simTarget("added", simAddr, sub(countersPath, "stream", "sample", 50*time.Millisecond))
	added.Timeout = timeout
	if err := r.c.Update([]configs.GNMITarget{once, other, added}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the added target streaming", func() bool {
		return len(r.b.where(t, func(m metric) bool { return m.Key == "added" })) > 0
	})
	if exportedFor(t, r, "weir_gnmi_connected", "o1") {
		t.Error("weir_gnmi_connected of the completed once target exported again after a reload that left it unchanged")
	}
	for _, name := range []string{"weir_gnmi_connected", "weir_gnmi_last_update_timestamp_seconds"} {
		if exportedFor(t, r, name, "elsewhere") {
			t.Errorf("%s of the target another process owns exported after a reload", name)
		}
	}
}
