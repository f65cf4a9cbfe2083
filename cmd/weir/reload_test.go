package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestReloadAppliesWhatPartsTake: parts that fail are named, the others
// applied, and the reload counted as refused in part; its summary line is
// a warning naming the parts that refused (it was "SIGHUP: reloaded" at
// info, as a reload that took everywhere).
func TestReloadAppliesWhatPartsTake(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	r := newReloads(prometheus.NewRegistry())
	applied := 0
	r.add(partGNMITargets, func(*configs.Config) error { applied++; return nil })
	r.add("inventory", func(*configs.Config) error { return errTest })
	r.apply(configs.Defaults(), nil, logger)
	out := logs.String()
	for _, want := range []string{`part=inventory`, `level=WARN msg="SIGHUP: reloaded in part`, `parts="gnmi targets"`, `refused=inventory`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if applied != 1 {
		t.Errorf("gnmi part applied %d times", applied)
	}
	if got := testutil.ToFloat64(r.m.lastSuccess); got != 0 {
		t.Errorf("weir_config_last_reload_successful = %v after a part refused", got)
	}
}

// TestCollectorsWaitForTargets: a collecting process with no SNMP or gNMI
// targets still runs both collectors, so the SIGHUP that adds the first
// targets starts them (it wanted a restart, and said so only in a
// warning beside "snmp_targets=0 -> 1").
func TestCollectorsWaitForTargets(t *testing.T) {
	cfg := configs.Defaults()
	cfg.SNMP.Traps.Listen = "off"
	r := newReloads(prometheus.NewRegistry())
	b, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	d := deps{cfg: cfg, broker: b, logger: slog.New(slog.DiscardHandler), reg: prometheus.NewRegistry(), reload: r}
	for _, build := range []func(deps) ([]component, error){snmpComponents, gnmiComponents} {
		comps, err := build(d)
		if err != nil || len(comps) != 1 {
			t.Fatalf("components %v, %v", comps, err)
		}
	}
	var parts []string
	for _, p := range r.parts {
		parts = append(parts, p.name)
	}
	if !slices.Equal(parts, []string{partSNMPTargets, partGNMITargets}) {
		t.Errorf("reloaded parts %v", parts)
	}
}

// TestReloadRefusedByEveryPart: a reload every part refuses says so, as a
// warning; it was logged "SIGHUP: reloaded" with an empty parts="".
func TestReloadRefusedByEveryPart(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	r := &reloads{}
	r.add("snmp targets", func(*configs.Config) error { return errTest })
	r.add("inventory", func(*configs.Config) error { return errTest })
	if done := r.apply(configs.Defaults(), nil, logger); len(done) != 0 {
		t.Errorf("done %v", done)
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN msg=\"SIGHUP: reloaded nothing") || strings.Contains(out, `parts=""`) {
		t.Errorf("log:\n%s", out)
	}
}

// TestReloadCountsTargetsOfThePartsThatTookThem: the reload line's count
// before is the count of the last list the part took: a part that refused
// a list (or a config whose inventory fails) does not move it.
func TestReloadCountsTargetsOfThePartsThatTookThem(t *testing.T) {
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	file := filepath.Join(t.TempDir(), "weir.yaml")
	write := func(n int) {
		var b strings.Builder
		b.WriteString("snmp:\n  traps: {listen: \"off\"}\n  targets:\n")
		for i := range n {
			fmt.Fprintf(&b, "    - {name: t%d, address: \"127.0.0.1:%d\"}\n", i, 1000+i)
		}
		os.WriteFile(file, []byte(b.String()), 0o644)
	}
	refuse := false
	r := &reloads{}
	r.add(partSNMPTargets, func(*configs.Config) error {
		if refuse {
			return errTest
		}
		return nil
	})
	r.add("inventory", func(*configs.Config) error { return errTest })
	hup := make(chan os.Signal)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.run(ctx, hup, func(context.Context) (*configs.Config, error) { return configs.Load(file) }, configs.Defaults(), logger)
		close(done)
	}()
	reload := func(n int, refused bool, want string) {
		t.Helper()
		write(n)
		refuse = refused
		before := strings.Count(logs.String(), "SIGHUP: reloaded")
		hup <- syscall.SIGHUP
		for deadline := time.Now().Add(5 * time.Second); strings.Count(logs.String(), "SIGHUP: reloaded") == before; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no reload:\n%s", logs.String())
			}
		}
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, want) {
			t.Errorf("reload of %d targets: %s, want %s", n, last, want)
		}
	}
	reload(2, false, `snmp_targets="0 -> 2"`)
	reload(5, true, `snmp_targets="2 -> 5"`) // refused: 2 stay
	reload(3, false, `snmp_targets="2 -> 3"`)
	cancel()
	<-done
}

