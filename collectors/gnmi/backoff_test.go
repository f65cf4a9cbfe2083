package gnmi

import (
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weirnet/weir/configs"
)

// flakyServer answers each subscription with an update and the
// sync_response, sends an update every 20ms for serve (the serve of
// that subscription, by number from 1; 0: none), then fails the stream.
type flakyServer struct {
	gpb.UnimplementedGNMIServer
	serve func(n int) time.Duration

	mu   sync.Mutex
	subs []time.Time // when each subscription came
	ends []time.Time // when each stream was failed
}

func (s *flakyServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	s.mu.Lock()
	s.subs = append(s.subs, time.Now())
	n := len(s.subs)
	s.mu.Unlock()
	send := func() error {
		u := &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
			Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "a"}, {Name: "b"}}},
			Val:  &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 1}},
		}}}
		return stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: u}})
	}
	if err := send(); err != nil {
		return err
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for until := time.Now().Add(s.serve(n)); time.Now().Before(until); {
		select {
		case <-stream.Context().Done():
			return nil
		case <-tick.C:
			if err := send(); err != nil {
				return err
			}
		}
	}
	s.mu.Lock()
	s.ends = append(s.ends, time.Now())
	s.mu.Unlock()
	return status.Error(codes.Internal, "daemon restarting")
}

func (s *flakyServer) times() (subs, ends []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.subs...), append([]time.Time(nil), s.ends...)
}

func startFlaky(t *testing.T, serve func(n int) time.Duration) (*flakyServer, string) {
	t.Helper()
	s := &flakyServer{serve: serve}
	return s, serveGNMI(t, s)
}

func flakyTarget(addr string) configs.GNMITarget {
	return configs.GNMITarget{Name: "flaky", Address: addr, Insecure: true,
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)}}
}

// TestBackoffGrowsWhenEverySessionFails: a target that answers and then
// fails every time is retried with a growing backoff, not every retry_min
// (each retry is a full resync).
func TestBackoffGrowsWhenEverySessionFails(t *testing.T) {
	s, addr := startFlaky(t, func(int) time.Duration { return 0 })
	startCollector(t, configs.GNMI{RetryMin: configs.Duration(50 * time.Millisecond), RetryMax: configs.Duration(400 * time.Millisecond),
		Targets: []configs.GNMITarget{flakyTarget(addr)}})
	waitFor(t, 5*time.Second, "the first subscription", func() bool { subs, _ := s.times(); return len(subs) >= 1 })
	time.Sleep(2 * time.Second)
	// Backoffs 50, 100, 200, 400, 400, ... ms (±25%): about 7 in 2s; a
	// backoff back at retry_min after each answer makes it about 30.
	if subs, _ := s.times(); len(subs) > 12 {
		t.Errorf("%d subscriptions in 2s to a target failing each after its first message; want at most 12", len(subs))
	}
}

// TestBackoffResetsAfterAStableSession: once a session served its stream
// for retry_max, the next failure is retried after retry_min again.
func TestBackoffResetsAfterAStableSession(t *testing.T) {
	const stable = 6 // the subscription that serves for a while
	s, addr := startFlaky(t, func(n int) time.Duration {
		if n == stable {
			return 1500 * time.Millisecond
		}
		return 0
	})
	// retry_max well above retry_min, so that a loaded machine's delays
	// cannot make one backoff look like the other.
	startCollector(t, configs.GNMI{RetryMin: configs.Duration(50 * time.Millisecond), RetryMax: configs.Duration(1200 * time.Millisecond),
		Targets: []configs.GNMITarget{flakyTarget(addr)}})
	waitFor(t, 20*time.Second, "the subscription after the stable one", func() bool { subs, _ := s.times(); return len(subs) > stable })
	subs, ends := s.times()
	// Before it, the backoff grew: 50, 100, 200, 400, 800 ms (±25%).
	if gap := subs[stable-1].Sub(ends[stable-2]); gap < 500*time.Millisecond {
		t.Errorf("retried %v after failure %d, want the grown backoff", gap, stable-1)
	}
	// After it, retry_min (at most 62ms jittered, and the dial), not the
	// 1.2 s the grown backoff would be.
	if gap := subs[stable].Sub(ends[stable-1]); gap > 600*time.Millisecond {
		t.Errorf("retried %v after the stable session failed, want about retry_min", gap)
	}
}
