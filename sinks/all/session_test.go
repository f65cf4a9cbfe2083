package all_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/all"
)

// sessionSpy passes on the session timeout a sink joins its group with.
type sessionSpy struct {
	broker.Broker
	joined chan time.Duration
}

func (s *sessionSpy) Consume(ctx context.Context, group string, topics []string, opts ...broker.ConsumerOption) (broker.Consumer, error) {
	var cfg broker.ConsumerConfig
	for _, o := range opts {
		o(&cfg)
	}
	select {
	case s.joined <- cfg.SessionTimeout:
	default:
	}
	return s.Broker.Consume(ctx, group, topics, opts...)
}

// TestSinkJoinsWithSessionTimeout: a sink joins its group with Env's
// session timeout (weir run gives cluster.session_timeout on a Kafka
// cluster). Joined with franz-go's default of 45 s, a killed process's
// sink partitions (events on their way to Alertmanager) waited 45 s for
// another process, where its enrichment and targets wait 10 s.
func TestSinkJoinsWithSessionTimeout(t *testing.T) {
	log, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	spy := &sessionSpy{Broker: log, joined: make(chan time.Duration, 1)}
	cfg := configs.Sink{Type: "file", Name: "f", Path: filepath.Join(t.TempDir(), "out.jsonl"), Topics: []string{"events"}}
	ss, err := all.Build(spy, []configs.Sink{cfg}, sinks.Env{SessionTimeout: 7 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ss[0].Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if got := <-spy.joined; got != 7*time.Second {
		t.Errorf("the sink joined its group with session timeout %v, want 7s", got)
	}
}