// TestReloadNamesTargetsChanged: the reload line said only "snmp_targets=2
// -> 2": a target removed stopped without a line, and nothing told which
// targets a reload added, removed or restarted with new settings.
func TestReloadNamesTargetsChanged(t *testing.T) {
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	file := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(file, []byte(`snmp:
  traps: {listen: "off"}
  targets:
    - {name: t1, address: "127.0.0.1:1001"}
    - {name: t2, address: "127.0.0.1:1002"}
    - {name: t3, address: "127.0.0.1:1003"}
gnmi:
  targets:
    - {name: g1, address: "127.0.0.1:2001", insecure: true, subscriptions: [{path: /interfaces}]}
`), 0o644)
	current, err := configs.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	// t1 moved down a line (not a change), t2 removed, t3 to another
	// address, t4 added; g1 removed, g2 added.
	os.WriteFile(file, []byte(`snmp:
  traps: {listen: "off"}
  targets:

    - {name: t1, address: "127.0.0.1:1001"}
    - {name: t3, address: "127.0.0.1:1013"}
    - {name: t4, address: "127.0.0.1:1004"}
gnmi:
  targets:
    - {name: g2, address: "127.0.0.1:2002", insecure: true, subscriptions: [{path: /interfaces}]}
`), 0o644)
	r := &reloads{}
	r.add(partSNMPTargets, func(*configs.Config) error { return nil })
	r.add(partGNMITargets, func(*configs.Config) error { return nil })
	hup := make(chan os.Signal)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		r.run(ctx, hup, func(context.Context) (*configs.Config, error) { return configs.Load(file) }, current, logger)
		close(done)
	}()
	defer func() { cancel(); <-done }()
	hup <- syscall.SIGHUP
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "SIGHUP: reloaded"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no reload:\n%s", logs.String())
		}
	}
	for _, want := range []string{`snmp_targets="3 -> 3"`, "snmp_added=t4", "snmp_removed=t2", "snmp_changed=t3", "gnmi_added=g2", "gnmi_removed=g1"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the reload line lacks %s:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "t1") || strings.Contains(logs.String(), "gnmi_changed") {
		t.Errorf("an unchanged target named:\n%s", logs.String())
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("broken")

// TestReloadNamesOnlyPolledTargets: enrichment takes a reloaded SNMP
// target list for its device names only when the poller would take it;
// a target with an unknown profile leaves the names as they were, as it
// leaves the poller's targets.
func TestReloadNamesOnlyPolledTargets(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := configs.Defaults()
	cfg.SNMP.Targets = []configs.SNMPTarget{{Name: "core9", Host: "192.0.2.9", Profiles: configs.SNMPProfiles{Names: []string{"system"}}}}
	r := &reloads{}
	if _, err := enrichComponents(deps{cfg: cfg, logger: logger, reg: prometheus.NewRegistry(), reload: r}); err != nil {
		t.Fatal(err)
	}
	bad := configs.Defaults()
	bad.SNMP.Targets = []configs.SNMPTarget{{Name: "core10", Host: "192.0.2.10", Line: 7, Profiles: configs.SNMPProfiles{Names: []string{"no-such-profile"}}}}
	r.apply(bad, nil, logger)
	if out := logs.String(); !strings.Contains(out, `part="enrich device names"`) || !strings.Contains(out, "no-such-profile") ||
		!strings.Contains(out, "not reloaded") {
		t.Errorf("a target list the poller refuses was not refused:\n%s", out)
	}
	logs.Reset()
	good := configs.Defaults()
	good.SNMP.Targets = []configs.SNMPTarget{{Name: "core10", Host: "192.0.2.10", Profiles: configs.SNMPProfiles{Names: []string{"if-mib"}}}}
	r.apply(good, nil, logger)
	if out := logs.String(); strings.Contains(out, "not reloaded") || !strings.Contains(out, `parts="enrich device names"`) {
		t.Errorf("a good target list was not taken:\n%s", out)
	}
}

// TestRestartNeeded: a reload names the sections that changed and wait
// for a restart, not the targets it applies.
func TestRestartNeeded(t *testing.T) {
	parse := func(y string) *configs.Config { return mustParse(t, y) }
	started := parse("snmp:\n  targets:\n    - {name: a, address: 10.0.0.1}\nsinks:\n  - {type: file, name: f, path: /tmp/f.jsonl, topics: [events]}\n")
	targets := parse("snmp:\n  targets:\n    - {name: a, address: 10.0.0.1}\n    - {name: b, address: 10.0.0.2}\nsinks:\n  - {type: file, name: f, path: /tmp/f.jsonl, topics: [events]}\n")
	if got := restartNeeded(started, targets); len(got) != 0 {
		t.Errorf("targets added: restart needed for %v", got)
	}
	other := parse("data_dir: /tmp/elsewhere\nsnmp:\n  targets:\n    - {name: a, address: 10.0.0.1}\nsinks:\n  - {type: file, name: f, path: /tmp/g.jsonl, topics: [events]}\n")
	if got := strings.Join(restartNeeded(started, other), ","); got != "data_dir,sinks" {
		t.Errorf("data_dir and a sink changed: restart needed for %q", got)
	}
	// A section's key, not the section alone: "enrich" said nothing of
	// which setting (the workers) waits for the start. The inventory's
	// path is applied.
	inv := parse("enrich:\n  inventory: /tmp/a.yaml\n  workers: 2\n")
	if got := strings.Join(restartNeeded(inv, parse("enrich:\n  inventory: /tmp/b.yaml\n  workers: 3\n")), ","); got != "enrich.workers" {
		t.Errorf("the inventory path and the workers changed: restart needed for %q, want enrich.workers", got)
	}
}

// TestRestartNeededKafkaSASL: the Kafka listener's users and mechanisms
// are applied, so changing them needs no restart; adding or removing
// broker.kafka_sasl (authentication on or off) does.
func TestRestartNeededKafkaSASL(t *testing.T) {
	sasl := func(pw string) *configs.Config {
		return mustParse(t, "broker:\n  kafka_sasl:\n    mechanisms: [PLAIN]\n    users:\n      - {name: ops, password: "+pw+"}\n")
	}
	if got := restartNeeded(sasl("a"), sasl("b")); len(got) != 0 {
		t.Errorf("a password changed: restart needed for %v", got)
	}
	none := mustParse(t, "broker: {}\n")
	if got := strings.Join(restartNeeded(sasl("a"), none), ","); got != "broker.kafka_sasl" {
		t.Errorf("kafka_sasl removed: restart needed for %q", got)
	}
	if got := strings.Join(restartNeeded(none, sasl("a")), ","); got != "broker.kafka_sasl" {
		t.Errorf("kafka_sasl added: restart needed for %q", got)
	}
}

// TestRestartNeededLeavesWhatTargetsCarry: gnmi.subscriptions and
// snmp.defaults are resolved into the targets, which a reload applies (a
// named subscription's new sample_interval resubscribes its targets):
// editing them needs no restart.
func TestRestartNeededLeavesWhatTargetsCarry(t *testing.T) {
	parse := func(y string) *configs.Config { return mustParse(t, y) }
	for _, tc := range []struct{ started, next string }{
		{
			"gnmi:\n  targets:\n    - {name: s1, address: 127.0.0.1:57400, insecure: true, subscriptions: [counters]}\n  subscriptions:\n    counters: {path: /interfaces/interface/state/counters, stream_mode: sample, sample_interval: 10s}\n",
			"gnmi:\n  targets:\n    - {name: s1, address: 127.0.0.1:57400, insecure: true, subscriptions: [counters]}\n  subscriptions:\n    counters: {path: /interfaces/interface/state/counters, stream_mode: sample, sample_interval: 5s}\n",
		},
		{
			"snmp:\n  defaults: {community: public, interval: 60s}\n  targets:\n    - {name: r1, address: 127.0.0.1:161}\n",
			"snmp:\n  defaults: {community: public, interval: 30s}\n  targets:\n    - {name: r1, address: 127.0.0.1:161}\n",
		},
	} {
		started, next := parse(tc.started), parse(tc.next)
		if reflect.DeepEqual(started.GNMI.Targets, next.GNMI.Targets) && reflect.DeepEqual(started.SNMP.Targets, next.SNMP.Targets) {
			t.Fatalf("%q: the targets did not change", tc.next)
		}
		if got := restartNeeded(started, next); len(got) != 0 {
			t.Errorf("%q: restart_needed=%v, though the reload applies it through the targets", tc.next, got)
		}
	}
	// snmp.profiles_dir is read again with the file, and its profiles are
	// applied with the targets: a reload that sets it needs no restart.
	dir := t.TempDir()
	prof := "name: mysys\nsys_object_ids: [\"1.3.6.1\"]\nmeasurement: snmp_mysys\nscalars:\n  - {name: sysName, oid: 1.3.6.1.2.1.1.5.0, type: string}\n"
	if err := os.WriteFile(filepath.Join(dir, "mysys.yaml"), []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	withDir := parse("snmp:\n  profiles_dir: " + dir + "\n  targets:\n    - {name: r1, address: 127.0.0.1:161, profiles: [mysys]}\n")
	if got := restartNeeded(parse("snmp:\n  targets:\n    - {name: r1, address: 127.0.0.1:161}\n"), withDir); len(got) != 0 {
		t.Errorf("snmp.profiles_dir set: restart_needed=%v, though the reload reads its profiles", got)
	}
	// The trap receiver's communities and users are applied to it.
	if got := restartNeeded(parse("snmp:\n  traps: {communities: [old]}\n"),
		parse("snmp:\n  traps:\n    communities: [new]\n    users: [{user: u, auth_protocol: SHA, auth_password: authpass1}]\n")); len(got) != 0 {
		t.Errorf("snmp.traps communities and users changed: restart_needed=%v, though the reload applies them", got)
	}
	if got := restartNeeded(parse("snmp:\n  traps: {listen: 127.0.0.1:5162}\n"), parse("snmp:\n  traps: {listen: 127.0.0.1:5163}\n")); !slices.Equal(got, []string{"snmp.traps"}) {
		t.Errorf("snmp.traps.listen changed: restart_needed=%v, want [snmp.traps]", got)
	}
	// What is not carried by a target still needs one.
	if got := restartNeeded(parse("gnmi:\n  queue_size: 100\n"), parse("gnmi:\n  queue_size: 200\n")); !slices.Equal(got, []string{"gnmi.queue_size"}) {
		t.Errorf("gnmi.queue_size changed: restart_needed=%v, want [gnmi.queue_size]", got)
	}
}

// mustParse parses config y, failing the test on an error.
func mustParse(t *testing.T, y string) *configs.Config {
	t.Helper()
	c, err := configs.Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReloadReadsProfilesAgain: a profile added to profiles_dir after the
// start, and a target naming it, pass the reread file's check; the parts
// that follow the SNMP targets (here enrichment's device names) take them,
// reading the profiles again. They kept the profiles of the start and
// refused the target.
func TestReloadReadsProfilesAgain(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	dir := t.TempDir()
	cfg := configs.Defaults()
	cfg.SNMP.ProfilesDir = dir
	cfg.SNMP.Targets = []configs.SNMPTarget{{Name: "core9", Host: "192.0.2.9", Profiles: configs.SNMPProfiles{Names: []string{"system"}}}}
	r := &reloads{}
	if _, err := enrichComponents(deps{cfg: cfg, logger: logger, reg: prometheus.NewRegistry(), reload: r}); err != nil {
		t.Fatal(err)
	}
	prof := "name: late\ntables:\n  - measurement: t\n    columns:\n      - {name: c, oid: 1.3.6.1.4.1.9999.1.1, type: counter}\n"
	if err := os.WriteFile(filepath.Join(dir, "late.yaml"), []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	next := configs.Defaults()
	next.SNMP.ProfilesDir = dir
	next.SNMP.Targets = []configs.SNMPTarget{{Name: "core10", Host: "192.0.2.10", Line: 7, Profiles: configs.SNMPProfiles{Names: []string{"late"}}}}
	if done := r.apply(next, nil, logger); len(done) == 0 || strings.Contains(logs.String(), "not reloaded") {
		t.Errorf("a target naming a profile added since the start was refused:\n%s", logs.String())
	}
}

// TestReloadWaitsForAFileBeingWritten: a SIGHUP that comes while the
// config file is being written (its first targets written, the rest
// not yet) reloads the whole file once written, not the part that
// parses, which would stop the targets not yet written.
func TestReloadWaitsForAFileBeingWritten(t *testing.T) {
	file := filepath.Join(t.TempDir(), "weir.yaml")
	head := "snmp:\n  traps: {listen: \"off\"}\n  targets:\n    - {name: t0, address: \"127.0.0.1:1000\"}\n"
	if err := os.WriteFile(file, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.WriteString("    - {name: t1, address: \"127.0.0.1:1001\"}\n    - {name: t2, address: \"127.0.0.1:1002\"}\n")
	}()
	cfg, err := loadSettled(context.Background(), file, 400*time.Millisecond, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.SNMP.Targets); n != 3 {
		t.Errorf("reloaded %d targets of a file being written, want its 3", n)
	}
}

// TestReloadWaitStopsWithWeir: a reload waiting for a file (modified in
// the future, by a clock set back) ends as weir stops.
func TestReloadWaitStopsWithWeir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "weir.yaml")
	if err := os.WriteFile(file, []byte("log: {level: info}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(file, future, future); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if _, err := loadSettled(ctx, file, time.Second, time.Minute); err == nil {
		t.Error("no error from a reload stopped while it waited")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopping took %v", d)
	}
	// Without a stop, a file stamped in the future is read after maxWait.
	cfg, err := loadSettled(context.Background(), file, time.Second, 200*time.Millisecond)
	if err != nil || cfg.Log.Level != "info" {
		t.Errorf("loadSettled after maxWait = %v, %v", cfg, err)
	}
}

// TestSIGHUPWhileStartingReloads: a SIGHUP that comes while weir starts
// (opening its log, before the reloader runs) reloads once it runs: the
// file may have changed since it was read at the start, and was ignored
// until the next SIGHUP.
func TestSIGHUPWhileStartingReloads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "weir.yaml")
	conf := fmt.Sprintf("data_dir: %s\nhttp: {listen: \"off\"}\nbroker: {kafka_listen: \"off\"}\nsyslog: {enabled: false}\nenrich: {enabled: false}\n", filepath.Join(dir, "data"))
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	hup := make(chan os.Signal, 1)
	hup <- syscall.SIGHUP // before run: as weir starts
	var logs syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, func(context.Context) (*configs.Config, error) { return configs.Load(file) }, hup,
			map[string]bool{roleCollect: true}, slog.New(slog.NewTextHandler(&logs, nil)))
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "SIGHUP: reloaded"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("a SIGHUP sent while weir started was not taken:\n%s", logs.String())
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestReloadWaitsForAnInventoryBeingWritten: SIGHUP reads the inventory
// and the syslog rules too; one being written as the signal comes (a deploy copying the file
// in and signalling at once) is read once written, not cut short with
// its last devices unknown.
func TestReloadWaitsForAnInventoryBeingWritten(t *testing.T) {
	for _, tc := range []struct{ key, first, more, want string }{
		{"inventory", "devices:\n  - {name: edge1, address: 192.0.2.1}\n", "  - {name: edge2, address: 192.0.2.2}\n", "edge2"},
		// The site's syslog rules are read at a SIGHUP too.
		{"syslog_rules", "rules:\n", "  - {name: late, match: 'x (?P<user>y)', event: config_changed, examples: [{line: x y, event: config_changed}]}\n", "late"},
	} {
		dir := t.TempDir()
		named := filepath.Join(dir, tc.key+".yaml")
		file := filepath.Join(dir, "weir.yaml")
		if err := os.WriteFile(file, []byte("enrich:\n  "+tc.key+": "+named+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		past := time.Now().Add(-time.Hour)
		if err := os.Chtimes(file, past, past); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(named, []byte(tc.first), 0o644); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(100 * time.Millisecond)
			f, err := os.OpenFile(named, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer f.Close()
			f.WriteString(tc.more)
		}()
		if _, err := loadSettled(context.Background(), file, 400*time.Millisecond, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(named)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tc.want) {
			t.Errorf("the reload went on with the %s half written:\n%s", tc.key, data)
		}
	}
}

// TestReloadRefusedPartTakesItLater: a SIGHUP whose inventory did not
// load (saved broken) set weir_config_last_reload_successful to 0, and it
// stayed 0 once the fixed file loaded through the inventory's watch, so
// an alert on it went on firing with nothing left to fix. It is 1 again
// once every part that refused has taken it; not after a config file with
// errors, which only a reload of a fixed file fixes.
func TestReloadRefusedPartTakesItLater(t *testing.T) {
	r := newReloads(prometheus.NewRegistry())
	inventoryOK, snmpOK := false, true
	r.add("inventory", func(*configs.Config) error {
		if !inventoryOK {
			return errTest
		}
		return nil
	})
	r.add(partSNMPTargets, func(*configs.Config) error {
		if !snmpOK {
			return errTest
		}
		return nil
	})
	r.apply(configs.Defaults(), nil, slog.New(slog.DiscardHandler))
	if got := testutil.ToFloat64(r.m.lastSuccess); got != 0 {
		t.Fatalf("last_reload_successful %v after the inventory refused", got)
	}
	r.took("inventory") // the watch loaded the fixed file
	if got := testutil.ToFloat64(r.m.lastSuccess); got != 1 {
		t.Errorf("last_reload_successful %v once the inventory took it, want 1", got)
	}

	// Two parts refused: one taking it is not enough.
	snmpOK = false
	r.apply(configs.Defaults(), nil, slog.New(slog.DiscardHandler))
	r.took("inventory")
	if got := testutil.ToFloat64(r.m.lastSuccess); got != 0 {
		t.Errorf("last_reload_successful %v with the SNMP targets still refused, want 0", got)
	}

	// A config file with errors: nothing was applied.
	inventoryOK, snmpOK = true, true
	r.apply(configs.Defaults(), nil, slog.New(slog.DiscardHandler))
	r.fileFailed(errTest, slog.New(slog.DiscardHandler))
	r.took("inventory")
	if got := testutil.ToFloat64(r.m.lastSuccess); got != 0 {
		t.Errorf("last_reload_successful %v after a config file with errors, want 0", got)
	}
}

// TestReloadPartTakingItDuringAReloadIsNotTook: the inventory's loads
// are observed for SIGHUP's own Reload too, so a reload whose inventory
// loaded (after one it refused) counted as the refused part taking the
// last one: the success timestamp moved to a reload that the SNMP
// targets then refused.
func TestReloadPartTakingItDuringAReloadIsNotTook(t *testing.T) {
	r := newReloads(prometheus.NewRegistry())
	inventoryOK, snmpOK := false, true
	r.add(partInventory, func(*configs.Config) error {
		if !inventoryOK {
			return errTest
		}
		r.took(partInventory) // as Reload's observer does
		return nil
	})
	r.add(partSNMPTargets, func(*configs.Config) error {
		if !snmpOK {
			return errTest
		}
		return nil
	})
	r.apply(configs.Defaults(), nil, slog.New(slog.DiscardHandler))
	r.m.lastTime.Set(0) // the start's, to see whether it moves

	inventoryOK, snmpOK = true, false
	r.apply(configs.Defaults(), nil, slog.New(slog.DiscardHandler))
	if got := testutil.ToFloat64(r.m.lastSuccess); got != 0 {
		t.Errorf("last_reload_successful %v after the SNMP targets refused, want 0", got)
	}
	if got := testutil.ToFloat64(r.m.lastTime); got != 0 {
		t.Errorf("last_reload_success_timestamp_seconds moved to %v on a reload the SNMP targets refused", got)
	}
}

// TestReloadLeavesOutFilesNotInUse: with no inventory and no syslog rules
// before or after, a SIGHUP's log line named "inventory" and "syslog
// rules" among the parts reloaded, as if a file had been read. Naming a
// file, and taking it away again, are reloads of them.
func TestReloadLeavesOutFilesNotInUse(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	dir := t.TempDir()
	inv, rules := filepath.Join(dir, "inventory.yaml"), filepath.Join(dir, "rules.yaml")
	os.WriteFile(inv, []byte("devices:\n  - {name: edge1, address: 192.0.2.1}\n"), 0o644)
	os.WriteFile(rules, []byte("rules:\n  - {name: late, match: 'x (?P<user>y)', event: config_changed, examples: [{line: x y, event: config_changed}]}\n"), 0o644)
	r := newReloads(prometheus.NewRegistry())
	if _, err := enrichComponents(deps{cfg: configs.Defaults(), logger: logger, reg: prometheus.NewRegistry(), reload: r}); err != nil {
		t.Fatal(err)
	}
	parts := func(cfg *configs.Config) string {
		t.Helper()
		logs.Reset()
		r.apply(cfg, nil, logger)
		_, after, ok := strings.Cut(logs.String(), `msg="SIGHUP: reloaded" parts="`)
		if !ok {
			t.Fatalf("no reload line:\n%s", logs.String())
		}
		list, _, _ := strings.Cut(after, `"`)
		return list
	}
	if got := parts(configs.Defaults()); got != "enrich device names" {
		t.Errorf("no files: parts %q, want %q", got, "enrich device names")
	}
	named := configs.Defaults()
	named.Enrich.Inventory, named.Enrich.SyslogRules = inv, rules
	if got := parts(named); got != "inventory, enrich device names, syslog rules" {
		t.Errorf("files named: parts %q", got)
	}
	if got := parts(configs.Defaults()); got != "inventory, enrich device names, syslog rules" {
		t.Errorf("files taken away: parts %q", got)
	}
	if got := parts(configs.Defaults()); got != "enrich device names" {
		t.Errorf("no files again: parts %q", got)
	}
}

// TestReloadRefusesAConfigThatIsNoFile: a config given as a named pipe is
// read at start (a template expanded into it), but a SIGHUP reading it
// again would wait for a writer for good, holding every later reload: it
// is refused, and the running config stays.
func TestReloadRefusesAConfigThatIsNoFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "weir.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := loadSettled(context.Background(), fifo, 0, time.Second)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("reload of a named pipe: %v, want it refused as not a regular file", err)
		}
	case <-time.After(30 * time.Second):
		// Unblock the reader so the test ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("a reload of a named pipe waits for a writer")
	}
}

