// Package syslog receives syslog over UDP, TCP and TLS, parses each message
// (RFC 5424, RFC 3164 or Cisco's header, detected per message), and
// publishes every message, parsed or not, to raw.syslog as a telemetry.Log.
//
// TCP and TLS are read no faster than the broker accepts (back-pressure, no
// loss); UDP, which cannot push back, reads in batches from a large socket
// buffer and counts what the kernel dropped. Nothing weir received is
// dropped without a counted, logged reason.
package syslog

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/telemetry"
)

// Defaults for listener settings left out of the config.
const (
	DefaultAddress        = configs.DefaultSyslogListen
	DefaultMaxMessageSize = 64 << 10
	DefaultMaxConnections = 4096
	DefaultIdleTimeout    = 10 * time.Minute
	DefaultReadBuffer     = 8 << 20
	DefaultUDPReaders     = 2
)

// Collector runs the configured listeners.
type Collector struct {
	listeners []configs.SyslogListener
	topic     string
	broker    broker.Broker
	logger    *slog.Logger
	metrics   *metrics
	reg       prometheus.Registerer // where metrics are registered (WithRegisterer); nil: nowhere
	now       func() time.Time
	ready     chan struct{}
	// deviceName names a line's device for its key (WithDeviceName).
	deviceName func(hostname, source string) string

	mu    sync.Mutex
	addrs []string // bound addresses, once listening
}

// Option configures a Collector.
type Option func(*Collector)

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(c *Collector) { c.logger = l } }

// WithRegisterer registers the collector's metrics on r. A collector built
// again on the same r (in-process, as at a reload) shares the first one's
// series; one that conflicts with them fails New.
func WithRegisterer(r prometheus.Registerer) Option {
	return func(c *Collector) { c.reg = r }
}

// WithDeviceName keys each record by name(hostname, source): the name
// enrichment gives the device of a line carrying hostname ("" for none)
// from source ("ip:port"), or "" to key it by its hostname, else the
// sender's address, as without the option. weir passes the inventory's
// naming (enrich.DeviceNamer.Name), so a device's raw records and the
// records and events enriched from them share one key and partition.
// Only the key changes: the record carries the line as received. name is
// called for every line, from every reader at once: it must be safe for
// concurrent use, and should not allocate.
func WithDeviceName(name func(hostname, source string) string) Option {
	return func(c *Collector) { c.deviceName = name }
}

// New builds a collector from its config section; listeners without
// settings get the defaults, and no listeners at all means UDP and TCP on
// 127.0.0.1:5514.
func New(cfg configs.Syslog, b broker.Broker, opts ...Option) (*Collector, error) {
	c := &Collector{
		topic:  cfg.Topic,
		broker: b,
		logger: slog.New(slog.DiscardHandler),
		now:    time.Now,
		ready:  make(chan struct{}),
	}
	for _, o := range opts {
		o(c)
	}
	c.metrics = newMetrics()
	if c.reg != nil {
		if err := c.metrics.register(c.reg); err != nil {
			return nil, fmt.Errorf("syslog: metrics: %w", err)
		}
	}
	if c.topic == "" {
		c.topic = telemetry.TopicRawSyslog
	}
	ls := cfg.Listeners
	if len(ls) == 0 {
		ls = []configs.SyslogListener{
			{Protocol: "udp", Address: DefaultAddress},
			{Protocol: "tcp", Address: DefaultAddress},
		}
	}
	for _, l := range ls {
		if l.MaxMessageSize == 0 {
			l.MaxMessageSize = DefaultMaxMessageSize
		}
		if l.MaxConnections == 0 {
			l.MaxConnections = DefaultMaxConnections
		}
		if l.MaxConnectionsPerIP == 0 {
			// A quarter: one host reconnecting in a loop cannot hold
			// every connection and lock all senders out.
			l.MaxConnectionsPerIP = max(1, l.MaxConnections/4)
		}
		if l.IdleTimeout == 0 {
			l.IdleTimeout = configs.Duration(DefaultIdleTimeout)
		}
		if l.ReadBuffer == 0 {
			l.ReadBuffer = DefaultReadBuffer
		}
		if l.Readers == 0 {
			l.Readers = DefaultUDPReaders
		}
		switch l.Protocol {
		case "udp", "tcp", "tls":
		default:
			return nil, fmt.Errorf("syslog: listener %s: unknown protocol %q", l.Address, l.Protocol)
		}
		c.listeners = append(c.listeners, l)
	}
	return c, nil
}

// Run listens until ctx is done. It fails at once if a listener cannot
// bind, so a misconfigured port stops weir at start, not silently.
func (c *Collector) Run(ctx context.Context) error {
	var runs []func(context.Context)
	var closers []func()
	for _, l := range c.listeners {
		run, closer, addr, err := c.listen(l)
		if err != nil {
			for _, cl := range closers {
				cl()
			}
			return err
		}
		closers = append(closers, closer)
		c.mu.Lock()
		c.addrs = append(c.addrs, l.Protocol+"://"+addr)
		c.mu.Unlock()
		c.logger.Info("syslog listening", slog.String("protocol", l.Protocol), slog.String("addr", addr))
		runs = append(runs, run)
	}
	close(c.ready)
	var wg sync.WaitGroup
	for _, run := range runs {
		wg.Go(func() { run(ctx) })
	}
	wg.Wait()
	return nil
}

// Addrs returns "proto://host:port" of each listener once Run is serving;
// it blocks until then.
func (c *Collector) Addrs(ctx context.Context) ([]string, error) {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.addrs...), nil
}

// listen binds one listener and returns the loop serving it, a function
// that unbinds it if Run fails before serving, and the bound address.
func (c *Collector) listen(l configs.SyslogListener) (func(context.Context), func(), string, error) {
	switch l.Protocol {
	case "udp":
		u, err := c.newUDP(l)
		if err != nil {
			return nil, nil, "", err
		}
		return u.run, u.close, u.conns[0].LocalAddr().String(), nil
	default:
		var tlsCfg *tls.Config
		if l.Protocol == "tls" {
			var err error
			// Read again when they change: a renewed certificate is
			// served without a restart.
			reloadFailed := func(err error) {
				c.logger.Error("syslog tls: certificate files changed but do not load; serving the previous ones",
					slog.String("addr", string(l.Address)), slog.Any("error", err))
			}
			if tlsCfg, err = tlsconf.ServerReloading(l.CertFile, l.KeyFile, l.ClientCAFile, reloadFailed); err != nil {
				return nil, nil, "", fmt.Errorf("syslog tls %s: %w", l.Address, err)
			}
		}
		t, err := c.newTCP(l, tlsCfg)
		if err != nil {
			return nil, nil, "", err
		}
		return t.run, t.close, t.ln.Addr().String(), nil
	}
}
