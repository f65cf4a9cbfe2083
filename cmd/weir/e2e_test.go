package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/tlsconf/tlstest"
	"github.com/weirnet/weir/internal/weirproc"
)

// weirBin is the weir binary built once for the end-to-end tests, which run
// it as users do and talk to it with real Kafka clients.
var weirBin string

func TestMain(m *testing.M) {
	// Most of the parallel tests here wait on weir processes, kfake
	// clusters and timeouts with the CPU idle: by default (-parallel
	// GOMAXPROCS, 2 in CI) they would wait two at a time. An explicit
	// -parallel is kept.
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
	}
	dir, err := os.MkdirTemp("", "weir-e2e")
	if err != nil {
		panic(err)
	}
	weirBin = filepath.Join(dir, "weir")
	out, err := exec.Command("go", "build", "-o", weirBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building weir: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// weirProc is a running `weir run` (internal/weirproc), with this
// package's helpers.
type weirProc struct{ *weirproc.Proc }

// startWeir runs weir on free loopback ports and waits until it listens.
func startWeir(t *testing.T, dataDir string, extra ...string) *weirProc {
	t.Helper()
	args := append([]string{"--data-dir", dataDir, "--kafka-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--syslog-listen", "127.0.0.1:0"}, extra...)
	return &weirProc{weirproc.Start(t, weirBin, "", args...)}
}

// arista sends msg to p's syslog TCP listener with util-linux's logger,
// as an Arista switch logs (RFC 3164, tag Ebra).
func (p *weirProc) arista(t *testing.T, msg string) {
	t.Helper()
	_, tcp := p.SyslogAddrs(t)
	_, port, _ := strings.Cut(tcp, ":")
	if out, err := exec.Command("logger", "-n", "127.0.0.1", "-P", port, "-T", "--rfc3164", "-t", "Ebra", msg).CombinedOutput(); err != nil {
		t.Fatalf("logger: %v %s", err, out)
	}
}

// waitLog waits up to 10 s for text in p's log; what names what is missing.
func (p *weirProc) waitLog(t *testing.T, text, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Logs(), text); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s:\n%s", what, p.Logs())
		}
	}
}

// cli runs a weir client command against p.
func (p *weirProc) cli(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	return p.CLI(t, weirBin, stdin, args...)
}

