package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStartsWithoutCreatePermission: on a Kafka cluster with ACLs whose
// admins create the topics, weir's user may read and write them but not
// create topics. A topic listed in broker.topics (the shipped config lists
// raw.syslog and events) that weir may not create, though it exists, made
// weir run exit at start with TOPIC_AUTHORIZATION_FAILED; a topic weir
// produces to is left to the cluster in that case (ensureTopic), and so
// is one of broker.topics: weir runs, and says so.
func TestStartsWithoutCreatePermission(t *testing.T) {
	t.Parallel()
	allow := func(r kmsg.ACLResourceType) kfake.ACL {
		return kfake.ACL{Resource: r, Name: "*", Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationAll, Allow: true}
	}
	deny := func(r kmsg.ACLResourceType, name string) kfake.ACL {
		return kfake.ACL{Resource: r, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationCreate}
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "events", "raw.syslog"),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "admin", "admin"), kfake.EnableACLs(),
		kfake.User("SCRAM-SHA-256", "weir", "pw",
			allow(kmsg.ACLResourceTypeTopic), allow(kmsg.ACLResourceTypeGroup), allow(kmsg.ACLResourceTypeCluster), allow(kmsg.ACLResourceTypeTransactionalId),
			deny(kmsg.ACLResourceTypeTopic, "*"), deny(kmsg.ACLResourceTypeCluster, "kafka-cluster")))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "weir.yaml")
	conf := "broker:\n  kafka:\n    brokers: [" + cluster.ListenAddrs()[0] + "]\n    replication_factor: 1\n" +
		"    sasl: {mechanism: SCRAM-SHA-256, username: weir, password: pw}\n  topics:\n    events: {partitions: 3}\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "weir.log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(weirBin, "run", "-c", cfg, "--data-dir", filepath.Join(dir, "data"), "--http-listen", "127.0.0.1:0", "--syslog-listen", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		log, _ := os.ReadFile(logFile)
		t.Fatalf("weir exited (%v) on a cluster where it may not create topics:\n%s", err, log)
	case <-time.After(5 * time.Second):
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}
	log, _ := os.ReadFile(logFile)
	if !strings.Contains(string(log), "TOPIC_AUTHORIZATION_FAILED") || !strings.Contains(string(log), "topic=events") {
		t.Errorf("the log does not say events was not created, nor why:\n%s", log)
	}
}
