package snmp

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestScalarWithoutInstanceLogged: a profile scalar written as the
// object's OID (sysLocation, 1.3.6.1.2.1.1.6) rather than its instance
// (….6.0) never gives a value; Net-SNMP answers noSuchInstance. weir
// check cannot tell it from a table cell's OID; the poll says so once.
func TestScalarWithoutInstanceLogged(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	dir := t.TempDir()
	prof := "name: loc\nscalars:\n  - {name: location, oid: 1.3.6.1.2.1.1.6, type: string}\n  - {name: name, oid: 1.3.6.1.2.1.1.5.0, type: string}\n"
	if err := os.WriteFile(filepath.Join(dir, "loc.yaml"), []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := profile.Load(configs.BuiltinSNMPProfiles(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// v1 agents answer noSuchName for the whole GET rather than a
	// noSuchInstance varbind: the object is dropped and asked again.
	for _, version := range []string{"2c", "1"} {
		t.Run("v"+version, func(t *testing.T) { checkNoInstanceLogged(t, agent.Addr, set, version) })
	}
}

func checkNoInstanceLogged(t *testing.T, addr string, set *profile.Set, version string) {
	var logs syncbuf.Buffer
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("lab1", addr, func(tc *configs.SNMPTarget) {
			tc.Profiles.Names, tc.Version = []string{"loc"}, version
		})},
		Profiles: set, Broker: capture, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.PollOnce(context.Background(), "lab1"); err != nil {
			t.Fatal(err)
		}
	}
	var named bool
	for _, m := range decode(t, capture.Records()) {
		if m.Measurement == "snmp_loc" {
			_, named = m.Fields["name"]
		}
	}
	if !named {
		t.Errorf("sysName.0 not polled: %v", decode(t, capture.Records()))
	}
	if n := strings.Count(logs.String(), "no instance at a scalar's OID"); n != 1 || !strings.Contains(logs.String(), "oid=1.3.6.1.2.1.1.6\n") {
		t.Errorf("%d lines naming the scalar without an instance, want 1 naming it:\n%s", n, logs.String())
	}
}