func TestCLIWorkflow(t *testing.T) {
	p := startWeir(t, t.TempDir())
	mustCLI := func(stdin string, args ...string) string {
		t.Helper()
		out, errs, err := p.cli(t, stdin, args...)
		if err != nil {
			t.Fatalf("weir %s: %v\n%s%s\nserver log:\n%s", strings.Join(args, " "), err, out, errs, p.Logs())
		}
		return out
	}
	if out := mustCLI("", "topics", "create", "raw.syslog", "--partitions", "6"); !strings.Contains(out, "created raw.syslog with 6 partitions") {
		t.Fatalf("create: %q", out)
	}
	mustCLI(`{"hello":"world"}`+"\nnot json\n", "produce", "raw.syslog", "--key", "edge1", "--header", "source=cli")
	out := mustCLI("", "consume", "raw.syslog", "--from-beginning", "--max", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("consume printed %q", out)
	}
	var rec struct {
		Topic     string            `json:"topic"`
		Partition int32             `json:"partition"`
		Offset    int64             `json:"offset"`
		Key       string            `json:"key"`
		Value     any               `json:"value"`
		Headers   map[string]string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Topic != "raw.syslog" || rec.Key != "edge1" || rec.Offset != 0 || rec.Headers["source"] != "cli" {
		t.Fatalf("record %+v", rec)
	}
	if v, ok := rec.Value.(map[string]any); !ok || v["hello"] != "world" {
		t.Fatalf("JSON value not inline: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"value":"not json"`) {
		t.Fatalf("non-JSON value: %s", lines[1])
	}
	// The key's partition is Kafka's murmur2 partition for "edge1".
	if want := int32(1); rec.Partition != want {
		t.Fatalf("edge1 went to partition %d, Kafka's partitioner says %d", rec.Partition, want)
	}
	// Explicit partition and offset.
	mustCLI("third\n", "produce", "raw.syslog", "--partition", "4")
	out = mustCLI("", "consume", "raw.syslog", "--partition", "4", "--offset", "0")
	if !strings.Contains(out, `"partition":4,"offset":0`) || !strings.Contains(out, `"value":"third"`) {
		t.Fatalf("partition 4: %q", out)
	}
	// An offset past the end is an error, not silence.
	if _, errs, err := p.cli(t, "", "consume", "raw.syslog", "--partition", "4", "--offset", "99"); err == nil || !strings.Contains(errs, "offset 99 is past the end (1)") {
		t.Fatalf("offset past the end: %v %s", err, errs)
	}
	out = mustCLI("", "topics", "list")
	if !regexp.MustCompile(`raw\.syslog\s+6\s+3\s+0\s+3\s+\S+B`).MatchString(out) {
		t.Fatalf("topics list:\n%s", out)
	}
	out = mustCLI("", "topics", "describe", "raw.syslog")
	if !strings.Contains(out, "partitions 6") || strings.Count(out, "\n") != 9 || !strings.Contains(out, "retention.ms=") {
		t.Fatalf("describe:\n%s", out)
	}
	// The topic ID as Kafka's tools write a Uuid: URL-safe base64, no padding.
	if !regexp.MustCompile(`id [A-Za-z0-9_-]{22}  `).MatchString(out) {
		t.Fatalf("describe: the topic ID not as Kafka writes it:\n%s", out)
	}
	mustCLI("", "topics", "delete", "raw.syslog")
	if _, errs, err := p.cli(t, "", "topics", "describe", "raw.syslog"); err == nil {
		t.Fatalf("describe after delete succeeded: %s", errs)
	}
	// A topic listed by name that is not there fails the command, with
	// no table header above the error.
	if out, errs, err := p.cli(t, "", "topics", "list", "raw.syslog"); err == nil || !strings.Contains(errs, "topic raw.syslog") || out != "" {
		t.Fatalf("list of a deleted topic: %v\n%s%s", err, out, errs)
	}
	if _, errs, err := p.cli(t, "", "topics", "create", "bad/name"); err == nil || !strings.Contains(errs, "invalid topic name") {
		t.Fatalf("bad topic name: %v %s", err, errs)
	}
}

func TestHTTPEndpoints(t *testing.T) {
	p := startWeir(t, t.TempDir())
	p.cli(t, "a\nb\n", "produce", "t")
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + p.HTTPAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	if code, _ := get("/readyz"); code != 200 {
		t.Fatalf("readyz %d", code)
	}
	// Every profile the pprof index links to answers (cmdline and
	// symbol were 404s; go tool pprof asks symbol of a remote profile).
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline", "/debug/pprof/symbol"} {
		if code, _ := get(path); code != 200 {
			t.Errorf("%s: %d", path, code)
		}
	}
	_, metrics := get("/metrics")
	for _, want := range []string{
		`weir_broker_records_in_total{topic="t"} 2`,
		`weir_broker_log_end_offset{partition="0",topic="t"}`,
		"weir_broker_fsync_duration_seconds_bucket",
		`weir_kafka_request_duration_seconds_count{api="Produce"}`,
		"weir_kafka_connections",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestGracefulRestartKeepsData stops weir with SIGTERM and starts it again
// on the same directory: a clean exit, then every record is still there.
func TestGracefulRestartKeepsData(t *testing.T) {
	dir := t.TempDir()
	p := startWeir(t, dir)
	var in strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&in, "line %d\n", i)
	}
	if _, errs, err := p.cli(t, in.String(), "produce", "r"); err != nil {
		t.Fatal(err, errs)
	}
	p.Stop(t)
	if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, p.Logs())
	}
	if !strings.Contains(p.Logs(), "log closed cleanly") {
		t.Fatalf("no clean close:\n%s", p.Logs())
	}
	p2 := startWeir(t, dir)
	if !strings.Contains(p2.Logs(), "clean=true") {
		t.Fatalf("second start did not see a clean shutdown:\n%s", p2.Logs())
	}
	out, _, err := p2.cli(t, "", "consume", "r", "--from-beginning")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 500 {
		t.Fatalf("%d records after restart", n)
	}
}

