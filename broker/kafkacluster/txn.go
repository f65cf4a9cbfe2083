package kafkacluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// txnConsumer is a group member that produces and commits in Kafka
// transactions, with franz-go's GroupTransactSession: Transact begins a
// transaction, lets the caller produce, and ends it by committing the
// offsets of what Poll returned (TxnOffsetCommit) with the records, or
// aborting both. The session aborts a transaction during which the group
// rebalanced partitions away from the member (and rewinds the member to its
// committed offsets), so a partition's new owner never commits over work
// the old one is still ending. Zombies are fenced by the group: a member
// the group has dropped (a paused process) fails its TxnOffsetCommit with
// its old generation, and its transaction aborts.
//
// Each member has its own transactional id, weir-<group>-<member>-<instance>
// (see WithInstance): unique among the live members of the cluster, and the
// same for a member re-created in the same process, whose new producer then
// aborts what the old one left open. A transaction left open by a killed
// process is aborted by the cluster after the transaction timeout, which is
// below the session timeout (as franz-go advises), so it holds up neither
// the readers of the outputs nor the partitions' next owner for longer than
// the group takes to notice the death anyway.
type txnConsumer struct {
	*consumer
	s  *kgo.GroupTransactSession
	b  *Broker
	id string
	// coordinator: the cluster has named the transaction coordinator of
	// id once (see findCoordinator).
	coordinator bool
	txnTimeout  time.Duration
	// unanswered: the cluster did not answer the end of a transaction
	// within endGrace; Close does not wait on it again to leave.
	unanswered bool
}

var _ broker.TxnConsumer = (*txnConsumer)(nil)

// liveTxnIDs are the transactional ids of this process's open consumers:
// two members with one id would fence each other, so a second one gets a
// suffix.
var liveTxnIDs = struct {
	sync.Mutex
	ids map[string]bool
}{ids: map[string]bool{}}

func claimTxnID(base string) string {
	liveTxnIDs.Lock()
	defer liveTxnIDs.Unlock()
	id := base
	for i := 2; liveTxnIDs.ids[id]; i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	liveTxnIDs.ids[id] = true
	return id
}

func releaseTxnID(id string) {
	liveTxnIDs.Lock()
	defer liveTxnIDs.Unlock()
	delete(liveTxnIDs.ids, id)
}

// kgoSessionTimeout is franz-go's default session timeout.
const kgoSessionTimeout = 45 * time.Second

func (b *Broker) consumeTxn(group, member string, session time.Duration, c *consumer, kopts []kgo.Opt) (broker.Consumer, error) {
	if member == "" {
		member = "member"
	}
	if session <= 0 {
		session = kgoSessionTimeout
	}
	id := claimTxnID(fmt.Sprintf("weir-%s-%s-%s", group, member, b.instance))
	txnTimeout := session * 4 / 5
	if b.static {
		// See WithInstance.
		kopts = append(kopts, kgo.InstanceID(id))
		c.instanceID = id
	}
	kopts = append(kopts,
		// Offsets are committed only inside transactions: nothing on
		// revoke (the session aborts the transaction in progress).
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { c.updateAssigned(m, false) }),
		kgo.TransactionalID(id), kgo.TransactionTimeout(txnTimeout),
		// No kgo.AllowAutoTopicCreation: this client consumes too, and
		// its metadata requests would create the input topics with the
		// cluster's defaults before anything is produced to them. What
		// it produces goes through produce, which creates the topic with
		// weir's (ensureTopic).
		kgo.RecordPartitioner(txnPartitioner()), kgo.ProducerLinger(time.Millisecond), kgo.ProducerBatchMaxBytesFn(b.limits.Batch))
	s, err := kgo.NewGroupTransactSession(kopts...)
	if err != nil {
		releaseTxnID(id)
		return nil, fmt.Errorf("kafka: join %s: %w", group, err)
	}
	c.cl = s.Client()
	return &txnConsumer{consumer: c, s: s, b: b, id: id, txnTimeout: txnTimeout}, nil
}

