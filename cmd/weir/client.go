package main

import (
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
)

// clientFlags are the flags every Kafka client command shares.
type clientFlags struct {
	brokers string
	// reportTo, when set, is told when a broker cannot be reached and
	// when it can again (see connReporter).
	reportTo io.Writer
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	def := os.Getenv("WEIR_BROKERS")
	if def == "" {
		def = "127.0.0.1:9092"
	}
	fs.StringVar(&c.brokers, "brokers", def, "Kafka bootstrap servers, comma separated ($WEIR_BROKERS)")
	fs.StringVar(&c.brokers, "b", def, "shorthand for --brokers")
}

func (c *clientFlags) client(opts ...kgo.Opt) (*kgo.Client, error) {
	opts = append([]kgo.Opt{
		kgo.SeedBrokers(strings.Split(c.brokers, ",")...),
		kgo.ClientID("weir-cli"),
	}, opts...)
	if c.reportTo != nil {
		opts = append(opts, kgo.WithHooks(&connReporter{w: c.reportTo, down: map[string]bool{}}))
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

func (c *clientFlags) admin() (*kadm.Client, *kgo.Client, error) {
	cl, err := c.client()
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl, nil
}