// TestStopByTimeout: timeout(1) sends its signal to weir and then to its
// process group, so weir gets it twice within microseconds. That is one
// stop, not the second signal that ends the process at once: `timeout 60
// weir run` stopped weir uncleanly about half the time (killed by the
// signal, and the next start a recovery scan).
func TestStopByTimeout(t *testing.T) {
	t.Parallel() // it waits on timeout(1), on weirs of its own
	timeout := peers.Look(t, "coreutils", "timeout")
	for i := range 6 {
		dir := t.TempDir()
		cmd := exec.Command(timeout, "--preserve-status", "-s", "TERM", "1", weirBin, "run", "--data-dir", dir,
			"--kafka-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--syslog-listen", "off")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "log closed cleanly") {
			t.Fatalf("run %d: timeout -s TERM 1 weir run: %v, want a clean stop and exit 0:\n%s", i, err, out)
		}
	}
}

// TestFailedCloseExitsNonZero: a stop whose log close fails (a full disk,
// files gone) leaves no clean-shutdown marker, so the next start recovers
// the log; weir exited 0 all the same, and systemd or a script saw a
// clean stop. It exits 1, saying why.
func TestFailedCloseExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	p := startWeir(t, dir)
	if _, errs, err := p.cli(t, "a\nb\n", "produce", "r"); err != nil {
		t.Fatal(err, errs)
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "r-*"))
	if len(parts) == 0 {
		t.Fatal("no partition directories of r")
	}
	for _, d := range parts {
		os.RemoveAll(d)
	}
	p.Stop(t)
	if code := p.Cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit code %d after a stop whose log close failed:\n%s", code, p.Logs())
	}
	if !strings.Contains(p.Logs(), "closing log") || strings.Contains(p.Logs(), "log closed cleanly") {
		t.Fatalf("the failed close is not said:\n%s", p.Logs())
	}
}

func TestSecondProcessOnSameDataDirFails(t *testing.T) {
	dir := t.TempDir()
	startWeir(t, dir)
	cmd := exec.Command(weirBin, "run", "--data-dir", dir, "--kafka-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--syslog-listen", "off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("second weir on the same data dir started")
	}
	if !strings.Contains(string(out), "in use by another process") || !strings.Contains(string(out), dir) {
		t.Fatalf("unclear error: %s", out)
	}
}

