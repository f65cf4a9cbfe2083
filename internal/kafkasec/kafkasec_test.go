package kafkasec

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/tlsconf"
)

// request sends one Metadata request to addr with the options of tc and
// sc, and returns its error.
func request(t *testing.T, addr string, tc *tlsconf.Client, sc *configs.SASL) error {
	t.Helper()
	opts, err := Options(tc, sc)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(addr), kgo.RequestRetries(0))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	return err
}

// TestSASLRefusalSaysWhy: a broker that closes the connection during SASL
// authentication (a wrong password, a mechanism it has no user for, a
// listener without SASL: Kafka and kfake answer some of these by closing)
// failed requests with a bare "EOF", which says nothing of SASL.
func TestSASLRefusalSaysWhy(t *testing.T) {
	secured, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "weir", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer secured.Close()
	open, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()

	if err := request(t, secured.ListenAddrs()[0], nil, &configs.SASL{Mechanism: "SCRAM-SHA-512", Username: "weir", Password: "pw"}); err != nil {
		t.Fatalf("right credentials: %v", err)
	}
	for _, c := range []struct {
		name string
		addr string
		sc   configs.SASL
	}{
		{"wrong password", secured.ListenAddrs()[0], configs.SASL{Mechanism: "SCRAM-SHA-512", Username: "weir", Password: "bad"}},
		{"other mechanism", secured.ListenAddrs()[0], configs.SASL{Mechanism: "SCRAM-SHA-256", Username: "weir", Password: "pw"}},
		{"cluster without SASL", open.ListenAddrs()[0], configs.SASL{Mechanism: "PLAIN", Username: "weir", Password: "pw"}},
	} {
		err := request(t, c.addr, nil, &c.sc)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"SASL " + c.sc.Mechanism, `user "weir"`, "password", "mechanism"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", c.name, msg, want)
			}
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: %v is no longer an EOF (franz-go retries those)", c.name, err)
		}
	}
}

// TestTLSToPlaintextListenerSaysWhy: with tls on, a plaintext listener
// does not answer the TLS handshake (or closes it); the dial's error says
// it was the handshake, and what is likely wrong.
func TestTLSToPlaintextListenerSaysWhy(t *testing.T) {
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
			go func() { io.Copy(io.Discard, c); c.Close() }() // reads, never answers, as a Kafka listener waiting for a request
		}
	}()
	dial := dialer(&tls.Config{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = dial(ctx, "tcp", ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "TLS handshake") || !strings.Contains(err.Error(), "plaintext") {
		t.Fatalf("dial: %v, want it to name the TLS handshake and a plaintext listener", err)
	}
}
