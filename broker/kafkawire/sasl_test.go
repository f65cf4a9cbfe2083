package kafkawire

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

var testUsers = []User{
	{Name: "writer", Password: "w-pass"},
	{Name: "reader", Password: "r-pass", ReadOnly: true},
	{Name: "odd,na=me", Password: "pässwörd"},
}

func testSASL(t testing.TB, mechanisms ...string) *SASL {
	t.Helper()
	s, err := NewSASL(mechanisms, testUsers)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mechanism(name, user, pass string) sasl.Mechanism {
	a := scram.Auth{User: user, Pass: pass}
	switch name {
	case MechanismPlain:
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case MechanismScramSHA256:
		return a.AsSha256Mechanism()
	}
	return a.AsSha512Mechanism()
}

// TestSASLKgo: franz-go authenticates with each mechanism (a user name
// SCRAM must escape, a password not ASCII), produces and consumes.
func TestSASLKgo(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 2)
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismScramSHA512, MechanismScramSHA256, MechanismPlain)))
	for _, m := range []string{MechanismPlain, MechanismScramSHA256, MechanismScramSHA512} {
		for _, u := range []User{testUsers[0], testUsers[2]} {
			t.Run(m+"/"+u.Name, func(t *testing.T) {
				produceConsume(t, addr, "t", 3, kgo.SASL(mechanism(m, u.Name, u.Password)))
			})
		}
	}
}

// TestSASLRefused: a wrong password, an unknown user, a mechanism not
// enabled, and a client without SASL are refused with what happened,
// and counted.
func TestSASLRefused(t *testing.T) {
	fl := newFakeLog()
	var rec authRecorder
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismScramSHA512, MechanismPlain)), WithMetrics(rec.metrics()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, reason string
		opt          []kgo.Opt
		want         string
	}{
		{"scram wrong password", "credentials", []kgo.Opt{kgo.SASL(mechanism(MechanismScramSHA512, "writer", "nope"))},
			"SASL_AUTHENTICATION_FAILED: SASL Authentication failed.: invalid credentials (unknown user or wrong password) with SASL mechanism SCRAM-SHA-512"},
		{"scram unknown user", "credentials", []kgo.Opt{kgo.SASL(mechanism(MechanismScramSHA512, "nobody", "x"))}, "SASL_AUTHENTICATION_FAILED"},
		{"plain wrong password", "credentials", []kgo.Opt{kgo.SASL(mechanism(MechanismPlain, "writer", "nope"))},
			"SASL_AUTHENTICATION_FAILED: SASL Authentication failed.: invalid credentials (unknown user or wrong password) with SASL mechanism PLAIN"},
		{"mechanism not enabled", "mechanism", []kgo.Opt{kgo.SASL(mechanism(MechanismScramSHA256, "writer", "w-pass"))}, "UNSUPPORTED_SASL_MECHANISM"},
		{"no sasl", "unauthenticated", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := newClient(t, addr, append(tc.opt, kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))...)
			err := cl.Ping(ctx)
			if err == nil {
				t.Fatal("Ping succeeded")
			}
			t.Logf("client's error: %v", err)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			rec.waitReason(t, tc.reason)
		})
	}
}

