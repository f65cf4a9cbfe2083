package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/configs"
)

// TestReloadWarnsOfTargetsNoCollectorTakes: a reload that brings SNMP
// targets to a process whose poller was not started says they wait for a
// restart; parts that fail are named, the others applied.
func TestReloadWarnsOfTargetsNoCollectorTakes(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	r := &reloads{collect: true}
	applied := 0
	r.add("gnmi targets", func(*configs.Config) error { applied++; return nil })
	r.add("inventory", func(*configs.Config) error { return errTest })
	cfg := configs.Defaults()
	cfg.SNMP.Targets = []configs.SNMPTarget{{Name: "edge1"}}
	r.apply(cfg, logger)
	out := logs.String()
	for _, want := range []string{"need a restart", `part="snmp targets"`, `part=inventory`, "SIGHUP: reloaded", `parts="gnmi targets"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if applied != 1 {
		t.Errorf("gnmi part applied %d times", applied)
	}
	logs.Reset()
	(&reloads{collect: false}).apply(cfg, logger)
	if strings.Contains(logs.String(), "need a restart") {
		t.Errorf("a process that does not collect warned:\n%s", logs.String())
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
	r.apply(bad, logger)
	if out := logs.String(); !strings.Contains(out, `part="enrich device names"`) || !strings.Contains(out, "no-such-profile") ||
		!strings.Contains(out, "not reloaded") {
		t.Errorf("a target list the poller refuses was not refused:\n%s", out)
	}
	logs.Reset()
	good := configs.Defaults()
	good.SNMP.Targets = []configs.SNMPTarget{{Name: "core10", Host: "192.0.2.10", Profiles: configs.SNMPProfiles{Names: []string{"if-mib"}}}}
	r.apply(good, logger)
	if out := logs.String(); strings.Contains(out, "not reloaded") || !strings.Contains(out, `parts="enrich device names"`) {
		t.Errorf("a good target list was not taken:\n%s", out)
	}
}
