package gnmi

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weirnet/weir/configs"
)

// TestTLSProbeEndsWithTheContext: the probe of whether a plaintext
// address serves TLS (after "error reading server preface") ends when
// weir stops, not up to tlsProbeTimeout later, against an address that
// accepts and never answers.
func TestTLSProbeEndsWithTheContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent, until the test ends
		}
	}()
	tg := &target{cfg: configs.GNMITarget{Name: "a", Address: ln.Addr().String(), Insecure: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	tg.rpcError(ctx, "subscribe", status.Error(codes.Unavailable, "connection error: desc = \"error reading server preface: EOF\""))
	if took := time.Since(start); took > time.Second {
		t.Errorf("the TLS probe took %v after its context ended", took)
	}
}
