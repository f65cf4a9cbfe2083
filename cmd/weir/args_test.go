package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckRefusesPositionalFile: `weir check bad.yaml` (the -c
// forgotten) must not check configs/weir.yaml instead and say it is ok.
// Every other command refuses an argument it does not take too.
func TestCheckRefusesPositionalFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("broker:\n  flush:\n    polcy: always\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// From the checkout's root, as the README runs weir.
	wd, _ := os.Getwd()
	if err := os.Chdir(filepath.Join(wd, "..", "..")); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var stdout, stderr bytes.Buffer
	err := dispatch(context.Background(), []string{"check", bad}, strings.NewReader(""), &stdout, &stderr)
	if err == nil {
		t.Errorf("weir check %s: exit 0, stdout %q: the file named was not checked", bad, stdout.String())
	}
}

// TestRunRefusesPositionalFile: `weir run my.yaml` (the -c forgotten)
// must not run the built-in defaults, ignoring my.yaml.
func TestRunRefusesPositionalFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "my.yaml")
	os.WriteFile(cfg, []byte("http: {listen: off}\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // if it starts, it stops at once
	var stdout, stderr bytes.Buffer
	err := dispatch(ctx, []string{"run", cfg, "--data-dir", filepath.Join(dir, "data"), "--kafka-listen", "off", "--http-listen", "off", "--syslog-listen", "off"},
		strings.NewReader(""), &stdout, &stderr)
	if err == nil {
		t.Errorf("weir run %s: started (and stopped) with the built-in defaults, the file named ignored", cfg)
	}
}

// TestRunRefusesBadListenFlags: a listen flag without a port failed after
// the log was opened, with the address alone ("syslog udp 127.0.0.1:
// missing port"), not naming the flag; it is a usage error, said first.
func TestRunRefusesBadListenFlags(t *testing.T) {
	for _, flag := range []string{"--syslog-listen", "--http-listen", "--kafka-listen", "--trap-listen"} {
		dir := t.TempDir()
		args := []string{"run", "--data-dir", filepath.Join(dir, "data"), "--kafka-listen", "off", "--http-listen", "off", "--syslog-listen", "off", flag, "127.0.0.1"}
		var stdout, stderr bytes.Buffer
		err := dispatch(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), flag+`: "127.0.0.1" is not host:port`) {
			t.Errorf("%s 127.0.0.1: %v, want a usage error naming the flag", flag, err)
		}
		if _, serr := os.Stat(filepath.Join(dir, "data")); serr == nil {
			t.Errorf("%s 127.0.0.1: the data directory was made before the flag was checked", flag)
		}
	}
}

// TestCheckFileSinkPathUnusable: a file sink whose path can never be
// written (its parent is a regular file, or the path is a directory) fails
// `weir check`; weir run starts and retries it as an outage (a volume
// not mounted yet), logging "mkdir ...: not a directory".
func TestCheckFileSinkPathUnusable(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "plain")
	os.WriteFile(notDir, []byte("x"), 0o644)
	for _, path := range []string{filepath.Join(notDir, "events.jsonl"), dir} {
		cfg := filepath.Join(dir, "weir.yaml")
		os.WriteFile(cfg, []byte("sinks:\n  - {type: file, name: f, path: "+path+", topics: [events]}\n"), 0o644)
		var stdout, stderr bytes.Buffer
		if err := dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &stdout, &stderr); err == nil {
			t.Errorf("file sink path %s: weir check says %q", path, strings.TrimSpace(stdout.String()))
		}
	}
}

