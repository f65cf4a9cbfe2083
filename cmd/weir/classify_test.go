package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/corpus"
)

// classified is one line of `weir classify`'s output.
type classified struct {
	Rule     string
	Enriched struct {
		Device, Vendor, Event string
		Fields                map[string]string
		Tags                  map[string]string
	}
	Event *struct {
		Type, Device, Object string
	}
}

// runClassify runs `weir classify args...` with stdin and decodes its
// output, one line of it a line in.
func runClassify(t *testing.T, stdin string, args ...string) []classified {
	t.Helper()
	out, errOut, err := classifyCLI(t, stdin, append([]string{"classify"}, args...)...)
	if err != nil {
		t.Fatalf("weir classify %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	var got []classified
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c classified
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		got = append(got, c)
	}
	return got
}

// TestClassifyCorpus: every line of the shared corpus, fed to `weir
// classify` on stdin, gives the event, object and vendor the corpus says
// (or no event), as a running weir gives them.
func TestClassifyCorpus(t *testing.T) {
	all, err := corpus.Syslog()
	if err != nil {
		t.Fatal(err)
	}
	var lines []corpus.SyslogLine
	var in strings.Builder
	for _, l := range all {
		if l.Raw != "" { // a blank line of stdin is no line
			lines = append(lines, l)
			in.WriteString(l.Raw + "\n")
		}
	}
	// No rules of the site's; the inventory says what mx1 is, as its
	// sshd line does not.
	dir := t.TempDir()
	cfg, inv := filepath.Join(dir, "weir.yaml"), filepath.Join(dir, "inventory.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: mx1, vendor: junos}\n"), 0o644)
	os.WriteFile(cfg, []byte("enrich:\n  inventory: "+inv+"\n"), 0o644)
	got := runClassify(t, in.String(), "-c", cfg, "--from", "192.0.2.7")
	if len(got) != len(lines) {
		t.Fatalf("%d lines in, %d out", len(lines), len(got))
	}
	for i, l := range lines {
		c := got[i]
		switch {
		case l.Event == "" && c.Event != nil:
			t.Errorf("%q: event %+v, the corpus says none", l.Raw, *c.Event)
		case l.Event != "" && (c.Event == nil || c.Event.Type != l.Event):
			t.Errorf("%q: event %+v, want %s", l.Raw, c.Event, l.Event)
		case l.Event != "":
			if want := l.Interface + l.Neighbor + l.User; want != "" && !strings.Contains(c.Event.Object, want) {
				t.Errorf("%q: object %q, want %q", l.Raw, c.Event.Object, want)
			}
			if c.Rule == "" || c.Enriched.Event != l.Event {
				t.Errorf("%q: rule %q, enriched event %q", l.Raw, c.Rule, c.Enriched.Event)
			}
		}
		if l.Vendor != "" && c.Enriched.Vendor != l.Vendor {
			t.Errorf("%q: vendor %q, want %q", l.Raw, c.Enriched.Vendor, l.Vendor)
		}
	}
}

// TestClassifyWithConfig: the config's inventory names and tags a device
// by the address the line came from, and its syslog rules are tried; a
// line given as an argument is classified as one from stdin.
func TestClassifyWithConfig(t *testing.T) {
	dir := t.TempDir()
	inv, rules, cfg := filepath.Join(dir, "inventory.yaml"), filepath.Join(dir, "rules.yaml"), filepath.Join(dir, "weir.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: srv7, address: 192.0.2.7, site: ams1, role: server}\n"), 0o644)
	example, err := os.ReadFile("../../configs/syslog-rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(rules, example, 0o644)
	os.WriteFile(cfg, []byte("enrich:\n  inventory: "+inv+"\n  syslog_rules: "+rules+"\n"), 0o644)
	got := runClassify(t, "", "-c", cfg, "--from", "192.0.2.7", "<6>Dec  5 16:15:39 kernel: ixgbe 0000:03:00.0 eth2: NIC Link is Down", "<6>Dec  5 16:15:40 kernel: eth2: renamed")
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	c := got[0]
	if c.Rule != "linux_nic_link" || c.Event == nil || c.Event.Type != "interface_down" || c.Event.Object != "eth2" || c.Event.Device != "srv7" ||
		c.Enriched.Device != "srv7" || c.Enriched.Tags["site"] != "ams1" {
		t.Errorf("the NIC line: %+v %+v", c, c.Event)
	}
	if c := got[1]; c.Rule != "" || c.Event != nil || c.Enriched.Device != "srv7" {
		t.Errorf("a line no rule matches: %+v", c)
	}
	// A broken rules file: the command says where, as weir check does.
	os.WriteFile(rules, []byte("rules:\n  - {name: x, match: '(', event: config_changed}\n"), 0o644)
	if _, errOut, err := classifyCLI(t, "", "classify", "-c", cfg, "x"); err == nil || !strings.Contains(errOut, "enrich.syslog_rules: "+rules+":2:") {
		t.Errorf("a broken rules file: %v %s", err, errOut)
	}
}

