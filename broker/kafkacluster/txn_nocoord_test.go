package kafkacluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirnet/weir/broker"
)

// TestTransactWithoutCoordinatorFails: a cluster that has no transaction
// coordinator to offer (weir's own embedded listener, which does not do
// transactions; a single Kafka broker left with the default
// transaction.state.log.replication.factor of 3) answers FindCoordinator
// and InitProducerID for a transactional id with COORDINATOR_NOT_AVAILABLE,
// which franz-go retries for ever. A produce in a transaction then never
// returned: enrichment pointed at such a cluster consumed its input and
// published nothing, logging nothing and counting no publish error. It
// fails once the transaction timeout has passed instead, naming the cause.
func TestTransactWithoutCoordinatorFails(t *testing.T) {
	kf, b := newKfake(t)
	kf.ControlKey(int16(kmsg.FindCoordinator), func(r kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		req := r.(*kmsg.FindCoordinatorRequest)
		if req.CoordinatorType != 1 { // groups
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		for _, k := range append(req.CoordinatorKeys, req.CoordinatorKey) {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.ErrorCode, c.NodeID = k, kerr.CoordinatorNotAvailable.Code, -1
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp, nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 10
	c := txnSetup(t, ctx, b, n) // session timeout 6 s: transactions of 4.8 s
	in := pollAll(t, ctx, c, n)
	type result struct {
		committed bool
		err       error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		committed, err := c.Transact(ctx, func(tx broker.Txn) error { return tx.Produce(ctx, "out", outputs(in)) })
		done <- result{committed, err}
	}()
	select {
	case r := <-done:
		t.Logf("Transact: committed %v, %v after %v", r.committed, r.err, time.Since(start).Round(time.Millisecond))
		if r.committed || r.err == nil {
			t.Fatalf("Transact without a transaction coordinator: committed %v, error %v", r.committed, r.err)
		}
		if !strings.Contains(r.err.Error(), "transaction coordinator") {
			t.Errorf("the error does not name the missing transaction coordinator: %v", r.err)
		}
	case <-time.After(25 * time.Second):
		t.Fatalf("a produce in a transaction still waited after %v for a cluster with no transaction coordinator; nothing said why", time.Since(start).Round(time.Second))
	}
}

// TestTransactWaitsOutACoordinatorComingUp: a cluster answers
// COORDINATOR_NOT_AVAILABLE for a while when it has a transaction
// coordinator to give but not yet: a Kafka cluster's first transactional
// FindCoordinator creates __transaction_state, and the answer is that
// error until its partitions have leaders (seconds); a coordinator's
// broker failing over is the same. The first transaction then commits,
// as it did before the coordinator was asked for; it failed at once, and
// every enrichment worker of a new cluster logged that the cluster had no
// transaction coordinator (weir's embedded broker, or a replication
// factor to set) and joined its group again, rebalancing it.
func TestTransactWaitsOutACoordinatorComingUp(t *testing.T) {
	kf, b := newKfake(t)
	up := time.Now().Add(2 * time.Second)
	kf.ControlKey(int16(kmsg.FindCoordinator), func(r kmsg.Request) (kmsg.Response, error, bool) {
		kf.KeepControl()
		req := r.(*kmsg.FindCoordinatorRequest)
		if req.CoordinatorType != 1 || time.Now().After(up) {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		for _, k := range append(req.CoordinatorKeys, req.CoordinatorKey) {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.ErrorCode, c.NodeID = k, kerr.CoordinatorNotAvailable.Code, -1
			resp.Coordinators = append(resp.Coordinators, c)
		}
		return resp, nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 10
	c := txnSetup(t, ctx, b, n)
	in := pollAll(t, ctx, c, n)
	committed, err := c.Transact(ctx, func(tx broker.Txn) error { return tx.Produce(ctx, "out", outputs(in)) })
	if !committed || err != nil {
		t.Fatalf("the first transaction, the coordinator up 2 s later: committed %v, %v", committed, err)
	}
}