// txnPartitioner partitions as Produce and ProducePartition do, in one
// client: a record's own partition if set (>= 0), else murmur2 of the key,
// else rotating.
func txnPartitioner() kgo.Partitioner {
	var next atomic.Uint32
	return kgo.BasicConsistentPartitioner(func(string) func(*kgo.Record, int) int {
		return func(r *kgo.Record, n int) int {
			switch {
			case r.Partition >= 0:
				return int(r.Partition)
			case r.Key != nil:
				return int(broker.PartitionForKey(r.Key, int32(n)))
			}
			return int(next.Add(1) % uint32(n))
		}
	})
}

// Transact runs fn in a transaction (see broker.TxnConsumer).
func (c *txnConsumer) Transact(ctx context.Context, fn func(tx broker.Txn) error) (bool, error) {
	if err := c.findCoordinator(ctx); err != nil {
		return false, err
	}
	if err := c.s.Begin(); err != nil {
		return false, fmt.Errorf("kafka: begin transaction: %w", mapErr(err))
	}
	var ferr error
	if fn != nil {
		ferr = fn(txn{c})
	}
	if ferr == nil && ctx.Err() != nil {
		ferr = ctx.Err()
	}
	// End runs on even when ctx ends meanwhile (a shutdown): canceled
	// midway (between TxnOffsetCommit and EndTxn, or waiting for EndTxn's
	// answer), it would leave the transaction open on the cluster until
	// the transaction timeout, holding back every read_committed reader
	// of the outputs (the last stable offset stops at its first record)
	// and the next owner of its partitions, or report as failed a commit
	// the cluster made. It gets endGrace after ctx ends to finish; an
	// abort (nothing to lose) gets endGrace in all.
	ectx, ecancel := context.WithCancel(context.WithoutCancel(ctx))
	defer ecancel()
	if ferr != nil {
		t := time.AfterFunc(endGrace, ecancel)
		defer t.Stop()
	} else {
		var timer atomic.Pointer[time.Timer]
		stop := context.AfterFunc(ctx, func() { timer.Store(time.AfterFunc(endGrace, ecancel)) })
		defer func() {
			stop()
			if t := timer.Load(); t != nil {
				t.Stop()
			}
		}()
	}
	committed, err := c.s.End(ectx, kgo.TransactionEndTry(ferr == nil))
	if err != nil && ectx.Err() != nil {
		// endGrace ran out: the cluster does not answer.
		c.unanswered = true
		c.logger.Warn("kafka: the transaction was not ended, as the cluster did not answer; it aborts the transaction after the transaction timeout, unless it took the commit",
			slog.String("group", c.group), slog.String("transactional_id", c.id),
			slog.Duration("transaction_timeout", c.txnTimeout), slog.Any("error", err))
	}
	if ferr != nil {
		return false, ferr
	}
	if err != nil {
		return false, fmt.Errorf("kafka: end transaction: %w", mapErr(err))
	}
	return committed, nil
}

// findCoordinator asks the cluster for the transaction coordinator of the
// member's transactional id before its first transaction. franz-go
// retries a cluster that has none to give (COORDINATOR_NOT_AVAILABLE, a
// retriable error) for ever, 30 s at a time in Begin and in End, with no
// context to stop it, and a produce in the transaction never returns:
// enrichment pointed at weir's own embedded listener (which has no
// transactions), or at a single Kafka broker left with the default
// transaction.state.log.replication.factor of 3, consumed its input and
// published nothing, with nothing logged. Here a retriable answer is
// asked again for coordinatorWait (a cluster's first transactional id
// creates __transaction_state, whose partitions take seconds to have
// leaders; a coordinator's broker may be failing over), then is an error
// the caller logs, and the member tries again when it has joined the
// group again.
func (c *txnConsumer) findCoordinator(ctx context.Context) error {
	if c.coordinator {
		return nil
	}
	deadline := time.Now().Add(coordinatorWait)
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		err := c.askCoordinator(ctx, time.Until(deadline))
		if err == nil {
			c.coordinator = true
			return nil
		}
		if !kerr.IsRetriable(err) || time.Until(deadline) < backoff {
			return c.noCoordinator(err)
		}
		select {
		case <-ctx.Done():
			return c.noCoordinator(err)
		case <-time.After(backoff):
		}
	}
}