func TestCheckCommand(t *testing.T) {
	// From the repository's root, as make run starts weir: the shipped
	// config names its inventory relative to it.
	shipped := exec.Command(weirBin, "check", "-c", "configs/weir.yaml")
	shipped.Dir = "../.."
	out, err := shipped.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kafka 127.0.0.1:9092") {
		t.Fatalf("shipped config: %v %s", err, out)
	}
	cluster := filepath.Join(t.TempDir(), "cluster.yaml")
	os.WriteFile(cluster, []byte("broker:\n  kafka:\n    brokers: [k1:9092, k2:9092]\n"), 0o644)
	out, err = exec.Command(weirBin, "check", "-c", cluster).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kafka cluster k1:9092,k2:9092") || strings.Contains(string(out), "data_dir") {
		t.Fatalf("cluster config: %v %s", err, out)
	}
	// The inventory it names is read, as weir run reads it.
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: a, cidr: 10.0.0.0/33}\n"), 0o644)
	withInv := filepath.Join(dir, "inv.yaml")
	os.WriteFile(withInv, []byte("enrich:\n  inventory: "+inv+"\n"), 0o644)
	out, err = exec.Command(weirBin, "check", "-c", withInv).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `cidr "10.0.0.0/33"`) {
		t.Fatalf("broken inventory: %v %s", err, out)
	}
	if out, err = exec.Command(weirBin, "check", "--skip-files", "-c", withInv).CombinedOutput(); err != nil {
		t.Fatalf("broken inventory, --skip-files: %v %s", err, out)
	}
	// An entry another one hides is a warning, not an error.
	os.WriteFile(inv, []byte("devices:\n  - {name: a, address: 192.0.2.1}\n  - {name: b, address: 192.0.2.1}\n"), 0o644)
	out, err = exec.Command(weirBin, "check", "-c", withInv).CombinedOutput()
	if err != nil || !strings.Contains(string(out), inv+": warning: device 2 (b): address 192.0.2.1 also at device 1; device 2 is used") {
		t.Fatalf("inventory listing an address twice: %v %s", err, out)
	}
	// So are the TLS files: a good set passes, a missing key and a CA
	// file without certificates are named.
	ca := tlstest.NewCA(t, "weir test CA")
	cert, key := ca.LeafFiles(t, "weir")
	tlsConf := func(sinkKey, listenerCA string) string {
		return fmt.Sprintf(`syslog:
  listeners:
    - {protocol: tls, address: "127.0.0.1:6514", cert_file: %s, key_file: %s, client_ca_file: %s}
sinks:
  - {type: webhook, name: hook, url: "https://alerts.example.net/hook", topics: [events], tls: {ca_file: %s, cert_file: %s, key_file: %s}}
`, cert, key, listenerCA, ca.File, cert, sinkKey)
	}
	withTLS := filepath.Join(dir, "tls.yaml")
	os.WriteFile(withTLS, []byte(tlsConf(key, ca.File)), 0o644)
	if out, err = exec.Command(weirBin, "check", "-c", withTLS).CombinedOutput(); err != nil {
		t.Fatalf("good TLS files: %v %s", err, out)
	}
	os.WriteFile(withTLS, []byte(tlsConf(filepath.Join(dir, "missing.key"), inv)), 0o644)
	out, err = exec.Command(weirBin, "check", "-c", withTLS).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `sink "hook": tls cert_file `+cert+", key_file "+filepath.Join(dir, "missing.key")) ||
		!strings.Contains(string(out), "syslog.listeners[0]: tls client_ca_file: "+inv+": no PEM certificate") {
		t.Fatalf("bad TLS files: %v %s", err, out)
	}
	if out, err = exec.Command(weirBin, "check", "--skip-files", "-c", withTLS).CombinedOutput(); err != nil {
		t.Fatalf("bad TLS files, --skip-files: %v %s", err, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("broker:\n  flush:\n    policy: sometimes\n"), 0o644)
	out, err = exec.Command(weirBin, "check", "-c", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), bad+":3: broker.flush.policy: must be interval or always") {
		t.Fatalf("bad config: %v %s", err, out)
	}
}

// TestKcat uses librdkafka's kcat, a Kafka client none of us wrote: it lists
// metadata, produces 10,000 messages and consumes them back identically.
func TestKcat(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat not installed (apt-get install kcat); .ci/run installs it")
	}
	t.Parallel()
	p := startWeir(t, t.TempDir())
	meta, err := exec.Command("kcat", "-b", p.KafkaAddr, "-L").CombinedOutput()
	if err != nil || !strings.Contains(string(meta), "1 brokers:") {
		t.Fatalf("kcat -L: %v\n%s", err, meta)
	}
	var in strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&in, `{"seq":%d,"msg":"kcat message %d"}`+"\n", i, i)
	}
	prod := exec.Command("kcat", "-b", p.KafkaAddr, "-P", "-t", "kcat.test", "-X", "enable.idempotence=true")
	prod.Stdin = strings.NewReader(in.String())
	if out, err := prod.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s\n%s", err, out, p.Logs())
	}
	cons := exec.Command("kcat", "-b", p.KafkaAddr, "-C", "-t", "kcat.test", "-o", "beginning", "-e", "-q")
	out, err := cons.Output()
	if err != nil {
		t.Fatalf("kcat -C: %v\n%s", err, p.Logs())
	}
	// kcat -P without a key spreads records over partitions; compare as sets
	// and check each partition kept the produced order.
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != 10000 {
		t.Fatalf("kcat consumed %d messages, want 10000", len(got))
	}
	seen := make(map[string]bool, len(got))
	for _, l := range got {
		seen[l] = true
	}
	for _, l := range strings.Split(strings.TrimSpace(in.String()), "\n") {
		if !seen[l] {
			t.Fatalf("missing %s", l)
		}
	}
	// Keyed, into one partition: exact order.
	// librdkafka's default partitioner is CRC32-based; murmur2_random is
	// the Java client's (and franz-go's and weir's).
	prod = exec.Command("kcat", "-b", p.KafkaAddr, "-P", "-t", "kcat.keyed", "-K", ":", "-X", "partitioner=murmur2_random")
	var keyed strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&keyed, "edge1:%d\n", i)
	}
	prod.Stdin = strings.NewReader(keyed.String())
	if out, err := prod.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P keyed: %v %s", err, out)
	}
	out, err = exec.Command("kcat", "-b", p.KafkaAddr, "-C", "-t", "kcat.keyed", "-o", "beginning", "-e", "-q", "-f", "%p %k %s\n").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1000 {
		t.Fatalf("keyed: %d lines", len(lines))
	}
	for i, l := range lines {
		if want := fmt.Sprintf("1 edge1 %d", i); l != want {
			t.Fatalf("keyed line %d = %q, want %q (same partition as franz-go/Java for key edge1)", i, l, want)
		}
	}
	// weir's own consumer reads what kcat wrote.
	wout, _, err := p.cli(t, "", "consume", "kcat.test", "--from-beginning")
	if err != nil || strings.Count(wout, "\n") != 10000 {
		t.Fatalf("weir consume of kcat data: %v, %d lines", err, strings.Count(wout, "\n"))
	}
}

