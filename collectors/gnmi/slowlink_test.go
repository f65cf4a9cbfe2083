package gnmi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/configs"
	"google.golang.org/grpc/codes"
)

// slowProxy forwards TCP connections to a target, the target's side
// chunk bytes every pace (a slow management link), and, when limit > 0,
// only the first limit bytes of each connection, after which it holds
// the connection open and forwards nothing more (a link that died
// mid-message).
type slowProxy struct {
	target string
	chunk  int
	pace   time.Duration
	limit  int
}

func (p slowProxy) start(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); lis.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { p.serve(ctx, c) })
		}
	})
	return lis.Addr().String()
}

func (p slowProxy) serve(ctx context.Context, c net.Conn) {
	defer c.Close()
	var d net.Dialer
	up, err := d.DialContext(ctx, "tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { c.Close(); up.Close() })
	defer stop()
	go func() { _, _ = io.Copy(up, c) }()
	buf := make([]byte, p.chunk)
	sent := 0
	for {
		n, err := up.Read(buf)
		if p.limit > 0 && sent+n > p.limit {
			n = p.limit - sent
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
			sent += n
		}
		if err != nil {
			return
		}
		if p.limit > 0 && sent >= p.limit {
			<-ctx.Done() // the link goes quiet, the connection stays
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.pace):
		}
	}
}

// bigFirstServer answers a subscription with one large notification (a
// full table), the sync_response and then a small update every 20ms;
// with inband, an in-band Error with that message first (a path refused
// by a target before gNMI 0.7).
type bigFirstServer struct {
	gpb.UnimplementedGNMIServer
	size   int
	inband string
}

func (s bigFirstServer) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	if s.inband != "" {
		refuse := &gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Error{Error: &gpb.Error{Code: uint32(codes.InvalidArgument), Message: s.inband}}}
		if err := stream.Send(refuse); err != nil {
			return err
		}
	}
	update := func(name string, v []byte) *gpb.SubscribeResponse {
		return &gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: &gpb.Notification{
			Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
				Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "a"}, {Name: name}}},
				Val:  &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: v}}}}}}}
	}
	big := append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), s.size)...), `"}`...)
	if err := stream.Send(update("big", big)); err != nil {
		return err
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case <-tick.C:
			if err := stream.Send(update("small", []byte("1"))); err != nil {
				return err
			}
		}
	}
}

// TestSlowLinkIsNotAStall: a first notification that takes several
// stall bounds to arrive over a slow link, its bytes coming all along,
// is received and published: the stream was cut at every bound (nothing
// received: no message whole yet) and the target never collected.
func TestSlowLinkIsNotAStall(t *testing.T) {
	// 1 MiB at 16 KiB every 100ms: over 6 s, more than three bounds of
	// 2 s; a pause of the machine shorter than that is no stall (with a
	// bound of 1 s, a loaded CI machine paused that long once).
	addr := slowProxy{target: serveGNMI(t, bigFirstServer{size: 1 << 20}), chunk: 16 << 10, pace: 100 * time.Millisecond}.start(t)
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "slow", Address: addr, Insecure: true,
		Timeout:       configs.Duration(2 * time.Second),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "sample", 20*time.Millisecond)},
	}}})
	waitFor(t, 60*time.Second, "the large notification published", func() bool {
		return len(r.b.where(t, func(m metric) bool {
			for _, v := range m.Fields {
				if s, ok := v.(string); ok && len(s) >= 1<<20 {
					return true
				}
			}
			return false
		})) > 0
	})
	if n := testutil.ToFloat64(r.m.Errors.WithLabelValues("slow", "DeadlineExceeded")); n != 0 {
		t.Errorf("%v sessions taken for stalled while the notification's bytes came: %v", n, r.c.Status()[0].LastError)
	}
}