// TestSASLRaw: the protocol details real clients do not exercise:
// requests before authentication close the connection, ApiVersions
// lists the SASL APIs, SaslHandshake v0 with bare tokens works, a
// SaslAuthenticate without a handshake is ILLEGAL_SASL_STATE.
func TestSASLRaw(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismPlain)))

	r := dialRaw(t, addr)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "test", "1"
	resp := r.do(av).(*kmsg.ApiVersionsResponse)
	var keys []int16
	for _, k := range resp.ApiKeys {
		keys = append(keys, k.ApiKey)
	}
	if !bytes.Contains(fmt.Append(nil, keys), []byte("17")) || !bytes.Contains(fmt.Append(nil, keys), []byte("36")) {
		t.Errorf("ApiVersions lacks SaslHandshake or SaslAuthenticate: %v", keys)
	}
	// Metadata before authenticating: closed.
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	r.send(md)
	expectClosed(t, r.c)

	// SaslAuthenticate without a handshake.
	r = dialRaw(t, addr)
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version = 1
	au.SASLAuthBytes = []byte("\x00writer\x00w-pass")
	if ar := r.do(au).(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != kerr.IllegalSaslState.Code {
		t.Errorf("SaslAuthenticate without a handshake: code %d", ar.ErrorCode)
	}
	expectClosed(t, r.c)

	// SaslHandshake v0, then the PLAIN token bare: an empty bare frame
	// back, then requests work.
	r = dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 0, MechanismPlain
	if hr := r.do(hs).(*kmsg.SASLHandshakeResponse); hr.ErrorCode != 0 {
		t.Fatalf("SaslHandshake v0: code %d", hr.ErrorCode)
	}
	token := []byte("\x00writer\x00w-pass")
	r.c.Write(binary.BigEndian.AppendUint32(nil, uint32(len(token))))
	r.c.Write(token)
	var size [4]byte
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(r.c, size[:]); err != nil || binary.BigEndian.Uint32(size[:]) != 0 {
		t.Fatalf("bare PLAIN answer: %v %x", err, size)
	}
	md = kmsg.NewPtrMetadataRequest()
	md.Version = 4
	if mr := r.do(md).(*kmsg.MetadataResponse); len(mr.Topics) != 1 {
		t.Errorf("Metadata after v0 authentication: %d topics", len(mr.Topics))
	}

	// A second handshake after authenticating: ILLEGAL_SASL_STATE.
	hs.Version = 1
	if hr := r.do(hs).(*kmsg.SASLHandshakeResponse); hr.ErrorCode != kerr.IllegalSaslState.Code {
		t.Errorf("second SaslHandshake: code %d", hr.ErrorCode)
	}
	expectClosed(t, r.c)
}

// TestSASLKcat: librdkafka (kcat) with SASL_SSL and SCRAM-SHA-512 produces
// and consumes; a wrong password fails with librdkafka's authentication
// error.
func TestSASLKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat not installed")
	}
	fl := newFakeLog()
	newTopic(t, fl, "lines", 1)
	ca := tlstest.NewCA(t, "kafka-ca")
	addr := tlsServer(t, fl, ca, nil, WithSASL(testSASL(t, MechanismScramSHA512, MechanismScramSHA256, MechanismPlain)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := func(mech, user, pass, stdin string, args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, kcat, append([]string{"-b", addr, "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=" + mech,
			"-X", "sasl.username=" + user, "-X", "sasl.password=" + pass, "-X", "ssl.ca.location=" + ca.File}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	for _, m := range []string{MechanismScramSHA512, MechanismScramSHA256, MechanismPlain} {
		if _, stderr, err := run(m, "writer", "w-pass", m+"\n", "-P", "-t", "lines"); err != nil {
			t.Fatalf("kcat -P %s: %v\n%s", m, err, stderr)
		}
	}
	out, stderr, err := run(MechanismScramSHA512, "reader", "r-pass", "", "-C", "-t", "lines", "-o", "beginning", "-e", "-q")
	if err != nil {
		t.Fatalf("kcat -C: %v\n%s", err, stderr)
	}
	if want := "SCRAM-SHA-512\nSCRAM-SHA-256\nPLAIN\n"; out != want {
		t.Fatalf("kcat -C: %q, want %q", out, want)
	}
	_, stderr, err = run(MechanismScramSHA512, "writer", "wrong", "", "-L", "-m", "5")
	if err == nil {
		t.Fatal("kcat -L with a wrong password succeeded")
	}
	if !strings.Contains(stderr, "SASL authentication error: invalid credentials (unknown user or wrong password) with SASL mechanism SCRAM-SHA-512") {
		t.Errorf("kcat's error does not say authentication failed:\n%s", stderr)
	}
}

// TestSASLTLSKgo: SASL over TLS with franz-go (SASL_SSL).
func TestSASLTLSKgo(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	ca := tlstest.NewCA(t, "kafka-ca")
	addr := tlsServer(t, fl, ca, nil, WithSASL(testSASL(t, MechanismScramSHA512)))
	produceConsume(t, addr, "t", 3, kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool()}), kgo.SASL(mechanism(MechanismScramSHA512, "writer", "w-pass")))
}

// TestSASLPreAuthSize: before authenticating, a large frame (a Produce a
// client sends without SASL) closes the connection at its length, before
// the server reads it, as Kafka's sasl.server.max.receive.size does.
func TestSASLPreAuthSize(t *testing.T) {
	fl := newFakeLog()
	var rec authRecorder
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismPlain)), WithMetrics(rec.metrics()))
	r := dialRaw(t, addr)
	hdr := binary.BigEndian.AppendUint32(nil, 1<<20)
	hdr = append(hdr, 0, 0, 0, 9) // Produce v9
	r.c.Write(hdr)
	expectClosed(t, r.c)
	rec.waitReason(t, "unauthenticated")
}

