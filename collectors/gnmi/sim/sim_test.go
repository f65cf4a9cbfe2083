package sim

import (
	"context"
	"maps"
	"math"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// once subscribes ONCE to path on a fresh simulator and returns the
// updates' leaf names by their prefix's interface, or the stream's error.
func once(t *testing.T, path []*gpb.PathElem, enc gpb.Encoding) (map[string][]string, error) {
	t.Helper()
	stream := subscribeOnce(t, Config{Interfaces: 3, ToggleEvery: -1}, enc, &gpb.Path{Elem: path})
	got := map[string][]string{}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return got, err
		}
		if resp.GetSyncResponse() {
			return got, nil
		}
		n := resp.GetUpdate()
		ifc := n.GetPrefix().GetElem()[1].GetKey()["name"]
		for _, u := range n.GetUpdate() {
			name := "{json}"
			if es := u.GetPath().GetElem(); len(es) > 0 {
				name = es[len(es)-1].GetName()
			}
			got[ifc] = append(got[ifc], name)
		}
	}
}

func counters(ifc, leaf string) []*gpb.PathElem {
	p := []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface"}, {Name: "state"}, {Name: "counters"}}
	if ifc != "" {
		p[1].Key = map[string]string{"name": ifc}
	}
	if leaf != "" {
		p = append(p, &gpb.PathElem{Name: leaf})
	}
	return p
}

// TestSubscribeAnyServedPath: every interface and every counter leaf the
// simulator serves can be subscribed to by name, not only the first
// interface and the first counter (which the rest were refused as
// matching nothing, NotFound).
func TestSubscribeAnyServedPath(t *testing.T) {
	for _, c := range []struct {
		ifc, leaf string
		enc       gpb.Encoding
		want      map[string][]string
	}{
		{"Ethernet1", "", gpb.Encoding_JSON, map[string][]string{"Ethernet1": {"{json}"}}},
		{"Ethernet2", "", gpb.Encoding_JSON, map[string][]string{"Ethernet2": {"{json}"}}},
		{"Ethernet3", "in-octets", gpb.Encoding_PROTO, map[string][]string{"Ethernet3": {"in-octets"}}},
		{"Ethernet1", "in-errors", gpb.Encoding_JSON, map[string][]string{"Ethernet1": {"in-errors"}}},
		{"*", "out-octets", gpb.Encoding_PROTO, map[string][]string{"Ethernet1": {"out-octets"}, "Ethernet2": {"out-octets"}, "Ethernet3": {"out-octets"}}},
		{"", "out-discards", gpb.Encoding_PROTO, map[string][]string{"Ethernet1": {"out-discards"}, "Ethernet2": {"out-discards"}, "Ethernet3": {"out-discards"}}},
	} {
		got, err := once(t, counters(c.ifc, c.leaf), c.enc)
		if err != nil {
			t.Errorf("%s %s: %v", c.ifc, c.leaf, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s %s: got %v, want %v", c.ifc, c.leaf, got, c.want)
			continue
		}
		for ifc, leaves := range c.want {
			if len(got[ifc]) != len(leaves) || got[ifc][0] != leaves[0] {
				t.Errorf("%s %s: got %v, want %v", c.ifc, c.leaf, got, c.want)
			}
		}
	}
	// What it does not serve is still refused.
	for _, p := range [][]*gpb.PathElem{counters("Ethernet9", ""), counters("Ethernet1", "no-such-counter")} {
		if _, err := once(t, p, gpb.Encoding_PROTO); err == nil {
			t.Errorf("%v: served, want NotFound", p)
		}
	}
}

// serveSubscribe serves a simulator of cfg on a free port and opens a
// Subscribe stream to it, with nothing sent yet; server and stream end
// with the test (or after 10 s).
func serveSubscribe(t *testing.T, cfg Config) (*Server, gpb.GNMI_SubscribeClient) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s := New(cfg)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-served })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	stream, err := gpb.NewGNMIClient(conn).Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, stream
}

