package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestProduceNoBroker: `weir produce` against a broker that is not there
// fails at once with the reason and a non-zero exit, as the other commands
// do, rather than waiting for ever.
func TestProduceNoBroker(t *testing.T) {
	cmd := exec.Command(weirBin, "produce", "t", "--brokers", peers.FreeAddr(t)) // nothing listens there
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
// --timeout, says how many were produced and exits non-zero; also with
// stdin left open (a terminal, `tail -f | weir produce`), when it ends
// then, not at the next line.
func TestProduceBrokerStops(t *testing.T) {
	t.Parallel()
	for _, stdinOpen := range []bool{false, true} {
		t.Run(fmt.Sprintf("stdin_open=%v", stdinOpen), func(t *testing.T) {
			p := startWeir(t, t.TempDir())
			// An *os.File, so that Wait does not wait for stdin to close.
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pw.Close()
			cmd := exec.Command(weirBin, "produce", "t", "--timeout", "2s")
			cmd.Env = append(os.Environ(), "WEIR_BROKERS="+p.KafkaAddr)
			cmd.Stdin = pr
			var errb syncbuf.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pr.Close()
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
					t.Fatalf("first record not produced: %s\n%s", errb.String(), p.Logs())
				}
				time.Sleep(100 * time.Millisecond)
			}
			p.Stop(t)
			io.WriteString(pw, "two\n")
			if !stdinOpen {
				pw.Close()
			}
			select {
			case err := <-done:
				if err == nil {
					t.Fatalf("produce exited 0 with its broker gone: %s", errb.String())
				}
				if !strings.Contains(errb.String(), "produced 1 of 2 records") {
					t.Fatalf("stderr %q: want the count of records produced", errb.String())
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("produce still running 20s after its broker stopped: %s", errb.String())
			}
		})
	}
}

// TestProduceShortTimeout: any positive --timeout is accepted, however
// short (the watchdog's tick is not --timeout/4 when that rounds to 0):
// the command produces, or gives up on a broker slower than that, and
// does not crash.
func TestProduceShortTimeout(t *testing.T) {
	p := startWeir(t, t.TempDir())
	out, errOut, err := p.cli(t, "one\n", "produce", "t", "--timeout", "3ns")
	if strings.Contains(errOut, "panic") || (err != nil && !strings.Contains(errOut, "no answer from the broker")) {
		t.Fatalf("produce --timeout 3ns: %v\n%s%s", err, out, errOut)
	}
}

// TestConsumeFollowReportsBrokerGone: `weir consume --follow` on a broker
// that stops says so on stderr, once, keeps waiting, and says when the
// broker is back; the records produced then are printed.
func TestConsumeFollowReportsBrokerGone(t *testing.T) {
	dir := t.TempDir()
	p := startWeir(t, dir)
	addr := p.KafkaAddr
	if _, errOut, err := p.cli(t, "one\n", "produce", "follow.test"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	cmd := exec.Command(weirBin, "consume", "follow.test", "--from-beginning", "--follow", "--brokers", addr)
	var out, errb syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	waitText(t, &out, `"value":"one"`)
	p.Stop(t)
	waitText(t, &errb, "cannot reach broker "+addr)
	// Back on the same address: the consumer goes on where it was.
	p2 := startWeir(t, dir, "--kafka-listen", addr)
	waitText(t, &errb, "broker "+addr+" reachable again")
	if _, errOut, err := p2.cli(t, "two\n", "produce", "follow.test"); err != nil {
		t.Fatalf("produce: %v %s", err, errOut)
	}
	waitText(t, &out, `"value":"two"`)
	if n := strings.Count(errb.String(), "cannot reach broker"); n != 1 {
		t.Errorf("the outage reported %d times, want once:\n%s", n, errb.String())
	}
}

func waitText(t *testing.T, w *syncbuf.Buffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(w.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %q, have:\n%s", want, w.String())
		}
	}
}

