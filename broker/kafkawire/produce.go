package kafkawire

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker/recordbatch"
)

// errAcksZeroFailed closes a connection whose acks=0 produce failed: with no
// response to carry the error, closing is how Kafka tells such a producer
// that something is wrong (it then refreshes metadata and reconnects).
var errAcksZeroFailed = errors.New("produce with acks=0 failed")

// minProduceVersion is the first Produce version carrying RecordBatch v2,
// the only format the log stores. Older ones are advertised (see
// advertisedKeys) but refused.
const minProduceVersion = 3

// Errors for batches the server refuses before they reach the log.
var (
	errOldProduce    = errors.New("produce versions before 3 (message format v0 and v1) are not supported")
	errNoBatches     = errors.New("produce request carries no record batch")
	errTransactional = errors.New("transactions are not supported")
	errControlBatch  = errors.New("clients may not produce control batches")
	// Kafka rejects such batches too: the log assigns LastOffsetDelta+1
	// offsets, so a lying header would burn offsets or hide records.
	errRecordCount = errors.New("batch record count does not match its offset range")
)

// handleProduce appends each partition's batches to the log, as the client
// sent them. It returns no response for acks=0.
func (c *conn) handleProduce(ctx context.Context, req *kmsg.ProduceRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	var reject *kerr.Error // applies to every partition
	var rejectErr error
	switch {
	case req.Version < minProduceVersion:
		reject, rejectErr = kerr.UnsupportedVersion, errOldProduce
	case req.Acks != 0 && req.Acks != 1 && req.Acks != -1:
		reject = kerr.InvalidRequiredAcks
	case req.TransactionID != nil:
		reject, rejectErr = kerr.InvalidTxnState, errTransactional
	case c.readOnly():
		reject, rejectErr = kerr.TopicAuthorizationFailed, fmt.Errorf("user %q is read_only (broker.kafka_sasl)", c.user.Name)
	}

	// One job per partition; the response partitions are filled in place.
	n := 0
	for i := range req.Topics {
		n += len(req.Topics[i].Partitions)
	}
	jobs := make([]appendJob, 0, n)
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := &resp.Topics[i]
		*st = kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rt.Partitions[j].Partition
			sp.BaseOffset = -1
			job := appendJob{topic: rt.Topic, part: &rt.Partitions[j], resp: sp}
			switch {
			case reject != nil:
				job.code, job.err = reject.Code, rejectErr
			default:
				if job.records, job.err = inspectBatches(job.part.Records); job.err != nil {
					job.code = batchErrorCode(job.err, req.Version)
				}
			}
			jobs = append(jobs, job)
		}
	}
	c.appendAll(ctx, jobs)
	if req.Version < 8 {
		// Produce v8 introduced INVALID_RECORD (a batch the log's
		// policy refuses); older clients get CORRUPT_MESSAGE, as for the
		// listener's own checks (batchErrorCode).
		for i := range jobs {
			if jobs[i].code == kerr.InvalidRecord.Code {
				jobs[i].code = kerr.CorruptMessage.Code
			}
		}
	}

	m := c.s.cfg.metrics
	var failed error // the first failure, for acks=0
	for i := range jobs {
		j := &jobs[i]
		j.resp.ErrorCode = j.code
		if j.code != 0 {
			j.resp.BaseOffset = -1
			j.resp.ErrorMessage = errorMessage(j.err)
			if m != nil && m.ProduceFailed != nil {
				m.ProduceFailed(j.topic, j.part.Partition, j.code)
			}
			if j.code == kerr.KafkaStorageError.Code || j.code == kerr.UnknownServerError.Code {
				c.logProduceFailure(j)
			}
			if failed == nil {
				failed = fmt.Errorf("%w: %s/%d: %s", errAcksZeroFailed, j.topic, j.part.Partition, kerr.ErrorForCode(j.code))
			}
		} else if m != nil && m.Produced != nil {
			m.Produced(j.topic, j.part.Partition, j.records, len(j.part.Records))
		}
	}
	if req.Acks == 0 {
		return nil, failed
	}
	return resp, nil
}

// appendJob is one partition of a Produce request.
type appendJob struct {
	topic   string
	part    *kmsg.ProduceRequestTopicPartition
	resp    *kmsg.ProduceResponseTopicPartition
	records int
	code    int16 // set when the batches were refused before the log
	err     error
}