// operStream subscribes ON_CHANGE (with heartbeats every heartbeat, if
// not 0) to every interface's oper-status on a fresh simulator and returns
// it and a function reading the next update (interface, value).
func operStream(t *testing.T, cfg Config, heartbeat time.Duration) (*Server, func() (string, string)) {
	t.Helper()
	s, stream := serveSubscribe(t, cfg)
	path := []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface"}, {Name: "state"}, {Name: "oper-status"}}
	if err := stream.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_PROTO,
		Subscription: []*gpb.Subscription{{Path: &gpb.Path{Elem: path}, Mode: gpb.SubscriptionMode_ON_CHANGE, HeartbeatInterval: uint64(heartbeat)}},
	}}}); err != nil {
		t.Fatal(err)
	}
	return s, func() (string, string) {
		t.Helper()
		for {
			resp, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetSyncResponse() {
				continue
			}
			n := resp.GetUpdate()
			u := n.GetUpdate()[0]
			if got := u.GetPath().GetElem()[0].GetName(); got != "oper-status" {
				t.Fatalf("leaf %q", got)
			}
			return n.GetPrefix().GetElem()[1].GetKey()["name"], u.GetVal().GetStringVal()
		}
	}
}

// TestOperStatusOnChange: every interface's oper-status is served, UP at
// first, and a flap is sent to ON_CHANGE subscribers as it happens, only
// for the interface that changed.
func TestOperStatusOnChange(t *testing.T) {
	s, recv := operStream(t, Config{Interfaces: 3, ToggleEvery: -1}, 0)
	for _, want := range []string{"Ethernet1", "Ethernet2", "Ethernet3"} {
		if ifc, v := recv(); ifc != want || v != "UP" {
			t.Fatalf("initial state: %s %s, want %s UP", ifc, v, want)
		}
	}
	s.Flap(1)
	if ifc, v := recv(); ifc != "Ethernet2" || v != "DOWN" {
		t.Errorf("after Flap(1): %s %s, want Ethernet2 DOWN", ifc, v)
	}
	s.Flap(1)
	if ifc, v := recv(); ifc != "Ethernet2" || v != "UP" {
		t.Errorf("after the second Flap(1): %s %s, want Ethernet2 UP", ifc, v)
	}
}

// TestSetOperStatus: an interface set DOWN is sent DOWN to ON_CHANGE
// subscribers, once; set DOWN again it is no change, nor sent.
func TestSetOperStatus(t *testing.T) {
	s, recv := operStream(t, Config{Interfaces: 2, ToggleEvery: -1}, 0)
	for range 2 {
		recv() // the states when subscribed
	}
	s.SetOperStatus(1, false)
	if ifc, v := recv(); ifc+" "+v != "Ethernet2 DOWN" {
		t.Errorf("after SetOperStatus(1, false): %s %s, want Ethernet2 DOWN", ifc, v)
	}
	s.SetOperStatus(1, false)
	s.SetOperStatus(0, true)
	s.SetOperStatus(1, true)
	if ifc, v := recv(); ifc+" "+v != "Ethernet2 UP" {
		t.Errorf("after SetOperStatus(1, true): %s %s, want Ethernet2 UP (nothing sent for the calls that changed nothing)", ifc, v)
	}
}

// TestFlapEvery: FlapEvery takes each interface down and back up in turn,
// one down at a time (the target's own state says). Every update is a change of its interface (DOWN after UP, UP after
// DOWN), and each interface flaps. Not their order: flips that come
// between two sends (a loaded machine, at 20ms) go out together, in the
// interfaces' order, and a flap down and up again between two sends is
// no change at all.
func TestFlapEvery(t *testing.T) {
	s, recv := operStream(t, Config{Interfaces: 2, ToggleEvery: -1, FlapEvery: 20 * time.Millisecond}, 0)
	stop := make(chan struct{})
	bothDown := make(chan bool, 1)
	go func() {
		seen := false
		for {
			select {
			case <-stop:
				bothDown <- seen
				return
			case <-time.After(2 * time.Millisecond):
			}
			s.mu.Lock()
			seen = seen || !s.states[len(s.states)-1] && !s.states[len(s.states)-2]
			s.mu.Unlock()
		}
	}()
	defer func() {
		close(stop)
		if <-bothDown {
			t.Error("both interfaces down at once")
		}
	}()
	state := map[string]string{}
	for range 2 { // the states when subscribed (a flap may come first)
		ifc, v := recv()
		state[ifc] = v
	}
	downs := map[string]int{}
	for i := 0; i < 40 && (downs["Ethernet1"] < 2 || downs["Ethernet2"] < 2); i++ {
		ifc, v := recv()
		if v == state[ifc] || v != "UP" && v != "DOWN" {
			t.Fatalf("update %d: %s %s, which it was already (or no state)", i, ifc, v)
		}
		state[ifc] = v
		if v == "DOWN" {
			downs[ifc]++
		}
	}
	if downs["Ethernet1"] < 2 || downs["Ethernet2"] < 2 {
		t.Errorf("flaps down seen: %v, want each interface's, twice", downs)
	}
}

