package gnmi

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/syncbuf"
)

// logLines are the lines of logs holding every one of subs.
func logLines(logs *syncbuf.Buffer, subs ...string) []string {
	var out []string
	for _, line := range strings.Split(logs.String(), "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// TestReconnectLogNotEveryAttempt: a target that stays down is logged
// at its first failure, and then as still failing once every
// failLogEvery, not at every attempt (each is counted in
// weir_gnmi_errors_total): a target down for a day at retry_max 60s
// would otherwise be 1,440 warnings.
func TestReconnectLogNotEveryAttempt(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(20 * time.Millisecond),
		Targets: []configs.GNMITarget{{Name: "down", Address: peers.FreeAddr(t), Insecure: true,
			Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)}}}},
		WithLogger(log))
	waitFor(t, 20*time.Second, "30 failed attempts", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("down", "Unavailable")) >= 30
	})
	if got := logLines(&logs, "level=WARN", "target=down"); len(got) != 1 {
		t.Errorf("%d warnings for 30 failed attempts of a target that stays down, want 1 (the first):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// TestReconnectLogStillFailing: past failLogEvery, the next failure is
// logged as still failing, with how many attempts failed and for how long;
// a failure of another kind is logged at once; and the target coming back
// says so.
func TestReconnectLogStillFailing(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	refuse := &refusingServer{code: codes.NotFound}
	addr := serveGNMI(t, refuse)
	startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(20 * time.Millisecond),
		Targets: []configs.GNMITarget{{Name: "t", Address: addr, Insecure: true,
			Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)}}}},
		WithLogger(log), func(c *Collector) { c.failLogEvery = 300 * time.Millisecond })
	waitFor(t, 20*time.Second, "a still-failing line", func() bool {
		return len(logLines(&logs, "level=WARN", "gnmi stream still failing", "failed_attempts=", "failing_for=")) > 0
	})
	if got := logLines(&logs, "level=WARN", "gnmi stream failed"); len(got) != 1 {
		t.Errorf("%d first-failure warnings, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
	if got := logLines(&logs, "level=INFO", "gnmi capabilities"); len(got) != 1 {
		t.Errorf("%d capabilities lines while the subscription keeps being refused, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
	refuse.set(codes.PermissionDenied)
	waitFor(t, 20*time.Second, "the new kind of failure logged", func() bool {
		return len(logLines(&logs, "level=WARN", "code=PermissionDenied")) > 0
	})
	refuse.set(codes.OK)
	waitFor(t, 20*time.Second, "the target back", func() bool {
		return len(logLines(&logs, "level=INFO", "gnmi subscribed", "failed_attempts=")) > 0
	})
}

// refusingServer refuses every Subscribe with its code, or, with OK,
// answers it with a sync_response and keeps it open.
type refusingServer struct {
	gpb.UnimplementedGNMIServer
	mu   sync.Mutex
	code codes.Code
}

func (s *refusingServer) set(c codes.Code) {
	s.mu.Lock()
	s.code = c
	s.mu.Unlock()
}

func (s *refusingServer) Capabilities(_ context.Context, _ *gpb.CapabilityRequest) (*gpb.CapabilityResponse, error) {
	return &gpb.CapabilityResponse{GNMIVersion: "0.7.0"}, nil
}

func (s *refusingServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	s.mu.Lock()
	code := s.code
	s.mu.Unlock()
	if code != codes.OK {
		return status.Error(code, "refused")
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// TestQueueFullLogged: notifications dropped for a full queue are logged,
// as the other drops are (with how many, and the queue's bounds, so the
// operator knows which to raise), once per throttle interval rather than
// once each.
func TestQueueFullLogged(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 20, ToggleEvery: -1})
	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(configs.GNMI{QueueSize: 10, Targets: []configs.GNMITarget{simTarget("flood", addr, sub(countersPath, "stream", "sample", time.Microsecond))}},
		&stallBroker{stall: "flood"}, WithMetrics(m), WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	c.grace = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, 10*time.Second, "drops for the full queue", func() bool {
		return testutil.ToFloat64(m.Dropped.WithLabelValues("flood", DropQueueFull)) > 100
	})
	waitFor(t, 10*time.Second, "the drops logged", func() bool {
		return len(logLines(&logs, "level=WARN", "target=flood", "queue full", "queue_size=10", "queue_bytes=")) > 0
	})
	if n, drops := len(logLines(&logs, "queue full")), testutil.ToFloat64(m.Dropped.WithLabelValues("flood", DropQueueFull)); float64(n) >= drops {
		t.Errorf("%d lines for %v drops: want them throttled", n, drops)
	}
}

// inbandServer answers every Subscribe with an in-band Error message
// (gNMI before 0.7) and ends the RPC.
type inbandServer struct{ gpb.UnimplementedGNMIServer }

func (inbandServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	return stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Error{Error: &gpb.Error{Code: uint32(codes.InvalidArgument), Message: "bad path"}}})
}

// TestInbandErrorLoggedOncePerRun: a target that answers every attempt
// with the same in-band error is warned of once, not at every attempt.
func TestInbandErrorLoggedOncePerRun(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(20 * time.Millisecond),
		Targets: []configs.GNMITarget{{Name: "t", Address: serveGNMI(t, inbandServer{}), Insecure: true,
			Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)}}}},
		WithLogger(log))
	waitFor(t, 20*time.Second, "20 failed attempts", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("t", "InvalidArgument")) >= 20
	})
	if got := logLines(&logs, "level=WARN"); len(got) > 2 {
		t.Errorf("%d warnings for 20 attempts answered with the same in-band error, want 2 (the error and the failure):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// syncThenFailServer answers every Subscribe with a sync_response and no
// data, and then fails the stream.
type syncThenFailServer struct{ gpb.UnimplementedGNMIServer }

func (syncThenFailServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	return status.Error(codes.Internal, "daemon restarting")
}

// TestNoDataWarningOncePerRun: the warning that a sampled subscription's
// paths match nothing is given once in a run of failing sessions, not at
// every one.
func TestNoDataWarningOncePerRun(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := startCollector(t, configs.GNMI{RetryMin: configs.Duration(5 * time.Millisecond), RetryMax: configs.Duration(20 * time.Millisecond),
		Targets: []configs.GNMITarget{{Name: "t", Address: serveGNMI(t, syncThenFailServer{}), Insecure: true,
			Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "sample", time.Second)}}}},
		WithLogger(log))
	waitFor(t, 20*time.Second, "20 failed sessions", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("t", "Internal")) >= 20
	})
	if got := logLines(&logs, "level=WARN", "match nothing"); len(got) != 1 {
		t.Errorf("%d no-data warnings in 20 sessions of one run of failures, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
}