// TestSASLPreAuthDeadline: a connection that does not authenticate
// within the frame timeout is closed, however many ApiVersions it sends
// to stay out of the idle timeout, so that clients without credentials
// cannot hold the connection slots (max_connections) for ever; one that
// authenticated stays open past it.
func TestSASLPreAuthDeadline(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	var rec authRecorder
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismPlain)), WithMetrics(rec.metrics()),
		WithFrameTimeout(200*time.Millisecond), WithIdleTimeout(time.Hour))

	r := dialRaw(t, addr)
	av := kmsg.NewPtrApiVersionsRequest()
	closed := false
	for range 100 {
		r.send(av)
		if _, err := r.readFrame(); err != nil {
			closed = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !closed {
		t.Fatal("an unauthenticated connection sending ApiVersions stayed open for 10 s, past the 200 ms frame timeout")
	}
	rec.waitReason(t, "unauthenticated")

	// Authenticated, the idle timeout (an hour) applies.
	r = dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MechanismPlain
	if hr := r.do(hs).(*kmsg.SASLHandshakeResponse); hr.ErrorCode != 0 {
		t.Fatalf("SaslHandshake: code %d", hr.ErrorCode)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version = 1
	au.SASLAuthBytes = []byte("\x00writer\x00w-pass")
	if ar := r.do(au).(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != 0 {
		t.Fatalf("SaslAuthenticate: code %d", ar.ErrorCode)
	}
	time.Sleep(time.Second) // five frame timeouts
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	if mr := r.do(md).(*kmsg.MetadataResponse); len(mr.Topics) != 1 {
		t.Errorf("Metadata after authenticating: %d topics", len(mr.Topics))
	}
}

// TestSASLUpdate: after Update, new connections authenticate with the new
// password and not the old one, with each mechanism, and get the new
// read_only; a connection authenticated before keeps its session (a
// changed password ends none) but has its user's new read_only at once,
// and one of a removed user is closed; Update with bad users changes
// nothing.
func TestSASLUpdate(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	auth := testSASL(t, MechanismPlain, MechanismScramSHA256)
	_, addr := startServer(t, fl, WithSASL(auth))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ping := func(mech, user, pass string) error {
		cl := newClient(t, addr, kgo.SASL(mechanism(mech, user, pass)), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
		defer cl.Close()
		return cl.Ping(ctx)
	}
	produce := func(cl *kgo.Client) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr()
	}
	// Authenticated before the update, as writer.
	before := newClient(t, addr, kgo.SASL(mechanism(MechanismScramSHA256, "writer", "w-pass")), kgo.DisableIdempotentWrite(), kgo.RequestRetries(0))
	if err := produce(before); err != nil {
		t.Fatalf("produce before the update: %v", err)
	}
	reader := newClient(t, addr, kgo.SASL(mechanism(MechanismPlain, "reader", "r-pass")), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
	if err := reader.Ping(ctx); err != nil {
		t.Fatalf("reader before the update: %v", err)
	}

	if err := auth.Update([]string{MechanismPlain, MechanismScramSHA256}, []User{{Name: "writer", Password: ""}}); err == nil {
		t.Fatal("Update with an empty password succeeded")
	}
	if err := ping(MechanismPlain, "writer", "w-pass"); err != nil {
		t.Fatalf("after a refused Update, the old password: %v", err)
	}

	if err := auth.Update([]string{MechanismPlain, MechanismScramSHA256}, []User{{Name: "writer", Password: "new-pass", ReadOnly: true}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{MechanismPlain, MechanismScramSHA256} {
		if err := ping(m, "writer", "w-pass"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s with the old password: %v", m, err)
		}
		if err := ping(m, "reader", "r-pass"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s as a removed user: %v", m, err)
		}
		if err := ping(m, "writer", "new-pass"); err != nil {
			t.Errorf("%s with the new password: %v", m, err)
		}
	}
	after := newClient(t, addr, kgo.SASL(mechanism(MechanismPlain, "writer", "new-pass")), kgo.DisableIdempotentWrite(), kgo.RequestRetries(0))
	if err := produce(after); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("produce as writer, read_only since the update: %v", err)
	}
	if err := produce(before); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("produce on the connection authenticated before the update, as writer now read_only: %v", err)
	}
	// The removed reader's connection is closed at its next request, and
	// the client cannot authenticate again.
	if _, err := reader.SeedBrokers()[0].Request(ctx, kmsg.NewPtrMetadataRequest()); err == nil || errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("a request on the removed user's connection: %v, want its connection closed", err)
	} else {
		t.Logf("the removed user's request: %v", err)
	}
}

// TestSASLPreAuthHoldsNoRequestMemory: clients that did not authenticate,
// sending the largest request they may, hold none of the server's request
// memory (WithMaxBufferedRequestBytes), so that they cannot crowd out the
// produce requests of authenticated clients.
func TestSASLPreAuthHoldsNoRequestMemory(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	// They hold what they sent until the frame timeout: an hour here.
	s, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismPlain)), WithMaxBufferedRequestBytes(2<<20), WithFrameTimeout(time.Hour))
	for range 4 {
		r := dialRaw(t, addr)
		// A SaslAuthenticate as large as a client that did not
		// authenticate may send, all but its last bytes.
		size := maxPreAuthBytes
		b := binary.BigEndian.AppendUint32(nil, uint32(size))
		b = append(b, 0, 36, 0, 1, 0, 0, 0, 1)
		b = append(b, make([]byte, size-100)...)
		r.c.Write(b)
	}
	// What the server holds while it reads them.
	for range 50 {
		if n := s.buffered.Load(); n != 0 {
			t.Fatalf("%d bytes of request memory held by clients that did not authenticate", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// An authenticated producer's 900 KiB request goes through.
	r := dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MechanismPlain
	r.do(hs)
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.SASLAuthBytes = []byte("\x00writer\x00w-pass")
	if ar := r.do(au).(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != 0 {
		t.Fatalf("SaslAuthenticate: code %d", ar.ErrorCode)
	}
	corr := r.send(produceReq(7, 1, "t", 0, batch(strings.Repeat("x", 900<<10))))
	body, err := r.readFrame()
	if err != nil {
		t.Fatalf("an authenticated produce while clients that did not authenticate hold large requests: %v", err)
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	rd := kbin.Reader{Src: body}
	if got := rd.Int32(); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	if err := resp.ReadFrom(rd.Src); err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("produce: %v %+v", err, resp.Topics)
	}
}

// TestSCRAMUnknownUserLooksKnown: SCRAM's first message gets a
// server-first for an unknown user as for a known one, with a salt that
// is the same at every attempt, so that a client cannot tell which user
// names exist (RFC 5802, section 9's "mock" exchange); it is refused at the
// client-final, as a wrong password is, and counted as credentials.
func TestSCRAMUnknownUserLooksKnown(t *testing.T) {
	fl := newFakeLog()
	var rec authRecorder
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismScramSHA512)), WithMetrics(rec.metrics()))
	first := func(user string) (*rawClient, string) {
		r := dialRaw(t, addr)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, MechanismScramSHA512
		r.do(hs)
		au := kmsg.NewPtrSASLAuthenticateRequest()
		au.SASLAuthBytes = []byte("n,,n=" + user + ",r=abc")
		ar := r.do(au).(*kmsg.SASLAuthenticateResponse)
		if ar.ErrorCode != 0 {
			t.Fatalf("client-first as %q: code %d", user, ar.ErrorCode)
		}
		return r, string(ar.SASLAuthBytes)
	}
	salt := func(serverFirst string) string {
		f := strings.Split(serverFirst, ",")
		if len(f) != 3 || f[2] != "i=4096" {
			t.Fatalf("server-first %q", serverFirst)
		}
		return f[1]
	}
	_, known := first("writer")
	r, unknown := first("nobody")
	_, again := first("nobody")
	_, other := first("somebody")
	if len(salt(known)) != len(salt(unknown)) || salt(unknown) != salt(again) || salt(unknown) == salt(other) {
		t.Errorf("salts: writer %s, nobody %s then %s, somebody %s", salt(known), salt(unknown), salt(again), salt(other))
	}
	nonce := strings.TrimPrefix(strings.Split(unknown, ",")[0], "r=")
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.SASLAuthBytes = []byte(scramClientFinal(t, "x", "n=nobody,r=abc", unknown, nonce))
	if ar := r.do(au).(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Errorf("client-final of an unknown user: code %d", ar.ErrorCode)
	}
	expectClosed(t, r.c)
	rec.waitReason(t, "credentials")
}

// TestSASLUserInCloseLog: the line logged when an authenticated client's
// connection ends names its user, as the lines logged while it was open do.
func TestSASLUserInCloseLog(t *testing.T) {
	var logs syncbuf.Buffer
	fl := newFakeLog()
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismPlain)),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	cl := newClient(t, addr, kgo.SASL(mechanism(MechanismPlain, "writer", "w-pass")))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "kafka client disconnected") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "kafka client disconnected") && !strings.Contains(line, "user=writer") {
			t.Errorf("close logged without the user: %s", line)
		}
	}
	if !strings.Contains(logs.String(), "kafka client disconnected") {
		t.Fatalf("no disconnect logged:\n%s", logs.String())
	}
}

