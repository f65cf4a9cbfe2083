package gnmi

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/configs"
)

// silentServer is a target that keeps its Subscribe streams open and
// stops sending: after one update and the sync_response (a hung gNMI
// daemon on the device), before anything when mute, or after a
// sync_response alone when empty (paths that match nothing).
type silentServer struct {
	gpb.UnimplementedGNMIServer
	mute, empty bool
	subscribes  atomic.Int32
}

func (s *silentServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	s.subscribes.Add(1)
	if s.empty {
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
			return err
		}
	} else if !s.mute {
		n := &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "a"}, {Name: "b"}}},
			Val:  &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 1}},
		}}}
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
			return err
		}
	}
	<-stream.Context().Done()
	return nil
}

func startSilent(t *testing.T, mute bool) (*silentServer, string) {
	t.Helper()
	return startSilentServer(t, &silentServer{mute: mute})
}

func startSilentServer(t *testing.T, s *silentServer) (*silentServer, string) {
	t.Helper()
	return s, serveGNMI(t, s)
}

// TestStalledStreamReconnects: a target that answers, then keeps the
// stream open and sends nothing more, is taken for stalled after 3 sample
// intervals (at least timeout): the error is counted as DeadlineExceeded
// and the collector resubscribes.
func TestStalledStreamReconnects(t *testing.T) {
	s, addr := startSilent(t, false)
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "stalled", Address: addr, Insecure: true,
		Timeout:       configs.Duration(time.Second),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "sample", 100*time.Millisecond)},
	}}})
	waitFor(t, 5*time.Second, "subscribed", func() bool { return r.c.Status()[0].Synced })
	waitFor(t, 5*time.Second, "the stall counted", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("stalled", "DeadlineExceeded")) >= 1
	})
	if err := r.c.Status()[0].LastError; err == nil || !strings.Contains(err.Error(), "gnmi stalled: subscribe: stream stalled: no data received for 1s") {
		t.Errorf("last error %v, want the stall after 1s (3 x 100ms, at least timeout)", err)
	}
	waitFor(t, 5*time.Second, "a new subscription after the stall", func() bool { return s.subscribes.Load() >= 2 })
	waitFor(t, 5*time.Second, "connected again", func() bool {
		return testutil.ToFloat64(r.m.Connected.WithLabelValues("stalled")) == 1 && r.c.Status()[0].Sessions >= 2
	})
}

// TestNoFirstResponse: a target that takes the subscription and never
// answers is given up on after timeout, and never counted connected.
func TestNoFirstResponse(t *testing.T) {
	s, addr := startSilent(t, true)
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "mute", Address: addr, Insecure: true,
		Timeout:       configs.Duration(300 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)},
	}}})
	waitFor(t, 5*time.Second, "the stall counted", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("mute", "DeadlineExceeded")) >= 1
	})
	waitFor(t, 5*time.Second, "a new subscription", func() bool { return s.subscribes.Load() >= 2 })
	st := r.c.Status()[0]
	if st.LastError == nil || !strings.Contains(st.LastError.Error(), "stream stalled: no data received for 300ms") {
		t.Errorf("last error %v, want the stall after timeout", st.LastError)
	}
	if st.Connected || testutil.ToFloat64(r.m.Connected.WithLabelValues("mute")) != 0 {
		t.Error("a target that never answered is counted connected")
	}
}

// TestOnChangeSilenceIsNotAStall: ON_CHANGE without heartbeats may be
// silent as long as nothing changes; the stream stays up.
func TestOnChangeSilenceIsNotAStall(t *testing.T) {
	s, addr := startSilent(t, false)
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "quiet", Address: addr, Insecure: true,
		Timeout:       configs.Duration(200 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)},
	}}})
	waitFor(t, 5*time.Second, "subscribed", func() bool { return r.c.Status()[0].Synced })
	time.Sleep(time.Second) // 5 x timeout
	st := r.c.Status()[0]
	if !st.Connected || st.Sessions != 1 || st.LastError != nil || s.subscribes.Load() != 1 {
		t.Errorf("quiet ON_CHANGE stream: connected=%v sessions=%d subscribes=%d err=%v", st.Connected, st.Sessions, s.subscribes.Load(), st.LastError)
	}
}