// coordinatorWait bounds findCoordinator's asking again.
const coordinatorWait = 15 * time.Second

// askCoordinator asks FindCoordinator once, within wait (at most 10 s):
// nil when the cluster names a coordinator, else the request's error or
// the answer's (a *kerr.Error, with the cluster's message).
func (c *txnConsumer) askCoordinator(ctx context.Context, wait time.Duration) error {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = 1 // transaction
	req.CoordinatorKey = c.id
	rctx, cancel := context.WithTimeout(ctx, min(max(wait, time.Second), 10*time.Second))
	defer cancel()
	resp, err := req.RequestWith(rctx, c.cl)
	if err != nil {
		return err
	}
	code, msg := resp.ErrorCode, resp.ErrorMessage
	if len(resp.Coordinators) > 0 {
		code, msg = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].ErrorMessage
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if msg != nil && *msg != "" {
			return fmt.Errorf("%w (%s)", err, *msg)
		}
		return err
	}
	return nil
}

// noCoordinator is the error of a cluster that gave no coordinator.
func (c *txnConsumer) noCoordinator(err error) error {
	var kafkaErr *kerr.Error
	if !errors.As(err, &kafkaErr) {
		return fmt.Errorf("kafka: find the transaction coordinator of %s: %w", c.id, err)
	}
	return fmt.Errorf("kafka: the cluster gives no transaction coordinator for %s: %w; enrichment needs Kafka transactions: "+
		"weir's embedded broker has none to offer a second process, and a single Kafka broker needs "+
		"transaction.state.log.replication.factor=1 and transaction.state.log.min.isr=1", c.id, err)
}

// endGrace is how long ending a transaction may take once the caller's
// context has ended, or aborting one in all.
const endGrace = 10 * time.Second

// errNotCommitted: Commit's transaction was aborted by a rebalance.
var errNotCommitted = errors.New("kafka: offsets not committed: the group rebalanced meanwhile; the records will be polled again")

// Commit commits the position after what Poll returned, in a transaction
// of its own.
func (c *txnConsumer) Commit(ctx context.Context) error {
	committed, err := c.Transact(ctx, nil)
	if err == nil && !committed {
		err = errNotCommitted
	}
	return err
}

// CommitOffsets is refused: a transactional member commits in its
// transactions (Transact, Commit), never beside them.
func (c *txnConsumer) CommitOffsets(context.Context, map[broker.TopicPartition]int64) error {
	return errors.New("kafka: CommitOffsets on a transactional consumer: commit with Transact")
}

// Close leaves the group. A transaction is open here only if the cluster
// did not answer its end (Transact gave up after endGrace, and logged it):
// then Close does not wait for the cluster again to leave.
func (c *txnConsumer) Close() error {
	c.leave(!c.unanswered)
	c.s.Close()
	c.cancel()
	releaseTxnID(c.id)
	return nil
}

// txn produces in the consumer's transaction. Its calls end with their
// context, as Produce's do, also while the cluster has not answered for
// their records (see produce): a transactional client never cancels
// records it has sent, and waiting for them held the member's stop for
// as long as the cluster hung. The transaction, whose records are then not
// known to be written, is aborted (Transact); the records sent are copies,
// so their memory is the caller's again, as with Produce.
type txn struct{ c *txnConsumer }

func (t txn) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return t.c.b.produce(ctx, t.c.cl, topic, recs, -1)
}

func (t txn) ProducePartition(ctx context.Context, topic string, partition int32, recs []broker.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return t.c.b.produce(ctx, t.c.cl, topic, recs, partition)
}