// TestAdvertisedAddress: a Kafka listener on 0.0.0.0 tells each client the
// address it reached (it told every client 127.0.0.1, which a remote
// client would dial on itself); advertised_host overrides it. 127.0.0.2
// stands in for a remote address: it is loopback too.
func TestAdvertisedAddress(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat not installed (apt-get install kcat); .ci/run installs it")
	}
	brokerLine := regexp.MustCompile(`broker 0 at (\S+)`)
	p := startWeir(t, t.TempDir(), "--kafka-listen", "0.0.0.0:0")
	_, port, _ := net.SplitHostPort(p.KafkaAddr)
	meta, err := exec.Command("kcat", "-b", "127.0.0.2:"+port, "-L").CombinedOutput()
	if m := brokerLine.FindSubmatch(meta); err != nil || m == nil || string(m[1]) != "127.0.0.2:"+port {
		t.Fatalf("kcat -L via 127.0.0.2: %v\n%s", err, meta)
	}
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("broker:\n  advertised_host: weir.example.net\n"), 0o644)
	p = startWeir(t, t.TempDir(), "-c", cfg)
	meta, err = exec.Command("kcat", "-b", p.KafkaAddr, "-L").CombinedOutput()
	_, port, _ = net.SplitHostPort(p.KafkaAddr)
	if m := brokerLine.FindSubmatch(meta); err != nil || m == nil || string(m[1]) != "weir.example.net:"+port {
		t.Fatalf("kcat -L with advertised_host: %v\n%s", err, meta)
	}
}

// TestFranzGoClient produces and consumes with franz-go's kgo client and
// its default options (idempotent, acks=all, snappy).
func TestFranzGoClient(t *testing.T) {
	p := startWeir(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.DefaultProduceTopic("kgo.test"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 10000
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := 0; i < n; i++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("dev-%d", i%100)), Value: []byte(fmt.Sprintf("value-%d", i))}, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d produce errors, first: %v\n%s", len(errs), errs[0], p.Logs())
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.ConsumeTopics("kgo.test"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	seen := map[string]int64{}
	lastOffset := map[int32]int64{}
	for len(seen) < n && ctx.Err() == nil {
		f := cons.PollFetches(ctx)
		if err := f.Err(); err != nil && ctx.Err() == nil {
			t.Fatal(err)
		}
		f.EachRecord(func(r *kgo.Record) {
			if last, ok := lastOffset[r.Partition]; ok && r.Offset != last+1 {
				t.Errorf("partition %d: offset %d after %d", r.Partition, r.Offset, last)
			}
			lastOffset[r.Partition] = r.Offset
			seen[string(r.Value)] = r.Offset
		})
	}
	if len(seen) != n {
		t.Fatalf("consumed %d distinct records, want %d", len(seen), n)
	}
}

// TestFullDiskOverTheWire runs weir on a 4 MiB tmpfs and produces with
// franz-go until the disk is full: the client gets KAFKA_STORAGE_ERROR, weir
// stays up, and everything acknowledged before reads back intact.
func TestFullDiskOverTheWire(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	p := startWeir(t, dir)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.DefaultProduceTopic("full"),
		kgo.AllowAutoTopicCreation(), kgo.RecordRetries(0), kgo.RecordDeliveryTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acked := map[string]bool{}
	var lastErr error
	buf := make([]byte, 500)
	for i := 0; i < 20000 && lastErr == nil; i++ {
		rand.Read(buf) // incompressible, so snappy cannot fit it all
		v := fmt.Sprintf("%d-%x", i, buf)
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			lastErr = err
			break
		}
		acked[v] = true
	}
	if lastErr == nil || !strings.Contains(lastErr.Error(), "KAFKA_STORAGE_ERROR") {
		t.Fatalf("after %d records: %v\n%s", len(acked), lastErr, p.Logs())
	}
	// Still up: metadata and reads work, and the acknowledged data is whole.
	out, _, err := p.cli(t, "", "consume", "full", "--from-beginning")
	if err != nil {
		t.Fatalf("consume after full disk: %v\n%s", err, p.Logs())
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r struct{ Value string }
		if json.Unmarshal([]byte(l), &r) == nil && acked[r.Value] {
			n++
		}
	}
	if n != len(acked) {
		t.Fatalf("%d of %d acknowledged records read back", n, len(acked))
	}
}

