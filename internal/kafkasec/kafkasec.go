// Package kafkasec makes the franz-go options of a client that talks TLS
// and SASL to a Kafka cluster: one place for the Kafka backend, the Kafka
// sink and the client commands, so a mechanism or a TLS setting means the
// same in all three.
package kafkasec

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/tlsconf"
)

// Options are the options of a client with TLS (tc not nil; its files are
// read now) and SASL (sc not nil). Errors name the setting ("tls ca_file
// ...", "sasl: ...").
func Options(tc *tlsconf.Client, sc *configs.SASL) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if tc != nil {
		c, err := tc.Config()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(c))
	}
	if sc != nil {
		var m sasl.Mechanism
		auth := scram.Auth{User: sc.Username, Pass: sc.Password}
		switch sc.Mechanism {
		case "PLAIN":
			m = plain.Auth{User: sc.Username, Pass: sc.Password}.AsMechanism()
		case "SCRAM-SHA-256":
			m = auth.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = auth.AsSha512Mechanism()
		default:
			return nil, fmt.Errorf("sasl: mechanism must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not %q", sc.Mechanism)
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}
