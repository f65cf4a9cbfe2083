package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/sim"
)

// TestSIGHUPReloadsTargets: editing the config and sending SIGHUP to a
// running weir starts polling an added SNMP target (the first one too:
// weir started with none used to want a restart) and stops a removed
// one, without a restart; a config with an error changes nothing and
// weir goes on, saying so in its log and its metrics.
func TestSIGHUPReloadsTargets(t *testing.T) {
	t.Parallel() // it waits on 1 s polls, of agents and a weir of its own
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := map[string]string{}
	for _, name := range []string{"alpha", "beta"} {
		a, err := sim.Listen("127.0.0.1:0", sim.Options{Name: name, Interfaces: 1, Community: "public"})
		if err != nil {
			t.Fatal(err)
		}
		go a.Serve(ctx)
		addr[name] = a.Addr().String()
	}
	file := filepath.Join(t.TempDir(), "weir.yaml")
	writeConfig := func(targets ...string) {
		t.Helper()
		var cfg strings.Builder
		cfg.WriteString("snmp:\n  defaults: {version: 2c, community: public, interval: 1s, timeout: 500ms, retries: 0, profiles: [system]}\n")
		cfg.WriteString("  traps: {listen: \"off\"}\n  targets:\n")
		for _, name := range targets {
			fmt.Fprintf(&cfg, "    - {name: %s, address: %q}\n", name, addr[name])
		}
		if err := os.WriteFile(file, []byte(cfg.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig()
	p := startWeir(t, t.TempDir(), "-c", file)
	polls := func(device string) int {
		out, _, _ := p.cli(t, "", "consume", "raw.snmp", "--from-beginning")
		return strings.Count(out, `"measurement":"snmp_status","device":"`+device+`"`)
	}
	waitPolls := func(device string, n int) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); polls(device) < n; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s polled %d times, want %d\n%s", device, polls(device), n, p.Logs())
			}
		}
	}
	reloaded := func(success, failure, last float64) {
		t.Helper()
		m := p.Metrics(t)
		if got := [3]float64{m[`weir_config_reloads_total{result="success"}`], m[`weir_config_reloads_total{result="failure"}`],
			m["weir_config_last_reload_successful"]}; got != [3]float64{success, failure, last} {
			t.Errorf("reloads (success, failure, last successful) = %v, want %v", got, [3]float64{success, failure, last})
		}
	}
	writeConfig("alpha")
	p.sighup(t, "SIGHUP: reloaded")
	if logs := p.Logs(); !strings.Contains(logs, `snmp_targets="0 -> 1"`) || strings.Contains(logs, "restart") {
		t.Errorf("the first target is not taken as it is:\n%s", logs)
	}
	reloaded(1, 0, 1)
	waitPolls("alpha", 2)
	if polls("beta") != 0 {
		t.Fatal("beta polled before it was configured")
	}

	writeConfig("beta") // alpha removed, beta added
	p.sighup(t, "SIGHUP: reloaded")
	if !strings.Contains(p.Logs(), `snmp_targets="1 -> 1"`) {
		t.Errorf("the reload does not say what became of the targets:\n%s", p.Logs())
	}
	// The listener flags (--kafka-listen, ...) hold at a reload as at the
	// start: nothing outside the targets changed.
	if strings.Contains(p.Logs(), "restart_needed") {
		t.Errorf("a reload that changed only targets says sections need a restart:\n%s", p.Logs())
	}
	reloaded(2, 0, 1)
	waitPolls("beta", 2)
	alpha := polls("alpha")
	time.Sleep(2500 * time.Millisecond)
	if n := polls("alpha"); n != alpha {
		t.Errorf("alpha polled %d more times after it was removed", n-alpha)
	}

	os.WriteFile(file, []byte("snmp:\n  targetz: []\n"), 0o644)
	p.sighup(t, "config not reloaded")
	reloaded(2, 1, 0)
	beta := polls("beta")
	waitPolls("beta", beta+2)
	// A file truncated as it is written: no settings, so no reload (it
	// stopped every target).
	os.WriteFile(file, []byte("# weir\n"), 0o644)
	p.sighup(t, "has no settings")
	reloaded(2, 2, 0)
	beta = polls("beta")
	waitPolls("beta", beta+2)
	writeConfig("beta")
	p.sighup(t, "SIGHUP: reloaded")
	reloaded(3, 2, 1)
	if err := p.Cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("weir stopped: %v", err)
	}
}

// sighup signals p and waits up to 15 s for one more wantLog in its log.
func (p *weirProc) sighup(t *testing.T, wantLog string) {
	t.Helper()
	before := strings.Count(p.Logs(), wantLog)
	if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); strings.Count(p.Logs(), wantLog) == before; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q after SIGHUP:\n%s", wantLog, p.Logs())
		}
	}
}
