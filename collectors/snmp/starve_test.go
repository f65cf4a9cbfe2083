package snmp

import (
	"context"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestStarvedHealthyAgentNotReportedDown: a healthy agent whose poll
// waited for a concurrency slot (held by polls of dead agents) until
// shortly before its next slot would get what is left of its interval, be
// cut off there and be reported as the device timing out (snmp_up 0,
// result "timeout"), though the agent answers every request in 80 ms.
// The README promises that "a slow or dead agent costs only its own
// goroutine"; a poll weir would start too late to finish is weir's fault:
// it is skipped, not published as a dead device.
func TestStarvedHealthyAgentNotReportedDown(t *testing.T) {
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	})
	// Every answer takes 80 ms (a healthy, busy router).
	slow := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		time.Sleep(80 * time.Millisecond)
		return forward(t, addr, req)
	})
	capture := snmptest.NewCapture()
	metrics, _ := NewMetrics(nil)
	interval := 2 * time.Second
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("healthy", slow, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
			tc.Interval, tc.Timeout = interval, 500*time.Millisecond
		})},
		Profiles: oneColumnProfile(t), Broker: capture, Metrics: metrics, MaxConcurrency: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	first := firstSlot(time.Now(), interval, Offset("healthy", interval))
	if time.Until(first) < interval/2 {
		time.Sleep(time.Until(first) + 10*time.Millisecond)
		first = first.Add(interval)
	}
	// Polls of dead agents hold the only slot until 100 ms before the
	// next slot.
	p.sem <- struct{}{}
	time.AfterFunc(time.Until(first.Add(interval-100*time.Millisecond)), func() { <-p.sem })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	time.Sleep(time.Until(first.Add(2*interval + interval/2)))
	cancel()
	<-done
	for _, s := range statuses(t, capture.Records(), "healthy") {
		if s.Fields["snmp_up"] != float64(1) {
			t.Errorf("healthy agent reported down at %v: %v", s.Time.Format("15:04:05.000"), s.Fields["error"])
		}
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("healthy", ResultTimeout)); n > 0 {
		t.Errorf("weir_snmp_polls_total{result=timeout} = %v for an agent that never timed out", n)
	}
}

// forward relays a v2c request to addr and returns its answer.
func forward(t *testing.T, addr string, req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
	host, port := splitHostPort(addr)
	g := &gosnmp.GoSNMP{Target: host, Port: port, Version: gosnmp.Version2c, Community: "public", Timeout: time.Second}
	if err := g.Connect(); err != nil {
		return nil
	}
	defer g.Conn.Close()
	var names []string
	for _, v := range req.Variables {
		names = append(names, v.Name)
	}
	var resp *gosnmp.SnmpPacket
	var err error
	switch req.PDUType {
	case gosnmp.GetBulkRequest:
		resp, err = g.GetBulk(names, req.NonRepeaters, req.MaxRepetitions)
	default:
		resp, err = g.Get(names)
	}
	if err != nil {
		return nil
	}
	resp.RequestID = req.RequestID
	return resp
}

func splitHostPort(addr string) (string, uint16) {
	tc := testTarget("x", addr, nil)
	return tc.Host, tc.Port
}
