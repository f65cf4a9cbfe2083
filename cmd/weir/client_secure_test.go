package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// TestClientCommandsOnSecuredCluster: the client commands reach a Kafka
// cluster that wants TLS (a private CA, a client certificate) and SASL, as
// `weir run` does with broker.kafka's tls and sasl. Without a way to give
// them, `weir topics list --brokers` against such a cluster only failed
// ("is TLS missing?"), while the README sends the user to these commands
// to look at what weir wrote there.
func TestClientCommandsOnSecuredCluster(t *testing.T) {
	ca := tlstest.NewCA(t, "kafka CA")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{ca.TLSCert(t, "kafka")}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "weir", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	cert, key := ca.LeafFiles(t, "weir")
	t.Setenv("WEIR_SASL_PASSWORD", "s3cret")
	secured := []string{"--brokers", cluster.ListenAddrs()[0], "--tls-ca", ca.File, "--tls-cert", cert, "--tls-key", key,
		"--sasl-mechanism", "SCRAM-SHA-512", "--sasl-username", "weir"}
	run := func(stdin string, args ...string) (string, string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var stdout, stderr bytes.Buffer
		err := dispatch(ctx, args, strings.NewReader(stdin), &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, errs, err := run(stdin, append(args, secured...)...)
		if err != nil {
			t.Fatalf("weir %s: %v\n%s%s", strings.Join(args, " "), err, out, errs)
		}
		return out
	}
	must("", "topics", "create", "events", "--partitions", "1")
	must(`{"type":"interface_down"}`+"\n", "produce", "events", "--key", "edge1")
	if out := must("", "consume", "events", "--from-beginning", "--max", "1"); !strings.Contains(out, `"interface_down"`) {
		t.Fatalf("consume printed %q", out)
	}
	if out := must("", "consume", "events", "--from-beginning", "--max", "1", "--group", "ops"); !strings.Contains(out, `"interface_down"`) {
		t.Fatalf("consume --group printed %q", out)
	}
	if out := must("", "groups", "list"); !strings.Contains(out, "ops") {
		t.Fatalf("groups list printed %q", out)
	}
	if out := must("", "topics", "describe", "events"); !strings.Contains(out, "1") {
		t.Fatalf("topics describe printed %q", out)
	}

	// Settings that cannot work are refused before connecting.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", cert}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-ca", cert + ".missing"}, "tls ca_file"},
		{[]string{"--sasl-username", "weir"}, "need --sasl-mechanism"},
		{[]string{"--sasl-mechanism", "SCRAM-SHA-1", "--sasl-username", "weir"}, `not "SCRAM-SHA-1"`},
		{[]string{"--sasl-mechanism", "PLAIN"}, "--sasl-mechanism needs --sasl-username"},
	} {
		_, _, err := run("", append([]string{"topics", "list", "--brokers", cluster.ListenAddrs()[0]}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("topics list %s: %v (exit %d), want %q and exit 2", strings.Join(c.args, " "), err, exitCode(err), c.want)
		}
	}
}
