package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/kafkadial"
	"github.com/weirnet/weir/internal/kafkasec"
	"github.com/weirnet/weir/internal/tlsconf"
)

// clientFlags are the flags every Kafka client command shares.
type clientFlags struct {
	brokers string
	// TLS and SASL, as broker.kafka's tls and sasl (see security).
	tls                                   bool
	tlsCA, tlsCert, tlsKey, tlsServerName string
	tlsInsecure                           bool
	saslMechanism, saslUsername           string
	saslPassword                          string
	// reportTo, when set, is told when a broker cannot be reached and
	// when it can again (see connReporter).
	reportTo io.Writer
	// dials, set by admin, remembers the admin client's failed
	// connections, for why.
	dials *kafkadial.Watch
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	def := os.Getenv("WEIR_BROKERS")
	if def == "" {
		def = "127.0.0.1:9092"
	}
	fs.StringVar(&c.brokers, "brokers", def, "Kafka bootstrap servers, comma separated ($WEIR_BROKERS)")
	fs.StringVar(&c.brokers, "b", def, "shorthand for --brokers")
	fs.BoolVar(&c.tls, "tls", false, "connect with TLS (the system's roots unless --tls-ca); any --tls-* flag turns TLS on")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "PEM file of the CA certificates that verify the brokers (broker.kafka.tls.ca_file)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM client certificate, for mutual TLS (with --tls-key)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM key of --tls-cert")
	fs.StringVar(&c.tlsServerName, "tls-server-name", "", "name the brokers' certificates are checked against (default: the host dialled)")
	fs.BoolVar(&c.tlsInsecure, "tls-insecure-skip-verify", false, "accept any broker certificate")
	fs.StringVar(&c.saslMechanism, "sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&c.saslUsername, "sasl-username", "", "SASL user name")
	fs.StringVar(&c.saslPassword, "sasl-password", "", "SASL password (default $WEIR_SASL_PASSWORD, which keeps it out of the process list)")
}

// security is the TLS and SASL options the flags ask for.
func (c *clientFlags) security() ([]kgo.Opt, error) {
	var tc *tlsconf.Client
	t := tlsconf.Client{CAFile: c.tlsCA, CertFile: c.tlsCert, KeyFile: c.tlsKey, ServerName: c.tlsServerName, InsecureSkipVerify: c.tlsInsecure}
	if c.tls || !t.IsZero() {
		if (t.CertFile == "") != (t.KeyFile == "") {
			return nil, &exitError{2, errors.New("--tls-cert and --tls-key go together")}
		}
		tc = &t
	}
	var sc *configs.SASL
	pass := c.saslPassword
	if pass == "" {
		pass = os.Getenv("WEIR_SASL_PASSWORD")
	}
	switch {
	case c.saslMechanism != "":
		if c.saslUsername == "" {
			return nil, &exitError{2, errors.New("--sasl-mechanism needs --sasl-username")}
		}
		if m := strings.ToUpper(c.saslMechanism); pass == "" && (m == "PLAIN" || m == "SCRAM-SHA-256" || m == "SCRAM-SHA-512") {
			// An unknown mechanism is refused below, by name.
			return nil, &exitError{2, errors.New("--sasl-mechanism needs a password: set $WEIR_SASL_PASSWORD (or --sasl-password, which other users see in the process list)")}
		}
		sc = &configs.SASL{Mechanism: strings.ToUpper(c.saslMechanism), Username: c.saslUsername, Password: pass}
	case c.saslUsername != "" || c.saslPassword != "":
		return nil, &exitError{2, errors.New("--sasl-username and --sasl-password need --sasl-mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)")}
	}
	opts, err := kafkasec.Options(tc, sc)
	if err != nil {
		return nil, &exitError{2, err}
	}
	return opts, nil
}

func (c *clientFlags) client(opts ...kgo.Opt) (*kgo.Client, error) {
	sec, err := c.security()
	if err != nil {
		return nil, err
	}
	opts = append(append([]kgo.Opt{
		kgo.SeedBrokers(strings.Split(c.brokers, ",")...),
		kgo.ClientID("weir-cli"),
	}, sec...), opts...)
	if c.reportTo != nil {
		opts = append(opts, kgo.WithHooks(&connReporter{w: c.reportTo, down: map[string]bool{}}))
	}
	if c.dials != nil {
		opts = append(opts, kgo.WithHooks(c.dials))
	}
	return kgo.NewClient(opts...)
}

// connReporter writes when a broker cannot be reached, once until it can
// be again, and then that it can. franz-go retries connections for ever
// and silently, so a consumer following a topic on a broker that stopped
// would otherwise wait without a word.
type connReporter struct {
	w    io.Writer
	mu   sync.Mutex
	down map[string]bool
}

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (r *connReporter) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if kafkadial.Closing(err) {
		return // the command is done with the client, not the broker with it
	}
	addr := net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err != nil && !r.down[addr]:
		r.down[addr] = true
		fmt.Fprintf(r.w, "weir: cannot reach broker %s: %v (retrying)\n", addr, err)
	case err == nil && r.down[addr]:
		delete(r.down, addr)
		fmt.Fprintf(r.w, "weir: broker %s reachable again\n", addr)
	}
}

// admin is a client for the requests a command starts with, which fail
// it at once when no broker answers: it does not report connections, as a
// "(retrying)" just before the command gives up would mislead.
func (c *clientFlags) admin() (*kadm.Client, *kgo.Client, error) {
	c.dials = &kafkadial.Watch{}
	quiet := *c
	quiet.reportTo = nil
	cl, err := quiet.client()
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl, nil
}

// why adds to err, a command's request that ran out of time, why the
// admin client could not connect: franz-go retries a failed connection
// until the request's deadline, which it then reports alone ("context
// deadline exceeded"), without the TLS handshake or dial that failed.
func (c *clientFlags) why(err error) error {
	if err == nil || c.dials == nil || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if cause := c.dials.Err(); cause != nil {
		return fmt.Errorf("%w (cannot connect: %v)", err, cause)
	}
	return err
}