// TestEmptySampleIsNotAStall: SAMPLE on paths that match nothing (an
// interface not configured yet) gets a sync_response and then nothing;
// that is not a hung target, so the stream stays up.
func TestEmptySampleIsNotAStall(t *testing.T) {
	s, addr := startSilentServer(t, &silentServer{empty: true})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "empty", Address: addr, Insecure: true,
		Timeout:       configs.Duration(200 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "sample", 50*time.Millisecond)},
	}}})
	waitFor(t, 5*time.Second, "subscribed", func() bool { return r.c.Status()[0].Synced })
	time.Sleep(time.Second) // 5 x the stall bound of 200ms
	st := r.c.Status()[0]
	if !st.Connected || st.Sessions != 1 || st.LastError != nil || s.subscribes.Load() != 1 {
		t.Errorf("empty SAMPLE stream: connected=%v sessions=%d subscribes=%d err=%v", st.Connected, st.Sessions, s.subscribes.Load(), st.LastError)
	}
}

// TestQuietOnChangeBesideEmptySampleIsNotAStall: counters SAMPLE on an
// interface not configured yet, beside BGP ON_CHANGE that has data: the
// ON_CHANGE data says nothing of the SAMPLE, and its silence after is
// no stall (it was taken for one, and the target resubscribed, with a
// full resync, every 3 sample intervals for ever).
func TestQuietOnChangeBesideEmptySampleIsNotAStall(t *testing.T) {
	s, addr := startSilent(t, false) // sends /a/b once, then nothing
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "mixed", Address: addr, Insecure: true,
		Timeout: configs.Duration(200 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{
			sub("/interfaces/interface[name=Ethernet49]/state/counters", "stream", "sample", 50*time.Millisecond),
			sub("/a", "stream", "on_change", 0),
		},
	}}})
	waitFor(t, 5*time.Second, "subscribed", func() bool { return r.c.Status()[0].Synced })
	time.Sleep(time.Second) // 5 x the stall bound of 200ms
	st := r.c.Status()[0]
	if !st.Connected || st.Sessions != 1 || st.LastError != nil || s.subscribes.Load() != 1 {
		t.Errorf("quiet ON_CHANGE beside empty SAMPLE: connected=%v sessions=%d subscribes=%d err=%v", st.Connected, st.Sessions, s.subscribes.Load(), st.LastError)
	}
}

func TestIdleBound(t *testing.T) {
	const timeout = 10 * time.Second
	stream := func(streamMode string, sample, heartbeat time.Duration, suppress bool) configs.GNMISubscription {
		return configs.GNMISubscription{Path: "/a", Mode: "stream", StreamMode: streamMode,
			SampleInterval: configs.Duration(sample), HeartbeatInterval: configs.Duration(heartbeat), SuppressRedundant: suppress}
	}
	for _, c := range []struct {
		name string
		subs []configs.GNMISubscription
		poll time.Duration
		want time.Duration
	}{
		{"sample", []configs.GNMISubscription{stream("sample", 30*time.Second, 0, false)}, 0, 90 * time.Second},
		{"sample below timeout", []configs.GNMISubscription{stream("sample", time.Second, 0, false)}, 0, timeout},
		{"smallest sample", []configs.GNMISubscription{stream("sample", 20*time.Second, 0, false), stream("sample", 15*time.Second, 0, false)}, 0, 45 * time.Second},
		{"sample beside a slow heartbeat", []configs.GNMISubscription{stream("sample", time.Second, 0, false), stream("on_change", 0, 20*time.Second, false)}, 0, timeout},
		{"sample, target's default interval", []configs.GNMISubscription{stream("sample", 0, 0, false)}, 0, 0},
		{"suppress_redundant with heartbeat", []configs.GNMISubscription{stream("sample", time.Second, time.Minute, true)}, 0, 3 * time.Minute},
		{"suppress_redundant without heartbeat", []configs.GNMISubscription{stream("sample", time.Second, 0, true)}, 0, 0},
		{"on_change", []configs.GNMISubscription{stream("on_change", 0, 0, false)}, 0, 0},
		{"on_change with heartbeat", []configs.GNMISubscription{stream("on_change", 0, time.Minute, false)}, 0, 3 * time.Minute},
		{"on_change beside sample", []configs.GNMISubscription{stream("on_change", 0, 0, false), stream("sample", 10*time.Second, 0, false)}, 0, 30 * time.Second},
		{"target_defined", []configs.GNMISubscription{stream("target_defined", 0, time.Minute, false)}, 0, 0},
		{"once", []configs.GNMISubscription{{Path: "/a", Mode: "once"}}, 0, timeout},
		{"poll", []configs.GNMISubscription{{Path: "/a", Mode: "poll"}}, time.Minute, time.Minute + timeout},
	} {
		tc := configs.GNMITarget{Timeout: configs.Duration(timeout), Subscriptions: c.subs}
		if got := idleBound(tc, c.poll); got != c.want {
			t.Errorf("%s: idleBound %v, want %v", c.name, got, c.want)
		}
	}
}

