package snmp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestV3SilentAgentDiagnosed: snmpsim's agent (pysnmp) drops without a
// word an authPriv request of a user it does not have, and one for a
// context it does not have, where Net-SNMP reports the user and answers
// the default context. An unknown user was reported as a dead agent
// (timeout), and a misspelt context_name as a wrong priv password.
func TestV3SilentAgentDiagnosed(t *testing.T) {
	rec := "1.3.6.1.2.1.1.3.0|67|1234\n1.3.6.1.2.1.1.5.0|4|dev1\n"
	addr := snmptest.StartSnmpsim(t, map[string][]byte{"dev1": []byte(rec)})
	// snmpsimd's own v3 user; the context names the device.
	good := configs.SNMPv3{User: "simulator", SecurityLevel: "authPriv", AuthProtocol: "MD5", AuthPassword: "auctoritas",
		PrivProtocol: "DES", PrivPassword: "privatus", ContextName: "dev1"}
	for _, tc := range []struct {
		name string
		mod  func(*configs.SNMPv3)
		want []string // in the error
		not  string   // not in the error
	}{
		{"unknown-user", func(v *configs.SNMPv3) { v.User = "nobody" }, []string{`no user "nobody"`}, "priv_password"},
		{"unknown-context", func(v *configs.SNMPv3) { v.ContextName = "nosuch" }, []string{"context_name", `"nosuch"`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := good
			tc.mod(&v)
			p, err := New(Config{
				Targets: []configs.SNMPTarget{testTarget("sim", addr, func(c *configs.SNMPTarget) {
					c.Version, c.V3 = "3", v
					c.Profiles.Names = []string{"system"}
					c.Timeout = 500 * time.Millisecond
				})},
				Profiles: loadProfiles(t), Broker: snmptest.NewCapture(),
			})
			if err != nil {
				t.Fatal(err)
			}
			err = p.PollOnce(context.Background(), "sim")
			if err == nil {
				t.Fatal("the poll worked")
			}
			msg := err.Error()
			if classify(err) != ResultAuth {
				t.Errorf("result %s, want %s: %v", classify(err), ResultAuth, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q: want %s in it", msg, w)
				}
			}
			if tc.not != "" && strings.Contains(msg, tc.not) {
				t.Errorf("error %q: should not send one to check %s", msg, tc.not)
			}
		})
	}
	// The right settings poll: the agent is not silent to everything.
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("sim", addr, func(c *configs.SNMPTarget) {
			c.Version, c.V3 = "3", good
			c.Profiles.Names = []string{"system"}
		})},
		Profiles: loadProfiles(t), Broker: snmptest.NewCapture(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "sim"); err != nil {
		t.Fatalf("with the right settings: %v", err)
	}
}
