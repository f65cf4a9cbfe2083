package gnmi

import (
	"context"
	"errors"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// TestRefusalDecidesOnce orders the target's answer and the in-band
// refusal's timer: exactly one of them wins, and a message still arriving
// (its bytes come, it is not decoded yet) when the bound passes is
// waited for, not taken for no answer. Before, the timer read a flag the
// reader set after decoding: a message arriving, or decoded at the
// moment, ended the session as a target sending only errors.
func TestRefusalDecidesOnce(t *testing.T) {
	// A second: a machine pausing less between the bytes is no stall.
	const bound = time.Second
	update := &gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: &gpb.Notification{}}}
	inband := &gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Error{Error: &gpb.Error{Code: uint32(codes.InvalidArgument), Message: "bad path"}}}
	// decoded is gRPC having decoded a message of n wire bytes.
	decoded := func(p *progress, m *gpb.SubscribeResponse, n int) {
		msgStats{p}.HandleRPC(context.Background(), &stats.InPayload{Client: true, Payload: m, WireLength: n})
	}
	// start arms a refusal as the reader does at the first in-band error.
	start := func(t *testing.T) (*progress, context.Context) {
		p := newProgress()
		ctx, cancel := context.WithCancelCause(context.Background())
		r := newRefusal(&refusingError{bound: bound, inband: status.New(codes.InvalidArgument, "bad path")}, p, cancel)
		t.Cleanup(func() { r.stop(); cancel(nil) })
		return p, ctx
	}
	cause := func(t *testing.T, ctx context.Context, within time.Duration) error {
		t.Helper()
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(within):
			return nil
		}
	}

	t.Run("answer first", func(t *testing.T) {
		t.Parallel()
		p, ctx := start(t)
		decoded(p, update, 10)
		if err := cause(t, ctx, 2*bound); err != nil {
			t.Fatalf("session ended after the target answered: %v", err)
		}
	})
	t.Run("refusal first", func(t *testing.T) {
		t.Parallel()
		p, ctx := start(t)
		if err := cause(t, ctx, 5*bound); !errors.As(err, new(*refusingError)) {
			t.Fatalf("session ended with %v, want the refusal", err)
		}
		decoded(p, update, 10) // came after it
		if p.answered() {
			t.Fatal("an answer after the refusal was taken as the target's: the session would be both")
		}
	})
	t.Run("answer arriving", func(t *testing.T) {
		t.Parallel()
		p, ctx := start(t)
		// Its bytes come over three bounds, a few at a time.
		for range 60 {
			p.recv.Add(100)
			p.mark()
			time.Sleep(bound / 20)
			if ctx.Err() != nil {
				t.Fatalf("session ended while the answer arrived: %v", context.Cause(ctx))
			}
		}
		decoded(p, update, 60*100)
		if err := cause(t, ctx, 2*bound); err != nil {
			t.Fatalf("session ended after the target answered: %v", err)
		}
		if !p.answered() {
			t.Fatal("the answer was not taken")
		}
	})
	t.Run("error arriving", func(t *testing.T) {
		t.Parallel()
		p, ctx := start(t)
		p.recv.Add(30)
		p.mark()
		decoded(p, inband, 30) // only another error
		if err := cause(t, ctx, 5*bound); !errors.As(err, new(*refusingError)) {
			t.Fatalf("session ended with %v, want the refusal", err)
		}
	})
	t.Run("quiet mid-message", func(t *testing.T) {
		t.Parallel()
		p, ctx := start(t)
		p.recv.Add(100)
		p.mark()
		err := cause(t, ctx, 5*bound)
		var stalled *stalledError
		if !errors.As(err, &stalled) {
			t.Fatalf("session ended with %v, want a stall: the message might have been the answer", err)
		}
		if p.answer.Load() != awaiting {
			t.Fatal("a stall decided whether the target answered")
		}
	})
}