// TestProduceFillsBatchesToTheBrokersLimit: `weir produce` sends a line
// as long as the broker takes (franz-go's own default refused any above
// 1,000,012 bytes), keeps batches of many small lines within the broker's
// limit (else they would be refused whole), and refuses a line above the
// limit with the reason. kcat reads them back.
func TestProduceFillsBatchesToTheBrokersLimit(t *testing.T) {
	t.Parallel()
	kcat := peers.Look(t, "kcat", "kcat")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "weir.yaml")
	if err := os.WriteFile(cfg, []byte("broker:\n  max_message_bytes: 2MiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startWeir(t, filepath.Join(dir, "data"), "-c", cfg)
	// Random text, as franz-go compresses batches and the broker's limit
	// is of what arrives; 6 MB of small lines, three times the limit.
	in := randomLines(1, 1_500_000) + randomLines(6000, 1000)
	if _, stderr, err := p.cli(t, in, "produce", "big", "--key", "k"); err != nil {
		t.Fatalf("a 1.5 MB line and 6,000 small ones (limit 2 MiB): %v: %s\nserver log:\n%s", err, stderr, p.Logs())
	}
	out, err := exec.Command(kcat, "-b", p.KafkaAddr, "-C", "-t", "big", "-e", "-q", "-f", "%S\n").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v: %s", err, out)
	}
	sizes := strings.Fields(string(out))
	if len(sizes) != 6001 || sizes[0] != "1500000" || sizes[6000] != "1000" {
		t.Fatalf("kcat read %d records (first %v), want 6,001: the 1.5 MB one first", len(sizes), sizes[:min(3, len(sizes))])
	}
	_, stderr, err := p.cli(t, randomLines(1, 2_500_000), "produce", "big")
	if err == nil || !strings.Contains(stderr, "MESSAGE_TOO_LARGE") {
		t.Fatalf("a 2.5 MB line (limit 2 MiB): %v: %s", err, stderr)
	}
}

// TestProduceLineOverMaxLineBytes: a line longer than --max-line-bytes
// fails the command naming the line and the flag to raise (bufio's own
// "token too long" named neither), after saying how many of the lines
// before it were produced, as the other failures do.
func TestProduceLineOverMaxLineBytes(t *testing.T) {
	p := startWeir(t, t.TempDir())
	in := "one\ntwo\n" + strings.Repeat("x", 2000) + "\nfour\n"
	_, stderr, err := p.cli(t, in, "produce", "long", "--max-line-bytes", "1000")
	if err == nil {
		t.Fatalf("a 2,000-byte line with --max-line-bytes 1000 exited 0: %s", stderr)
	}
	for _, want := range []string{"line 3 is longer than --max-line-bytes (1000)", "produced 2 of 2 records to long"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr has no %q:\n%s", want, stderr)
		}
	}
	out, _, err := p.cli(t, "", "consume", "long", "--from-beginning")
	if err != nil || strings.Count(out, `"topic":"long"`) != 2 {
		t.Fatalf("consume: %v, want the two lines before the long one:\n%s", err, out)
	}
}

// TestProduceLineOfMaxLineBytes: --max-line-bytes is the longest line
// taken ("longest accepted line"), so a line of exactly that many bytes,
// ended by "\n" or "\r\n", is produced; bufio counted the line's end
// against the bound and refused it.
func TestProduceLineOfMaxLineBytes(t *testing.T) {
	p := startWeir(t, t.TempDir())
	line := strings.Repeat("x", 1000)
	in := line + "\n" + line + "\r\n" + line
	_, stderr, err := p.cli(t, in, "produce", "exact", "--max-line-bytes", "1000")
	if err != nil || !strings.Contains(stderr, "produced 3 of 3 records to exact") {
		t.Fatalf("three 1,000-byte lines with --max-line-bytes 1000: %v: %s", err, stderr)
	}
	_, stderr, err = p.cli(t, line+"x\n", "produce", "exact", "--max-line-bytes", "1000")
	if err == nil || !strings.Contains(stderr, "line 1 is longer than --max-line-bytes (1000)") {
		t.Fatalf("a 1,001-byte line with --max-line-bytes 1000: %v: %s", err, stderr)
	}
	_, stderr, err = p.cli(t, line+"x", "produce", "exact", "--max-line-bytes", "1000")
	if err == nil || !strings.Contains(stderr, "line 1 is longer than --max-line-bytes (1000)") {
		t.Fatalf("a last 1,001-byte line without its newline, with --max-line-bytes 1000: %v: %s", err, stderr)
	}
}

// TestConsumeNoBroker: `weir consume` against a broker that is not there
// fails at once with the reason, with and without --group, and does not
// first say it is retrying (it is not: "(retrying)" is for a broker that
// goes away while it follows).
func TestConsumeNoBroker(t *testing.T) {
	addr := peers.FreeAddr(t) // nothing listens there
	for _, args := range [][]string{{"consume", "t", "--brokers", addr}, {"consume", "t", "--brokers", addr, "--group", "g"}} {
		cmd := exec.Command(weirBin, args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		if err == nil || !strings.Contains(errb.String(), "connection refused") {
			t.Errorf("weir %s: %v, stderr %q: want a failure with the reason", strings.Join(args, " "), err, errb.String())
		}
		if strings.Contains(errb.String(), "retrying") {
			t.Errorf("weir %s says it retries, then exits:\n%s", strings.Join(args, " "), errb.String())
		}
	}
}