// TestSASLFailedAuthDelay: refused credentials are answered (and the
// connection closed) only after the failed-authentication delay, as
// Kafka's connection.failed.authentication.delay.ms, with SaslAuthenticate
// and with v0's bare tokens; a malformed message is not delayed for.
func TestSASLFailedAuthDelay(t *testing.T) {
	const delay = 400 * time.Millisecond
	fl := newFakeLog()
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismPlain)), WithFailedAuthDelay(delay))
	handshake := func(version int16) *rawClient {
		r := dialRaw(t, addr)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = version, MechanismPlain
		if hr := r.do(hs).(*kmsg.SASLHandshakeResponse); hr.ErrorCode != 0 {
			t.Fatalf("SaslHandshake v%d: code %d", version, hr.ErrorCode)
		}
		return r
	}

	r := handshake(1)
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version = 1
	au.SASLAuthBytes = []byte("\x00writer\x00wrong")
	start := time.Now()
	if ar := r.do(au).(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("wrong password: code %d", ar.ErrorCode)
	}
	if took := time.Since(start); took < delay {
		t.Errorf("wrong password answered after %v, before the %v delay", took, delay)
	}
	expectClosed(t, r.c)

	r = handshake(0)
	token := []byte("\x00nobody\x00x")
	start = time.Now()
	r.c.Write(binary.BigEndian.AppendUint32(nil, uint32(len(token))))
	r.c.Write(token)
	expectClosed(t, r.c)
	if took := time.Since(start); took < delay {
		t.Errorf("v0 unknown user closed after %v, before the %v delay", took, delay)
	}
}

