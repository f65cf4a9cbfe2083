package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTopicsAlter: weir topics alter changes a running weir's topic
// configs and prints them as describe does; the change survives a
// restart, --delete-config brings the default back, a bad value is
// refused with the broker's reason, and a config weir.yaml sets for the
// topic is refused saying so, rather than taken and not applied.
func TestTopicsAlter(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "weir.yaml")
	if err := os.WriteFile(cfg, []byte("broker:\n  topics:\n    fixed: {partitions: 1, retention: {time: 1h}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startWeir(t, data, "-c", cfg)
	if out, errs, err := p.cli(t, "", "topics", "create", "t", "--partitions", "1"); err != nil {
		t.Fatalf("topics create: %v %s%s", err, out, errs)
	}
	out, errs, err := p.cli(t, "", "topics", "alter", "t", "--retention", "3d", "--config", "segment.bytes=1048576")
	if err != nil {
		t.Fatalf("topics alter: %v %s%s", err, out, errs)
	}
	for _, want := range []string{"altered t\n", "retention.ms=259200000 (3d)  ", "segment.bytes=1048576 (1.0MiB)  ", "retention.bytes=1073741824 (1.0GiB, default)"} {
		if !strings.Contains(out, want) {
			t.Errorf("alter does not show %q:\n%s", want, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"t", "--config", "segment.bytes=1"}, "INVALID_CONFIG"},
		{[]string{"t", "--config", "segment.bytes=1"}, "segment.bytes"},
		{[]string{"t", "--config", "compression.type=zstd"}, "unsupported topic config"},
		{[]string{"missing", "--retention", "1h"}, "no such topic"},
		{[]string{"missing", "--retention", "1h"}, "weir topics create missing"},
		// Kafka's internal topics are no topics of weir's log: no
		// advice to create one.
		{[]string{"__consumer_offsets", "--retention", "1h"}, "keeps consumer group offsets and producer state outside topics"},
		{[]string{"fixed", "--retention", "2h"}, "POLICY_VIOLATION"},
		{[]string{"fixed", "--retention", "2h"}, "broker.topics.fixed.retention.time"},
	} {
		args := append([]string{"topics", "alter"}, c.args...)
		out, errs, err := p.cli(t, "", args...)
		if err == nil || !strings.Contains(errs, c.want) {
			t.Errorf("weir %s: %v, stderr %q, want it to say %q (stdout %q)", strings.Join(args, " "), err, errs, c.want, out)
		}
	}
	// Usage errors: nothing to change, a key set twice or set and deleted.
	for _, args := range [][]string{{"t"}, {"t", "--retention", "1h", "--config", "retention.ms=1000"}, {"t", "--config", "segment.ms=1000", "--delete-config", "segment.ms"}} {
		args = append([]string{"topics", "alter"}, args...)
		if _, errs, err := p.cli(t, "", args...); err == nil || !strings.Contains(err.Error(), "exit status 2") {
			t.Errorf("weir %s: %v %q, want a usage error", strings.Join(args, " "), err, errs)
		}
	}
	p.Stop(t)
	p = startWeir(t, data, "-c", cfg)
	out, errs, err = p.cli(t, "", "topics", "describe", "t")
	if err != nil || !strings.Contains(out, "retention.ms=259200000 (3d)") || !strings.Contains(out, "segment.bytes=1048576 (1.0MiB)") {
		t.Fatalf("describe after a restart: %v\n%s%s", err, out, errs)
	}
	out, errs, err = p.cli(t, "", "topics", "alter", "t", "--delete-config", "retention.ms")
	if err != nil || !strings.Contains(out, "retention.ms=604800000 (7d, default)") || !strings.Contains(out, "segment.bytes=1048576 (1.0MiB)") {
		t.Fatalf("alter --delete-config retention.ms: %v\n%s%s", err, out, errs)
	}
}

// TestTopicsAlterOnKafka: the same command on a Kafka cluster (kfake),
// where the user's ACLs may not let them alter configs.
func TestTopicsAlterOnKafka(t *testing.T) {
	allow := func(r kmsg.ACLResourceType, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: r, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "admin", "admin"), kfake.EnableACLs(),
		kfake.User("SCRAM-SHA-256", "reader", "pw", allow(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationDescribe), allow(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationDescribeConfigs)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(user, pw string, args ...string) (string, string, error) {
		t.Setenv("WEIR_SASL_PASSWORD", pw)
		var stdout, stderr bytes.Buffer
		args = append(append([]string{"topics", "alter"}, args...), "--brokers", c.ListenAddrs()[0], "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", user)
		err := dispatch(ctx, args, strings.NewReader(""), &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}
	out, errs, err := run("admin", "admin", "t", "--retention", "3d", "--retention-bytes", "1GiB")
	if err != nil || !strings.Contains(out, "retention.ms=259200000 (3d)") || !strings.Contains(out, "retention.bytes=1073741824 (1.0GiB)") {
		t.Fatalf("alter on kfake: %v\n%s%s", err, out, errs)
	}
	out, errs, err = run("admin", "admin", "t", "--delete-config", "retention.ms")
	if err != nil || !strings.Contains(out, "retention.ms=604800000 (7d, default)") || !strings.Contains(out, "retention.bytes=1073741824 (1.0GiB)  ") {
		t.Fatalf("alter --delete-config on kfake: %v\n%s%s", err, out, errs)
	}
	if _, _, err := run("reader", "pw", "t", "--retention", "1h"); err == nil || !strings.Contains(err.Error(), "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("alter without ALTER_CONFIGS: %v", err)
	}
}
