package httpx

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/tlsconf"
)

// TestClientsKeepTheirOwnConnections: a sink stopping (its Close closes
// its client's idle connections) leaves another sink's kept-alive
// connections alone; with Go's shared default transport it closed them.
func TestClientsKeepTheirOwnConnections(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	a, err := NewClient(10*time.Second, tlsconf.Client{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewClient(10*time.Second, tlsconf.Client{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(c *http.Client) (reused bool) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		}))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return reused
	}
	get(a)
	get(b)
	b.CloseIdleConnections() // b's sink stops
	if !get(a) {
		t.Error("closing one client's idle connections closed another's")
	}
}
