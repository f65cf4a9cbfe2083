package main

import (
	"flag"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/kafkasec"
	"github.com/weirnet/weir/internal/tlsconf"
)

// source is where --verify-brokers reads back what was sent: the brokers
// and the options (TLS, SASL) a client needs to reach them.
type source struct {
	seeds []string
	opts  []kgo.Opt
}

// client is a client of s with opts added.
func (s source) client(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append(append([]kgo.Opt{kgo.SeedBrokers(s.seeds...)}, s.opts...), opts...)...)
}

// verifyFlags are the TLS and SASL settings of --verify-brokers, as weir's
// client commands take them (the password from $WEIR_SASL_PASSWORD), so a
// run can be checked against a listener with broker.kafka_tls and
// kafka_sasl.
type verifyFlags struct {
	tlsCA, mechanism, username string
}

func (v *verifyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&v.tlsCA, "verify-tls-ca", "", "with --verify-brokers: PEM CA file of the brokers' certificates (turns TLS on)")
	fs.StringVar(&v.mechanism, "verify-sasl-mechanism", "", "with --verify-brokers: SASL mechanism, PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (password in $WEIR_SASL_PASSWORD)")
	fs.StringVar(&v.username, "verify-sasl-username", "", "with --verify-brokers: SASL user name")
}

// source is brokers (comma separated) with v's settings.
func (v *verifyFlags) source(brokers string) (source, error) {
	var tc *tlsconf.Client
	if v.tlsCA != "" {
		tc = &tlsconf.Client{CAFile: v.tlsCA}
	}
	var sc *configs.SASL
	if v.mechanism != "" || v.username != "" {
		sc = &configs.SASL{Mechanism: v.mechanism, Username: v.username, Password: os.Getenv("WEIR_SASL_PASSWORD")}
	}
	opts, err := kafkasec.Options(tc, sc)
	if err != nil {
		return source{}, err
	}
	return source{seeds: strings.Split(brokers, ","), opts: opts}, nil
}
