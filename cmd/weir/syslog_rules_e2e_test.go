package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSiteSyslogRulesEndToEnd: a site's own syslog rule (the Linux NIC
// rule of configs/syslog-rules.example.yaml) turns a line sent with logger
// into an interface_down event weir's own rules give none for; SIGHUP
// takes an edited rules file, and refuses one whose examples fail,
// keeping the rules in use; `weir check` says what is wrong with it.
func TestSiteSyslogRulesEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed")
	}
	t.Parallel()
	dir := t.TempDir()
	example, err := os.ReadFile("../../configs/syslog-rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "syslog-rules.yaml")
	nicOnly, _, _ := strings.Cut(string(example), "  # Cisco Meraki")
	if err := os.WriteFile(rules, []byte(nicOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "weir.yaml")
	os.WriteFile(cfg, []byte("enrich:\n  syslog_rules: "+rules+"\n"), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	p.waitLog(t, "syslog rules loaded", "no log line for the rules file")
	// send logs msg as a Linux host's kernel does; waitEvent waits for an
	// event naming object.
	send := func(msg string) {
		t.Helper()
		_, tcp := p.SyslogAddrs(t)
		_, port, _ := strings.Cut(tcp, ":")
		if out, err := exec.Command("logger", "-n", "127.0.0.1", "-P", port, "-T", "--rfc3164", "-t", "kernel", msg).CombinedOutput(); err != nil {
			t.Fatalf("logger: %v %s", err, out)
		}
	}
	waitEvent := func(typ, object, after string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			out, _, _ := p.cli(t, "", "consume", "events", "--from-beginning")
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, `"type":"`+typ+`"`) && strings.Contains(line, `"object":"`+object+`"`) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s event for %s %s: %s\n%s", typ, object, after, out, p.Logs())
			}
		}
	}
	send("ixgbe 0000:03:00.0 eth2: NIC Link is Down")
	waitEvent("interface_down", "eth2", "from the site rule")
	enriched, _, _ := p.cli(t, "", "consume", "enriched.syslog", "--from-beginning")
	if !strings.Contains(enriched, `"fields":{"interface":"eth2"}`) || !strings.Contains(enriched, `"event":"interface_down"`) {
		t.Errorf("enriched.syslog: %s", enriched)
	}

	// The whole example file: the Meraki rules come in at SIGHUP.
	os.WriteFile(rules, example, 0o644)
	p.sighup(t, "SIGHUP: reloaded")
	if logs := p.Logs(); !strings.Contains(logs, "rules=3") || strings.Contains(logs, "restart_needed") {
		t.Errorf("the edited rules file:\n%s", logs)
	}
	send("events port 7 status changed from 1Gfdx to down")
	waitEvent("interface_down", "7", "from a rule added at SIGHUP")

	// An example that no longer gives what it says: refused, named, and
	// the rules in use go on.
	broken := strings.Replace(string(example), "fields: {interface: eth2}", "fields: {interface: eth9}", 1)
	os.WriteFile(rules, []byte(broken), 0o644)
	p.sighup(t, `refused="syslog rules"`)
	if logs := p.Logs(); !strings.Contains(logs, `field interface is \"eth2\", not \"eth9\"`) {
		t.Errorf("the refusal does not say why:\n%s", logs)
	}
	send("ixgbe 0000:03:00.1 eth3: NIC Link is Down")
	waitEvent("interface_down", "eth3", "after a refused reload")
	out, errOut, err := p.cli(t, "", "check", "-c", cfg)
	if err == nil || !strings.Contains(errOut, "enrich.syslog_rules: "+rules+":") || !strings.Contains(errOut, `not "eth9"`) {
		t.Errorf("weir check of the broken rules: %v\n%s%s", err, out, errOut)
	}
}