// classifyCLI runs the weir binary with args and stdin, no running weir
// needed.
func classifyCLI(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(weirBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestClassifyFromAsTheReceiverSeesIt: the receiver names a line without
// a hostname by its sender's IP address, without the port, IPv6 without
// brackets and an IPv4-mapped one as IPv4. --from given as the receiver
// logs a sender ("192.0.2.7:514", "[2001:db8::1]:514") named the device
// "192.0.2.7:514", a device no running weir has; a name, which no
// receiver sees, is refused rather than taken for an address.
func TestClassifyFromAsTheReceiverSeesIt(t *testing.T) {
	dir := t.TempDir()
	inv, cfg := filepath.Join(dir, "inventory.yaml"), filepath.Join(dir, "weir.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: edge7, address: 192.0.2.7}\n"), 0o644)
	os.WriteFile(cfg, []byte("enrich:\n  inventory: "+inv+"\n"), 0o644)
	const line = "<187>45: Nov 29 14:02:11.123: %LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1, changed state to down"
	for from, want := range map[string]string{
		"192.0.2.7": "edge7", "192.0.2.7:514": "edge7", "::ffff:192.0.2.7": "edge7", "[::ffff:192.0.2.7]:514": "edge7",
		"192.0.2.8:514": "192.0.2.8", "::ffff:192.0.2.8": "192.0.2.8", "[2001:db8::1]:514": "2001:db8::1", "2001:db8::1": "2001:db8::1",
	} {
		var out, errOut bytes.Buffer
		if err := classifyCmd([]string{"-c", cfg, "--from", from, line}, strings.NewReader(""), &out, &errOut); err != nil {
			t.Errorf("--from %s: %v %s", from, err, errOut.String())
			continue
		}
		var c classified
		if err := json.Unmarshal(out.Bytes(), &c); err != nil {
			t.Fatalf("--from %s: %v: %s", from, err, out.String())
		}
		if c.Enriched.Device != want || c.Event == nil || c.Event.Device != want {
			t.Errorf("--from %s: device %q, event %+v, want %q", from, c.Enriched.Device, c.Event, want)
		}
	}
	for _, from := range []string{"router1", "192.0.2.7:x", "192.0.2.300"} {
		var out, errOut bytes.Buffer
		err := classifyCmd([]string{"-c", cfg, "--from", from, line}, strings.NewReader(""), &out, &errOut)
		var exit *exitError
		if !errors.As(err, &exit) || exit.code != 2 || !strings.Contains(err.Error(), from) || out.Len() != 0 {
			t.Errorf("--from %s: %v, output %q; want a usage error naming it", from, err, out.String())
		}
	}
}

// TestClassifyKeepsBytesNotUTF8: a line that is not UTF-8 is published
// with raw_bytes, the line exactly (its JSON strings carry U+FFFD for the
// bytes); weir classify's enriched record had no raw_bytes.
func TestClassifyKeepsBytesNotUTF8(t *testing.T) {
	line := "<13>Dec  5 16:15:39 host app: bad \xff\xfe byte"
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("log: {level: info}\n"), 0o644)
	for _, args := range [][]string{{line}, nil} {
		var out, errOut bytes.Buffer
		if err := classifyCmd(append([]string{"-c", cfg}, args...), strings.NewReader(line+"\r\n"), &out, &errOut); err != nil {
			t.Fatalf("%v %s", err, errOut.String())
		}
		var c struct {
			Enriched struct {
				Raw      string
				RawBytes []byte `json:"raw_bytes"`
			}
		}
		if err := json.Unmarshal(out.Bytes(), &c); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		if string(c.Enriched.RawBytes) != line || !strings.Contains(c.Enriched.Raw, "bad \uFFFD\uFFFD byte") {
			t.Errorf("args %q: raw %q, raw_bytes %q; want raw_bytes %q", args, c.Enriched.Raw, c.Enriched.RawBytes, line)
		}
	}
}

// TestClassifyEventHasObjectID: every event a running weir publishes of an
// object carries its object_id ("gi0/1" for Gi0/1 and GigabitEthernet0/1),
// by which the detector tells one object's events from every path; weir
// classify's event had none, so a rule's object could not be checked
// against a poll's or a trap's.
func TestClassifyEventHasObjectID(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte("log: {level: info}\n"), 0o644)
	var out, errOut bytes.Buffer
	if err := classifyCmd([]string{"-c", cfg, "--from", "192.0.2.7",
		"<187>45: Nov 29 14:02:11.123: %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/1, changed state to down",
		"<6>Dec  5 16:15:39 srv7 sshd[4242]: Accepted password for admin from 198.51.100.9 port 52222 ssh2"},
		strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("%v %s", err, errOut.String())
	}
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var c struct{ Event map[string]any }
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		got = append(got, c.Event)
	}
	if len(got) != 2 || got[0] == nil || got[0]["object_id"] != "gi0/1" {
		t.Fatalf("the interface's event: %v, want object_id gi0/1", got)
	}
	if ev := got[1]; ev != nil && ev["object"] != nil && ev["object_id"] == nil {
		t.Errorf("the login's event: %v, without object_id", ev)
	}
}

