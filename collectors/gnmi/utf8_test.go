package gnmi

import (
	"bytes"
	"encoding/json"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weirnet/weir/configs"
)

// latin1Codec is the server's proto codec, but every "#?#" it writes
// becomes "#\xe9#" (é in Latin-1, not UTF-8): what a C++ target
// sends when a description was typed in a Latin-1 terminal (its protobuf
// only logs invalid UTF-8 in a string field, and serializes it).
type latin1Codec struct{ encoding.CodecV2 }

func (c latin1Codec) Marshal(v any) (mem.BufferSlice, error) {
	data, err := c.CodecV2.Marshal(v)
	if err != nil {
		return nil, err
	}
	b := bytes.ReplaceAll(data.Materialize(), []byte("#?#"), []byte("#\xe9#"))
	data.Free()
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

// latin1Target answers every Subscribe with one notification holding a
// description and an interface name in Latin-1, a counter, and a
// sync_response, then keeps the stream open.
type latin1Target struct {
	gpb.UnimplementedGNMIServer
	contentType chan string
}

func (l latin1Target) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	md, _ := metadata.FromIncomingContext(stream.Context())
	select {
	case l.contentType <- strings.Join(md.Get("content-type"), ","):
	default:
	}
	n := &gpb.Notification{
		Timestamp: time.Now().UnixNano(),
		Prefix:    mustPath(nil, "/interfaces/interface[name=Ethernet1]/state"),
		Update: []*gpb.Update{
			{Path: mustPath(nil, "description"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: "caf#?# uplink"}}},
			{Path: mustPath(nil, "counters/in-octets"), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: 42}}},
		},
	}
	n.Prefix.Elem[1].Key["name"] = "Ethernet#?#"
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
		return err
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// TestInvalidUTF8FromTarget: a string the target sends that is not UTF-8
// (gNMI's strings must be, but a C++ target sends what it has) is kept
// with U+FFFD for its bad bytes; the rest of the notification is
// published and the stream goes on. Before, the whole message failed to
// decode (Internal: "string field contains invalid UTF-8"), the stream
// was dropped, and every reconnect met the same message: the target's
// data was lost for good, but for its resync before the bad message,
// published again at every retry.
func TestInvalidUTF8FromTarget(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(latin1Codec{encoding.GetCodecV2("proto")}))
	contentType := make(chan string, 1)
	gpb.RegisterGNMIServer(srv, latin1Target{contentType: contentType})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)

	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{
		simTarget("latin1", lis.Addr().String(), sub("/interfaces/interface/state", "stream", "on_change", 0)),
	}})
	waitFor(t, 10*time.Second, "the sync_response", func() bool { return testutil.ToFloat64(r.m.Syncs.WithLabelValues("latin1")) == 1 })
	time.Sleep(200 * time.Millisecond) // a reconnect would come now
	if n := testutil.ToFloat64(r.m.Reconnects.WithLabelValues("latin1")); n != 0 {
		t.Errorf("%v reconnects, want 0: %v", n, r.c.Status()[0].LastError)
	}
	// The request is what gRPC's own codec sends.
	if ct := <-contentType; ct != "application/grpc" {
		t.Errorf("content-type %q, want application/grpc", ct)
	}
	ms := r.b.metrics(t)
	if len(ms) != 2 {
		t.Fatalf("want 2 records (state, counters), got %d: %+v", len(ms), ms)
	}
	for _, m := range ms {
		if m.Tags["name"] != "Ethernet#\uFFFD#" {
			t.Errorf("%s: name tag %q", m.Measurement, m.Tags["name"])
		}
		switch m.Measurement {
		case "interfaces_interface_state":
			if d, _ := m.Fields["description"].(string); d != "caf#\uFFFD# uplink" {
				t.Errorf("description %q", d)
			}
		case "interfaces_interface_state_counters":
			if m.Fields["in-octets"] != json.Number("42") {
				t.Errorf("in-octets %v", m.Fields["in-octets"])
			}
		default:
			t.Errorf("unexpected %s", m.Measurement)
		}
	}
}

// nestedTypedValue is a TypedValue of depth leaf-lists nested in one
// another around inner, a TypedValue.
func nestedTypedValue(depth int, inner []byte) []byte {
	// The headers (tag and length) from the inside out, each level a
	// ScalarArray.element in a TypedValue.leaflist_val; then written
	// from the outside in.
	var heads [][]byte
	n := len(inner)
	for range depth {
		for _, field := range []protowire.Number{1, 8} {
			h := protowire.AppendVarint(protowire.AppendTag(nil, field, protowire.BytesType), uint64(n))
			heads = append(heads, h)
			n += len(h)
		}
	}
	out := make([]byte, 0, n)
	for i := len(heads) - 1; i >= 0; i-- {
		out = append(out, heads[i]...)
	}
	return append(out, inner...)
}

// badString is a TypedValue's string_val of n bytes, the first not UTF-8.
func badString(n int) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), append([]byte{0xe9}, bytes.Repeat([]byte("a"), n-1)...))
}

// TestInvalidUTF8DeeplyNestedCostsItsSize: mending a message's strings
// costs memory in proportion to the message, however deeply its fields
// nest. Each nested message was rewritten into a buffer of its own, all
// alive until the outermost was written: a message of a few megabytes
// nested some thousand deep (gNMI's leaf-lists hold values that hold
// leaf-lists), well within protobuf's limit, took gigabytes, and the
// target (or anyone on the path to one without TLS) could take weir down
// with one message; nested deeper than protobuf's limit after a bad
// string, only the goroutine stack's limit stopped the rewriting.
func TestInvalidUTF8DeeplyNestedCostsItsSize(t *testing.T) {
	tv := nestedTypedValue(2000, badString(64<<10))
	u := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), tv)       // Update.val
	notif := protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), u)    // Notification.update
	data := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), notif) // SubscribeResponse.update
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var resp gpb.SubscribeResponse
	err := newLenientCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, &resp)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64*uint64(len(data)) {
		t.Errorf("mending a %d kB message allocated %d MB", len(data)>>10, got>>20)
	}
	v := resp.GetUpdate().GetUpdate()[0].GetVal()
	for range 2000 {
		v = v.GetLeaflistVal().GetElement()[0]
	}
	if s := v.GetStringVal(); !strings.HasPrefix(s, "\uFFFDaaa") || len(s) != 64<<10+2 {
		t.Errorf("the innermost string: %d bytes, %q...", len(s), s[:min(len(s), 8)])
	}

	// A bad string, then values nested past protobuf's limit: refused,
	// as protobuf refuses them, not followed down.
	deep := append(badString(1), nestedTypedValue(20000, nil)...)
	if err := newLenientCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(deep)}, &gpb.TypedValue{}); err == nil {
		t.Error("values nested 20,000 deep were taken")
	}
}
