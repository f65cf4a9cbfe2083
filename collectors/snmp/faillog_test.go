package snmp

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestDeadTargetLoggedSparingly: a target that keeps failing is logged
// when it starts failing, when the way it fails changes, and then every
// failLogEvery, not at every poll (1,000 dead targets polled every minute
// were 1.4 million lines a day).
func TestDeadTargetLoggedSparingly(t *testing.T) {
	var buf syncbuf.Buffer
	tg := &target{log: slog.New(slog.NewTextHandler(&buf, nil))}
	t0 := time.Now()
	timeout := errors.New("request timeout")
	for i := range 30 { // 30 polls 5 s apart: 2.5 minutes
		tg.logFailure(ResultTimeout, time.Second, timeout, t0.Add(time.Duration(i)*5*time.Second))
	}
	tg.logFailure("auth_failure", time.Second, errors.New("wrong digest"), t0.Add(151*time.Second))
	tg.logFailure("auth_failure", time.Second, errors.New("wrong digest"), t0.Add(156*time.Second))
	tg.logFailure("auth_failure", time.Second, errors.New("wrong digest"), t0.Add(151*time.Second+failLogEvery))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "snmp poll failed") || !strings.Contains(lines[1], "result=auth_failure") ||
		!strings.Contains(lines[2], "still failing") || !strings.Contains(lines[2], "failed_polls=33") {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
}

// TestOverrunLoggedSparingly: a target whose polls keep running into the
// next slot, every other poll or every one, is logged when it starts and
// then at most every failLogEvery with the count since the last line.
func TestOverrunLoggedSparingly(t *testing.T) {
	var buf syncbuf.Buffer
	tg := &target{log: slog.New(slog.NewTextHandler(&buf, nil))}
	t0 := time.Now()
	for i := range 30 { // every other poll of 10 s overruns: 10 minutes less 40 s
		tg.logOverrun(10*time.Second, 1, t0.Add(time.Duration(i)*20*time.Second))
	}
	tg.logOverrun(10*time.Second, 2, t0.Add(failLogEvery))
	tg.logOverrun(10*time.Second, 1, t0.Add(failLogEvery+30*time.Second))
	tg.logOverrun(10*time.Second, 1, t0.Add(3*failLogEvery)) // a while later: the one since
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "snmp poll overran its interval") ||
		!strings.Contains(lines[1], "still overrunning") || !strings.Contains(lines[1], "overran_polls=30") || !strings.Contains(lines[1], "skipped=31") ||
		!strings.Contains(lines[2], "still overrunning") || !strings.Contains(lines[2], "overran_polls=2") {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
}

// TestAlternatingFailureLoggedOnce: a slow agent that fails by turns in two
// ways (a timeout, then a poll cut off at its interval) is logged once for
// each way, not at every turn.
func TestAlternatingFailureLoggedOnce(t *testing.T) {
	var buf syncbuf.Buffer
	tg := &target{log: slog.New(slog.NewTextHandler(&buf, nil))}
	t0 := time.Now()
	for i := range 20 {
		result, err := ResultTimeout, errors.New("request timeout")
		if i%2 == 1 {
			result, err = ResultError, errors.New("poll cut off at the end of its interval")
		}
		tg.logFailure(result, time.Second, err, t0.Add(time.Duration(i)*20*time.Second))
	}
	if n := strings.Count(buf.String(), "snmp poll failed"); n != 2 {
		t.Fatalf("%d lines logged, want 2:\n%s", n, buf.String())
	}
}

// downBroker fails every produce while down is set (a full disk, a
// cluster away), as it does for every target at once.
type downBroker struct {
	*snmptest.Capture
	down atomic.Bool
}

func (b *downBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if b.down.Load() {
		return errors.New("injected: no space left on device")
	}
	return b.Capture.Produce(ctx, topic, recs)
}

