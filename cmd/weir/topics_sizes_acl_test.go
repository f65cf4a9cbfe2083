package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTopicsSizesNotPermitted: a user the cluster's ACLs do not let
// describe its log dirs (DESCRIBE on the cluster, which weir's own user
// need not have) gets no sizes. `weir topics` shows them unknown ("-"),
// not "0B", which reads as an empty topic.
func TestTopicsSizesNotPermitted(t *testing.T) {
	allow := func(r kmsg.ACLResourceType, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: r, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "raw.snmp"),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "admin", "admin"), kfake.EnableACLs(),
		kfake.User("SCRAM-SHA-256", "weir", "pw", allow(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationAll)))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seeds := cluster.ListenAddrs()
	t.Setenv("WEIR_SASL_PASSWORD", "pw")
	sasl := []string{"--brokers", strings.Join(seeds, ","), "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", "weir"}
	cf := clientFlags{brokers: strings.Join(seeds, ","), saslMechanism: "SCRAM-SHA-256", saslUsername: "weir", saslPassword: "pw"}
	cl, err := cf.client(kgo.DefaultProduceTopic("raw.snmp"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: bytes.Repeat([]byte("x"), 1000)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"list"}, {"describe", "raw.snmp"}} {
		var out, errs bytes.Buffer
		if err := topicsCmd(ctx, append(args, sasl...), &out, &errs); err != nil {
			t.Fatalf("topics %v: %v\n%s%s", args, err, out.String(), errs.String())
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) > 0 && (f[0] == "raw.snmp" || f[0] == "0" || f[0] == "1") && f[len(f)-1] != "-" {
				t.Errorf("topics %v: %q: the bytes it was not allowed to learn, want -", args, line)
			}
		}
	}
}