// TestClassifyEnrichDisabledSaysSo: with enrich.enabled false, weir run
// with the config enriches nothing and raises no event, and weir classify
// showed the event a line would raise without a word: asked why a line
// raises none, it answered that it does. It still classifies (what the
// rules make of a line), and says on stderr that weir run would not.
func TestClassifyEnrichDisabledSaysSo(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	const line = "<187>45: Nov 29 14:02:11.123: %LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1, changed state to down"
	for _, c := range []struct {
		yaml string
		warn bool
	}{{"enrich: {enabled: false}\n", true}, {"enrich: {enabled: true}\n", false}} {
		os.WriteFile(cfg, []byte(c.yaml), 0o644)
		var out, errOut bytes.Buffer
		if err := classifyCmd([]string{"-c", cfg, line}, strings.NewReader(""), &out, &errOut); err != nil {
			t.Fatalf("%s: %v %s", c.yaml, err, errOut.String())
		}
		if !strings.Contains(out.String(), `"type":"interface_down"`) {
			t.Errorf("%s: %s", c.yaml, out.String())
		}
		if warned := strings.Contains(errOut.String(), cfg+": warning: enrich.enabled is false"); warned != c.warn {
			t.Errorf("%s: stderr %q, warned %v, want %v", c.yaml, errOut.String(), warned, c.warn)
		}
	}
}

// TestClassifyWithEmptyConfig: -c "" is no config, as for weir run: weir's
// rules alone, every device unknown, not "open : no such file".
func TestClassifyWithEmptyConfig(t *testing.T) {
	got := runClassify(t, "", "-c", "", "<38>Mar  1 18:46:11 linux1 sshd[123]: Failed password for root from 10.2.2.2 port 50000 ssh2")
	if len(got) != 1 || got[0].Event == nil || got[0].Event.Type != "login_failed" || got[0].Enriched.Tags["unknown"] != "true" {
		t.Fatalf("weir classify -c '': %+v", got)
	}
}

// TestClassifyHostlessLineSaysFrom: a line without a hostname (IOS without
// logging origin-id) was shown with device "" and an event of no device,
// without a word, where weir run names it by the sender's address; it now
// says so on stderr (once, however many such lines), and not with --from.
func TestClassifyHostlessLineSaysFrom(t *testing.T) {
	const line = "<187>45: Nov 29 14:02:11.123: %LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1, changed state to down"
	for _, c := range []struct {
		args []string
		warn int
	}{{[]string{"-c", "", line, line}, 1}, {[]string{"-c", "", "--from", "192.0.2.7", line}, 0},
		{[]string{"-c", "", "<13>Nov 29 14:02:11 edge1 test: hello"}, 0}} {
		var out, errOut bytes.Buffer
		if err := classifyCmd(c.args, strings.NewReader(""), &out, &errOut); err != nil {
			t.Fatalf("%q: %v %s", c.args, err, errOut.String())
		}
		if n := strings.Count(errOut.String(), "has no hostname: weir run names its device by the address it came from"); n != c.warn || (n > 0 && !strings.Contains(errOut.String(), "--from ADDR")) {
			t.Errorf("%q: stderr %q, want %d warning(s)", c.args, errOut.String(), c.warn)
		}
	}
}

// TestClassifyLineTooLong: a line past 1 MiB on stdin (a file pasted by
// mistake) stops classify with the line's number and the limit, after the
// lines before it, not with bufio's "token too long"; a line of 1 MiB is
// classified.
func TestClassifyLineTooLong(t *testing.T) {
	const head = "<13>Nov 29 14:02:11 edge1 app: "
	fits := head + strings.Repeat("x", 1<<20-len(head))
	if out, errOut, err := classifyCLI(t, fits+"\r\n", "classify", "-c", ""); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("a line of 1 MiB: %v, %d outputs, want 1; stderr %q", err, strings.Count(out, "\n"), errOut)
	}
	in := head + "first\n\n" + head + strings.Repeat("x", 1<<20) + "\n" + head + "after\n"
	out, errOut, err := classifyCLI(t, in, "classify", "-c", "")
	if err == nil {
		t.Fatalf("no error for a line past 1 MiB; stderr %q", errOut)
	}
	if !strings.Contains(errOut, "line 3 is longer than 1 MiB") || strings.Contains(errOut, "token too long") {
		t.Errorf("stderr %q, want it to name line 3 and the limit", errOut)
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("stdout %q, want the first line's output alone", out)
	}
}
