package syslog

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/configs"
)

// TestNewTwiceOnOneRegistry: a second collector built with the registry
// the first registered on (a part rebuilt in-process, as the SNMP poller
// and the gNMI collector are at a reload) shares the first one's series
// instead of panicking on the duplicate registration.
func TestNewTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := configs.Syslog{Listeners: []configs.SyslogListener{{Protocol: "udp", Address: "127.0.0.1:0"}}}
	var cs []*Collector
	for range 2 {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("New panicked: %v", p)
				}
			}()
			c, err := New(cfg, nil, WithRegisterer(reg))
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}()
	}
	cs[1].metrics.forListener("udp://x").parseFailures.Inc()
	if got := testutil.ToFloat64(cs[0].metrics.parseFailures.WithLabelValues("udp://x")); got != 1 {
		t.Fatalf("first collector's parse failures = %v, want the second's 1", got)
	}
}
