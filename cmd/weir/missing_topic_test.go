package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestMissingTopicOnClusterWithoutAutoCreation: on a Kafka cluster that
// does not create topics on first use, produce and topics describe to a
// topic that does not exist failed with Kafka's "UNKNOWN_TOPIC_OR_PARTITION:
// This server does not host this topic-partition", which does not say that
// the topic is missing nor how to make it.
func TestMissingTopicOnClusterWithoutAutoCreation(t *testing.T) {
	addr := bareCluster(t)
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{"x\n", []string{"produce", "nosuch", "--brokers", addr}},
		{"", []string{"topics", "describe", "nosuch", "--brokers", addr}},
		{"", []string{"topics", "list", "nosuch", "--brokers", addr}},
	} {
		var stdout, stderr bytes.Buffer
		err := dispatch(context.Background(), c.args, strings.NewReader(c.stdin), &stdout, &stderr)
		if err == nil || exitCode(err) != 1 {
			t.Fatalf("%v: %v (exit %d), want exit 1", c.args, err, exitCode(err))
		}
		if msg := err.Error(); !strings.Contains(msg, "no such topic") || !strings.Contains(msg, "weir topics create nosuch") {
			t.Errorf("%v: %q: want it to say the topic is missing and how to create it", c.args, msg)
		}
	}
}

// TestMissingTopicSaidPlainly: topics list and delete of a topic that is
// not there say so, as describe does, not with Kafka's error code; and
// of a topic weir run makes itself (raw.traps, read right after a trap
// was sent), the hint is not to create it by hand.
func TestMissingTopicSaidPlainly(t *testing.T) {
	addr := bareCluster(t)
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"topics", "delete", "nosuch", "--brokers", addr}, "delete nosuch: no such topic", "UNKNOWN_TOPIC"},
		{[]string{"topics", "list", "raw.traps", "--brokers", addr}, "weir run makes it with its first record", "weir topics create"},
		{[]string{"consume", "raw.traps", "--from-beginning", "--brokers", addr}, "weir run makes it with its first record", "weir topics create"},
	} {
		var stdout, stderr bytes.Buffer
		err := dispatch(context.Background(), c.args, strings.NewReader(""), &stdout, &stderr)
		if err == nil || exitCode(err) != 1 {
			t.Fatalf("%v: %v (exit %d), want exit 1", c.args, err, exitCode(err))
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, c.not) {
			t.Errorf("%v: %q, want it to say %q and not %q", c.args, msg, c.want, c.not)
		}
	}
}

// bareCluster is the address of a one-broker kfake cluster that does not
// create topics on first use, closed with the test.
func bareCluster(t *testing.T) string {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	return cluster.ListenAddrs()[0]
}