// TestSASLv0HandshakeAnsweredBeforeRefusedToken: a client that sends
// SaslHandshake v0 and its bare token in one write, the token refused,
// still gets the handshake's answer before the connection closes (it was
// left unsent in the write buffer).
func TestSASLv0HandshakeAnsweredBeforeRefusedToken(t *testing.T) {
	fl := newFakeLog()
	_, addr := startServer(t, fl, WithSASL(testSASL(t, MechanismPlain)), WithFailedAuthDelay(0))
	r := dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 0, MechanismPlain
	b := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw-test")).AppendRequest(nil, hs, 1)
	token := []byte("\x00writer\x00wrong")
	b = binary.BigEndian.AppendUint32(b, uint32(len(token)))
	b = append(b, token...)
	if _, err := r.c.Write(b); err != nil {
		t.Fatal(err)
	}
	resp := hs.ResponseKind()
	r.recv(1, resp)
	if code := resp.(*kmsg.SASLHandshakeResponse).ErrorCode; code != 0 {
		t.Errorf("SaslHandshake v0: code %d", code)
	}
	expectClosed(t, r.c)
}

// authRaw authenticates r as user with PLAIN (SaslHandshake v1).
func authRaw(t *testing.T, r *rawClient, user, pass string) {
	t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MechanismPlain
	if resp := r.do(hs).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		t.Fatalf("SaslHandshake: code %d", resp.ErrorCode)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.SASLAuthBytes = []byte("\x00" + user + "\x00" + pass)
	if ar := r.do(au).(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != 0 {
		t.Fatalf("SaslAuthenticate: code %d", ar.ErrorCode)
	}
}

// readEOF reads r's connection, with no deadline, until the server closes
// it; it fails on anything else.
func readEOF(t *testing.T, r *rawClient, what string) {
	t.Helper()
	r.c.SetReadDeadline(time.Time{})
	if n, err := r.c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("%s: read %d bytes, %v; want EOF (closed by the server)", what, n, err)
	}
}

