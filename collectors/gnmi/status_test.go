package gnmi

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
	"google.golang.org/grpc/codes"
)

// TestStatusRecordsOfAnOutage: a target that serves publishes no
// gnmi_status; once it is gone, each attempt that fails publishes one
// with gnmi_up 0 and the error (the stream's end alone is none: it may be
// a target closing streams, and the next attempt tells); back, the first
// session publishes gnmi_up 1 before its data, once.
func TestStatusRecordsOfAnOutage(t *testing.T) {
	_, addr, stop := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 1})
	cfg := configs.GNMI{Targets: []configs.GNMITarget{simTarget("sim1", addr, sub(countersPath, "stream", "sample", 50*time.Millisecond))}}
	cfg.RetryMin, cfg.RetryMax = configs.Duration(20*time.Millisecond), configs.Duration(50*time.Millisecond)
	r := startCollector(t, cfg)
	waitFor(t, 10*time.Second, "data", func() bool { return len(r.b.metrics(t)) >= 2 })
	if n := len(r.b.where(t, isStatus)); n != 0 {
		t.Fatalf("%d status records from a target that serves", n)
	}
	stop()
	waitFor(t, 10*time.Second, "two failed attempts' status", func() bool { return len(r.b.where(t, isStatus)) >= 2 })
	startSim(t, addr, sim.Config{Interfaces: 1})
	waitFor(t, 10*time.Second, "gnmi_up 1", func() bool {
		return len(r.b.where(t, func(m metric) bool { return isStatus(m) && m.Fields["gnmi_up"] == json.Number("1") })) > 0
	})
	ms := r.b.metrics(t)
	var seq []string // what came, in order, from the first status on
	for _, m := range ms {
		switch {
		case isStatus(m):
			seq = append(seq, "up="+fmt.Sprint(m.Fields["gnmi_up"]))
			if up := m.Fields["gnmi_up"]; up == json.Number("0") && !strings.Contains(fmt.Sprint(m.Fields["error"]), "sim1") {
				t.Errorf("a failed attempt's status without its error: %+v", m.Fields)
			}
			if m.Device != "sim1" || m.Key != "sim1" || m.Source != Source {
				t.Errorf("status record of device %q, key %q, source %q", m.Device, m.Key, m.Source)
			}
		case len(seq) > 0 && seq[len(seq)-1] != "data":
			seq = append(seq, "data")
		}
	}
	got := strings.Join(seq, " ")
	// Failed attempts (at least two), then the one gnmi_up 1, then data
	// (unless none came yet).
	if !regexp.MustCompile(`^up=0 (up=0 )+up=1( data)?$`).MatchString(got) {
		t.Errorf("records from the outage on: %s", got)
	}
}

// TestRemovedWhileDownSaysSo: a reload takes out a target whose attempts
// fail: its last record is a gnmi_status with removed true, so
// enrichment ends the outage (no later record would). A target taken out
// while it serves says nothing.
func TestRemovedWhileDownSaysSo(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close()
	_, up, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 1})
	cfg := configs.GNMI{Targets: []configs.GNMITarget{
		simTarget("down1", down, sub(countersPath, "stream", "sample", 50*time.Millisecond)),
		simTarget("up1", up, sub(countersPath, "stream", "sample", 50*time.Millisecond)),
	}}
	cfg.RetryMin, cfg.RetryMax = configs.Duration(20*time.Millisecond), configs.Duration(50*time.Millisecond)
	r := startCollector(t, cfg)
	waitFor(t, 10*time.Second, "down1's failed attempt and up1's data", func() bool {
		return len(r.b.where(t, func(m metric) bool { return m.Device == "down1" && isStatus(m) })) > 0 &&
			len(r.b.where(t, func(m metric) bool { return m.Device == "up1" })) > 0
	})
	if err := r.c.Update(nil); err != nil {
		t.Fatal(err)
	}
	removed := func(m metric) bool { return isStatus(m) && m.Fields["removed"] == true }
	waitFor(t, 10*time.Second, "down1's removal", func() bool {
		return len(r.b.where(t, func(m metric) bool { return m.Device == "down1" && removed(m) })) > 0
	})
	ms := r.b.where(t, func(m metric) bool { return m.Device == "down1" })
	if last := ms[len(ms)-1]; !removed(last) || len(last.Fields) != 1 {
		t.Errorf("down1's last record: %+v, want its removal alone", last.Metric)
	}
	if n := len(r.b.where(t, func(m metric) bool { return m.Device == "up1" && isStatus(m) })); n != 0 {
		t.Errorf("%d status records of up1, taken out while it served", n)
	}
}

