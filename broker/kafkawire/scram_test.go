package kafkawire

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// scramClientFinal computes a client-final-message for serverFirst as a
// client would, with nonce as the r= it sends.
func scramClientFinal(t *testing.T, password, clientBare, serverFirst, nonce string) string {
	t.Helper()
	attrs := map[string]string{}
	for _, f := range strings.Split(serverFirst, ",") {
		attrs[f[:1]] = f[2:]
	}
	salt, _ := base64.StdEncoding.DecodeString(attrs["s"])
	iters, _ := strconv.Atoi(attrs["i"])
	salted, err := pbkdf2.Key(sha512.New, password, salt, iters, sha512.Size)
	if err != nil {
		t.Fatal(err)
	}
	clientKey := scramHMAC(sha512.New, salted, "Client Key")
	stored := sha512.Sum512(clientKey)
	withoutProof := "c=biws,r=" + nonce
	sig := scramHMAC(sha512.New, stored[:], clientBare+","+serverFirst+","+withoutProof)
	for i := range clientKey {
		clientKey[i] ^= sig[i]
	}
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(clientKey)
}

// TestScramNonces: the standard client-final nonce and librdkafka's (the
// client's nonce, then server-first's whole nonce, which Kafka accepts:
// it checks the end) both authenticate (franz-go and kcat check the
// server's signature in TestSASLKgo and TestSASLKcat); a wrong password
// or another nonce does not; malformed first messages are refused.
func TestScramNonces(t *testing.T) {
	cred, err := newScramCred(sha512.New, "pw")
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) (scramCred, bool) { return cred, name == "a,b=c" }
	for _, tc := range []struct {
		name, password string
		nonce          func(cnonce, full string) string
		ok             bool
	}{
		{"standard", "pw", func(_, full string) string { return full }, true},
		{"librdkafka", "pw", func(cnonce, full string) string { return cnonce + full }, true},
		{"wrong password", "pw2", func(_, full string) string { return full }, false},
		{"other nonce", "pw", func(cnonce, _ string) string { return cnonce + "x" }, false},
	} {
		s := &scramConv{h: sha512.New, lookup: lookup}
		bare := "n=a=2Cb=3Dc,r=abc+/~"
		first, err := s.step("n,," + bare)
		if err != nil {
			t.Fatalf("%s: first: %v", tc.name, err)
		}
		full := strings.TrimPrefix(strings.Split(first, ",")[0], "r=")
		final := scramClientFinal(t, tc.password, bare, first, tc.nonce("abc+/~", full))
		out, err := s.step(final)
		if (err == nil) != tc.ok {
			t.Fatalf("%s: final: %q, %v", tc.name, out, err)
		}
		if tc.ok && (s.user != "a,b=c" || !s.done || !strings.HasPrefix(out, "v=")) {
			t.Errorf("%s: user %q done %v out %q", tc.name, s.user, s.done, out)
		}
	}
	for _, bad := range []string{"", "n,,", "x,,n=u,r=1", "p=tls-unique,,n=a=2Cb=3Dc,r=1", "n,,n=a=2Xb,r=1", "n,a=other,n=a=2Cb=3Dc,r=1", "n,,m=ext,n=u,r=1"} {
		s := &scramConv{h: sha512.New, lookup: lookup}
		if out, err := s.step(bad); err == nil {
			t.Errorf("client-first %q accepted: %q", bad, out)
		}
	}
	// A mandatory extension is named as such, not as a missing user name.
	if _, err := (&scramConv{h: sha512.New, lookup: lookup}).step("n,,m=ext,n=u,r=1"); err == nil || !strings.Contains(err.Error(), "mandatory extension") {
		t.Errorf("client-first with m=: %v, want a mandatory extension refused", err)
	}
	// An unknown user is refused at the client-final, not before.
	s := &scramConv{h: sha512.New, lookup: lookup}
	first, err := s.step("n,,n=nobody,r=1")
	if err != nil {
		t.Fatalf("unknown user's client-first: %v", err)
	}
	full := strings.TrimPrefix(strings.Split(first, ",")[0], "r=")
	if _, err := s.step(scramClientFinal(t, "pw", "n=nobody,r=1", first, full)); err != errUnknownUser {
		t.Errorf("unknown user's client-final: %v", err)
	}
}