// TestReloadOfAFileOfThousandsOfMistakesLogsALine: a config with an error
// on each of thousands of lines (a generated file gone wrong), or a part
// refusing with as many (the syslog rules, the inventory), is one log
// line of its first mistakes and a count of the rest. It was every one of
// them: 200 KB for 3,000 SNMP targets with a mistyped key, 738 KB for
// 3,000 broken rules, which journald and log shippers cut or drop.
func TestReloadOfAFileOfThousandsOfMistakesLogsALine(t *testing.T) {
	var b strings.Builder
	b.WriteString("snmp:\n  targets:\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "    - {name: t%d, address: \"127.0.0.1:1161\", bogus: 1}\n", i)
	}
	file := filepath.Join(t.TempDir(), "weir.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadSettled(context.Background(), file, 0, time.Second)
	if err == nil {
		t.Fatal("a file of 3,000 mistakes loaded")
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	r := &reloads{}
	r.fileFailed(err, logger)
	r.add("syslog rules", func(*configs.Config) error { return err })
	r.apply(configs.Defaults(), nil, logger)
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if len(line) > 8<<10 {
			t.Errorf("a log line of %d bytes: %.300s...", len(line), line)
		}
	}
	if n := strings.Count(logs.String(), "and 2980 more (weir check -c FILE lists them all)"); n != 2 {
		t.Errorf("the count of the mistakes left out is in %d lines; want 2:\n%.2000s", n, logs.String())
	}
	if !strings.Contains(logs.String(), `weir.yaml:3: field bogus: unknown key in snmp.targets[0]`) {
		t.Errorf("the first mistake is not logged:\n%.2000s", logs.String())
	}
}