// TestInbandRefusalIsNoAnswer: a target that refuses every subscription
// with an in-band Error message (gNMI before 0.7: a path refused) and
// ends the RPC does not serve; each attempt publishes gnmi_up 0 with the
// error, as a refusal by the RPC's status does, and never gnmi_up 1.
func TestInbandRefusalIsNoAnswer(t *testing.T) {
	r := startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(20 * time.Millisecond),
		Targets: []configs.GNMITarget{{Name: "t", Address: serveGNMI(t, inbandServer{}), Insecure: true,
			Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)}}}})
	waitFor(t, 10*time.Second, "two failed attempts' status", func() bool { return len(r.b.where(t, isStatus)) >= 2 })
	for _, m := range r.b.where(t, isStatus) {
		if m.Fields["gnmi_up"] != json.Number("0") || !strings.Contains(fmt.Sprint(m.Fields["error"]), "bad path") {
			t.Fatalf("status of a target refusing every subscription in band: %+v", m.Fields)
		}
	}
}

// TestReloadOfADownTargetSaysItIsBack: a target refused for a wrong
// password is fixed by a reload, which makes it again: its first session
// publishes gnmi_up 1, as the target it replaces would have. The new
// target did not know the old one's outage, and published none: the
// outage stayed open unless data came.
func TestReloadOfADownTargetSaysItIsBack(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 1, Username: "weir", Password: "right"})
	tc := simTarget("t1", addr, sub(countersPath, "stream", "sample", 50*time.Millisecond))
	tc.Username, tc.Password = "weir", "wrong"
	cfg := configs.GNMI{Targets: []configs.GNMITarget{tc}}
	cfg.RetryMin, cfg.RetryMax = configs.Duration(20*time.Millisecond), configs.Duration(50*time.Millisecond)
	r := startCollector(t, cfg)
	up := func(v string) func() bool {
		return func() bool {
			return len(r.b.where(t, func(m metric) bool { return isStatus(m) && m.Fields["gnmi_up"] == json.Number(v) })) > 0
		}
	}
	waitFor(t, 10*time.Second, "gnmi_up 0", up("0"))
	tc.Password = "right"
	if err := r.c.Update([]configs.GNMITarget{tc}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "gnmi_up 1 once the reload fixed the password", up("1"))
}

