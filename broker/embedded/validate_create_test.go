package embedded

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirnet/weir/broker"
)

// TestPartitionBoundValidateOnly: a CreateTopics with validate_only (kadm's
// ValidateCreateTopics, Terraform's plan, kafka-topics --dry-run tools)
// reports what creating would say. It said nothing of the partition
// bound: a topic the creation refuses POLICY_VIOLATION was validated.
// Kafka runs its create-topic policy in validate-only requests too.
func TestPartitionBoundValidateOnly(t *testing.T) {
	b := openTest(t, t.TempDir(), WithMaxPartitions(10))
	cl := serveWireClient(t, b)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 8, 1, nil, "a"); err != nil {
		t.Fatal(err)
	}
	resp, err := adm.ValidateCreateTopics(ctx, 3, 1, nil, "b")
	if err != nil {
		t.Fatal(err)
	}
	r := resp["b"]
	if !errors.Is(r.Err, kerr.PolicyViolation) || !strings.Contains(r.ErrMessage, "more than the broker's 10 (broker.max_partitions)") {
		t.Fatalf("validating a topic past the bound: %v (%q), want POLICY_VIOLATION naming the bound", r.Err, r.ErrMessage)
	}
	resp, err = adm.ValidateCreateTopics(ctx, 2, 1, nil, "c")
	if err != nil || resp["c"].Err != nil {
		t.Fatalf("validating a topic within the bound: %v, %v", err, resp["c"].Err)
	}
	if _, err := b.DescribeTopics(ctx, "c"); !errors.Is(err, broker.ErrUnknownTopic) {
		t.Fatalf("validation created the topic: %v", err)
	}
	if got := b.refusedCreates.Load(); got != 0 {
		t.Errorf("%d refused creations counted for a validation", got)
	}
}
