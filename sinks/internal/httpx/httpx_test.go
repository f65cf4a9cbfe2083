package httpx

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Released waits for every reader the transport was given, the request's
// and those GetBody made, to be closed.
func TestBodyReleased(t *testing.T) {
	req, body, err := NewRequest(context.Background(), "http://127.0.0.1:1/", []byte("payload"))
	if err != nil {
		t.Fatal(err)
	}
	if req.ContentLength != 7 {
		t.Fatalf("ContentLength %d", req.ContentLength)
	}
	again, _ := req.GetBody()
	if b, _ := io.ReadAll(again); string(b) != "payload" {
		t.Fatalf("GetBody read %q", b)
	}
	if body.Released(0) {
		t.Fatal("released with two readers open")
	}
	req.Body.Close()
	req.Body.Close() // twice counts once
	if body.Released(10 * time.Millisecond) {
		t.Fatal("released with GetBody's reader open")
	}
	go func() { time.Sleep(5 * time.Millisecond); again.Close() }()
	if !body.Released(5 * time.Second) {
		t.Fatal("not released after both readers closed")
	}
}

// TestRedirectErrorNamesAbsoluteURL: a 301 not followed says where to set
// url; a relative Location (what http.Redirect and most servers write) is
// named in full, since "set url to /new" is no URL a sink can take.
func TestRedirectErrorNamesAbsoluteURL(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://hooks.example:8080/old/path?x=1", nil)
	resp := &http.Response{StatusCode: http.StatusMovedPermanently, Request: req,
		Header: http.Header{"Location": []string{"/new"}}, Body: io.NopCloser(strings.NewReader(""))}
	err := Classify("webhook sink", resp, time.Now())
	if err == nil || !strings.Contains(err.Error(), "redirected to http://hooks.example:8080/new ") {
		t.Fatalf("error %v, want it to name http://hooks.example:8080/new", err)
	}
}