// TestRemovedWhileStoppedSaysSo: the state file lists the targets of the
// last run, a and b; weir starts with a alone. b, taken out of the config
// while weir was stopped, is told removed (its outage, if it was in one,
// ends); a is not. The file then lists a; a reload adding c lists both.
func TestRemovedWhileStoppedSaysSo(t *testing.T) {
	state := filepath.Join(t.TempDir(), "gnmi", "targets.json")
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte(`{"v":1,"targets":["a","b"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 1})
	a := simTarget("a", addr, sub(countersPath, "stream", "sample", time.Second))
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{a}}, WithStateFile(state))
	removed := func(m metric) bool { return isStatus(m) && m.Fields["removed"] == true }
	waitFor(t, 10*time.Second, "b told removed", func() bool {
		return len(r.b.where(t, func(m metric) bool { return m.Device == "b" && m.Key == "b" && removed(m) })) == 1
	})
	waitFor(t, 10*time.Second, "a's data", func() bool { return len(r.b.where(t, func(m metric) bool { return m.Device == "a" })) > 0 })
	if n := len(r.b.where(t, func(m metric) bool { return m.Device == "a" && removed(m) })); n != 0 {
		t.Errorf("a, still listed, told removed %d times", n)
	}
	listed := func() []string {
		k, err := readKnown(state)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(k)
		return k
	}
	if got := listed(); !slices.Equal(got, []string{"a"}) {
		t.Errorf("state file lists %q, want [a]", got)
	}
	if err := r.c.Update([]configs.GNMITarget{a, simTarget("c", addr, sub(countersPath, "stream", "sample", time.Second))}); err != nil {
		t.Fatal(err)
	}
	if got := listed(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("after the reload the state file lists %q, want [a c]", got)
	}
}

// TestStateFileSavedAfterAFailedSave: the state file is saved at start
// and at reloads only, so one that could not be written at start (a full
// disk) was missing until a reload, and a target taken out of the config
// meanwhile, while weir was stopped, was never told removed. A failed
// save is tried again until it succeeds.
func TestStateFileSavedAfterAFailedSave(t *testing.T) {
	dir := t.TempDir()
	// A file where the state file's directory goes: every save fails.
	blocker := filepath.Join(dir, "gnmi")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(blocker, "targets.json")
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 1})
	a := simTarget("a", addr, sub(countersPath, "stream", "sample", time.Second))
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{a}}, WithStateFile(state), withKnownRetry(50*time.Millisecond))
	waitFor(t, 10*time.Second, "a's data", func() bool { return len(r.b.where(t, func(m metric) bool { return m.Device == "a" })) > 0 })
	if _, err := os.Stat(state); err == nil {
		t.Fatal("the state file was saved with a file in place of its directory")
	}
	os.Remove(blocker) // space freed
	waitFor(t, 10*time.Second, "the state file saved once it could be", func() bool {
		k, err := readKnown(state)
		return err == nil && slices.Equal(k, []string{"a"})
	})
}

// inbandHoldServer refuses the subscription with an in-band Error message
// and keeps the stream open, sending the error again every repeat (0:
// once).
type inbandHoldServer struct {
	gpb.UnimplementedGNMIServer
	repeat time.Duration
}

func (s inbandHoldServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	refuse := &gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Error{Error: &gpb.Error{Code: uint32(codes.InvalidArgument), Message: "bad path"}}}
	if err := stream.Send(refuse); err != nil {
		return err
	}
	if s.repeat == 0 {
		<-stream.Context().Done()
		return nil
	}
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case <-time.After(s.repeat):
			if err := stream.Send(refuse); err != nil {
				return err
			}
		}
	}
}

// TestInbandRefusalHeldOpenIsNoAnswer: a target that refuses in band and
// keeps the stream open, silent or repeating the error, serves nothing:
// after its timeout the attempt fails with the error, is published as
// gnmi_up 0 and retried. Before, the session stayed open for good, the
// target counted connected and never down.
func TestInbandRefusalHeldOpenIsNoAnswer(t *testing.T) {
	for name, repeat := range map[string]time.Duration{"silent": 0, "repeating": 50 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			r := startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(20 * time.Millisecond),
				Targets: []configs.GNMITarget{{Name: "t", Address: serveGNMI(t, inbandHoldServer{repeat: repeat}), Insecure: true,
					Timeout:       configs.Duration(300 * time.Millisecond),
					Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)}}}})
			waitFor(t, 10*time.Second, "two failed attempts' status", func() bool { return len(r.b.where(t, isStatus)) >= 2 })
			for _, m := range r.b.where(t, isStatus) {
				if m.Fields["gnmi_up"] != json.Number("0") || !strings.Contains(fmt.Sprint(m.Fields["error"]), "sent only an error message for 300ms, keeping the stream open: bad path") {
					t.Fatalf("status of a target refusing in band with the stream held: %+v", m.Fields)
				}
			}
			if got := testutil.ToFloat64(r.m.Errors.WithLabelValues("t", "InvalidArgument")); got < 2 {
				t.Errorf("%v failed attempts counted under the in-band error's code", got)
			}
		})
	}
}

// inbandPollServer is a POLL target before gNMI 0.7: it refuses one path
// of the subscription with an in-band Error message at once, and answers
// each Poll with the other path's value and a sync_response, sending
// nothing before it is polled.
type inbandPollServer struct{ gpb.UnimplementedGNMIServer }

func (inbandPollServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	refuse := &gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Error{Error: &gpb.Error{Code: uint32(codes.InvalidArgument), Message: "bad path /b"}}}
	if err := stream.Send(refuse); err != nil {
		return err
	}
	for {
		req, err := stream.Recv()
		if err != nil {
			return nil
		}
		if req.GetPoll() == nil {
			continue
		}
		n := &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "a"}}},
			Val:  &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 1}},
		}}}
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
			return err
		}
	}
}

// TestInbandRefusalOfOnePathPolled: a POLL target that refuses one path
// in band and answers the polls of the others serves; it sends nothing
// before its first poll, poll_interval after the subscription, which may
// be longer than timeout. Its session was ended at timeout as a target
// sending only errors, before any poll: never served, counted down.
func TestInbandRefusalOfOnePathPolled(t *testing.T) {
	r := startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(20 * time.Millisecond),
		Targets: []configs.GNMITarget{{Name: "t", Address: serveGNMI(t, inbandPollServer{}), Insecure: true,
			Timeout:       configs.Duration(300 * time.Millisecond),
			Subscriptions: []configs.GNMISubscription{sub("/a", "poll", "", time.Second), sub("/b", "poll", "", time.Second)}}}})
	waitFor(t, 10*time.Second, "the polled path's data", func() bool {
		return len(r.b.where(t, func(m metric) bool { return !isStatus(m) })) > 0
	})
	for _, m := range r.b.where(t, isStatus) {
		t.Errorf("status of a target refusing one path and serving the others' polls: %+v", m.Fields)
	}
	if got := testutil.ToFloat64(r.m.Errors.WithLabelValues("t", "InvalidArgument")); got != 0 {
		t.Errorf("%v failed attempts counted", got)
	}
}
