package httpx

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/tlsconf"
)

// TestErrorsNamePeerNotSecretPath: a chat hook's URL carries its secret in
// the path (https://hooks.slack.com/services/T/B/<token>); a failure to
// reach it logged that URL whole (Go's url.Error), and a status it
// answered (a 429) named no peer at all. Both now name the peer by
// scheme and host, the path and query left out.
func TestErrorsNamePeerNotSecretPath(t *testing.T) {
	const secret = "s3cr3tT0ken"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close() // nothing listens there now
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	up := strings.TrimPrefix(srv.URL, "http://")

	c, err := NewClient(2*time.Second, tlsconf.Client{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ host string }{{down}, {up}} {
		u := "http://" + tc.host + "/services/T0/B0/" + secret + "?key=" + secret
		req, _, err := NewRequest(context.Background(), u, []byte("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			err = Transport("webhook sink", err)
		} else {
			err = Classify("webhook sink", resp, time.Now())
		}
		if err == nil {
			t.Fatalf("post to %s: no error", tc.host)
		}
		if msg := err.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, "http://"+tc.host) {
			t.Errorf("post to %s: %q, want the peer named without its path", tc.host, msg)
		}
	}
}
