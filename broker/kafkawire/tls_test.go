package kafkawire

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// authRecorder is a Metrics that records AuthFailed's reasons.
type authRecorder struct {
	mu      sync.Mutex
	reasons []string
}

func (a *authRecorder) metrics() *Metrics {
	return &Metrics{AuthFailed: func(_ net.Addr, reason string) {
		a.mu.Lock()
		a.reasons = append(a.reasons, reason)
		a.mu.Unlock()
	}}
}

// waitReason waits for AuthFailed with reason (the server counts after
// the client saw the connection close).
func (a *authRecorder) waitReason(t *testing.T, reason string) {
	t.Helper()
	for range 500 {
		a.mu.Lock()
		got := strings.Join(a.reasons, ",")
		a.mu.Unlock()
		if strings.Contains(","+got+",", ","+reason+",") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	t.Fatalf("AuthFailed reasons %q, want %q among them", a.reasons, reason)
}

// tlsServer starts a server with TLS from files tlsconf reads (reloading,
// as weir run serves them), requiring client certificates signed by
// clientCA when it is not nil.
func tlsServer(t *testing.T, fl *fakeLog, ca, clientCA *tlstest.CA, opts ...Option) string {
	t.Helper()
	cert, key := ca.LeafFiles(t, "weir")
	clientCAFile := ""
	if clientCA != nil {
		clientCAFile = clientCA.File
	}
	tc, err := tlsconf.ServerReloading(cert, key, clientCAFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, fl, append([]Option{WithTLS(tc)}, opts...)...)
	return addr
}

// produceConsume produces n records to topic with one client and reads
// them back with another, both made with opts.
func produceConsume(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prod := newClient(t, addr, opts...)
	for i := range n {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	cons := newClient(t, addr, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	got := 0
	for got < n {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after %d records: %v", got, err)
		}
		got += fs.NumRecords()
	}
}

func TestTLSKgo(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "secure", 2)
	ca := tlstest.NewCA(t, "kafka-ca")
	addr := tlsServer(t, fl, ca, nil)
	produceConsume(t, addr, "secure", 20, kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool()}))
}

// TestTLSMutual: with a client CA, a client without a certificate, or
// with one another CA signed, is refused; one with a good certificate
// produces and consumes.
func TestTLSMutual(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "secure", 1)
	ca := tlstest.NewCA(t, "kafka-ca")
	clientCA := tlstest.NewCA(t, "client-ca")
	var rec authRecorder
	addr := tlsServer(t, fl, ca, clientCA, WithMetrics(rec.metrics()))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stranger := ca.TLSCert(t, "stranger")
	for _, tc := range []struct {
		name string
		cert *tls.Certificate
	}{
		{"no certificate", nil},
		{"certificate of another CA", &stranger},
	} {
		cfg := &tls.Config{RootCAs: ca.Pool()}
		if tc.cert != nil {
			// Sent whatever CAs the server names (Go's client
			// would send none that does not match).
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return tc.cert, nil }
		}
		cl := newClient(t, addr, kgo.DialTLSConfig(cfg),
			kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
		if err := cl.Ping(ctx); err == nil {
			t.Errorf("%s: Ping succeeded, want the connection refused", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
	rec.waitReason(t, "tls")

	produceConsume(t, addr, "secure", 5, kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{clientCA.TLSCert(t, "dashboard")}}))
}

// TestTLSPlaintextClient: a plaintext client on a TLS listener is
// counted as a failed TLS handshake, and the log says what it likely is.
func TestTLSPlaintextClient(t *testing.T) {
	fl := newFakeLog()
	ca := tlstest.NewCA(t, "kafka-ca")
	var rec authRecorder
	addr := tlsServer(t, fl, ca, nil, WithMetrics(rec.metrics()))
	r := dialRaw(t, addr)
	r.c.Write([]byte{0, 0, 0, 20, 0, 18, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.c.Read(make([]byte, 64)); err == nil {
		// The server answers with a TLS alert at most.
		t.Log("read a TLS alert")
	}
	rec.waitReason(t, "tls")
}

// TestTLSKcat: librdkafka with security.protocol=ssl produces and
// consumes, and is refused without its certificate under mutual TLS.
func TestTLSKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed")
	}
	fl := newFakeLog()
	newTopic(t, fl, "lines", 1)
	ca := tlstest.NewCA(t, "kafka-ca")
	clientCA := tlstest.NewCA(t, "client-ca")
	addr := tlsServer(t, fl, ca, clientCA)
	cert, key := clientCA.LeafFiles(t, "kcat")
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	run := func(stdin string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, kcat, append([]string{"-b", addr, "-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + ca.File}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("kcat %v: %v\n%s", args, err, errOut.String())
		}
		return out.String(), err
	}
	withCert := []string{"-X", "ssl.certificate.location=" + cert, "-X", "ssl.key.location=" + key}
	if _, err := run("one\ntwo\n", append(withCert, "-P", "-t", "lines")...); err != nil {
		t.Fatal(err)
	}
	out, err := run("", append(withCert, "-C", "-t", "lines", "-o", "beginning", "-e", "-q")...)
	if err != nil {
		t.Fatal(err)
	}
	if out != "one\ntwo\n" {
		t.Fatalf("kcat -C: %q", out)
	}
	// Without a certificate: -L fails (librdkafka retries until its
	// metadata timeout).
	if out, err := run("", "-L", "-m", "3"); err == nil {
		t.Fatalf("kcat -L without a client certificate succeeded:\n%s", out)
	}
}
