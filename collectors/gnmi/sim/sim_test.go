package sim

import (
	"context"
	"net"
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
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := New(Config{Interfaces: 3, ToggleEvery: -1})
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, lis) }()
	defer func() { cancel(); <-served }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := gpb.NewGNMIClient(conn).Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&gpb.SubscribeRequest{Request: &gpb.SubscribeRequest_Subscribe{Subscribe: &gpb.SubscriptionList{
		Mode: gpb.SubscriptionList_ONCE, Encoding: enc,
		Subscription: []*gpb.Subscription{{Path: &gpb.Path{Elem: path}}},
	}}}); err != nil {
		t.Fatal(err)
	}
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
