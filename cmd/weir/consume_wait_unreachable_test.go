package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestWaitForTopicSaysBrokerUnreachable: waiting for a topic not made yet
// on a broker that does not answer says why it finds nothing, rather than
// "waiting for it to be made" alone for as long as the broker is away.
func TestWaitForTopicSaysBrokerUnreachable(t *testing.T) {
	t.Parallel()
	cf := clientFlags{brokers: peers.FreeAddr(t)}
	adm, cl, err := cf.admin()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	var errs syncbuf.Buffer
	done := make(chan error, 1)
	go func() { _, err := waitForTopic(ctx, adm, cf.why, "later", &errs); done <- err }()
	for !strings.Contains(errs.String(), "retrying") {
		select {
		case err := <-done:
			t.Fatalf("waitForTopic ended: %v\n%s", err, errs.String())
		case <-ctx.Done():
			t.Fatalf("waiting on a broker that does not answer said nothing of it:\n%s", errs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	<-done
	if n := strings.Count(errs.String(), "retrying"); n != 1 {
		t.Errorf("said %d times, want once until the broker answers:\n%s", n, errs.String())
	}
}