// TestOnChangeHeartbeat: an ON_CHANGE subscription with a heartbeat gets
// every value again each heartbeat, unchanged ones too, so a consumer
// that drops what it has not heard of lately (Prometheus' staleness)
// keeps them.
func TestOnChangeHeartbeat(t *testing.T) {
	_, recv := operStream(t, Config{Interfaces: 2, ToggleEvery: -1}, 30*time.Millisecond)
	for i := 0; i < 6; i++ { // the initial states, then two heartbeats and more
		want := []string{"Ethernet1", "Ethernet2"}[i%2]
		if ifc, v := recv(); ifc != want || v != "UP" {
			t.Fatalf("update %d: %s %s, want %s UP", i, ifc, v, want)
		}
	}
}

// TestClockOffset: ClockOffset stamps notifications that far from the
// host's clock, as a target whose clock is behind (or ahead of) the
// collector's.
func TestClockOffset(t *testing.T) {
	const offset = -time.Hour
	before := time.Now()
	stream := subscribeOnce(t, Config{Interfaces: 1, ToggleEvery: -1, ClockOffset: offset}, gpb.Encoding_PROTO,
		&gpb.Path{Elem: counters("", "")}, &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface"}, {Name: "state"}, {Name: "oper-status"}}})
	n := 0
	for {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetSyncResponse() {
			break
		}
		after := time.Now()
		ts := time.Unix(0, resp.GetUpdate().GetTimestamp())
		if ts.Before(before.Add(offset)) || ts.After(after.Add(offset)) {
			t.Errorf("notification of %v stamped %v, want between %v and %v", resp.GetUpdate().GetPrefix(), ts, before.Add(offset), after.Add(offset))
		}
		n++
	}
	if n < 2 {
		t.Fatalf("%d notifications, want the counters and the oper-status", n)
	}
}

// subscribeOnce serves a simulator of cfg on a free port and sends it a
// ONCE subscription to paths in enc; server and stream end with the test
// (or after 10 s).
func subscribeOnce(t *testing.T, cfg Config, enc gpb.Encoding, paths ...*gpb.Path) gpb.GNMI_SubscribeClient {
	t.Helper()
	_, stream := serveSubscribe(t, cfg)
	subs := make([]*gpb.Subscription, len(paths))
	for i, p := range paths {
		subs[i] = &gpb.Subscription{Path: p}
	}
	if err := stream.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_ONCE, Encoding: enc, Subscription: subs,
	}}}); err != nil {
		t.Fatal(err)
	}
	return stream
}

// TestTrafficLooksLikeAPort: the counters ran at 1,000×N octets a second
// on a port that says SPEED_100GB: a dashboard of the lab showed the
// spines at 0.00004% utilisation beside leaves at 2–30%, and more errors
// a second than a tenth of their packets. EthernetN now carries 2×N Gbit/s
// in, packets of 800 octets, and errors and discards far fewer than
// packets.
func TestTrafficLooksLikeAPort(t *testing.T) {
	if len(counterShare) != len(Counters) {
		t.Fatalf("%d counter shares for %d counters", len(counterShare), len(Counters))
	}
	s := New(Config{})
	w := &writer{s: s}
	at := s.start.Add(time.Hour)
	for i := range s.ifaces {
		ifc := &s.ifaces[i]
		rate := func(counter string) float64 {
			j := slices.Index(Counters, counter)
			return float64(w.counterValue(i, j, at.Add(10*time.Second))-w.counterValue(i, j, at)) / 10
		}
		util := rate("in-octets") * 8 / 100e9 * 100
		if want := float64(2 * (i + 1)); math.Abs(util-want) > 0.01 {
			t.Errorf("%s: in utilisation %.4f%% of 100G, want %v%%", ifc.name, util, want)
		}
		pkts := rate("in-unicast-pkts")
		if size := rate("in-octets") / pkts; size < 64 || size > 1500 {
			t.Errorf("%s: %.0f octets a packet", ifc.name, size)
		}
		for _, c := range []string{"in-errors", "in-discards", "out-discards"} {
			if r := rate(c); r > pkts/1000 {
				t.Errorf("%s: %s %.0f/s beside %.0f packets/s", ifc.name, c, r, pkts)
			}
		}
	}
}

