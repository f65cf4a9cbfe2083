package snmp

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// restartableSnmpd starts snmpd on addr with state in dir and extra config
// lines; the returned func stops it (SIGTERM, so it saves its state).
func restartableSnmpd(t *testing.T, dir, addr, extra string) func() {
	t.Helper()
	snmptest.Require(t, "snmpd", "snmpget")
	conf := filepath.Join(dir, "agent-conf.txt") // not snmpd.conf: that is the persistent state file
	body := fmt.Sprintf("rocommunity public 127.0.0.1\ncreateUser %s %s %s %s %s\nrouser %s authpriv\n%s\n",
		snmptest.V3User, snmptest.V3AuthProto, snmptest.V3AuthPass, snmptest.V3PrivProto, snmptest.V3PrivPass, snmptest.V3User, extra)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("snmpd", "-f", "-Lo", "-C", "-c", conf, "udp:"+addr)
	cmd.Env = snmptest.Env(dir)
	out, _ := os.Create(filepath.Join(dir, "snmpd.log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	for i := 0; ; i++ {
		c := exec.Command("snmpget", "-v2c", "-c", "public", "-On", "-t", "0.3", "-r", "0", addr, "1.3.6.1.2.1.1.5.0")
		c.Env = snmptest.Env(dir)
		if c.Run() == nil {
			break
		}
		if i > 50 {
			t.Fatal("snmpd did not start")
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(os.Interrupt)
		<-done
		out.Close()
	}
	t.Cleanup(stop)
	return stop
}

// TestV3AgentRestartedPollsOn: an agent restarted (engine boots up) or
// replaced (a new engine ID: a device swapped, an snmpd that keeps no
// state, as in a container) answers the session weir kept with an
// unauthenticated report, which gosnmp discards as not authentic. The
// poll right after goes on with a fresh session, and is not reported as a
// wrong auth password.
func TestV3AgentRestartedPollsOn(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sameDir     bool
		extra1, ex2 string
	}{
		{"new-engine-id", false, "engineID weirfirst", "engineID weirsecond"},
		{"reboot-same-engine", true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := snmptest.FreeUDPPort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			dir1 := t.TempDir()
			dir2 := dir1
			if !tc.sameDir {
				dir2 = t.TempDir()
			}
			stop := restartableSnmpd(t, dir1, addr, tc.extra1)
			capture := snmptest.NewCapture()
			p, err := New(Config{
				Targets: []configs.SNMPTarget{testTarget("r1", addr, func(c *configs.SNMPTarget) {
					v3(snmptest.V3User, snmptest.V3AuthPass, snmptest.V3PrivPass)(c)
					c.Profiles.Names = []string{"system"}
					c.Timeout, c.Retries = time.Second, 1 // the built-in default retries
				})},
				Profiles: loadProfiles(t), Broker: capture,
			})
			if err != nil {
				t.Fatal(err)
			}
			tgt := p.targets[0]
			defer tgt.close()
			if err := tgt.pollAndPublish(context.Background(), time.Now().Add(20*time.Second), nil); err != nil {
				t.Fatalf("first poll: %v", err)
			}
			stop()
			restartableSnmpd(t, dir2, addr, tc.ex2)
			st, _ := os.ReadFile(filepath.Join(dir2, "snmpd.conf"))
			for _, l := range strings.Split(string(st), "\n") {
				if strings.HasPrefix(l, "engineBoots") || strings.HasPrefix(l, "oldEngineID") {
					t.Log("agent state:", l)
				}
			}
			if os.Getenv("WEIR_TEST_DEBUG") != "" && tgt.sess != nil {
				tgt.sess.Logger = gosnmp.NewLogger(log.New(os.Stderr, "gosnmp ", 0))
			}
			err = tgt.pollAndPublish(context.Background(), time.Now().Add(20*time.Second), nil)
			if err2 := tgt.pollAndPublish(context.Background(), time.Now().Add(20*time.Second), nil); err2 != nil {
				t.Errorf("and the poll after that failed too: %v", err2)
			}
			if err != nil {
				msg := err.Error()
				t.Errorf("poll after the agent restarted failed (result %s): %v", classify(err), err)
				if strings.Contains(msg, "auth_password") {
					t.Errorf("and it is diagnosed as a wrong auth password, which it is not")
				}
			}
		})
	}
}
