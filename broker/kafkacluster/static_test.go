package kafkacluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
)

// staticSession is the members' session timeout in the static membership
// tests: far longer than a join takes, so a member given partitions well
// before it was not waiting for a dead member's session to expire.
const staticSession = 30 * time.Second

// joinStatic joins a transactional member of group "g" on topic "in" (3
// partitions, created by the caller) through b.
func joinStatic(t *testing.T, ctx context.Context, b *Broker, member string) *txnConsumer {
	t.Helper()
	c, err := b.Consume(ctx, "g", []string{"in"}, broker.WithTransactions(), broker.WithMemberID(member),
		broker.WithSessionTimeout(staticSession))
	if err != nil {
		t.Fatal(err)
	}
	return c.(*txnConsumer)
}

// assignedWithin polls c until it holds all 3 partitions of "in" or wait
// has passed, and reports how long that took (or false).
func assignedWithin(ctx context.Context, c *txnConsumer, wait time.Duration) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < wait && ctx.Err() == nil {
		if len(c.Assigned()) == 3 {
			return time.Since(start), true
		}
		// Polls join the group and keep the member in it; "in" is
		// empty, so each returns at its context's end.
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		c.Poll(pctx)
		cancel()
	}
	return 0, false
}

// die ends c as a killed process would: no LeaveGroup, its transactional
// id free for the next process.
func die(c *txnConsumer) {
	c.cancel() // the client's context: its close cannot send a LeaveGroup
	c.s.Close()
	releaseTxnID(c.id)
}

// TestStaticMemberTakesItsPartitionsBackAtOnce: with WithInstance, a
// transactional member is a static one, so a process killed and started
// again gets its partitions back at its first join, not after the dead
// member's session timeout; and a member that closes leaves, handing them
// over at once.
func TestStaticMemberTakesItsPartitionsBackAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, static := range []bool{true, false} {
		t.Run(fmt.Sprint("static=", static), func(t *testing.T) {
			var opts []Option
			if static {
				opts = append(opts, WithInstance("proc-a"))
			}
			_, b := newKfake(t, opts...)
			if err := b.CreateTopic(ctx, "in", broker.TopicConfig{Partitions: 3}); err != nil {
				t.Fatal(err)
			}
			first := joinStatic(t, ctx, b, "m1")
			if _, ok := assignedWithin(ctx, first, 20*time.Second); !ok {
				t.Fatal("the first member was not given the topic's 3 partitions")
			}
			die(first)

			again := joinStatic(t, ctx, b, "m1")
			defer again.Close()
			took, ok := assignedWithin(ctx, again, 5*time.Second)
			switch {
			case static && !ok:
				t.Fatalf("the restarted static member did not get its partitions back within 5 s (session timeout %v)", staticSession)
			case !static && ok:
				// A dynamic member waits for the dead one's session:
				// the case static membership is for.
				t.Fatalf("a dynamic member got the dead member's partitions after %v, before its session timeout (%v): the test shows nothing", took, staticSession)
			case !static:
				return
			}
			t.Logf("restarted static member given its partitions after %v", took)

			// A stop hands them over at once: another process's member
			// gets them.
			other := otherBroker(t, b, WithInstance("proc-b"))
			next := joinStatic(t, ctx, other, "m1")
			defer next.Close()
			if err := again.Close(); err != nil {
				t.Fatal(err)
			}
			if _, ok := assignedWithin(ctx, next, 10*time.Second); !ok {
				t.Fatalf("the static member closed, and another did not get its partitions within 10 s (session timeout %v): it did not leave", staticSession)
			}
		})
	}
}

// otherBroker is another backend (another process's) on b's cluster.
func otherBroker(t *testing.T, b *Broker, opts ...Option) *Broker {
	t.Helper()
	o, err := New(b.seeds, append([]Option{WithReplicationFactor(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}
