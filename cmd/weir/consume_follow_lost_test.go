package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/internal/syncbuf"
)

// gateWriter holds its first Write until open is closed, as a slow reader
// of the command's output (a pipe to a busy jq) does.
type gateWriter struct {
	once    sync.Once
	written chan struct{}
	open    chan struct{}
	buf     syncbuf.Buffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.written); <-g.open })
	return g.buf.Write(p)
}

// TestConsumeFollowSaysRetentionPassedIt: `weir consume --follow` that is
// behind while retention deletes records it has not fetched yet reads on
// from the log start and says on stderr which records it never got, as the
// README promises (`lost records ... (reading on)`): franz-go resets such a
// partition without a data-loss notice, so it said nothing.
func TestConsumeFollowSaysRetentionPassedIt(t *testing.T) {
	printed, stderr := followPassedByRetention(t, 0)
	if !strings.Contains(printed, `"offset":15`) || strings.Contains(printed, `"offset":10,`) {
		t.Fatalf("printed %s", printed)
	}
	if !strings.Contains(stderr, "lost records at offsets 10 to 14") || !strings.Contains(stderr, "(reading on)") {
		t.Errorf("stderr does not say lost records at offsets 10 to 14 ... (reading on): %q", stderr)
	}
}

// TestConsumeFollowLostStopsAtTheRecordRead: retention that moves on again
// (to 18) between the fetch from the log start (15) and the look at where
// the log starts does not make the records read (15 to 17) lost ones: the
// lost records end before the first record read after them.
func TestConsumeFollowLostStopsAtTheRecordRead(t *testing.T) {
	printed, stderr := followPassedByRetention(t, 18)
	if !strings.Contains(printed, `"offset":15`) {
		t.Fatalf("printed %s", printed)
	}
	if !strings.Contains(stderr, "lost records at offsets 10 to 14,") {
		t.Errorf("stderr does not say lost records at offsets 10 to 14: %q", stderr)
	}
}

// followPassedByRetention runs `weir consume --follow` of ten records,
// held printing them while ten more come and retention deletes up to 15,
// and returns what it printed and said on stderr. startNow, when not 0, is
// where the log starts when weir asks it after that (retention moving on
// meanwhile); the consumer's own reset still finds 15.
func followPassedByRetention(t *testing.T, startNow int64) (string, string) {
	t.Helper()
	c, cl := kfakeTopic(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produce := func(from, n int) { produceTo(ctx, t, cl, 0, values('a'+byte(from), n)...) }
	produce(0, 10)
	// Fetches past the first ten get nothing until the records they
	// would get are gone: the reader is behind.
	gate := make(chan struct{})
	c.ControlKey(kmsg.Fetch.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		select {
		case <-gate:
			return nil, nil, false
		default:
		}
		req := kreq.(*kmsg.FetchRequest)
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				if rp.FetchOffset >= 10 {
					return req.ResponseKind(), nil, true
				}
			}
		}
		return nil, nil, false
	})
	if startNow != 0 {
		c.ControlKey(kmsg.ListOffsets.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			req := kreq.(*kmsg.ListOffsetsRequest)
			select {
			case <-gate:
			default:
				return nil, nil, false
			}
			if req.IsolationLevel != 0 { // the consumer's (read committed), not weir's look
				return nil, nil, false
			}
			resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
			for _, rt := range req.Topics {
				st := kmsg.NewListOffsetsResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewListOffsetsResponseTopicPartition()
					sp.Partition = rp.Partition
					sp.Offset = startNow
					if rp.Timestamp != -2 {
						return nil, nil, false
					}
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
			return resp, nil, true
		})
	}
	out := &gateWriter{written: make(chan struct{}), open: make(chan struct{})}
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- dispatch(ctx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--from-beginning", "--follow", "--max", "15"},
			strings.NewReader(""), out, &stderr)
	}()
	select {
	case <-out.written:
	case err := <-done:
		t.Fatalf("consume exited: %v %s", err, stderr.String())
	}
	// While the reader is held printing the first ten, ten more come and
	// retention deletes up to 15.
	produce(10, 10)
	deleteBelow(ctx, t, cl, 0, 15)
	close(gate)
	close(out.open)
	if err := <-done; err != nil {
		t.Fatalf("consume: %v %s", err, stderr.String())
	}
	return out.buf.String(), stderr.String()
}
