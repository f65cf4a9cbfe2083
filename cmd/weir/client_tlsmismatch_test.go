package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestClientTLSToPlaintextCluster: --tls against a plaintext listener,
// which never answers the TLS handshake, failed the command after its 15 s
// with only "context deadline exceeded"; it now says the handshake did not
// complete and that the listener is likely plaintext.
func TestClientTLSToPlaintextCluster(t *testing.T) {
	// Each command waits out its 15 s for a handshake never answered:
	// the two wait at once, and beside the other tests that wait.
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close) // after the parallel subtests
	addr := cluster.ListenAddrs()[0]
	for _, args := range [][]string{
		{"topics", "list", "--brokers", addr, "--tls-insecure-skip-verify"},
		{"groups", "list", "--brokers", addr, "--tls"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			err := dispatch(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
			if err == nil || exitCode(err) != 1 {
				t.Fatalf("%v: %v (exit %d), want exit 1", args, err, exitCode(err))
			}
			if msg := err.Error(); !strings.Contains(msg, "TLS handshake with "+addr) || !strings.Contains(msg, "plaintext") {
				t.Errorf("%v: %q: want it to name the TLS handshake and a plaintext listener", args, msg)
			}
		})
	}
}
