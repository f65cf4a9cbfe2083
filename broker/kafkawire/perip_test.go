package kafkawire

import (
	"context"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirnet/weir/internal/peers"
)

// refusals records Metrics.ConnRefused calls by reason and address.
type refusals struct {
	mu  sync.Mutex
	got map[string][]string // reason -> remote IPs
}

func (r *refusals) record(remote net.Addr, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = map[string][]string{}
	}
	ip, _, _ := net.SplitHostPort(remote.String())
	r.got[reason] = append(r.got[reason], ip)
}

func (r *refusals) count(reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got[reason])
}

func pingRaw(t testing.TB, rc *rawClient) {
	t.Helper()
	if r := rc.do(kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 {
		t.Fatalf("ping: error %d", r.ErrorCode)
	}
}

// TestConnectionLimitPerIP: past WithMaxConnectionsPerIP a connection from
// that address is closed on arrival and reported with its own reason,
// while other addresses are served (franz-go, from 127.0.0.2, under an
// override); once one of the address's connections leaves, it may connect
// again (kcat).
func TestConnectionLimitPerIP(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	var ref refusals
	_, addr := startServer(t, fl,
		WithMaxConnections(100),
		WithMaxConnectionsPerIP(2, map[netip.Addr]int{netip.MustParseAddr("127.0.0.2"): 10}),
		WithMetrics(&Metrics{ConnRefused: ref.record}))

	a, b := dialRaw(t, addr), dialRaw(t, addr)
	pingRaw(t, a)
	pingRaw(t, b)
	third := peers.DialFrom(t, "127.0.0.1", addr)
	expectClosed(t, third)
	if n := ref.count(RefusedPerIP); n != 1 {
		t.Fatalf("refused per address %d, want 1 (%v)", n, ref.got)
	}
	if got := ref.got[RefusedPerIP][0]; got != "127.0.0.1" {
		t.Errorf("refused %s, want 127.0.0.1", got)
	}
	if n := ref.count(RefusedMaxConnections); n != 0 {
		t.Errorf("refused at max_connections %d, want 0", n)
	}

	// Another address is not held back by 127.0.0.1's connections; its
	// override lets it open more than 2 (franz-go opens several).
	other := &rawClient{t: t, c: peers.DialFrom(t, "127.0.0.2", addr)}
	pingRaw(t, other)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newClient(t, addr, kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
		return d.DialContext(ctx, network, host)
	}), kgo.RecordRetries(3))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("franz-go from 127.0.0.2: %v (refused: %v)", err, ref.got)
	}
	pingRaw(t, a) // those served go on

	// One of 127.0.0.1's connections leaves: a slot is free for it again.
	b.c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("127.0.0.1 not served again after one of its connections left")
		}
		if out, err := exec.Command("kcat", "-b", addr, "-L", "-m", "2").CombinedOutput(); err == nil {
			if !strings.Contains(string(out), "topic \"t\"") {
				t.Fatalf("kcat -L: %s", out)
			}
			break
		} else if _, lerr := exec.LookPath("kcat"); lerr != nil && servedRaw(addr) {
			break // without kcat: a raw ApiVersions, retried like kcat
		}
	}
	if n := ref.count(RefusedMaxConnections); n != 0 {
		t.Errorf("refused at max_connections %d, want 0", n)
	}
}

// TestConnectionLimitReason: the global limit is reported as
// such, with its own reason, when reached before the per-address one.
func TestConnectionLimitReason(t *testing.T) {
	fl := newFakeLog()
	var ref refusals
	_, addr := startServer(t, fl, WithMaxConnections(1), WithMaxConnectionsPerIP(5, nil),
		WithMetrics(&Metrics{ConnRefused: ref.record}))
	pingRaw(t, dialRaw(t, addr))
	expectClosed(t, peers.DialFrom(t, "127.0.0.2", addr))
	if ref.count(RefusedMaxConnections) != 1 || ref.count(RefusedPerIP) != 0 {
		t.Errorf("refusals %v, want one at max_connections", ref.got)
	}
}

// TestConnectionLimitPerIPOff: 0 sets no per-address bound.
func TestConnectionLimitPerIPOff(t *testing.T) {
	fl := newFakeLog()
	var ref refusals
	_, addr := startServer(t, fl, WithMaxConnectionsPerIP(0, nil), WithMetrics(&Metrics{ConnRefused: ref.record}))
	for range 5 {
		pingRaw(t, dialRaw(t, addr))
	}
	if len(ref.got) != 0 {
		t.Errorf("refusals %v, want none", ref.got)
	}
}
