package configs

import (
	"reflect"
	"strings"
	"testing"
)

// TestKafkaListenerSecurityParses: kafka_tls and kafka_sasl as the
// README shows them, the password from the environment.
func TestKafkaListenerSecurityParses(t *testing.T) {
	t.Setenv("WEIR_TEST_DASH_PASSWORD", "s3cret")
	cfg, err := Parse([]byte(`
broker:
  kafka_listen: 0.0.0.0:9092
  kafka_tls: {cert_file: /etc/weir/kafka.pem, key_file: /etc/weir/kafka.key, client_ca_file: /etc/weir/clients.pem}
  kafka_sasl:
    mechanisms: [SCRAM-SHA-512, PLAIN]
    users:
      - {name: dashboards, password: "${WEIR_TEST_DASH_PASSWORD}", read_only: true, topics: [events, "enriched.*"], groups: ["grafana-*"]}
      - {name: admin, password: "${WEIR_TEST_ADMIN_PASSWORD:-adm}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Broker
	if b.KafkaTLS == nil || *b.KafkaTLS != (ListenerTLS{CertFile: "/etc/weir/kafka.pem", KeyFile: "/etc/weir/kafka.key", ClientCAFile: "/etc/weir/clients.pem"}) {
		t.Errorf("kafka_tls: %+v", b.KafkaTLS)
	}
	s := b.KafkaSASL
	if s == nil || strings.Join(s.Mechanisms, ",") != "SCRAM-SHA-512,PLAIN" || len(s.Users) != 2 {
		t.Fatalf("kafka_sasl: %+v", s)
	}
	if u := s.Users[0]; !reflect.DeepEqual(u, KafkaUser{Name: "dashboards", Password: "s3cret", ReadOnly: true, Topics: []string{"events", "enriched.*"}, Groups: []string{"grafana-*"}}) {
		t.Errorf("users[0]: %+v", u)
	}
	if u := s.Users[1]; !reflect.DeepEqual(u, KafkaUser{Name: "admin", Password: "adm"}) {
		t.Errorf("users[1]: %+v", u)
	}
	if w := cfg.SecurityWarnings(); len(w) != 0 {
		t.Errorf("warnings for a listener with TLS and SASL: %q", w)
	}
}

func TestKafkaListenerSecurityErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"broker:\n  kafka_tls: {cert_file: /c.pem}\n", "broker.kafka_tls: needs cert_file and key_file"},
		{"broker:\n  kafka_listen: \"off\"\n  kafka_tls: {cert_file: /c.pem, key_file: /k.pem}\n", "broker.kafka_listen: is off"},
		{"broker:\n  kafka: {brokers: [\"k:9092\"]}\n  kafka_sasl: {mechanisms: [PLAIN], users: [{name: u, password: p}]}\n", "does not run with broker.kafka"},
		{"broker:\n  kafka_sasl: {users: [{name: u, password: p}]}\n", "broker.kafka_sasl.mechanisms: is required"},
		{"broker:\n  kafka_sasl: {mechanisms: [SCRAM-SHA-1], users: [{name: u, password: p}]}\n", `broker.kafka_sasl.mechanisms[0]: must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not "SCRAM-SHA-1"`},
		{"broker:\n  kafka_sasl: {mechanisms: [PLAIN, PLAIN], users: [{name: u, password: p}]}\n", "broker.kafka_sasl.mechanisms[1]: PLAIN is listed twice"},
		{"broker:\n  kafka_sasl: {mechanisms: [PLAIN]}\n", "broker.kafka_sasl.users: is required"},
		{"broker:\n  kafka_sasl: {mechanisms: [PLAIN], users: [{name: u, password: p}, {name: u, password: q}]}\n", `broker.kafka_sasl.users[1].name: "u" is listed twice`},
		{"broker:\n  kafka_sasl: {mechanisms: [PLAIN], users: [{password: p}]}\n", "broker.kafka_sasl.users[0].name: is required"},
		{"broker:\n  kafka_sasl: {mechanisms: [PLAIN], users: [{name: u, password: \"${WEIR_TEST_UNSET_PW:-}\"}]}\n", "broker.kafka_sasl.users[0].password: is required"},
		{"broker:\n  kafka_sasl: {mechanisms: [PLAIN], users: [{name: u, pasword: p}]}\n", "pasword"},
		{"broker:\n  kafka_sasl: {mechanisms: [PLAIN], users: [{name: u, password: p, topics: [\"raw.*.x\"]}]}\n", `broker.kafka_sasl.users[0].topics[0]: "raw.*.x" must be a name, or a prefix ending in *`},
		{"broker:\n  kafka_sasl: {mechanisms: [PLAIN], users: [{name: u, password: p, groups: [\"\"]}]}\n", `broker.kafka_sasl.users[0].groups[0]: "" must be a name`},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// TestKafkaListenerWarnings: PLAIN without TLS, and a listener other
// hosts reach without SASL, are warned of; loopback without SASL is not.
func TestKafkaListenerWarnings(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"broker:\n  kafka_listen: 127.0.0.1:9092\n", ""},
		{"broker:\n  kafka_listen: localhost:9092\n", ""},
		{"broker:\n  kafka_listen: \"[::1]:9092\"\n", ""},
		{"broker:\n  kafka_listen: \"off\"\n", ""},
		{"broker:\n  kafka_listen: 0.0.0.0:9092\n", "broker.kafka_listen 0.0.0.0:9092 is reachable from other hosts without authentication"},
		{"broker:\n  kafka_listen: \":9092\"\n", "reachable from other hosts without authentication"},
		{"broker:\n  kafka_listen: 0.0.0.0:9092\n  kafka_tls: {cert_file: /c, key_file: /k}\n", "reachable from other hosts without authentication"},
		// Mutual TLS authenticates the clients: only those with a
		// certificate the CA signed get to send a request.
		{"broker:\n  kafka_listen: 0.0.0.0:9092\n  kafka_tls: {cert_file: /c, key_file: /k, client_ca_file: /ca}\n", ""},
		{"broker:\n  kafka_listen: 0.0.0.0:9092\n  kafka_sasl: {mechanisms: [SCRAM-SHA-256, PLAIN], users: [{name: u, password: p}]}\n",
			"broker.kafka_sasl: mechanism PLAIN without broker.kafka_tls: Kafka clients send their password in the clear"},
		{"broker:\n  kafka_listen: 0.0.0.0:9092\n  kafka_sasl: {mechanisms: [SCRAM-SHA-256], users: [{name: u, password: p}]}\n", ""},
		{"broker:\n  kafka_listen: 0.0.0.0:9092\n  kafka_tls: {cert_file: /c, key_file: /k}\n  kafka_sasl: {mechanisms: [PLAIN], users: [{name: u, password: p}]}\n", ""},
	} {
		cfg, err := Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		got := strings.Join(cfg.SecurityWarnings(), "\n")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: warnings %q, want %q", tc.yaml, got, tc.want)
		}
	}
}
