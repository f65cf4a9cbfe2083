package snmp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
)

// TestPollCutOffAtItsIntervalIsNotATimeout: an agent that answers every
// request, but too slowly to walk its table within the interval (a
// 10,000-interface router polled every 30 s), is cut off at the next slot.
// That is weir's interval, not the agent timing out: the status said
// "context deadline exceeded" and the poll counted as a timeout, as a dead
// device would.
func TestPollCutOffAtItsIntervalIsNotATimeout(t *testing.T) {
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		time.Sleep(20 * time.Millisecond)
		return &gosnmp.SnmpPacket{Variables: rowsFrom(from, int(reps))}
	})
	metrics, _ := NewMetrics(nil)
	_, st, err := pollTable(t, addr, func(c *Config) {
		c.Metrics = metrics
		c.Targets[0].Interval = 500 * time.Millisecond
		c.Targets[0].Timeout = 200 * time.Millisecond
	})
	msg := fmt.Sprint(st["error"])
	if err == nil || !strings.Contains(msg, "cut off at the end of its interval") || strings.Contains(msg, "context deadline exceeded") {
		t.Errorf("err %v, status error %q: want the poll said cut off at its interval", err, msg)
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("a", ResultTimeout)); n != 0 {
		t.Errorf("a poll of an agent that answered all along counted as a timeout")
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("a", ResultError)); n != 1 {
		t.Errorf("polls counted error: %v, want 1", n)
	}
}

// TestDeadAgentPolledEveryInterval: a dead agent whose timeout x (retries
// + 1) is the interval, as the config allows (the built-in 5s x 2 at an
// interval of 10 s), is cut off at the next slot a moment after its
// timeouts would have ended the poll, since the poll starts a moment past
// its slot. That slot was skipped as if the poll had overrun: the dead
// agent was polled every other interval, and logged as overrunning. Its
// error said only "context deadline exceeded", which reads as weir's.
func TestDeadAgentPolledEveryInterval(t *testing.T) {
	addr := fakeAgent(t, func(*gosnmp.SnmpPacket) *gosnmp.SnmpPacket { return nil })
	metrics, _ := NewMetrics(nil)
	var logs syncbuf.Buffer
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("dead", addr, func(tc *configs.SNMPTarget) {
			tc.Interval, tc.Timeout, tc.Retries = time.Second, 500*time.Millisecond, 1
			tc.Profiles.Names = []string{"system"}
		})},
		Profiles: loadProfiles(t), Broker: snmptest.NewCapture(), Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5500*time.Millisecond)
	defer cancel()
	p.Run(ctx)
	skipped := testutil.ToFloat64(metrics.Skipped.WithLabelValues("dead"))
	timeouts := testutil.ToFloat64(metrics.Polls.WithLabelValues("dead", ResultTimeout))
	if skipped != 0 || timeouts < 4 || strings.Contains(logs.String(), "overran") ||
		!strings.Contains(logs.String(), "get 1.3.6.1.2.1.1.3.0: no answer by the next slot (timeout 500ms x (retries 1 + 1), interval 1s)") {
		t.Errorf("in 5.5 s at a 1 s interval: %v polls timed out, %v skipped; want 4 or more and none:\n%s", timeouts, skipped, logs.String())
	}
}