// TestSyslogEndToEnd: logger sends to a running weir over UDP and TCP, and
// `weir consume` shows the parsed records on raw.syslog.
func TestSyslogEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed")
	}
	p := startWeir(t, t.TempDir())
	udp, tcp := p.SyslogAddrs(t)
	for _, tc := range []struct{ addr, flag string }{{udp, "-d"}, {tcp, "-T"}} {
		_, port, _ := strings.Cut(tc.addr, ":")
		out, err := exec.Command("logger", "-n", "127.0.0.1", "-P", port, tc.flag, "--rfc5424", "-t", "e2e",
			"hello over "+tc.flag).CombinedOutput()
		if err != nil {
			t.Fatalf("logger: %v %s", err, out)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		out, _, _ = p.cli(t, "", "consume", "raw.syslog", "--from-beginning")
		if strings.Count(out, "\n") >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{"hello over -d", "hello over -T"} {
		found := false
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var r struct {
				Key     string
				Headers map[string]string
				Value   struct {
					Format  string
					AppName string `json:"app_name"`
					Message string
				}
			}
			if json.Unmarshal([]byte(line), &r) == nil && r.Value.Message == want {
				found = true
				if r.Value.Format != "rfc5424" || r.Value.AppName != "e2e" || r.Headers["source"] != "syslog" || r.Key == "" {
					t.Errorf("record %s", line)
				}
			}
		}
		if !found {
			t.Errorf("%q not on raw.syslog:\n%s\n%s", want, out, p.Logs())
		}
	}
}

