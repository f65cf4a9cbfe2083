package kafkawire

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker/recordbatch"
)

// handleFetch answers a Fetch with the log's batches, copied from
// Log.ReadBatches into the response without being decoded.
//
// When fewer than MinBytes are available it long-polls: it subscribes to
// every requested partition with the connection's wake channel and sleeps
// until an append wakes it or MaxWaitMillis passes, then reads again. There
// are no fetch sessions (KIP-227): every response has SessionID 0, which
// tells clients to keep sending full fetch requests.
func (c *conn) handleFetch(ctx context.Context, req *kmsg.FetchRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	// Epoch 0 asks for a new session and -1 for none; both are full
	// requests we can serve sessionless. Anything else continues a session
	// we never created.
	if req.SessionEpoch != 0 && req.SessionEpoch != -1 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp, nil
	}

	wait := time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond
	deadline := time.Now().Add(wait)
	var unsubscribe []func()
	defer func() {
		for _, u := range unsubscribe {
			u()
		}
	}()
	var stopWatch func()
	defer func() {
		if stopWatch != nil {
			stopWatch()
		}
	}()
	subscribed := false
poll:
	for {
		n, done := c.fillFetch(req, resp)
		if done || n >= int(req.MinBytes) {
			break
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			break
		}
		if !subscribed {
			// Subscribe, then read again before sleeping: an append
			// between the read above and the subscription would
			// otherwise go unnoticed until the deadline.
			subscribed = true
			select {
			case <-c.wake: // stale wake-up from an earlier fetch
			default:
			}
			for i := range req.Topics {
				t := &req.Topics[i]
				for j := range t.Partitions {
					u, err := c.s.log.Subscribe(t.Topic, t.Partitions[j].Partition, c.wake)
					if err == nil {
						unsubscribe = append(unsubscribe, u)
					}
				}
			}
			continue
		}
		// Responses to requests pipelined before this one must not
		// wait for the poll.
		if err := c.flush(); err != nil {
			return nil, err
		}
		if stopWatch == nil {
			ctx, stopWatch = c.watchHangup(ctx)
		}
		if c.timer == nil {
			c.timer = time.NewTimer(remaining)
		} else {
			c.timer.Reset(remaining)
		}
		select {
		case <-c.wake:
			c.timer.Stop()
		case <-c.timer.C:
			// One last read: data may have arrived with the deadline.
			c.fillFetch(req, resp)
			break poll
		case <-ctx.Done():
			c.timer.Stop()
			return nil, context.Cause(ctx)
		case <-c.sess.removedCh():
			// A reload removed the user (SASL.Update): its
			// connection closes now, not at the end of the wait.
			c.timer.Stop()
			return nil, errUserRemoved
		}
	}
	c.reportFetched(resp)
	return resp, nil
}

// fillFetch (re)builds resp's topics from the log. It returns the bytes of
// batches gathered and whether the fetch must be answered at once because a
// partition has an error (as Kafka completes a delayed fetch on errors).
//
// MaxBytes bounds the whole response and PartitionMaxBytes each partition;
// only the first partition that has data may exceed them, by its first
// batch, so that a batch larger than the limits can still be consumed.
func (c *conn) fillFetch(req *kmsg.FetchRequest, resp *kmsg.FetchResponse) (total int, done bool) {
	budget := min(int(req.MaxBytes), maxFetchResponseBytes)
	buf := c.fetch[:0]
	resp.Topics = resp.Topics[:0]
	for i := range req.Topics {
		rt := &req.Topics[i]
		st := kmsg.NewFetchResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(rt.Partitions))
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.PreferredReadReplica = -1
			sp.RecordBatches = []byte{} // never null: librdkafka rejects a -1 size

			var hwm, lso int64
			var err error
			limit := min(int(rp.PartitionMaxBytes), budget)
			if limit <= 0 && total > 0 {
				// Out of budget: report the watermarks only.
				if hwm, _, err = c.s.log.ListOffset(rt.Topic, rp.Partition, -1); err == nil {
					lso, _, err = c.s.log.ListOffset(rt.Topic, rp.Partition, -2)
				}
			} else {
				start := len(buf)
				var out []byte
				out, hwm, lso, err = c.s.log.ReadBatches(buf, rt.Topic, rp.Partition, rp.FetchOffset, max(limit, 1))
				if err == nil {
					n := len(out) - start
					if n > limit && total > 0 {
						out, n = out[:start], 0 // over the limit and not first
					}
					buf = out
					if n > 0 { // buf may be nil, and a nil slice encodes as null
						sp.RecordBatches = buf[start : start+n : start+n]
					}
					total += n
					budget -= n
				}
			}
			if err != nil {
				sp.ErrorCode = errorCode(err)
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
				done = true
			} else {
				// No transactions: everything below the high
				// watermark is stable.
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = hwm, hwm, lso
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	c.fetch = buf
	c.used = max(c.used, len(buf))
	return total, done
}

// reportFetched calls the Fetched hook for each partition with data.
func (c *conn) reportFetched(resp *kmsg.FetchResponse) {
	m := c.s.cfg.metrics
	if m == nil || m.Fetched == nil {
		return
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if len(p.RecordBatches) == 0 {
				continue
			}
			records := 0
			for b := p.RecordBatches; len(b) > 0; {
				h, err := recordbatch.ParseHeader(b)
				if err != nil || h.Size() > len(b) {
					break
				}
				records += int(h.NumRecords)
				b = b[h.Size():]
			}
			m.Fetched(t.Topic, p.Partition, records, len(p.RecordBatches))
		}
	}
}
