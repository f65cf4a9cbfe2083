package gnmi

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weirnet/weir/collectors/gnmi/sim"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// TestNoIPSANSaysServerName: a target dialled by its address whose
// certificate names no IP address fails with crypto/tls's "doesn't
// contain any IP SANs", which names no setting: the error says to set
// tls.server_name; and one whose tls.server_name the certificate does not
// name says that setting is wrong.
func TestNoIPSANSaysServerName(t *testing.T) {
	ca := tlstest.NewCA(t, "lab CA")
	cert, file := ca.TLSCertNamed(t, "leaf1.lab"), ca.File
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	tc := simTarget("nosan", addr, sub(countersPath, "stream", "sample", time.Second))
	tc.Insecure = false
	tc.TLS = &configs.GNMITLS{CAFile: file}
	wrong := tc
	wrong.Name = "wrongname"
	wrong.TLS = &configs.GNMITLS{CAFile: file, ServerName: "leaf2.lab"}
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{tc, wrong}})
	want := map[string][]string{
		"nosan":     {"doesn't contain any IP SANs", "set tls.server_name"},
		"wrongname": {"certificate is valid for leaf1.lab, not leaf2.lab", "tls.server_name (leaf2.lab) is not a name"},
	}
	waitFor(t, 20*time.Second, "the errors with their hints", func() bool {
		ok := 0
		for _, st := range r.c.Status() {
			if st.LastError != nil && strings.Contains(st.LastError.Error(), want[st.Name][0]) && strings.Contains(st.LastError.Error(), want[st.Name][1]) {
				ok++
			}
		}
		return ok == 2
	})
}

// TestCapabilitiesTimeoutSaysTimeout: a target whose port accepts and
// never answers fails Capabilities with gRPC's "context deadline
// exceeded", which names no setting: the error names timeout.
func TestCapabilitiesTimeoutSaysTimeout(t *testing.T) {
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 100)
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	t.Cleanup(func() {
		hole.Close()
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{
		Name: "hole", Address: hole.Addr().String(), Insecure: true, Timeout: configs.Duration(300 * time.Millisecond),
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0)},
	}}})
	waitFor(t, 20*time.Second, "the error with its hint", func() bool {
		err := r.c.Status()[0].LastError
		return err != nil && strings.Contains(err.Error(), "deadline exceeded") && strings.Contains(err.Error(), "timeout (300ms)")
	})
}

// TestRefusedPathSaysTheWholeStream: a target that does not serve one of
// a target's paths (openconfig-if-ethernet's speed on a device without
// it) refuses the whole Subscribe, so none of its subscriptions stream,
// and its error names the path alone: which subscription it is, and that
// the others stopped with it, was left to guess. The error says it and
// names the target's subscriptions.
func TestRefusedPathSaysTheWholeStream(t *testing.T) {
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{})
	counters := sub(countersPath, "stream", "sample", time.Second)
	counters.Name = "counters"
	missing := sub("/interfaces/interface/ethernet/state/no-such-leaf", "stream", "on_change", 0)
	missing.Name = "speed"
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("refused", addr, counters, missing)}})
	last := firstTargetError(t, r, "matches nothing")
	for _, want := range []string{"none of this target's subscriptions stream", "counters (" + countersPath + ")", "speed (/interfaces/interface/ethernet/state/no-such-leaf)"} {
		if !strings.Contains(last, want) {
			t.Errorf("error %q does not say %q", last, want)
		}
	}
}

// endsWithNotFound answers a subscription with an update and the
// sync_response, then ends the stream with NotFound.
type endsWithNotFound struct{ gpb.UnimplementedGNMIServer }

func (endsWithNotFound) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	u := &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
		Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: "a"}, {Name: "b"}}},
		Val:  &gpb.TypedValue{Value: &gpb.TypedValue_IntVal{IntVal: 1}},
	}}}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: u}}); err != nil {
		return err
	}
	if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
		return err
	}
	return status.Error(codes.NotFound, "interface Ethernet9 removed")
}

// TestNotFoundAfterDataIsNoRefusedPath: a stream that delivered and was
// then ended with NotFound was not refused: its subscriptions did stream,
// and the error must not say none of them do.
func TestNotFoundAfterDataIsNoRefusedPath(t *testing.T) {
	addr := serveGNMI(t, endsWithNotFound{})
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "ended", Address: addr, Insecure: true,
		Subscriptions: []configs.GNMISubscription{sub("/a", "stream", "on_change", 0), sub("/c", "stream", "on_change", 0)}}}})
	last := firstTargetError(t, r, "Ethernet9 removed")
	if strings.Contains(last, "none of this target's subscriptions stream") {
		t.Errorf("error %q says the subscriptions were refused, after they streamed", last)
	}
}

// firstTargetError waits for the collector's first target to fail with an
// error that says what, and returns its text.
func firstTargetError(t *testing.T, r *running, what string) string {
	t.Helper()
	var last string
	waitFor(t, 20*time.Second, "an error saying "+what, func() bool {
		err := r.c.Status()[0].LastError
		if err == nil {
			return false
		}
		last = err.Error()
		return strings.Contains(last, what)
	})
	return last
}
