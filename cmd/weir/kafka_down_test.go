package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"
)

// TestStartsWithClusterDownAndTopicsListed: weir started while its Kafka
// cluster is not reachable yet (a host booting, Kafka restarting) runs
// and retries, as it does without broker.topics: the collectors take
// and hold, enrichment and sinks retry; also with topics listed in
// broker.topics (the shipped configs/weir.yaml lists raw.syslog and
// events), which are created with their config once the cluster answers.
func TestStartsWithClusterDownAndTopicsListed(t *testing.T) {
	t.Parallel()              // it waits 10 s on a weir of its own
	addr := peers.FreeAddr(t) // a port nothing answers on
	dir := t.TempDir()
	cfg := filepath.Join(dir, "weir.yaml")
	conf := "broker:\n  kafka:\n    brokers: [" + addr + "]\n  topics:\n    events: {partitions: 3}\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(weirBin, "run", "-c", cfg, "--data-dir", filepath.Join(dir, "data"), "--http-listen", "127.0.0.1:0", "--syslog-listen", "127.0.0.1:0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		t.Fatalf("weir exited (%v) while the cluster was down:\n%s", err, out.String())
	case <-time.After(10 * time.Second):
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}
}
