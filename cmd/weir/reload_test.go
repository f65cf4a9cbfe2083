package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

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
