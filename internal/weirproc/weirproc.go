// Package weirproc runs weir's binaries as users do, for end-to-end
// tests: built once per test binary, started as `weir run` with its
// listeners' addresses read from its log, stopped with SIGTERM.
package weirproc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Build builds ./cmd/weir and ./cmd/weir-sim of the module at root into
// dir and returns their paths. Call it from TestMain.
func Build(root, dir string) (weir, sim string, err error) {
	weir, sim = filepath.Join(dir, "weir"), filepath.Join(dir, "weir-sim")
	for bin, pkg := range map[string]string{weir: "./cmd/weir", sim: "./cmd/weir-sim"} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
		}
	}
	return weir, sim, nil
}

// Proc is a running `weir run`.
type Proc struct {
	Cmd       *exec.Cmd
	KafkaAddr string // from its log; "" until it listens
	HTTPAddr  string
	DataDir   string
	// Exited is closed when the process has exited.
	Exited chan struct{}

	mu        sync.Mutex
	log       bytes.Buffer
	syslogUDP string
	syslogTCP string
}

var (
	addrRE   = regexp.MustCompile(`msg="(kafka|http) listener started".*addr=(\S+)`)
	syslogRE = regexp.MustCompile(`msg="syslog listening".*protocol=(\w+) addr=(\S+)`)
)

// startTimeout bounds Start's wait for weir to say it runs.
var startTimeout = 20 * time.Second

// Start runs `weir run` with args in directory dir (the relative paths of
// a config are taken from there; "" is the test's), and waits until it
// logs that it runs. It is stopped when the test ends.
func Start(t testing.TB, bin, dir string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Cmd: exec.Command(bin, append([]string{"run"}, args...)...), Exited: make(chan struct{})}
	p.Cmd.Dir = dir
	for i, a := range args {
		if a == "--data-dir" && i+1 < len(args) {
			p.DataDir = args[i+1]
		}
	}
	stderr, err := p.Cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Stopped when the test ends, also when it fails below.
	t.Cleanup(func() { p.Stop(t) })
	ready := make(chan struct{})
	// The log is read to its end before Wait, which closes the pipe (and
	// would lose what is left in it: the error weir exited with), and
	// before Exited, so that Logs then has all of it.
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.scan(sc.Text(), ready)
		}
		io.Copy(io.Discard, stderr) // past a line too long for the scanner
		p.Cmd.Wait()
		close(p.Exited)
	}()
	select {
	case <-ready:
	case <-p.Exited:
		t.Fatalf("weir exited at start:\n%s", p.Logs())
	case <-time.After(startTimeout):
		t.Fatalf("weir did not start:\n%s", p.Logs())
	}
	return p
}

// scan takes one line of the log.
func (p *Proc) scan(line string, ready chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log.WriteString(line + "\n")
	if m := addrRE.FindStringSubmatch(line); m != nil {
		if m[1] == "kafka" {
			p.KafkaAddr = m[2]
		} else {
			p.HTTPAddr = m[2]
		}
	}
	if m := syslogRE.FindStringSubmatch(line); m != nil {
		if m[1] == "udp" {
			p.syslogUDP = m[2]
		} else {
			p.syslogTCP = m[2]
		}
	}
	if strings.Contains(line, `msg="weir running"`) {
		close(ready)
	}
}

// SyslogAddrs waits for the syslog listeners, which start after the log.
func (p *Proc) SyslogAddrs(t testing.TB) (udp, tcp string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		p.mu.Lock()
		udp, tcp = p.syslogUDP, p.syslogTCP
		p.mu.Unlock()
		if udp != "" && tcp != "" {
			return udp, tcp
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("syslog listeners not started:\n%s", p.Logs())
	return
}

// Running fails the test, with the log, if the process has exited: a
// wait for its output would otherwise run to its timeout.
func (p *Proc) Running(t testing.TB) {
	t.Helper()
	select {
	case <-p.Exited:
		t.Fatalf("weir exited:\n%s", p.Logs())
	default:
	}
}

// Metrics reads the process's /metrics: each sample by its name and
// labels as written.
func (p *Proc) Metrics(t testing.TB) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + p.HTTPAddr + "/metrics")
	if err != nil {
		t.Fatalf("scrape weir: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape weir: %v", err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if i := strings.LastIndexByte(line, ' '); i > 0 && !strings.HasPrefix(line, "#") {
			out[line[:i]], _ = strconv.ParseFloat(line[i+1:], 64)
		}
	}
	return out
}

// Logs is what it logged so far.
func (p *Proc) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Stop sends SIGTERM and waits for a clean exit.
func (p *Proc) Stop(t testing.TB) {
	select {
	case <-p.Exited:
		return
	default:
	}
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited:
	case <-time.After(15 * time.Second):
		p.Cmd.Process.Kill()
		t.Errorf("weir did not stop on SIGTERM:\n%s", p.Logs())
	}
}

// CLI runs a weir client command (bin args...) against the process's
// Kafka listener and returns its stdout and stderr.
func (p *Proc) CLI(t testing.TB, bin, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "WEIR_BROKERS="+p.KafkaAddr)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}
