package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// kcatUntilDone runs kcat with args and returns its output; the test
// fails if weir exits first (kcat would wait for records for ever).
func kcatUntilDone(t *testing.T, p *weirProc, args ...string) string {
	t.Helper()
	cmd := exec.Command("kcat", args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kcat %s: %v\n%s\n%s", strings.Join(args, " "), err, errOut.String(), p.Logs())
		}
	case <-p.Exited:
		cmd.Process.Kill()
		<-done
		t.Fatalf("weir exited while kcat %s waited:\n%s", strings.Join(args, " "), p.Logs())
	}
	return out.String()
}

// kcatUntilLine consumes topic from the beginning with kcat and returns
// the values up to the first that contains last (which it stops kcat at);
// the test fails if weir exits first.
func kcatUntilLine(t *testing.T, p *weirProc, topic, last string) []string {
	t.Helper()
	cmd := exec.Command("kcat", "-b", p.KafkaAddr, "-C", "-t", topic, "-o", "beginning", "-u", "-q")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	giveUp := time.After(time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("kcat -C -t %s ended before %s: %s\n%q\n%s", topic, last, errOut.String(), got, p.Logs())
			}
			got = append(got, line)
			if strings.Contains(line, last) {
				return got
			}
		case <-p.Exited:
			t.Fatalf("weir exited while kcat waited for %s on %s:\n%s", last, topic, p.Logs())
		case <-giveUp:
			// Not a bound on how fast: a hang made a failure that says
			// what came, rather than the package's timeout.
			t.Fatalf("no %s on %s after a minute; got %q\n%s", last, topic, got, p.Logs())
		}
	}
}

// TestKcatWholeFloatCountersAndBadUptimes: a script producing to raw.snmp
// with a Kafka client (here kcat, as Python's json.dumps would write
// them) writes its counters as floats (1000.0, 6.1e4) and some uptimes
// that are no sysUpTime (-1, "x"). Its counters are counters: rates,
// normalised rates and utilisation, written back as integers; and its
// records with a bad uptime are enriched without one, not skipped, and
// raise no device_rebooted between good ones.
func TestKcatWholeFloatCountersAndBadUptimes(t *testing.T) {
	if _, err := exec.LookPath("kcat"); err != nil {
		t.Skip("kcat not installed (apt-get install kcat); .ci/run installs it")
	}
	p := startWeir(t, t.TempDir(), "--syslog-listen", "off")
	t0 := time.Now().UTC().Truncate(time.Minute).Add(-5 * time.Minute)
	var in strings.Builder
	for i, poll := range []struct{ octets, uptime string }{
		{"1000.0", "100000"}, {"6.1e4", "-1"}, {"121000.0", `"x"`}, {"1.81e5", "118000"},
	} {
		at := t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		fmt.Fprintf(&in, `edge9|{"v":1,"measurement":"snmp_interface","device":"edge9","tags":{"ifIndex":"1","ifName":"Gi0/1"},`+
			`"fields":{"ifHCInOctets":%s,"ifHighSpeed":1000.0,"ifOperStatus":1},"counters":["ifHCInOctets"],"counters64":["ifHCInOctets"],`+
			`"time":"%s","received_at":"%[2]s","uptime":%s,"source":"py"}`+"\n", poll.octets, at, poll.uptime)
	}
	// Last, of the same key (so of the same partition, enriched after
	// them): a record whose enriched one says all before it are done.
	fmt.Fprintf(&in, `edge9|{"v":1,"measurement":"script_done","device":"edge9","fields":{"ok":true},"time":"%s","source":"py"}`+"\n",
		t0.Add(5*time.Minute).Format(time.RFC3339))
	prod := exec.Command("kcat", "-b", p.KafkaAddr, "-P", "-t", "raw.snmp", "-K", "|", "-X", "partitioner=murmur2_random")
	prod.Stdin = strings.NewReader(in.String())
	if out, err := prod.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s\n%s", err, out, p.Logs())
	}

	// enrich creates its output topics when it first publishes; kcat's
	// consumer would not wait for a topic that is not there yet.
	for _, topic := range []string{"enriched.metrics", "events"} {
		p.waitLog(t, `msg="topic created" topic=`+topic+" ", "enrichment made no "+topic)
	}
	// Each record gives its row and its interface record.
	out := kcatUntilLine(t, p, "enriched.metrics", `"measurement":"script_done"`)
	var rows, views []string
	for _, line := range out[:len(out)-1] {
		var m struct{ Measurement string }
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("enriched.metrics: %v: %s", err, line)
		}
		if m.Measurement == "interface" {
			views = append(views, line)
		} else {
			rows = append(rows, line)
		}
	}
	if len(rows) != 4 || len(views) != 4 {
		t.Fatalf("enriched.metrics: %d rows and %d interface records, want 4 and 4:\n%s\n%s", len(rows), len(views), strings.Join(out, "\n"), p.Logs())
	}
	for i, octets := range []int{1000, 61000, 121000, 181000} {
		row, view := rows[i], views[i]
		for _, want := range []string{fmt.Sprintf(`"ifHCInOctets":%d,`, octets), `"counters":["ifHCInOctets"]`, `"ifHighSpeed":1000,`} {
			if !strings.Contains(row, want) {
				t.Errorf("row %d: no %s: %s", i, want, row)
			}
		}
		if hasUptime, bad := strings.Contains(row, `"uptime"`), i == 1 || i == 2; hasUptime == bad {
			t.Errorf("row %d: an uptime %v, want %v: %s", i, hasUptime, !bad, row)
		}
		if i == 0 {
			continue
		}
		for _, want := range []string{`"ifHCInOctets_rate":1000,`, `"in_octets_rate":1000,`, `"in_utilization_pct":0.0008,`} {
			if !strings.Contains(row, want) {
				t.Errorf("row %d: no %s: %s", i, want, row)
			}
		}
		if !strings.Contains(view, `"in_octets_rate":1000,`) {
			t.Errorf("interface record %d: no in_octets_rate of 1000: %s", i, view)
		}
	}
	// A record's events are published with its enriched records, in one
	// transaction: all there by now.
	events := kcatUntilDone(t, p, "-b", p.KafkaAddr, "-C", "-t", "events", "-o", "beginning", "-e", "-q")
	if strings.Contains(events, "device_rebooted") {
		t.Errorf("a bad uptime between good ones raised device_rebooted:\n%s", events)
	}
	metrics := p.Metrics(t)
	for name, want := range map[string]float64{
		`weir_enrich_invalid_uptimes_total{topic="raw.snmp"}`:                   2,
		`weir_enrich_invalid_counters_total{topic="raw.snmp"}`:                  0,
		`weir_enrich_decode_errors_total{reason="malformed",topic="raw.snmp"}`:  0,
		`weir_enrich_decode_errors_total{reason="incomplete",topic="raw.snmp"}`: 0,
	} {
		if got, ok := metrics[name]; !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
		}
	}
	if n := strings.Count(p.Logs(), "uptime is no sysUpTime"); n != 1 {
		t.Errorf("%d warnings of a bad uptime for two records at once, want 1 (throttled):\n%s", n, p.Logs())
	}
}