// appendAll appends the jobs not already refused. With WithParallelAppends
// different partitions are appended concurrently: with a log that fsyncs
// before acknowledging, the syncs of one request's partitions then overlap
// instead of adding up. A request naming a partition twice (no client does)
// is appended in order.
func (c *conn) appendAll(ctx context.Context, jobs []appendJob) {
	run := func(j *appendJob) {
		if j.code != 0 {
			return
		}
		j.resp.BaseOffset, j.err = c.s.log.AppendBatches(ctx, j.topic, j.part.Partition, j.part.Records)
		j.code = errorCode(j.err)
	}
	parallel := c.s.cfg.parallelAppends
	if parallel <= 1 || len(jobs) == 1 || hasDuplicatePartition(jobs) {
		for i := range jobs {
			run(&jobs[i])
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1)) - 1; i < len(jobs); i = int(next.Add(1)) - 1 {
			run(&jobs[i])
		}
	}
	// A panic (a bug) on a goroutine of its own would end the process:
	// it is raised again on the connection's, whose recovery ends only
	// the connection (conn.run).
	var panicked atomic.Pointer[string]
	var wg sync.WaitGroup
	for range min(len(jobs), parallel) - 1 {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					p := fmt.Sprintf("%v\n%s", r, debug.Stack())
					panicked.CompareAndSwap(nil, &p)
				}
			}()
			work()
		})
	}
	work()
	wg.Wait()
	if p := panicked.Load(); p != nil {
		panic("parallel append: " + *p)
	}
}

func hasDuplicatePartition(jobs []appendJob) bool {
	if len(jobs) <= 8 { // the common case: no map
		for i := range jobs {
			for j := range jobs[:i] {
				if jobs[i].part.Partition == jobs[j].part.Partition && jobs[i].topic == jobs[j].topic {
					return true
				}
			}
		}
		return false
	}
	type tp struct {
		topic     string
		partition int32
	}
	seen := make(map[tp]bool, len(jobs))
	for i := range jobs {
		k := tp{jobs[i].topic, jobs[i].part.Partition}
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// inspectBatches walks the batch headers of a partition's records without
// decoding records: it refuses what the log must never store (control
// batches, transactional batches, other magics, headers whose record count
// contradicts their offset range) and counts the records for metrics. CRCs
// are the log's to check.
func inspectBatches(b []byte) (records int, err error) {
	if len(b) == 0 {
		return 0, errNoBatches
	}
	for len(b) > 0 {
		h, err := recordbatch.ParseHeader(b)
		if err != nil {
			return 0, err
		}
		switch {
		case h.IsControl():
			return 0, errControlBatch
		case h.Attributes&recordbatch.Transactional != 0:
			return 0, errTransactional
		case h.Size() > len(b):
			return 0, recordbatch.ErrShort
		case h.NumRecords <= 0 || h.LastOffsetDelta != h.NumRecords-1:
			return 0, errRecordCount
		}
		records += int(h.NumRecords)
		b = b[h.Size():]
	}
	return records, nil
}

// batchErrorCode is the code for a batch inspectBatches refused. Produce v8
// introduced INVALID_RECORD; older clients get CORRUPT_MESSAGE.
func batchErrorCode(err error, version int16) int16 {
	switch {
	case errors.Is(err, errTransactional):
		return kerr.InvalidTxnState.Code
	case version >= 8 && (errors.Is(err, errControlBatch) || errors.Is(err, errNoBatches) ||
		errors.Is(err, errRecordCount) || errors.Is(err, recordbatch.ErrMagic)):
		return kerr.InvalidRecord.Code
	}
	return kerr.CorruptMessage.Code
}

// handleInitProducerID hands out producer ids to idempotent producers.
//
// Transactions are not supported. A transactional id is answered with
// COORDINATOR_NOT_AVAILABLE, which is what Kafka itself says when it cannot
// host the transaction state (for example a single broker with the default
// transaction.state.log.replication.factor of 3); FindCoordinator is not
// offered either, so transactional clients fail to start rather than write
// data they believe is atomic.
func (c *conn) handleInitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	// An idempotent producer re-initialising with its old id and epoch
	// (KIP-360, v3+) gets a fresh id, as Kafka gives it.
	id, epoch, err := c.s.log.InitProducerID(ctx)
	if err != nil {
		if n, due := c.s.producerIDLog.Due(time.Now()); due {
			c.logger.Warn("kafka client: allocating a producer id failed", "err", err, "times", n)
		}
		resp.ErrorCode = errorCode(err)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, epoch
	return resp
}

// logProduceFailure logs a produce the log could not write (a full disk,
// an I/O error): the client only gets an error code, and the operator must
// learn why from weir's log. Throttled per partition and error, since
// clients retry.
func (c *conn) logProduceFailure(j *appendJob) {
	key := fmt.Sprintf("%s/%d/%d", j.topic, j.part.Partition, j.code)
	c.s.failMu.Lock()
	n, due := c.s.failing.Due(key, time.Now())
	c.s.failMu.Unlock()
	if due {
		c.logger.Error("kafka client: produce failed", "topic", j.topic, "partition", j.part.Partition,
			"error", kerr.ErrorForCode(j.code), "reason", j.err, "times", n)
	}
}
