package configs

import (
	"strings"
	"testing"
)

// TestSecurityWarnings: turning certificate checks off, or sending a
// password in the clear, is named once per place; verified TLS is not.
func TestSecurityWarnings(t *testing.T) {
	cfg, err := Parse([]byte(`
broker:
  kafka:
    brokers: [k:9093]
    tls: {insecure_skip_verify: true}
    sasl: {mechanism: PLAIN, username: u, password: p}
sinks:
  - {type: kafka, name: k1, brokers: ["s:9092"], topics: [events], sasl: {mechanism: PLAIN, username: u, password: p}}
  - {type: kafka, name: k2, brokers: ["s:9093"], topics: [events], tls: {enabled: true}, sasl: {mechanism: PLAIN, username: u, password: p}}
  - {type: kafka, name: k3, brokers: ["s:9092"], topics: [events], sasl: {mechanism: SCRAM-SHA-512, username: u, password: p}}
  - {type: webhook, name: w1, url: "https://h/x", topics: [events], tls: {insecure_skip_verify: true}}
  - {type: webhook, name: w2, url: "https://h/x", topics: [events], tls: {ca_file: /ca.pem}}
  - {type: influxdb, name: i1, url: "http://h:8086", bucket: b, org: o, token: t, topics: [enriched.metrics]}
  - {type: influxdb, name: i2, url: "http://h:8086", database: d, topics: [enriched.metrics]}
  - {type: webhook, name: w3, url: "http://h/x", topics: [events], headers: {Authorization: "Bearer x"}}
  - {type: prometheus_remote_write, name: r1, url: "https://h/api/v1/push", topics: [enriched.metrics], headers: {Authorization: "Bearer x"}}
gnmi:
  targets:
    - {name: g1, address: "h:1", insecure: true, username: u, password: p, subscriptions: [{path: /a}]}
    - {name: g2, address: "h:1", tls: {skip_verify: true}, username: u, password: p, subscriptions: [{path: /a}]}
    - {name: g3, address: "h:1", username: u, password: p, subscriptions: [{path: /a}]}
    - {name: g4, address: "h:1", insecure: true, subscriptions: [{path: /a}]}
    - {name: g5, address: "h:1", tls: {insecure_skip_verify: true}, subscriptions: [{path: /a}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cfg.SecurityWarnings(), "\n")
	for _, want := range []string{
		"broker.kafka: tls.insecure_skip_verify: the brokers' certificates are not checked",
		`sink "k1": sasl mechanism PLAIN without tls sends the password in the clear`,
		`sink "w1": tls.insecure_skip_verify: the server's certificate is not checked`,
		`gnmi target "g1": insecure: true sends the password in the clear`,
		`gnmi target "g2": tls.insecure_skip_verify: the target's certificate is not checked`,
		`sink "i1": an http:// url sends the token in the clear`,
		`sink "w3": an http:// url sends the Authorization header in the clear`,
		`gnmi target "g5": tls.insecure_skip_verify: the target's certificate is not checked`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if n := len(cfg.SecurityWarnings()); n != 8 {
		t.Errorf("%d warnings, want 8:\n%s", n, got)
	}
}
