package webhook_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/webhook"
)

// TestJSONFormRefusesValuesThatAreNotJSON: the JSON form posts a record's
// value as it is, as application/json; a value that is not JSON (a text
// line produced to a topic of one's own) or none (a tombstone) was posted
// so, and the receiver got a body its parser refuses. It is dead-lettered
// with a reason that says so; the records after it are posted.
func TestJSONFormRefusesValuesThatAreNotJSON(t *testing.T) {
	rec := &recorder{}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	s, err := webhook.NewSink(configs.Sink{Type: "webhook", Name: "hook", Topics: []string{"mine"}, URL: hs.URL,
		Headers: map[string]string{"X-Test": "yes"}}, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		value []byte
		want  string
	}{{[]byte("link down on Gi0/1"), "not JSON"}, {nil, "no value"}} {
		items := []sinks.Item{{Record: broker.Record{Topic: "mine", Value: c.value}}, {Record: broker.Record{Topic: "mine", Value: []byte(`{"ok":1}`)}}}
		err := s.Write(context.Background(), items)
		var rej *sinks.RejectedError
		var part *sinks.PartialError
		if !errors.As(err, &part) || part.Done != 0 || !errors.As(err, &rej) || !strings.Contains(rej.Error(), c.want) {
			t.Fatalf("value %q: err %v, want the first record refused as %s", c.value, err, c.want)
		}
		if err := s.Write(context.Background(), items[1:]); err != nil {
			t.Fatal(err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bodies) != 2 || string(rec.bodies[0]) != `{"ok":1}` {
		t.Errorf("posted %q, want the JSON records alone", rec.bodies)
	}
}