// TestInbandRefusalThenSlowAnswer: a target that refuses one path in
// band and then answers with a first notification that takes longer
// than timeout to arrive over a slow link has answered: the refusal
// waits for the message in progress. Its session was ended at timeout
// as a target sending only errors, the notification half received:
// every attempt, so none of its data ever came.
func TestInbandRefusalThenSlowAnswer(t *testing.T) {
	// 1 MiB at 16 KiB every 50ms: over 3 s, three times timeout.
	addr := slowProxy{target: serveGNMI(t, bigFirstServer{size: 1 << 20, inband: "bad path /b"}), chunk: 16 << 10, pace: 50 * time.Millisecond}.start(t)
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "slow", Address: addr, Insecure: true,
		Timeout:       configs.Duration(time.Second),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "sample", 20*time.Millisecond), sub("/b", "stream", "sample", 20*time.Millisecond)},
	}}})
	big := func(m metric) bool {
		for _, v := range m.Fields {
			if s, ok := v.(string); ok && len(s) >= 1<<20 {
				return true
			}
		}
		return false
	}
	// A machine pausing a second mid-message is a stall, retried: only
	// the refusal is wrong.
	refused := func(m metric) bool {
		return isStatus(m) && strings.Contains(fmt.Sprint(m.Fields["error"]), "sent only an error message")
	}
	waitFor(t, 60*time.Second, "the large notification published or the target taken for refusing", func() bool {
		return len(r.b.where(t, func(m metric) bool { return big(m) || refused(m) })) > 0
	})
	for _, m := range r.b.where(t, refused) {
		t.Errorf("status of a target answering over a slow link after an in-band error: %+v", m.Fields)
	}
	if len(r.b.where(t, big)) == 0 {
		t.Errorf("the large notification was not published")
	}
}

// TestStallMidMessage: a link that goes quiet in the middle of a
// message is a stall all the same, and says so.
func TestStallMidMessage(t *testing.T) {
	addr := slowProxy{target: serveGNMI(t, bigFirstServer{size: 1 << 20}), chunk: 16 << 10, pace: time.Millisecond, limit: 256 << 10}.start(t)
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "cut", Address: addr, Insecure: true,
		Timeout:       configs.Duration(300 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "sample", 20*time.Millisecond)},
	}}})
	waitFor(t, 20*time.Second, "the stall counted", func() bool {
		return testutil.ToFloat64(r.m.Errors.WithLabelValues("cut", "DeadlineExceeded")) >= 1
	})
	var stalled *stalledError
	if err := r.c.Status()[0].LastError; !errors.As(err, &stalled) || !strings.Contains(err.Error(), "stream stalled: no data received for 300ms") {
		t.Errorf("last error %v, want the stall after timeout with no data", err)
	}
}

// TestFrameScanner: DATA payload is told from other frames however the
// reads split the frames, and its message bytes from a PADDED frame's
// pad length and padding.
func TestFrameScanner(t *testing.T) {
	frame := func(typ byte, n int) []byte {
		return append([]byte{byte(n >> 16), byte(n >> 8), byte(n), typ, 0, 0, 0, 0, 1}, bytes.Repeat([]byte{0}, n)...)
	}
	settings, ping, data, empty := frame(4, 6), frame(6, 8), frame(0, 5), frame(0, 0)
	// 3 message bytes, then 4 of padding.
	padded := append([]byte{0, 0, 8, 0, 0x8, 0, 0, 0, 1, 4}, bytes.Repeat([]byte{1}, 7)...)
	wire := slices.Concat(settings, ping, empty, data, ping, padded)
	dataAt := len(settings) + len(ping) + len(empty) + 9 // its first payload byte
	paddedAt := dataAt + 5 + len(ping) + 9
	for size := 1; size <= len(wire); size++ {
		var s frameScanner
		msgs := 0
		for off := 0; off < len(wire); off += size {
			end := min(off+size, len(wire))
			want := off < dataAt+5 && end > dataAt || end > paddedAt
			got, msg := s.feed(wire[off:end])
			if got != want {
				t.Errorf("reads of %d: bytes %d-%d: data %v, want %v", size, off, end, got, want)
			}
			msgs += msg
		}
		if msgs != 5+3 {
			t.Errorf("reads of %d: %d message bytes, want 8", size, msgs)
		}
	}
}

// FuzzFrameScanner: however reads split the frames, the message bytes
// counted are the same, and no more than the DATA payload.
func FuzzFrameScanner(f *testing.F) {
	f.Add([]byte{0, 0, 8, 0, 0x8, 0, 0, 0, 1, 4, 1, 1, 1, 1, 1, 1, 1}, uint8(3))
	f.Add([]byte{0, 0, 2, 0, 0x8, 0, 0, 0, 1, 9, 1, 0, 0, 5, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5}, uint8(1))
	f.Fuzz(func(t *testing.T, wire []byte, size uint8) {
		var whole frameScanner
		_, want := whole.feed(wire)
		var s frameScanner
		got := 0
		step := int(size) + 1
		for off := 0; off < len(wire); off += step {
			_, msg := s.feed(wire[off:min(off+step, len(wire))])
			if msg < 0 {
				t.Fatalf("%d message bytes", msg)
			}
			got += msg
		}
		if got != want || want > len(wire) {
			t.Fatalf("reads of %d: %d message bytes, %d read whole (%d bytes)", step, got, want, len(wire))
		}
	})
}
