package webhook_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/sinktest"
	"github.com/weirnet/weir/sinks/webhook"
	"github.com/weirnet/weir/telemetry"
)

// TestStopsMidBatchCommitNothingUndelivered: a receiver that refuses some
// records for good (400: dead-lettered), fails one post in seven (503) and
// once asks to wait (429, Retry-After), so the lanes are at different
// places when the sink is stopped, four times, then let finish. After
// every stop, each partition's committed offset is past only records the
// receiver took or the dead-letter topic holds: at least once, per
// partition, whatever lane a record was in.
func TestStopsMidBatchCommitNothingUndelivered(t *testing.T) {
	type position struct {
		P int32 `json:"p"`
		O int64 `json:"o"`
	}
	var mu sync.Mutex
	posts := 0
	taken := map[position]bool{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var rec struct {
			position
			Count int `json:"c"`
		}
		json.Unmarshal(body, &rec)
		mu.Lock()
		defer mu.Unlock()
		posts++
		switch {
		case rec.Count%13 == 0:
			http.Error(w, "not this one", http.StatusBadRequest)
		case posts == 50:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case posts%7 == 0:
			http.Error(w, "try again", http.StatusServiceUnavailable)
		default:
			taken[rec.position] = true
		}
	}))
	defer hs.Close()
	b := sinktest.Broker(t)
	const devices, perDevice = 30, 40
	byDevice := func(i int) string { return fmt.Sprintf("edge%d", i%devices) }
	sinktest.Produce(t, b, "events", telemetry.SchemaEvent, byDevice, seqEvents(devices, perDevice))
	cfg := configs.Sink{Type: "webhook", Name: "chat", Topics: []string{"events"}, URL: hs.URL, Concurrency: 6,
		Template:  `{"p":{{.Record.Partition}},"o":{{.Record.Offset}},"c":{{.Event.Count}}}`,
		BatchSize: 200, FlushInterval: configs.Duration(10 * time.Millisecond),
		Retry: configs.SinkRetry{Initial: configs.Duration(time.Millisecond), Max: configs.Duration(5 * time.Millisecond)}}
	const stops = 4
	for round := 0; round <= stops; round++ {
		s, err := webhook.NewSink(cfg, sinks.Env{}, time.Now, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		r := sinktest.Start(t, b, cfg, s)
		if round < stops {
			target := (round + 1) * devices * perDevice / (stops + 2)
			sinktest.Eventually(t, fmt.Sprintf("%d records taken", target), func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(taken) >= target
			})
		} else {
			sinktest.Eventually(t, "the lag drained", func() bool { return lagDrained(b, sinks.Group("chat"), "events") })
		}
		if err := r.Stop(); err != nil {
			t.Fatal(err)
		}
		s.Close()
		dead := map[position]bool{}
		for _, rec := range sinktest.ReadAll(t, b, "dead.letter") {
			var p position
			fmt.Sscanf(sinktest.Header(rec, sinks.HeaderOriginalPosition), "%d/%d", &p.P, &p.O)
			dead[p] = true
		}
		mu.Lock()
		for p := range int32(3) { // sinktest.Broker's partitions
			committed, _ := b.Committed(sinks.Group("chat"), "events", p)
			for o := range committed {
				if at := (position{p, o}); !taken[at] && !dead[at] {
					t.Errorf("stop %d: partition %d committed at %d, past offset %d, neither taken nor dead-lettered", round, p, committed, o)
					break
				}
			}
		}
		mu.Unlock()
	}
}
