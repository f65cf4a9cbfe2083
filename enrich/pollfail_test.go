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
	recs, ok := poll(ctx, &failingConsumer{fails: 3}, 0, logger)
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