// hangServer sends one update for each of paths and the sync_response,
// then hangs with the stream open.
type hangServer struct {
	gpb.UnimplementedGNMIServer
	paths []string
}

func (s hangServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	for _, p := range s.paths {
		path, err := ParsePath(p, "")
		if err != nil {
			return err
		}
		n := &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: path, Val: &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 1}}}}}
		if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// TestStallBoundFromFastestSubscription: fast samples beside slow
// heartbeats: the target hanging is noticed at the fast samples' bound
// (3 x 50ms, at least timeout), not at 3 x the heartbeat; and with only
// the heartbeat's data coming (the sampled paths match nothing), at the
// heartbeat's.
func TestStallBoundFromFastestSubscription(t *testing.T) {
	subs := func() []configs.GNMISubscription {
		hb := sub("/b/state", "stream", "on_change", 0)
		hb.HeartbeatInterval = configs.Duration(time.Second)
		return []configs.GNMISubscription{sub("/a/counters", "stream", "sample", 50*time.Millisecond), hb}
	}
	for _, c := range []struct {
		name  string
		paths []string
		want  string
	}{
		{"both", []string{"/a/counters/x", "/b/state/y"}, "no data received for 200ms"},
		{"heartbeat only", []string{"/b/state/y"}, "no data received for 3s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
				Name: "hung", Address: serveGNMI(t, hangServer{paths: c.paths}), Insecure: true,
				Timeout: configs.Duration(200 * time.Millisecond), Subscriptions: subs(),
			}}})
			waitFor(t, 30*time.Second, "the stall counted", func() bool {
				return testutil.ToFloat64(r.m.Errors.WithLabelValues("hung", "DeadlineExceeded")) >= 1
			})
			if err := r.c.Status()[0].LastError; err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("last error %v, want %q", err, c.want)
			}
		})
	}
}

// TestPeriodOfBelow: periodOf finds the shortest period of the periodic
// subscriptions a notification carries data of, among those faster than
// the bound's; with none faster, it looks at nothing. The read loop looked
// each update's path up against every subscription, allocating, at every
// notification of the session, long after the fastest had delivered.
func TestPeriodOfBelow(t *testing.T) {
	hb := sub("/b/state", "stream", "on_change", 0)
	hb.HeartbeatInterval = configs.Duration(20 * time.Second)
	tg := &target{periodic: periodicPaths(configs.GNMITarget{Subscriptions: []configs.GNMISubscription{
		hb, sub("/a/counters", "stream", "sample", time.Second)}})}
	notif := func(paths ...string) *gpb.Notification {
		n := &gpb.Notification{}
		for _, p := range paths {
			path, err := ParsePath(p, "")
			if err != nil {
				t.Fatal(err)
			}
			n.Update = append(n.Update, &gpb.Update{Path: path, Val: &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 1}}})
		}
		return n
	}
	both, slow := notif("/b/state/y", "/a/counters/x"), notif("/b/state/y")
	for _, c := range []struct {
		n     *gpb.Notification
		below time.Duration
		want  time.Duration
	}{
		{both, 0, time.Second},
		{both, 20 * time.Second, time.Second},
		{both, time.Second, 0},
		{slow, 0, 20 * time.Second},
		{slow, 20 * time.Second, 0},
		{notif("/c/other"), 0, 0},
	} {
		if got := tg.periodOf(c.n, c.below); got != c.want {
			t.Errorf("periodOf(%v, below %v) = %v, want %v", c.n, c.below, got, c.want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { tg.periodOf(both, time.Second) }); a != 0 {
		t.Errorf("%v allocations looking for a period below the fastest subscription's", a)
	}
}