// TestCheckWarnsOfUnknownSinkTopics: a sink reading a topic no part of
// weir writes (a typo: "evnets") would wait for ever without a word; weir
// check warns, and still passes (a Kafka client may write the topic).
func TestCheckWarnsOfUnknownSinkTopics(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("snmp:\n  topic: raw.snmp.lab\nsinks:\n  - {type: file, name: f, path: /tmp/x.jsonl, topics: [evnets, events, raw.snmp.lab]}\n"), 0o644)
	var stdout, stderr bytes.Buffer
	if err := dispatch(context.Background(), []string{"check", "-c", cfg, "--skip-files"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("check: %v %s", err, stderr.String())
	}
	if w := stderr.String(); !strings.Contains(w, `sink "f" reads topic "evnets", which no part of weir writes (did you mean events?`) || strings.Count(w, "warning") != 1 {
		t.Fatalf("warnings: %q", w)
	}
	// A topic near none of weir's: no suggestion.
	os.WriteFile(cfg, []byte("sinks:\n  - {type: file, name: f, path: /tmp/x.jsonl, topics: [site.alarms]}\n"), 0o644)
	stderr.Reset()
	if err := dispatch(context.Background(), []string{"check", "-c", cfg, "--skip-files"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("check: %v %s", err, stderr.String())
	}
	if w := stderr.String(); !strings.Contains(w, `reads topic "site.alarms", which no part of weir writes (a typo? a Kafka client's topic is fine)`) {
		t.Fatalf("warnings: %q", w)
	}
}

// TestFlagErrorPrintedOnce: the flag package prints an unknown flag's
// error above the usage; weir printed it a second time below.
func TestFlagErrorPrintedOnce(t *testing.T) {
	for _, args := range [][]string{{"run", "--bogus"}, {"consume", "events", "--nope"}, {"topics", "list", "--nope"}} {
		var stdout, stderr bytes.Buffer
		err := dispatch(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		if err == nil {
			t.Fatalf("weir %v: no error", args)
		}
		code := report(err, &stderr)
		if code != 2 {
			t.Errorf("weir %v: exit %d, want 2", args, code)
		}
		if n := strings.Count(stderr.String(), "flag provided but not defined"); n != 1 {
			t.Errorf("weir %v: the error printed %d times:\n%s", args, n, stderr.String())
		}
	}
	var stderr bytes.Buffer
	if code := report(&exitError{2, errors.New("consume: give one topic")}, &stderr); code != 2 || !strings.Contains(stderr.String(), "weir: consume: give one topic") {
		t.Errorf("a usage error weir found itself: exit %d, printed %q", code, stderr.String())
	}
}

// TestReportPrefixesEveryLine: a config's errors, one a line, each start
// with "weir: " (only the first did).
func TestReportPrefixesEveryLine(t *testing.T) {
	var stderr bytes.Buffer
	report(errors.New("w.yaml:1: field udp: unknown key in syslog\nw.yaml:1: field tcp: unknown key in syslog"), &stderr)
	if want := "weir: w.yaml:1: field udp: unknown key in syslog\nweir: w.yaml:1: field tcp: unknown key in syslog\n"; stderr.String() != want {
		t.Errorf("printed %q, want %q", stderr.String(), want)
	}
}

// TestRunRefusesKafkaSinkLoopByFlag: a kafka sink without topic_prefix
// whose brokers become weir's own through --kafka-listen (the file, checked
// alone, points at another port) would mirror every record into the topic
// it reads, for ever; `weir run` refuses to start, as `weir check` refuses
// the file that says so itself.
func TestRunRefusesKafkaSinkLoopByFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "weir.yaml")
	if err := os.WriteFile(file, []byte("sinks:\n  - {type: kafka, name: loop, brokers: [\"127.0.0.1:29493\"], topics: [events]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(weirBin, "run", "-c", file, "--data-dir", filepath.Join(dir, "data"), "--kafka-listen", "127.0.0.1:29493",
		"--http-listen", "127.0.0.1:0", "--syslog-listen", "off")
	done := make(chan struct{})
	timer := time.AfterFunc(15*time.Second, func() { cmd.Process.Kill(); close(done) })
	out, err := cmd.CombinedOutput()
	timer.Stop()
	select {
	case <-done:
		t.Fatalf("weir run with a kafka sink into its own listener started (killed after 15s):\n%s", out)
	default:
	}
	if err == nil || !strings.Contains(string(out), `sink "loop" writes topic events back to weir's own broker`) {
		t.Fatalf("weir run: %v\n%s", err, out)
	}
}

// TestVersionRefusesArguments: `weir version extra` is a usage error (exit
// 2), as every command's argument it does not take is.
func TestVersionRefusesArguments(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := dispatch(context.Background(), []string{"version", "extra"}, strings.NewReader(""), &stdout, &stderr)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("weir version extra: %v, stdout %q; want exit 2", err, stdout.String())
	}
	stdout.Reset()
	if err := dispatch(context.Background(), []string{"version"}, strings.NewReader(""), &stdout, &stderr); err != nil || !strings.HasPrefix(stdout.String(), "weir ") {
		t.Errorf("weir version: %v, %q", err, stdout.String())
	}
}

// TestCheckWarnsOfSinkTopicsOfOtherRecords: a metrics sink reading a topic
// of events or logs (influxdb over events), or an Alertmanager webhook
// over metrics, skips every record of it, counted as filtered but never
// said: weir check warns, and still passes.
func TestCheckWarnsOfSinkTopicsOfOtherRecords(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(`sinks:
  - {type: influxdb, name: influx, url: "http://127.0.0.1:8086", database: weir, topics: [enriched.metrics, events, enriched.syslog]}
  - {type: webhook, name: am, url: "http://127.0.0.1:9093/api/v2/alerts", format: alertmanager, topics: [events, raw.snmp]}
  - {type: file, name: all, path: /tmp/x.jsonl, topics: [events, enriched.metrics, raw.traps]}
`), 0o644)
	var stdout, stderr bytes.Buffer
	if err := dispatch(context.Background(), []string{"check", "-c", cfg, "--skip-files"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("check: %v %s", err, stderr.String())
	}
	w := stderr.String()
	for _, want := range []string{`sink "influx" reads topic "events"`, `sink "influx" reads topic "enriched.syslog"`, `sink "am" reads topic "raw.snmp"`,
		"an influxdb sink writes metrics only", "a webhook (format alertmanager) sink writes events only"} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %s in:\n%s", want, w)
		}
	}
	if n := strings.Count(w, "warning"); n != 3 {
		t.Errorf("%d warnings, want 3:\n%s", n, w)
	}
}

