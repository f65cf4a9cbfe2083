package trap

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestV3InformsAfterReceiverRestart: a long-running agent (Net-SNMP's
// snmpd with a "trapsess -Ci" v3 inform session) keeps sending its informs
// to weir across a weir restart. snmpd does not rediscover on an
// unauthenticated usmStatsUnknownEngineIDs Report, so with a new engine
// ID at every start every v3 inform after the restart was lost until
// snmpd itself restarted. With the engine kept in StateFile (boots raised)
// snmpd learns the new boots from a signed notInTimeWindow Report and its
// informs go on arriving; without one, the loss is counted.
func TestV3InformsAfterReceiverRestart(t *testing.T) {
	t.Run("engine kept", func(t *testing.T) { testV3InformsAfterRestart(t, filepath.Join(t.TempDir(), "engine.json")) })
	t.Run("no state file", func(t *testing.T) { testV3InformsAfterRestart(t, "") })
}

func testV3InformsAfterRestart(t *testing.T, stateFile string) {
	snmptest.Require(t, "snmpd", "snmpget")
	port := snmptest.FreeUDPPort(t)
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	user := configs.SNMPv3{User: snmptest.V3User, SecurityLevel: "authPriv", AuthProtocol: "SHA256",
		AuthPassword: snmptest.V3AuthPass, PrivProtocol: "AES", PrivPassword: snmptest.V3PrivPass}
	// run starts a receiver on listen (a weir process) until stop is called.
	var logs syncbuf.Buffer
	run := func() (capture *snmptest.Capture, m *Metrics, stop func()) {
		capture = snmptest.NewCapture()
		m, _ = NewMetrics(prometheus.NewRegistry())
		r, err := New(Config{Listen: listen, Users: []configs.SNMPv3{user}, Broker: capture, Metrics: m, StateFile: stateFile,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { r.Run(ctx); close(done) }()
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		defer wcancel()
		if _, err := r.Addr(wctx); err != nil {
			t.Fatal(err)
		}
		return capture, m, func() { cancel(); <-done }
	}
	capture, _, stop := run()

	// snmpd sends a coldStart inform at start and an authenticationFailure
	// inform for each request with a wrong community.
	dir := t.TempDir()
	conf := filepath.Join(dir, "snmpd.conf")
	body := fmt.Sprintf("rocommunity public 127.0.0.1\nauthtrapenable 1\ntrapsess -v3 -Ci -t 1 -r 3 -l authPriv -u %s -a %s -A %s -x %s -X %s %s\n",
		snmptest.V3User, snmptest.V3AuthProto, snmptest.V3AuthPass, snmptest.V3PrivProto, snmptest.V3PrivPass, listen)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	agent := fmt.Sprintf("127.0.0.1:%d", snmptest.FreeUDPPort(t))
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "snmpd", "-f", "-Lo", "-C", "-c", conf, "udp:"+agent)
	cmd.Env = snmptest.Env(dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	if !capture.WaitFor(10*time.Second, func(r []broker.Record) bool { return len(r) >= 1 }) {
		t.Fatal("no coldStart inform from snmpd before the restart")
	}
	authFailure := func() {
		c := exec.Command("snmpget", "-v2c", "-c", "wrong", "-t", "0.5", "-r", "0", agent, "1.3.6.1.2.1.1.3.0")
		c.Env = snmptest.Env(dir)
		c.Run() // times out: a wrong community gets no answer
	}
	authFailure()
	if !capture.WaitFor(10*time.Second, func(r []broker.Record) bool { return len(r) >= 2 }) {
		t.Fatal("no authenticationFailure inform before the restart")
	}

	// weir restarts; snmpd keeps running.
	stop()
	capture, m, stop2 := run()
	defer stop2()
	authFailure()
	if stateFile == "" {
		// A new engine: snmpd's informs are lost, each counted.
		for deadline := time.Now().Add(10 * time.Second); testutil.ToFloat64(m.Received.WithLabelValues("3", OutcomeUnknownEngineID)) == 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("an inform for the engine before the restart was not counted as unknown_engine_id")
			}
		}
		return
	}
	if !capture.WaitFor(10*time.Second, func(r []broker.Record) bool { return len(r) >= 1 }) {
		t.Errorf("v3 inform from a running snmpd lost after weir restarted: unknown_engine_id %v, not_in_time_window %v",
			testutil.ToFloat64(m.Received.WithLabelValues("3", OutcomeUnknownEngineID)),
			testutil.ToFloat64(m.Received.WithLabelValues("3", OutcomeNotInTimeWindow)))
	}
	// The Report that resynchronised it is the protocol at work, not a
	// trap lost: counted, and no warning.
	if testutil.ToFloat64(m.Received.WithLabelValues("3", OutcomeNotInTimeWindow)) == 0 {
		t.Error("the inform answered with weir's clock was not counted")
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings for an inform the sender resent in time:\n%s", logs.String())
	}
}
