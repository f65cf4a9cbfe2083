package enrich

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// failingConsumer fails its first fails polls, then returns one record.
type failingConsumer struct {
	broker.Consumer
	fails int
}

func (c *failingConsumer) Poll(context.Context) ([]broker.Record, error) {
	if c.fails > 0 {
		c.fails--
		return nil, errors.New("kafka: cluster unreachable")
	}
	return []broker.Record{{Topic: "t"}}, nil
}

// TestPollFailuresLoggedSparingly: a consumer failing poll after poll (a
// Kafka cluster away) is logged at its first failure, not every second
// per worker, and its recovery once.
func TestPollFailuresLoggedSparingly(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 3 s of retries")
	}
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, ok := poll(ctx, &failingConsumer{fails: 3}, 0, logger, &pollHealth{})
	if !ok || len(recs) != 1 {
		t.Fatalf("poll after failures: %d records, %v", len(recs), ok)
	}
	out := buf.String()
	if n := strings.Count(out, "poll failed"); n != 1 {
		t.Errorf("%d lines of poll failed for 3 failures in a row, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "poll works again") || !strings.Contains(out, "failures=3") {
		t.Errorf("no line for the recovery after 3 failures:\n%s", out)
	}
}

// outageConsumer is a consumer while the Kafka cluster is away: every
// other poll fails, and the others wait out their deadline with nothing,
// as franz-go's do between attempts to join; with up set, it returns a
// record.
type outageConsumer struct {
	broker.Consumer
	calls int
	up    bool
}

func (c *outageConsumer) Poll(ctx context.Context) ([]broker.Record, error) {
	c.calls++
	if c.up {
		return []broker.Record{{Topic: "t"}}, nil
	}
	if c.calls%2 == 1 {
		return nil, errors.New("kafka: poll: unable to join group session: unable to dial")
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestPollOutageNotReportedOver: a poll whose wait ends with nothing
// between two failures is no sign the cluster is back. The workers poll a
// second at a time, and logged `poll works again` at each such wait and
// the failure again after it, every few seconds per worker, for as long
// as the cluster was away. The failures are counted across polls and the
// recovery logged once, when a poll answers.
func TestPollOutageNotReportedOver(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 3 s of retries")
	}
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &outageConsumer{}
	var health pollHealth
	for range 3 {
		if recs, ok := poll(ctx, c, 20*time.Millisecond, logger, &health); !ok || len(recs) != 0 {
			t.Fatalf("poll in the outage: %d records, %v", len(recs), ok)
		}
	}
	out := buf.String()
	if strings.Contains(out, "poll works again") {
		t.Errorf("recovery logged while every poll failed or got nothing:\n%s", out)
	}
	// One line unless the three polls' retries took more than a
	// throttle interval (10 s; they take about 3): fewer than the polls.
	if n := strings.Count(out, "poll failed"); n == 0 || n >= 3 {
		t.Errorf("%d lines of poll failed for 3 failing polls, want fewer:\n%s", n, out)
	}
	c.up = true
	if recs, ok := poll(ctx, c, 20*time.Millisecond, logger, &health); !ok || len(recs) != 1 {
		t.Fatalf("poll after the outage: %d records, %v", len(recs), ok)
	}
	out = buf.String()
	if n := strings.Count(out, "poll works again"); n != 1 || !strings.Contains(out, "failures=3") {
		t.Errorf("want one recovery line after 3 failures:\n%s", out)
	}
}