// TestBrokerOutageLoggedSparingly: a broker that cannot take the records
// fails every target's every publish; each was logged, a line per target
// and poll (1,000 targets at 60 s: 17 lines a second for the outage),
// where a dead agent is logged when it starts failing, then every
// failLogEvery, and when it is back.
func TestBrokerOutageLoggedSparingly(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	})
	b := &downBroker{Capture: snmptest.NewCapture()}
	b.down.Store(true)
	var logs syncbuf.Buffer
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("t", addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
			tc.Interval, tc.Timeout = 300*time.Millisecond, 100*time.Millisecond
		})},
		Profiles: oneColumnProfile(t), Broker: b, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	time.Sleep(1600 * time.Millisecond) // five polls or so, all refused
	b.down.Store(false)
	ok := b.WaitFor(5*time.Second, func(recs []broker.Record) bool { return countStatus(recs, "t") >= 1 })
	time.Sleep(100 * time.Millisecond) // the log line after the publish
	cancel()
	<-done
	out := logs.String()
	if failed := strings.Count(out, "snmp publish failed"); !ok || failed != 1 || !strings.Contains(out, "snmp publishes work again") {
		t.Errorf("broker down for 1.6 s at a 300ms interval, then back (published: %v): %d lines say failed, want 1, and one that it works again:\n%s", ok, failed, out)
	}
}

// TestBrokerOutageLoggedForAllTargets: a broker that cannot take records
// fails every target's publishes at once. Each target logged it, and its
// recovery, on its own: 1,000 targets gave 1,000 lines when the broker
// went away and 1,000 when it came back (and as many every failLogEvery
// between). The poller logs the outage once for all, with how many
// targets it holds up, and its end once.
func TestBrokerOutageLoggedForAllTargets(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	})
	names := []string{"a", "b", "c"}
	b, metrics, logs, eventually := outage(t, map[string]string{"a": addr, "b": addr, "c": addr})
	eventually("two failed publishes of every target", func() bool {
		for _, n := range names {
			if testutil.ToFloat64(metrics.Polls.WithLabelValues(n, ResultPublishError)) < 2 {
				return false
			}
		}
		return true
	})
	b.down.Store(false)
	eventually("line saying publishing works again", func() bool { return strings.Contains(logs.String(), "snmp publishes work again") })
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, "publish") && strings.Contains(line, "target=") {
			t.Errorf("a target's own line about the outage: %s", line)
		}
		if strings.Contains(line, "succeeded again") {
			t.Errorf("a target's own line about the end of the outage: %s", line)
		}
	}
	if !strings.Contains(logs.String(), "snmp publish failed") || !regexp.MustCompile(`publishes work again.* targets=3`).MatchString(logs.String()) {
		t.Errorf("no line of the outage, and of its end naming the 3 targets it held up:\n%s", logs.String())
	}
}

// TestBrokerOutageEndsWithAFailingAgent: a target whose agent stops
// answering during a broker outage still publishes its status records
// once the broker is back; the outage's end was never logged (nor a later
// outage's start), as that target's publishes went unnoted while its polls
// failed and it stayed among the failing.
func TestBrokerOutageEndsWithAFailingAgent(t *testing.T) {
	var silent atomic.Bool
	answering := func(from int, _ uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	}
	fine := tableAgent(t, answering)
	answer := tableHandler(answering)
	dying := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		if silent.Load() {
			return nil
		}
		return answer(req)
	})
	b, metrics, logs, eventually := outage(t, map[string]string{"fine": fine, "dying": dying})
	eventually("failed publish of each target", func() bool {
		return testutil.ToFloat64(metrics.Polls.WithLabelValues("fine", ResultPublishError)) >= 1 &&
			testutil.ToFloat64(metrics.Polls.WithLabelValues("dying", ResultPublishError)) >= 1
	})
	silent.Store(true)
	eventually("timed-out poll of the silent agent", func() bool {
		return testutil.ToFloat64(metrics.Polls.WithLabelValues("dying", ResultTimeout)) >= 1
	})
	b.down.Store(false)
	eventually("line saying publishing works again", func() bool { return strings.Contains(logs.String(), "snmp publishes work again") })
}

// outage runs a poller of the targets (name: agent address) at 300ms on
// a broker that is down until the test sets b.down false; eventually
// waits for a condition, failing with the poller's log.
func outage(t *testing.T, agents map[string]string) (b *downBroker, metrics *Metrics, logs *syncbuf.Buffer, eventually func(what string, cond func() bool)) {
	t.Helper()
	b = &downBroker{Capture: snmptest.NewCapture()}
	b.down.Store(true)
	logs = &syncbuf.Buffer{}
	metrics, _ = NewMetrics(nil)
	var targets []configs.SNMPTarget
	for name, addr := range agents {
		targets = append(targets, testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
			tc.Interval, tc.Timeout = 300*time.Millisecond, 100*time.Millisecond
		}))
	}
	p, err := New(Config{Targets: targets, Profiles: oneColumnProfile(t), Broker: b, Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually = func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s:\n%s", what, logs.String())
			}
		}
	}
	return b, metrics, logs, eventually
}
