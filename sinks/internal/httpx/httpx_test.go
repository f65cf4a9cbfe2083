package httpx

import (
	"context"
	"io"
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