// TestTrafficFitsThePortOfManyInterfaces: at 2×N Gbit/s, a target of more
// than 50 interfaces (weir-sim gnmi --interfaces 64, as the collector's
// tests serve) ran its last ones past their 100 Gbit/s port-speed, at
// up to 128% utilisation. The load goes round the eight of a lab target's.
func TestTrafficFitsThePortOfManyInterfaces(t *testing.T) {
	s := New(Config{Interfaces: 64})
	w := &writer{s: s}
	at := s.start.Add(time.Hour)
	for i := range s.ifaces {
		ifc := &s.ifaces[i]
		rate := float64(w.counterValue(i, 0, at.Add(10*time.Second))-w.counterValue(i, 0, at)) / 10
		if util, want := rate*8/100e9*100, float64(2*(i%8+1)); math.Abs(util-want) > 0.01 {
			t.Errorf("%s: in utilisation %.4f%% of 100G, want %v%%", ifc.name, util, want)
		}
	}
}

// TestIfIndexServed: each interface's OpenConfig state/ifindex is served
// (EthernetN's is N, as Arista numbers them), a uint32: uint_val in PROTO,
// a bare JSON number in JSON and JSON_IETF (RFC 7951 quotes only 64-bit
// integers). Before, a subscription to it was refused as NotFound, and
// with it the whole Subscribe, so a lab could not show gNMI naming the
// interfaces of bare-ifIndex traps.
func TestIfIndexServed(t *testing.T) {
	path := &gpb.Path{Elem: []*gpb.PathElem{{Name: "interfaces"}, {Name: "interface"}, {Name: "state"}, {Name: "ifindex"}}}
	for _, enc := range []gpb.Encoding{gpb.Encoding_PROTO, gpb.Encoding_JSON, gpb.Encoding_JSON_IETF} {
		stream := subscribeOnce(t, Config{Interfaces: 3, ToggleEvery: -1}, enc, path)
		got := map[string]string{}
		for {
			resp, err := stream.Recv()
			if err != nil {
				t.Fatalf("%s: %v", enc, err)
			}
			if resp.GetSyncResponse() {
				break
			}
			n := resp.GetUpdate()
			ifc := n.GetPrefix().GetElem()[1].GetKey()["name"]
			for _, u := range n.GetUpdate() {
				if leaf := u.GetPath().GetElem()[0].GetName(); leaf != "ifindex" {
					t.Errorf("%s: %s sent %s", enc, ifc, leaf)
				}
				switch v := u.GetVal(); enc {
				case gpb.Encoding_PROTO:
					got[ifc] = strconv.FormatUint(v.GetUintVal(), 10)
				case gpb.Encoding_JSON:
					got[ifc] = string(v.GetJsonVal())
				default:
					got[ifc] = string(v.GetJsonIetfVal())
				}
			}
		}
		if want := map[string]string{"Ethernet1": "1", "Ethernet2": "2", "Ethernet3": "3"}; !maps.Equal(got, want) {
			t.Errorf("%s: ifindexes %v, want %v", enc, got, want)
		}
	}
}

// TestCountersStandStillWhileDown: an interface's counters do not move
// while its oper-status is DOWN, and go on at its rate once UP (the lab's
// spine1 showed traffic on the port it said was down).
func TestCountersStandStillWhileDown(t *testing.T) {
	s := New(Config{Interfaces: 2})
	w := &writer{s: s}
	s.SetOperStatus(0, false)
	now := time.Now()
	if a, b := w.counterValue(0, 0, now), w.counterValue(0, 0, now.Add(10*time.Second)); a != b {
		t.Errorf("down: in-octets went from %d to %d in 10 s", a, b)
	}
	if a, b := w.counterValue(1, 0, now), w.counterValue(1, 0, now.Add(10*time.Second)); a >= b {
		t.Errorf("up: in-octets went from %d to %d in 10 s", a, b)
	}
	s.SetOperStatus(0, true)
	now = time.Now()
	if a, b := w.counterValue(0, 0, now), w.counterValue(0, 0, now.Add(10*time.Second)); b-a < 1e9 {
		t.Errorf("up again: in-octets went from %d to %d in 10 s", a, b)
	}
}
