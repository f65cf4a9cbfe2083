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

// TestRedirectErrorHidesSecrets: a redirect's error names where it went
// without the user info, query values or the request's own path, which
// hold a URL's secrets (https://u:pass@host, ?api_key=, a chat hook's
// token path): the 301 of an http:// hook to its https:// self logged the
// token on every retry.
func TestRedirectErrorHidesSecrets(t *testing.T) {
	for _, c := range []struct {
		url, loc string
		status   int
		want     string
	}{
		{"http://u:s3cretpw@hooks.example/services/T/s3cretpath?api_key=s3cretq", "https://hooks.example/services/T/s3cretpath?api_key=s3cretq", 301,
			"redirected to https://hooks.example/<the same path>?<the same query> "},
		{"http://u:s3cretpw@hooks.example/hook?api_key=s3cretq", "/moved", 301,
			"redirected to http://hooks.example/moved "},
		{"http://hooks.example/hook", "/v2/hook?token=s3cretnew&x=1", 308,
			"redirected to http://hooks.example/v2/hook?token=…&x=… "},
		{"http://hooks.example/hook", "/v2/hook?s3cretbare", 308,
			"redirected to http://hooks.example/v2/hook?… "},
	} {
		req, _ := http.NewRequest(http.MethodPost, c.url, nil)
		resp := &http.Response{StatusCode: c.status, Request: req,
			Header: http.Header{"Location": []string{c.loc}}, Body: io.NopCloser(strings.NewReader(""))}
		err := Classify("webhook sink", resp, time.Now())
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s -> %s: error %v, want it to say %q and no secret", c.url, c.loc, err, c.want)
		}
	}
	// Followed to another host that answers 401.
	first, _ := http.NewRequest(http.MethodPost, "http://hooks.example/hook?api_key=s3cretq", nil)
	first.Header.Set("Authorization", "Bearer s3crethdr")
	moved, _ := http.NewRequest(http.MethodPost, "http://other.example/hook?api_key=s3cretq", nil)
	moved.Response = &http.Response{StatusCode: 308, Request: first}
	resp := &http.Response{StatusCode: 401, Request: moved, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("no"))}
	err := Classify("webhook sink", resp, time.Now())
	want := "after a redirect to http://other.example/<the same path>?<the same query>, where the Authorization header is not sent"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v, want it to say %q and no secret", err, want)
	}
}
