package snmp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
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
