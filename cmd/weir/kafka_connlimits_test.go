package main

import (
	"net/netip"
	"testing"

	"github.com/weirnet/weir/configs"
)

// TestKafkaConnLimitsConfig: broker.max_connections_per_ip defaults to a
// quarter of max_connections, whatever that is, so one address never holds
// every slot; overrides reach the listener by address, an IPv4-mapped
// IPv6 one as its IPv4 address.
func TestKafkaConnLimitsConfig(t *testing.T) {
	for _, tc := range []struct {
		yaml            string
		maxConns, perIP int
		overrides       map[netip.Addr]int
	}{
		{"broker: {}\n", 4096, 1024, nil},
		{"broker: {max_connections: 100}\n", 100, 25, nil},
		{"broker: {max_connections: 2}\n", 2, 1, nil},
		{"broker: {max_connections: 100, max_connections_per_ip: 100}\n", 100, 100, nil},
		{"broker:\n  max_connections_per_ip: 10\n  max_connections_per_ip_overrides: {\"10.0.0.5\": 2000, \"::ffff:10.0.0.6\": 3, \"2001:db8::1\": 4}\n",
			4096, 10, map[netip.Addr]int{
				netip.MustParseAddr("10.0.0.5"):    2000,
				netip.MustParseAddr("10.0.0.6"):    3,
				netip.MustParseAddr("2001:db8::1"): 4,
			}},
	} {
		cfg, err := configs.Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		maxConns, perIP, overrides := kafkaConnLimits(&cfg.Broker)
		if maxConns != tc.maxConns || perIP != tc.perIP || len(overrides) != len(tc.overrides) {
			t.Errorf("%q: %d, %d, %v; want %d, %d, %v", tc.yaml, maxConns, perIP, overrides, tc.maxConns, tc.perIP, tc.overrides)
			continue
		}
		for a, v := range tc.overrides {
			if overrides[a] != v {
				t.Errorf("%q: override %s: %d, want %d", tc.yaml, a, overrides[a], v)
			}
		}
	}
}
