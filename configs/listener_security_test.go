package configs

import (
	"strings"
	"testing"
)

func TestKafkaListenerSecurityErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"broker:\n  kafka_tls: {cert_file: /c.pem}\n", "broker.kafka_tls: needs cert_file and key_file"},
		{"broker:\n  kafka_listen: \"off\"\n  kafka_tls: {cert_file: /c.pem, key_file: /k.pem}\n", "broker.kafka_listen: is off"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
