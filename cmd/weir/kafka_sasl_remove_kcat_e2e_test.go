package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// TestKafkaSASLReloadClosesRemovedKcat: kcat consuming as a SASL_SSL
// (SCRAM-SHA-512) user, at the end of its topic in a Fetch long-poll of
// four minutes, loses its session when a reload removes the user: its
// connection is closed at the reload (the socket under TLS), not when
// the poll ends, and nothing more reaches it; the kept user goes on.
// The waits have no deadline: a connection left open hangs the test.
func TestKafkaSASLReloadClosesRemovedKcat(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat not installed")
	}
	ca := tlstest.NewCA(t, "weir-ca")
	cert, key := ca.LeafFiles(t, "weir")
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	writeConfig := func(withDash bool) {
		t.Helper()
		y := "broker:\n" +
			"  kafka_tls: {cert_file: " + cert + ", key_file: " + key + "}\n" +
			"  kafka_sasl:\n" +
			"    mechanisms: [SCRAM-SHA-512]\n" +
			"    users:\n" +
			"      - {name: ops, password: ops-pw}\n"
		if withDash {
			y += "      - {name: dash, password: d4sh-pw, read_only: true}\n"
		}
		if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(true)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	p.waitLog(t, `sasl=SCRAM-SHA-512`, "the listener's start line does not say SASL is on")
	secured := func(user string) []string {
		return []string{"--brokers", p.KafkaAddr, "--tls-ca", ca.File, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-username", user}
	}
	t.Setenv("WEIR_SASL_PASSWORD", "ops-pw")
	// One partition: librdkafka's first Fetch may name only the
	// partitions whose start it knows, and with six it waited out the
	// whole poll on the empty ones before the record's.
	if _, errs, err := p.cli(t, "", append([]string{"topics", "create", "scratch", "--partitions", "1"}, secured("ops")...)...); err != nil {
		t.Fatalf("topics create as ops: %v\n%s", err, errs)
	}
	if _, errs, err := p.cli(t, "{\"n\":1}\n", append([]string{"produce", "scratch"}, secured("ops")...)...); err != nil {
		t.Fatalf("produce as ops: %v\n%s", err, errs)
	}

	kc := exec.Command("kcat", "-b", p.KafkaAddr, "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
		"-X", "sasl.username=dash", "-X", "sasl.password=d4sh-pw", "-X", "ssl.ca.location="+ca.File,
		// A Fetch long-poll of four minutes (the socket timeout must exceed it).
		"-X", "fetch.wait.max.ms=240000", "-X", "socket.timeout.ms=300000",
		"-C", "-t", "scratch", "-o", "beginning", "-u")
	stdout, err := kc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var kerrMu sync.Mutex
	var kerrBuf strings.Builder
	stderr, err := kc.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		kc.Process.Signal(syscall.SIGTERM)
		kc.Wait()
	}()
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			kerrMu.Lock()
			kerrBuf.WriteString(sc.Text() + "\n")
			kerrMu.Unlock()
		}
	}()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	if l := <-lines; !strings.Contains(l, `"n":1`) {
		t.Fatalf("kcat printed %q", l)
	}
	// kcat now waits at the end of the topic, in Fetch long-polls.
	conns := p.Metrics(t)["weir_kafka_connections"]
	if conns < 1 {
		t.Fatalf("weir_kafka_connections %v with kcat consuming", conns)
	}

	writeConfig(false)
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(p.Logs(), `user=dash reason="the user was removed from broker.kafka_sasl by a reload"`) {
		time.Sleep(50 * time.Millisecond)
	}
	// kcat sees its connection end (TLS without close_notify).
	for {
		kerrMu.Lock()
		ks := kerrBuf.String()
		kerrMu.Unlock()
		if strings.Contains(ks, "Receive failed") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The kept user still produces and reads.
	if _, errs, err := p.cli(t, "{\"n\":2}\n", append([]string{"produce", "scratch"}, secured("ops")...)...); err != nil {
		t.Fatalf("produce as ops after the reload: %v\n%s", err, errs)
	}
	select {
	case l, ok := <-lines:
		if ok {
			t.Errorf("kcat, its user removed, still read %q", l)
		}
	case <-time.After(2 * time.Second):
	}
}
