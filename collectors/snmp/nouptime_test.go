package snmp

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestNoSysUpTimeLogged: an agent whose view leaves sysUpTime out (a
// community limited to IF-MIB) answers the interfaces, and the records go
// out without an uptime, so enrichment cannot tell a restart from a
// counter wrap and raises no device_rebooted. That is said once per
// target, not left to be found from a missing snmp_system series.
func TestNoSysUpTimeLogged(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	set, err := profile.Load(configs.BuiltinSNMPProfiles(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2c", "1"} {
		t.Run("v"+version, func(t *testing.T) {
			var logs syncbuf.Buffer
			capture := snmptest.NewCapture()
			p, err := New(Config{
				Targets: []configs.SNMPTarget{testTarget("lab1", agent.Addr, func(tc *configs.SNMPTarget) {
					tc.Profiles.Names, tc.Version, tc.Community = []string{"system", "if-mib"}, version, snmptest.CommunityIfOnly
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
			var rows int
			for _, m := range decode(t, capture.Records()) {
				if m.Measurement == "snmp_interface" {
					rows++
				}
			}
			if rows == 0 {
				t.Fatalf("no interface rows: %v", decode(t, capture.Records()))
			}
			if n := strings.Count(logs.String(), "sysUpTime"); n != 1 || !strings.Contains(logs.String(), "target=lab1") {
				t.Errorf("%d lines about the missing sysUpTime, want 1 naming the target:\n%s", n, logs.String())
			}
		})
	}
}
