package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestProduceNoBroker: `weir produce` against a broker that is not there
// fails at once with the reason and a non-zero exit, as the other commands
// do, rather than waiting for ever.
func TestProduceNoBroker(t *testing.T) {
	cmd := exec.Command(weirBin, "produce", "t", "--brokers", closedPort(t))
	cmd.Stdin = strings.NewReader("hello\n")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("produce to a closed port exited 0: %s", errb.String())
		}
		if !strings.Contains(errb.String(), "connection refused") {
			t.Fatalf("produce to a closed port: %v, stderr %q: no reason given", err, errb.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("produce to a closed port still running after 20s: %s", errb.String())
	}
}

// TestProduceBrokerStops: a broker that goes away while `weir produce` is
// still sending fails the records it can no longer deliver within
// --timeout, says how many were produced and exits non-zero.
func TestProduceBrokerStops(t *testing.T) {
	p := startWeir(t, t.TempDir())
	pr, pw := io.Pipe()
	cmd := exec.Command(weirBin, "produce", "t", "--timeout", "3s")
	cmd.Env = append(os.Environ(), "WEIR_BROKERS="+p.kafkaAddr)
	cmd.Stdin = pr
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	io.WriteString(pw, "one\n")
	// Wait for the first record to be in the log.
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, _, _ := p.cli(t, "", "consume", "t", "--from-beginning")
		if strings.Contains(out, `"value":"one"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("first record not produced: %s\n%s", errb.String(), p.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.stop(t)
	io.WriteString(pw, "two\n")
	pw.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("produce exited 0 with its broker gone: %s", errb.String())
		}
		if !strings.Contains(errb.String(), "produced 1 of 2 records") {
			t.Fatalf("stderr %q: want the count of records produced", errb.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("produce still running 30s after its broker stopped: %s", errb.String())
	}
}