// TestEnrichmentEndToEnd: a Cisco link-down line sent with logger comes
// out of weir as an enriched record and an interface_down event.
func TestEnrichmentEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed")
	}
	inv := filepath.Join(t.TempDir(), "inventory.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: edge9, address: 127.0.0.1, site: ams1, role: edge}\n"), 0o644)
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("enrich:\n  workers: 2\n  inventory: "+inv+"\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	p.arista(t, "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down")
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out, _, _ = p.cli(t, "", "consume", "events", "--from-beginning")
		if strings.Contains(out, "interface_down") {
			break
		}
	}
	var ev struct {
		Value struct {
			Type, Device, Object string
			Tags                 map[string]string
		}
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &ev); err != nil {
		t.Fatalf("events: %q: %v\n%s", out, err, p.Logs())
	}
	if ev.Value.Type != "interface_down" || ev.Value.Object != "Ethernet7" || ev.Value.Tags["site"] != "ams1" {
		t.Fatalf("event %+v", ev.Value)
	}
	enriched, _, _ := p.cli(t, "", "consume", "enriched.syslog", "--from-beginning")
	if !strings.Contains(enriched, `"vendor":"arista_eos"`) || !strings.Contains(enriched, `"mnemonic":"UPDOWN"`) {
		t.Fatalf("enriched.syslog: %s", enriched)
	}

	// SIGHUP reloads the inventory, even one whose file time is the same,
	// and does not stop weir.
	st, _ := os.Stat(inv)
	os.WriteFile(inv, []byte("devices:\n  - {name: edge9, address: 127.0.0.1, site: lon1, role: edge}\n"), 0o644)
	os.Chtimes(inv, st.ModTime(), st.ModTime())
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "SIGHUP: reloaded", "no reload after SIGHUP")
	// linkDown sends port's link-down line and checks that its event
	// carries site (after says when).
	linkDown := func(port, site, after string) {
		t.Helper()
		p.arista(t, "%LINEPROTO-5-UPDOWN: Line protocol on Interface "+port+", changed state to down")
		object := `"object":"` + port + `"`
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			out, _, _ = p.cli(t, "", "consume", "events", "--from-beginning")
			if strings.Contains(out, object) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no event %s: %s\n%s", after, out, p.Logs())
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.Contains(line, object) && !strings.Contains(line, `"site":"`+site+`"`) {
				t.Fatalf("event %s without site %s: %s", after, site, line)
			}
		}
	}
	linkDown("Ethernet8", "lon1", "after SIGHUP")

	// The config naming another inventory file: SIGHUP loads it (it
	// used to say enrich.inventory waited for a restart).
	moved := filepath.Join(t.TempDir(), "inventory.yaml")
	os.WriteFile(moved, []byte("devices:\n  - {name: edge9, address: 127.0.0.1, site: par1, role: edge}\n"), 0o644)
	os.WriteFile(cfg, []byte("enrich:\n  workers: 2\n  inventory: "+moved+"\n"), 0o644)
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, "file="+moved, "the moved inventory not loaded after SIGHUP")
	if logs := p.Logs(); strings.Contains(logs, "restart_needed") {
		t.Errorf("the inventory's path waits for a restart:\n%s", logs)
	}
	linkDown("Ethernet9", "par1", "after the inventory moved")
}

// TestEnrichmentFollowsCollectorTopics: with syslog.topic renamed, the
// line sent with logger is enriched from the topic the collector writes
// (the workers read raw.syslog whatever the config said, so nothing was).
func TestEnrichmentFollowsCollectorTopics(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed")
	}
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("syslog:\n  topic: site1.syslog\nenrich:\n  workers: 1\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	p.arista(t, "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down")
	var out string
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(out, "interface_down"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			raw, _, _ := p.cli(t, "", "consume", "site1.syslog", "--from-beginning")
			t.Fatalf("no event from a line on site1.syslog (%q):\n%s", raw, p.Logs())
		}
		out, _, _ = p.cli(t, "", "consume", "events", "--from-beginning")
	}
	if !strings.Contains(out, `"topic":"site1.syslog"`) {
		t.Errorf("the event's cause is not the renamed topic: %s", out)
	}
}

// TestRoles: --roles collect runs the collectors and no enrichment, and
// says so where it says it runs.
func TestRoles(t *testing.T) {
	p := startWeir(t, t.TempDir(), "--roles", "collect")
	time.Sleep(300 * time.Millisecond)
	logs := p.Logs()
	if !strings.Contains(logs, "component=syslog") || strings.Contains(logs, "component=enrich-0") {
		t.Fatalf("roles collect:\n%s", logs)
	}
	if !strings.Contains(logs, `msg="weir running"`) || !strings.Contains(logs, "roles=collect\n") {
		t.Errorf("the start line does not name the roles:\n%s", logs)
	}
	for _, tc := range []struct{ flag, value, want string }{
		{"--roles", "collect,bogus", `unknown role "bogus"`},
		{"--roles", "", "no role given"},
		{"--log-level", "bogus", `--log-level: "bogus" is not debug, info, warn or error`},
	} {
		out, err := exec.Command(weirBin, "run", tc.flag, tc.value).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s %q: %v %s", tc.flag, tc.value, err, out)
		}
	}
}

