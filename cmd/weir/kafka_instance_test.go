package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestInstanceID: the id is kept in the data directory, the same after a
// restart, different for another data directory.
func TestInstanceID(t *testing.T) {
	a, b := t.TempDir(), filepath.Join(t.TempDir(), "not-yet")
	first, err := instanceID(a)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := instanceID(a)
	other, err := instanceID(b)
	if err != nil {
		t.Fatal(err)
	}
	if first != again || first == other {
		t.Fatalf("ids %q, %q (same dir), %q (other dir)", first, again, other)
	}
	host, _ := os.Hostname()
	if !strings.HasPrefix(first, host+"-") {
		t.Fatalf("id %q does not start with the host name", first)
	}
}

// TestSecondProcessOnADataDirOnKafka: on a Kafka cluster, as on the
// embedded log, a second `weir run` with a data_dir another process holds
// refuses it at start, naming it: both would take the instance id kept
// there, hence the same transactional ids, and fence each other's
// enrichment transactions for as long as both ran (a review run saw 21
// aborted batches in 40 s).
func TestSecondProcessOnADataDirOnKafka(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "weir.yaml")
	if err := os.WriteFile(cfg, []byte("broker:\n  kafka:\n    brokers: ["+strings.Join(cluster.ListenAddrs(), ", ")+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	startWeir(t, data, "-c", cfg)

	cmd := exec.Command(weirBin, "run", "-c", cfg, "--data-dir", data, "--http-listen", "127.0.0.1:0", "--syslog-listen", "127.0.0.1:0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(out.String(), "in use by another process") || !strings.Contains(out.String(), data) {
			t.Fatalf("second weir exited (%v) without naming the directory in use:\n%s", err, out.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("a second weir runs on the data_dir another holds:\n%s", out.String())
	}
}
