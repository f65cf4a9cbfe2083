package snmp

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// lossyTableAgent is a tableAgent of rows rows that drops every other
// request it gets (the first, the third, ...), as a congested link does,
// counting the requests it dropped.
func lossyTableAgent(t *testing.T, rows int, dropped *atomic.Int64) string {
	return slowLossyTableAgent(t, rows, dropped, 0)
}

// slowLossyTableAgent is a lossyTableAgent that takes delay to answer.
func slowLossyTableAgent(t *testing.T, rows int, dropped *atomic.Int64, delay time.Duration) string {
	var n atomic.Int64
	return fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		if n.Add(1)%2 == 1 {
			dropped.Add(1)
			return nil
		}
		time.Sleep(delay)
		switch req.PDUType {
		case gosnmp.GetRequest:
			return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(1234)}}}
		case gosnmp.GetBulkRequest:
			from := 0
			if rest, ok := strings.CutPrefix(strings.TrimPrefix(req.Variables[0].Name, "."), testColumn+"."); ok {
				from, _ = strconv.Atoi(rest)
			}
			if from >= rows {
				return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
			}
			return &gosnmp.SnmpPacket{Variables: rowsFrom(from, min(int(req.MaxRepetitions), rows-from))}
		}
		return nil
	})
}

// TestRetriesCounted: requests the agent does not answer in time and that
// are sent again are counted per target, so a lossy path shows on
// /metrics while its polls still succeed.
func TestRetriesCounted(t *testing.T) {
	var dropped atomic.Int64
	addr := lossyTableAgent(t, 12, &dropped)
	metrics, _ := NewMetrics(nil)
	rows, st, err := pollTable(t, addr, func(c *Config) {
		c.Metrics = metrics
		c.Targets[0].Interval = time.Minute
		c.Targets[0].Timeout = 100 * time.Millisecond
		c.Targets[0].Retries = 1
	})
	if err != nil || rows != 12 || st["snmp_up"] != float64(1) {
		t.Fatalf("err %v, %d rows (want 12), status %v", err, rows, st)
	}
	if got, want := testutil.ToFloat64(metrics.Retries.WithLabelValues("a")), float64(dropped.Load()); got != want || want == 0 {
		t.Errorf("retries counted %v, want %v (the requests the agent dropped)", got, want)
	}
}

// TestLossyPollCutOffSaysRequestsWereLost: a poll that runs out of its
// interval because half its requests wait their timeout before being
// sent again is not an agent "answering all along" that needs a longer
// interval or a larger max_repetitions: its error says requests were lost.
func TestLossyPollCutOffSaysRequestsWereLost(t *testing.T) {
	var dropped atomic.Int64
	addr := lossyTableAgent(t, 100_000, &dropped)
	metrics, _ := NewMetrics(nil)
	_, st, err := pollTable(t, addr, func(c *Config) {
		c.Metrics = metrics
		c.Targets[0].Interval = time.Second
		c.Targets[0].Timeout = 100 * time.Millisecond
		c.Targets[0].Retries = 1
	})
	msg := fmt.Sprint(st["error"])
	if err == nil || !strings.Contains(msg, "sent again") || strings.Contains(msg, "answering all along") {
		t.Errorf("err %v, status error %q: want it to say requests were sent again", err, msg)
	}
	if testutil.ToFloat64(metrics.Retries.WithLabelValues("a")) == 0 {
		t.Errorf("no retries counted")
	}
}

// TestSlowLossyPollCutOffSaysRequestsWereLost: as above, with answers
// taking 70 ms of the 100 ms timeout. A request and its answered retry
// take 170 ms, so the 1 s deadline falls 150 ms after the last answer,
// while a request waits out its first try: more than the timeout since
// the last answer, but within its tries (timeout x (retries + 1)). The
// poll was said to have had "no answer by the next slot"; it is a lossy
// path cut off, as when the deadline falls sooner after an answer.
func TestSlowLossyPollCutOffSaysRequestsWereLost(t *testing.T) {
	var dropped atomic.Int64
	addr := slowLossyTableAgent(t, 100_000, &dropped, 70*time.Millisecond)
	_, st, err := pollTable(t, addr, func(c *Config) {
		c.Targets[0].Interval = time.Second
		c.Targets[0].Timeout = 100 * time.Millisecond
		c.Targets[0].Retries = 1
	})
	msg := fmt.Sprint(st["error"])
	if err == nil || !strings.Contains(msg, "sent again") {
		t.Errorf("err %v, status error %q: want it to say requests were sent again", err, msg)
	}
}
