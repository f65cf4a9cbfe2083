package configs

import (
	"cmp"
	"strings"
	"testing"
	"time"
)

// TestPrometheusStalenessCoversUpdateIntervals: a prometheus sink drops a
// series not updated for staleness; with SNMP polled every 10m (or a gNMI
// heartbeat of 15m) the default 5m would drop every series for part of
// each interval. The default grows to twice the longest interval, and a
// staleness set shorter than it is refused.
func TestPrometheusStalenessCoversUpdateIntervals(t *testing.T) {
	const sink = `
sinks:
  - {type: prometheus, name: prom, listen: "127.0.0.1:9273", topics: [enriched.metrics]%s}
`
	snmp := func(interval string) string {
		return `
snmp:
  defaults: {version: 2c, community: public, interval: ` + interval + `, profiles: [if-mib]}
  targets:
    - {name: leaf1, address: "127.0.0.1:16100"}
  traps: {listen: "off"}
`
	}
	for _, tc := range []struct {
		name, cfg string
		want      time.Duration
		err       string
	}{
		{"no collectors", sink, 5 * time.Minute, ""},
		{"SNMP every 60s", snmp("60s") + sink, 5 * time.Minute, ""},
		{"SNMP every 10m", snmp("10m") + sink, 20 * time.Minute, ""},
		{"gNMI heartbeat 15m", `
gnmi:
  targets:
    - name: spine1
      address: "127.0.0.1:57400"
      insecure: true
      subscriptions:
        - {path: /interfaces/interface/state/oper-status, stream_mode: on_change, heartbeat_interval: 15m}
` + sink, 30 * time.Minute, ""},
		{"set and long enough", snmp("10m") + strings.Replace(sink, "%s", ", staleness: 11m", 1), 11 * time.Minute, ""},
		{"set too short", snmp("10m") + strings.Replace(sink, "%s", ", staleness: 5m", 1), 0, "sinks[0].staleness: 5m0s is not longer than the SNMP interval of target leaf1 (10m0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkStaleness(t, strings.Replace(tc.cfg, "%s", "", 1), tc.want, tc.err) })
	}
}

// TestRemoteWriteStalenessAndMaxSeries: a prometheus_remote_write sink
// takes staleness and max_series (how long and how many series it
// remembers, to end those a gNMI delete covers), with the prometheus
// sink's defaults and checks.
func TestRemoteWriteStalenessAndMaxSeries(t *testing.T) {
	const snmp = `
snmp:
  defaults: {version: 2c, community: public, interval: 10m, profiles: [if-mib]}
  targets:
    - {name: leaf1, address: "127.0.0.1:16100"}
  traps: {listen: "off"}
sinks:
  - {type: prometheus_remote_write, name: rw, url: "http://127.0.0.1:9090/api/v1/write", topics: [enriched.metrics]%s}
`
	for _, tc := range []struct {
		name, extra string
		want        time.Duration
		err         string
	}{
		{"default", "", 20 * time.Minute, ""},
		{"set", ", staleness: 11m, max_series: 10", 11 * time.Minute, ""},
		{"too short", ", staleness: 5m", 0, "sinks[0].staleness: 5m0s is not longer than the SNMP interval of target leaf1"},
		{"negative", ", max_series: -1", 0, "max_series: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkStaleness(t, strings.Replace(snmp, "%s", tc.extra, 1), tc.want, tc.err) })
	}
}

// checkStaleness parses cfg and checks its first sink's staleness (set, or
// the default) is want, or, with errWant, that the error holds it.
func checkStaleness(t *testing.T, cfg string, want time.Duration, errWant string) {
	t.Helper()
	c, err := Parse([]byte(cfg))
	if errWant != "" {
		if err == nil || !strings.Contains(err.Error(), errWant) {
			t.Fatalf("err %v, want %q", err, errWant)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := cmp.Or(c.Sinks[0].Staleness, c.Sinks[0].DefaultStaleness).Std(); got != want {
		t.Fatalf("staleness %v, want %v", got, want)
	}
}