// TestCheckWarnsOfTemplatesFailingOnTopics: a webhook template reading
// .Event's fields without {{with .Event}} fails on every log, metric or
// trap record of the sink's topics, each dead-lettered: weir check warns
// of those topics (not of events), and still passes.
func TestCheckWarnsOfTemplatesFailingOnTopics(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(`sinks:
  - type: webhook
    name: chat
    url: "http://127.0.0.1:9/hook"
    topics: [events, enriched.syslog, raw.traps]
    template: '{"text": {{json .Event.Message}}}'
  - type: webhook
    name: guarded
    url: "http://127.0.0.1:9/hook"
    topics: [events, enriched.syslog, enriched.metrics]
    template: '{{with .Event}}{{.Type}}{{end}}{{with .Log}}{{.Message}}{{end}}{{if .Metric}}{{.Metric.Measurement}}{{end}}'
`), 0o644)
	var stdout, stderr bytes.Buffer
	if err := dispatch(context.Background(), []string{"check", "-c", cfg, "--skip-files"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("check: %v %s", err, stderr.String())
	}
	w := stderr.String()
	for _, want := range []string{
		`sink "chat" reads topic "enriched.syslog", of logs: its template fails on them`,
		`sink "chat" reads topic "raw.traps", of traps: its template fails on them`,
		`nil pointer evaluating *telemetry.Event.Message`,
	} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %s in:\n%s", want, w)
		}
	}
	if n := strings.Count(w, "warning"); n != 2 {
		t.Errorf("%d warnings, want 2:\n%s", n, w)
	}
}

// TestOutputWriteFailureExits1: a command whose output could not be
// written (a full disk) exited 0 when it ignored what Fprintf returned
// (weir version, the one-line confirmations), so a script took a
// cut-short or empty output for all of it. A reader gone (| head -1) is
// no failure.
func TestOutputWriteFailureExits1(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("/dev/full:", err)
	}
	defer full.Close()
	var stderr bytes.Buffer
	if code := execute(context.Background(), []string{"version"}, strings.NewReader(""), full, &stderr); code != 1 || !strings.Contains(stderr.String(), "writing the output") {
		t.Errorf("weir version > /dev/full: exit %d, stderr %q; want 1 saying the output was not written", code, stderr.String())
	}
	// Written past Write (io.WriteString takes a file's WriteString),
	// a failure is still seen.
	out := &checkedStdout{f: full}
	io.WriteString(out, "x\n")
	if out.failed == nil {
		t.Error("io.WriteString to /dev/full through checkedStdout: no failure kept")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	stderr.Reset()
	if code := execute(context.Background(), []string{"version"}, strings.NewReader(""), w, &stderr); code != 0 {
		t.Errorf("weir version into a pipe whose reader is gone: exit %d, stderr %q; want 0", code, stderr.String())
	}
}

// TestCheckWarnsOfAlertmanagerURLWithoutAPIPath: a webhook sink of format
// alertmanager given Alertmanager's address alone (or another path)
// posts where Alertmanager answers 404 or 405, retried for good: weir
// check warns, without echoing the url, and still passes; one ending
// /api/v2/alerts (behind a proxy's prefix too) gets no warning.
func TestCheckWarnsOfAlertmanagerURLWithoutAPIPath(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(`sinks:
  - {type: webhook, name: bare, url: "http://am.example:9093", format: alertmanager, topics: [events]}
  - {type: webhook, name: v1, url: "http://am.example:9093/api/v1/alerts?token=s3cret", format: alertmanager, topics: [events]}
  - {type: webhook, name: right, url: "http://am.example:9093/api/v2/alerts", format: alertmanager, topics: [events]}
  - {type: webhook, name: proxied, url: "https://ops.example/alertmanager/api/v2/alerts/", format: alertmanager, topics: [events]}
  - {type: webhook, name: hook, url: "http://hook.example/", topics: [events]}
`), 0o644)
	var stdout, stderr bytes.Buffer
	if err := dispatch(context.Background(), []string{"check", "-c", cfg, "--skip-files"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("check: %v %s", err, stderr.String())
	}
	w := stderr.String()
	for _, want := range []string{
		`sink "bare" (format alertmanager): its url's path is empty: it is Alertmanager's address alone`,
		`sink "v1" (format alertmanager): its url's path does not end /api/v2/alerts`,
	} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %s in:\n%s", want, w)
		}
	}
	if n := strings.Count(w, "warning"); n != 2 {
		t.Errorf("%d warnings, want 2:\n%s", n, w)
	}
	if strings.Contains(w, "s3cret") {
		t.Errorf("the url echoed:\n%s", w)
	}
}