// TestSASLUpdateClosesIdleRemovedUser: a removed user's connection was
// closed only at its next request, so an idle one (a consumer's
// coordinator connection, a kcat sitting idle) stayed open with its
// session. Update closes it at once; the other users' stay open.
func TestSASLUpdateClosesIdleRemovedUser(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	auth := testSASL(t, MechanismPlain)
	// No idle timeout to close it instead.
	_, addr := startServer(t, fl, WithSASL(auth), WithIdleTimeout(time.Hour))
	removed, kept := dialRaw(t, addr), dialRaw(t, addr)
	authRaw(t, removed, "reader", "r-pass")
	authRaw(t, kept, "writer", "w-pass")
	if err := auth.Update([]string{MechanismPlain}, []User{{Name: "writer", Password: "w-pass"}}); err != nil {
		t.Fatal(err)
	}
	readEOF(t, removed, "the removed user's idle connection")
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	if mr := kept.do(md).(*kmsg.MetadataResponse); len(mr.Topics) != 1 {
		t.Errorf("Metadata on the kept user's connection: %d topics", len(mr.Topics))
	}
}

// TestSASLUpdateEndsRemovedUsersLongPoll: a removed user's Fetch waiting
// for data (MaxWaitMillis of an hour) is ended by Update and its
// connection closed, not held until the wait ends.
func TestSASLUpdateEndsRemovedUsersLongPoll(t *testing.T) {
	fl := newFakeLog()
	newTopic(t, fl, "t", 1)
	auth := testSASL(t, MechanismPlain)
	_, addr := startServer(t, fl, WithSASL(auth), WithIdleTimeout(time.Hour))
	r := dialRaw(t, addr)
	authRaw(t, r, "reader", "r-pass")
	f := kmsg.NewPtrFetchRequest()
	f.Version, f.MaxWaitMillis, f.MinBytes, f.MaxBytes = 11, int32(time.Hour/time.Millisecond), 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	f.Topics = append(f.Topics, ft)
	r.send(f)
	// The fetch is waiting: the connection has subscribed to the log.
	waiting := func() bool {
		fl.mu.Lock()
		defer fl.mu.Unlock()
		return len(fl.topics["t"].parts[0].subs) > 0
	}
	for !waiting() {
		time.Sleep(10 * time.Millisecond)
	}
	if err := auth.Update([]string{MechanismPlain}, []User{{Name: "writer", Password: "w-pass"}}); err != nil {
		t.Fatal(err)
	}
	readEOF(t, r, "the removed user's connection in a long-poll")
}

// TestSASLUpdateDuringAuthentication: a client that did its
// SaslHandshake before an Update removing its user, and authenticates
// after it, is refused, not given a session of a user that no longer
// exists.
func TestSASLUpdateDuringAuthentication(t *testing.T) {
	fl := newFakeLog()
	auth := testSASL(t, MechanismPlain)
	_, addr := startServer(t, fl, WithSASL(auth), WithIdleTimeout(time.Hour))
	r := dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, MechanismPlain
	if resp := r.do(hs).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		t.Fatalf("SaslHandshake: code %d", resp.ErrorCode)
	}
	if err := auth.Update([]string{MechanismPlain}, []User{{Name: "writer", Password: "w-pass"}}); err != nil {
		t.Fatal(err)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.SASLAuthBytes = []byte("\x00reader\x00r-pass")
	if ar := r.do(au).(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("SaslAuthenticate as the user removed since the handshake: code %d, want SASL_AUTHENTICATION_FAILED", ar.ErrorCode)
	}
	readEOF(t, r, "the refused connection")
}
