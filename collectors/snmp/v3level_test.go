package snmp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestV3UserWithoutPrivacyNotAWrongDigest: a user the agent knows with
// authentication only (`createUser U SHA-256 PASS`, as a device's
// `snmp-server user U group v3 auth sha PASS`), polled at authPriv, is
// refused with an unauthenticated report (usmStatsUnsupportedSecLevels)
// that gosnmp discards as not authentic. Its auth settings are right:
// the error must say the user has no privacy on the agent, not send the
// operator to check an auth password that works.
func TestV3UserWithoutPrivacyNotAWrongDigest(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", snmptest.FreeUDPPort(t))
	restartableSnmpd(t, t.TempDir(), addr, fmt.Sprintf("createUser authonly SHA-256 %s\nrouser authonly auth", snmptest.V3AuthPass))
	poll := func(name, user, authPass string) error {
		p, err := New(Config{
			Targets: []configs.SNMPTarget{testTarget(name, addr, func(c *configs.SNMPTarget) {
				v3(user, authPass, snmptest.V3PrivPass)(c)
				c.Profiles.Names = []string{"system"}
			})},
			Profiles: loadProfiles(t), Broker: snmptest.NewCapture(),
		})
		if err != nil {
			t.Fatal(err)
		}
		tgt := p.targets[0]
		defer tgt.close()
		return tgt.pollAndPublish(context.Background(), time.Now().Add(20*time.Second), nil)
	}

	err := poll("nopriv", "authonly", snmptest.V3AuthPass)
	if err == nil {
		t.Fatal("an authPriv poll of a user without privacy worked")
	}
	if msg := err.Error(); strings.Contains(msg, "auth_password") || !strings.Contains(msg, "authNoPriv") {
		t.Errorf("error %q: want it to say the user is answered at authNoPriv, not to check the auth password", msg)
	}
	if got := classify(err); got != ResultAuth {
		t.Errorf("counted as %s, want %s", got, ResultAuth)
	}

	// The same user with a wrong auth password is still a wrong digest.
	err = poll("nopriv-badauth", "authonly", "wrongpass123")
	if err == nil || !strings.Contains(err.Error(), "wrong digest: check auth_password") {
		t.Errorf("wrong auth password of a user without privacy: %v", err)
	}
}

// TestV3LevelBelowTheAgentsAccessIsAnAuthError: a user the agent lets
// read at authPriv only (`rouser weir authpriv`), polled at authNoPriv,
// is answered with error-status authorizationError. That is the agent's
// access control refusing weir's credentials: counted auth_error, as
// the other credential mistakes are, with what to check.
func TestV3LevelBelowTheAgentsAccessIsAnAuthError(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("lowlevel", agent.Addr, func(c *configs.SNMPTarget) {
			v3(snmptest.V3User, snmptest.V3AuthPass, "")(c)
			c.V3.SecurityLevel, c.V3.PrivProtocol = "authNoPriv", ""
			c.Profiles.Names = []string{"system"}
		})},
		Profiles: loadProfiles(t), Broker: snmptest.NewCapture(),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = p.PollOnce(context.Background(), "lowlevel")
	if err == nil {
		t.Fatal("an authNoPriv poll of an authpriv-only user worked")
	}
	if got := classify(err); got != ResultAuth {
		t.Errorf("counted as %s, want %s: %v", got, ResultAuth, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "security_level") {
		t.Errorf("error %q: want it to name the security level to check", msg)
	}
}

// TestV3UnknownContextDiagnosed: Net-SNMP drops a request for a context
// it does not have without a word, so a context_name the agent does not
// know (a VRF misspelt, or one on another device) looked like a dead
// agent. The same user answered without the context says what is wrong.
func TestV3UnknownContextDiagnosed(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	for _, level := range []string{"authPriv", "authNoPriv"} {
		t.Run(level, func(t *testing.T) {
			p, err := New(Config{
				Targets: []configs.SNMPTarget{testTarget("ctx", agent.Addr, func(c *configs.SNMPTarget) {
					v3(snmptest.V3User, snmptest.V3AuthPass, snmptest.V3PrivPass)(c)
					c.V3.SecurityLevel, c.V3.ContextName = level, "vrf-nosuch"
					c.Profiles.Names = []string{"system"}
					c.Timeout = 500 * time.Millisecond
				})},
				Profiles: loadProfiles(t), Broker: snmptest.NewCapture(),
			})
			if err != nil {
				t.Fatal(err)
			}
			err = p.PollOnce(context.Background(), "ctx")
			if err == nil {
				t.Fatal("a poll in a context the agent does not have worked")
			}
			if msg := err.Error(); !strings.Contains(msg, `context_name`) || strings.Contains(msg, "priv_password") {
				t.Errorf("error %q: want it to name the context, not the priv password", msg)
			}
		})
	}
}