// TestSystemdUnit: deploy/weir.service passes systemd-analyze verify (with
// the weir built here at its path), and the config the README's install
// steps put in /etc/weir passes weir check, as the unit's ExecStartPre runs
// it.
func TestSystemdUnit(t *testing.T) {
	dir := t.TempDir()
	// The README's steps: configs/weir.yaml and its inventory in one
	// directory, the inventory's path made absolute.
	for _, f := range []string{"weir.yaml", "inventory.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../configs", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "weir.yaml" {
			was := b
			b = []byte(strings.Replace(string(b), "inventory: configs/inventory.yaml", "inventory: "+filepath.Join(dir, "inventory.yaml"), 1))
			if string(b) == string(was) {
				t.Fatal("configs/weir.yaml has no \"inventory: configs/inventory.yaml\" for the README's sed to change")
			}
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(weirBin, "check", "-c", filepath.Join(dir, "weir.yaml")).CombinedOutput(); err != nil || strings.Contains(string(out), "warning") {
		t.Fatalf("weir check of the installed config: %v %s", err, out)
	}
	unit, err := os.ReadFile("../../deploy/weir.service")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "ExecStart=/usr/local/bin/weir run -c /etc/weir/weir.yaml") {
		t.Fatalf("the unit does not run /usr/local/bin/weir with /etc/weir/weir.yaml, as the README installs them:\n%s", unit)
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not installed (part of systemd)")
	}
	bin, _ := filepath.Abs(weirBin)
	path := filepath.Join(dir, "weir.service")
	os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/weir", bin)), 0o644)
	if out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify deploy/weir.service: %v\n%s", err, out)
	}
	// The sandbox systemd can give a network daemon that writes one
	// directory: what systemd-analyze security rates (lower is tighter).
	// weir needs no more than the system services' calls, no namespaces,
	// no clock, no kernel modules or logs.
	out, err := exec.Command("systemd-analyze", "security", "--offline=yes", path).CombinedOutput()
	if err != nil && strings.Contains(string(out), "offline") {
		t.Skipf("systemd-analyze security --offline (systemd 250 or later): %v %s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for weir.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security deploy/weir.service: %v\n%s", err, out)
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 2.5 {
		t.Errorf("deploy/weir.service's exposure level is %.1f, want at most 2.5:\n%s", level, out)
	}
}

// TestDockerCompose: the compose file is valid for docker-compose (no
// engine is needed to check) and weir accepts the config it mounts.
func TestDockerCompose(t *testing.T) {
	t.Parallel()
	// Its inventory is a path inside the container: --skip-files.
	out, err := exec.Command(weirBin, "check", "--skip-files", "-c", "../../deploy/weir.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("deploy/weir.yaml: %v %s", err, out)
	}
	// The inventory it mounts, as weir reads it.
	withInv := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(withInv, []byte("enrich:\n  inventory: ../../deploy/inventory.yaml\n"), 0o644)
	if out, err := exec.Command(weirBin, "check", "-c", withInv).CombinedOutput(); err != nil || strings.Contains(string(out), "warning") {
		t.Fatalf("deploy/inventory.yaml: %v %s", err, out)
	}
	if _, err := exec.LookPath("docker-compose"); err != nil {
		t.Skip("docker-compose not installed (apt-get install docker-compose); .ci/run installs it")
	}
	if out, err := exec.Command("docker-compose", "-f", "../../docker-compose.yml", "config", "-q").CombinedOutput(); err != nil {
		t.Fatalf("docker-compose config: %v %s", err, out)
	}
}

// TestAutoCreateTopicsOffIsForKafkaClients: broker.auto_create_topics:
// false, as Kafka's auto.create.topics.enable, keeps Kafka clients from
// making topics by asking for them (a typo in a consumer's topic); weir's
// own parts still make the topics they write. With it off, the syslog
// collector retried "unknown topic: raw.syslog" for ever and nothing was
// collected, while weir check said ok.
func TestAutoCreateTopicsOffIsForKafkaClients(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("broker: {auto_create_topics: false}\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	p.arista(t, "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down")
	var out string
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(out, "interface_down"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no event from a syslog line with auto_create_topics off: %s\n%s", out, p.Logs())
		}
		out, _, _ = p.cli(t, "", "consume", "events", "--from-beginning")
	}
	// A Kafka client does not make a topic by producing to it.
	if _, stderr, err := p.cli(t, "x\n", "produce", "typo.topic", "--timeout", "5s"); err == nil {
		t.Fatalf("a Kafka client made a topic with auto_create_topics off: %s", stderr)
	}
	if out, _, _ := p.cli(t, "", "topics", "list"); strings.Contains(out, "typo.topic") {
		t.Fatalf("typo.topic exists:\n%s", out)
	}
}
