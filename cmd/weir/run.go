package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/broker/kafkacluster"
	"github.com/weirnet/weir/broker/kafkawire"
	"github.com/weirnet/weir/broker/recordbatch"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/dirlock"
	"github.com/weirnet/weir/internal/tlsconf"
)

// runCmd runs weir until SIGINT or SIGTERM, then shuts down cleanly: stop
// accepting, finish in-flight requests, flush and close the log.
func runCmd(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("weir run [-c FILE] [flags]", stderr)
	var file, dataDir, kafkaListen, httpListen, syslogListen, trapListen, logLevel, roles string
	fs.StringVar(&file, "config", "", "config file (default: built-in defaults)")
	fs.StringVar(&file, "c", "", "shorthand for --config")
	fs.StringVar(&dataDir, "data-dir", "", "override data_dir")
	fs.StringVar(&kafkaListen, "kafka-listen", "", "override broker.kafka_listen (\"off\" disables)")
	fs.StringVar(&httpListen, "http-listen", "", "override http.listen (\"off\" disables)")
	fs.StringVar(&syslogListen, "syslog-listen", "", "listen for syslog on this address, UDP and TCP, instead of the configured listeners (\"off\" disables; port 0 gives each a free port of its own, both logged)")
	fs.StringVar(&trapListen, "trap-listen", "", "override snmp.traps.listen, starting the trap receiver if the config has none (\"off\" disables)")
	fs.StringVar(&logLevel, "log-level", "", "override log.level")
	fs.StringVar(&roles, "roles", "collect,enrich,sink", "which stages run here: collect, enrich, sink (comma separated)")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return &exitError{2, fmt.Errorf("run: unexpected argument %q: a config file goes after -c (weir run -c %s)", pos[0], pos[0])}
	}
	// SIGHUP means reload, never stop. One that comes while weir starts
	// (opening a large log may take a while) waits for the reloader, as
	// the file may have changed since it was read. Through the shutdown,
	// once the reloader is gone, one is dropped.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Ignore(syscall.SIGHUP)
	if logLevel != "" {
		switch logLevel {
		case "debug", "info", "warn", "error":
		default:
			return &exitError{2, fmt.Errorf("--log-level: %q is not debug, info, warn or error", logLevel)}
		}
	}
	// The file's addresses are checked when it is read; the flags' here,
	// before anything is opened.
	for _, f := range []struct{ name, value string }{
		{"--kafka-listen", kafkaListen}, {"--http-listen", httpListen}, {"--syslog-listen", syslogListen}, {"--trap-listen", trapListen},
	} {
		if _, err := configs.ParseAddress(f.value); err != nil {
			return &exitError{2, fmt.Errorf("%s: %w", f.name, err)}
		}
	}
	// The flags override the file at the start and at every reload, so a
	// reload of an unchanged file changes nothing.
	override := func(cfg *configs.Config) {
		if dataDir != "" {
			cfg.DataDir = dataDir
		}
		if kafkaListen != "" {
			cfg.Broker.KafkaListen = configs.Address(kafkaListen)
		}
		if httpListen != "" {
			cfg.HTTP.Listen = configs.Address(httpListen)
		}
		if trapListen != "" {
			cfg.SNMP.Traps.Listen = configs.Address(trapListen)
		}
		if logLevel != "" {
			cfg.Log.Level = logLevel
		}
		switch syslogListen {
		case "":
		case "off":
			off := false
			cfg.Syslog.Enabled = &off
		default:
			addr := configs.Address(syslogListen)
			cfg.Syslog.Listeners = []configs.SyslogListener{{Protocol: "udp", Address: addr}, {Protocol: "tcp", Address: addr}}
		}
	}
	cfg := configs.Defaults()
	var reread func(context.Context) (*configs.Config, error)
	if file != "" {
		var err error
		if cfg, err = configs.Load(file); err != nil {
			return err
		}
		reread = func(ctx context.Context) (*configs.Config, error) {
			next, err := loadSettled(ctx, file, configSettle, configSettleMax)
			if err == nil {
				override(next)
			}
			return next, err
		}
	}
	override(cfg)
	if loops := cfg.KafkaSinkLoops(); len(loops) > 0 {
		// The file passed the check; --kafka-listen made the sink's
		// brokers weir's own.
		return fmt.Errorf("--kafka-listen %s: %s", cfg.Broker.KafkaListen, strings.Join(loops, "; "))
	}
	logger := newLogger(cfg.Log, stderr)
	roleSet := map[string]bool{}
	for _, r := range strings.Split(roles, ",") {
		switch r = strings.TrimSpace(r); r {
		case roleCollect, roleEnrich, roleSink:
			roleSet[r] = true
		case "":
		default:
			return &exitError{2, fmt.Errorf("--roles: unknown role %q (collect, enrich, sink)", r)}
		}
	}
	if len(roleSet) == 0 {
		return &exitError{2, fmt.Errorf("--roles: no role given (collect, enrich, sink)")}
	}
	// The settings the flags override, for errors.
	flags := map[string]string{}
	for key, f := range map[string]struct{ name, value string }{
		"http.listen":         {"--http-listen", httpListen},
		"broker.kafka_listen": {"--kafka-listen", kafkaListen},
		"snmp.traps.listen":   {"--trap-listen", trapListen},
		"syslog.listeners[0]": {"--syslog-listen", syslogListen},
		"syslog.listeners[1]": {"--syslog-listen", syslogListen},
	} {
		if f.value != "" {
			flags[key] = f.name
		}
	}
	if err := checkStartFiles(cfg, roleSet); err != nil {
		return &exitError{1, err}
	}
	return listenSetting(cfg, flags, run(ctx, cfg, reread, hup, roleSet, logger))
}

// checkStartFiles reads the files the config names that the roles' parts
// read at start (the inventory, the syslog rules, TLS certificates, keys
// and CAs), as weir check does, before anything starts: a missing one
// fails the start with the setting's name and line, rather than after the
// log is opened and listeners bound, and only to stop them again.
func checkStartFiles(cfg *configs.Config, roles map[string]bool) error {
	var errs []error
	if cfg.Enrich.Inventory != "" && cfg.EnrichEnabled() && (roles[roleCollect] || roles[roleEnrich]) {
		if _, err := checkInventory(cfg); err != nil {
			errs = append(errs, err)
		}
	}
	if cfg.Enrich.SyslogRules != "" && cfg.EnrichEnabled() && roles[roleEnrich] {
		if _, _, err := checkSyslogRules(cfg); err != nil {
			errs = append(errs, err)
		}
	}
	if err := checkTLSFiles(cfg, roles); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", cfg.File, err))
	}
	return errors.Join(errs...)
}

// listenSetting adds to an error listening on an address the setting the
// address comes from ("http.listen at weir.yaml:12", "--http-listen"), as
// weir check names its errors' keys and lines. Listeners are not
// reloaded: the config weir started with is the one to look in.
func listenSetting(cfg *configs.Config, flags map[string]string, err error) error {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "listen" || op.Addr == nil {
		return err
	}
	host, port, perr := net.SplitHostPort(op.Addr.String())
	if perr != nil {
		return err
	}
	network := strings.TrimRight(op.Net, "46") // tcp4 is tcp
	ip, _ := netip.ParseAddr(host)
	// check refuses two listeners of a network on one port unless their
	// hosts differ: the port finds the listener, the host if need be.
	var found []configs.Listener
	for _, l := range cfg.Listeners() {
		h, p, perr := net.SplitHostPort(string(l.Address))
		if perr != nil || p != port || l.Network != network {
			continue
		}
		if a, aerr := netip.ParseAddr(h); aerr == nil && ip.IsValid() && a.Unmap() != ip.Unmap() {
			continue
		}
		found = append(found, l)
	}
	if len(found) != 1 {
		return err
	}
	key := found[0].Key
	if f, ok := flags[key]; ok {
		return fmt.Errorf("%w (%s)", err, f)
	}
	switch line := cfg.Line(key); {
	case line > 0:
		return fmt.Errorf("%w (%s at %s:%d)", err, key, cfg.File, line)
	case strings.HasPrefix(key, "syslog ("):
		return fmt.Errorf("%w (syslog's default listener: syslog.listeners is not set)", err)
	}
	return fmt.Errorf("%w (%s, not set: the default)", err, key)
}

func newLogger(c configs.LogConfig, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		opts.ReplaceAttr = jsonDuration
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// jsonDuration writes a duration in JSON logs as seconds (0.0015), where
// slog writes nanoseconds (1500000), which no reader takes for a unit; text
// logs have its String form (1.5ms).
func jsonDuration(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.Float64Value(a.Value.Duration().Seconds())
	}
	return a
}

// brokerOptions maps the config to the embedded broker's options.
func brokerOptions(cfg *configs.Config, logger *slog.Logger, fsync prometheus.Histogram) []embedded.Option {
	b := cfg.Broker
	opts := []embedded.Option{
		embedded.WithLogger(logger),
		embedded.WithTopicDefaults(topicConfig(configs.Topic{Partitions: b.DefaultPartitions, Retention: b.Retention, Segment: b.Segment})),
		embedded.WithMaxMessageBytes(int(b.MaxMessageBytes)),
		embedded.WithMaxPartitions(b.MaxPartitions),
		embedded.WithOffsetsRetention(cmp.Or(b.OffsetsRetention.Std(), embedded.DefaultOffsetsRetention)),
		embedded.WithFsyncObserver(func(d time.Duration) { fsync.Observe(d.Seconds()) }),
	}
	if codec, ok := recordbatch.CodecNames[string(b.Compression)]; ok {
		opts = append(opts, embedded.WithCompression(codec)) // else the log's default, as for a config made without configs.Defaults
	}
	// broker.auto_create_topics is for Kafka clients (clientLog): weir's
	// own parts make the topics they write, as on a Kafka cluster.
	if b.Flush.Policy == "always" {
		opts = append(opts, embedded.WithFlushAlways())
	} else {
		opts = append(opts, embedded.WithFlushInterval(b.Flush.Interval.Std()))
	}
	for name, t := range b.Topics {
		opts = append(opts, embedded.WithTopicConfig(name, topicConfig(t)))
	}
	return opts
}

// topicConfig is a broker.topics entry as the broker takes it.
func topicConfig(t configs.Topic) broker.TopicConfig {
	return broker.TopicConfig{
		Partitions:     t.Partitions,
		RetentionTime:  t.Retention.Time.Std(),
		RetentionBytes: int64(t.Retention.Bytes),
		SegmentBytes:   int64(t.Segment.Bytes),
		SegmentAge:     t.Segment.Age.Std(),
	}
}

// topicConfigs is broker.topics as the broker takes them.
func topicConfigs(c configs.Broker) map[string]broker.TopicConfig {
	out := make(map[string]broker.TopicConfig, len(c.Topics))
	for name, t := range c.Topics {
		out[name] = topicConfig(t)
	}
	return out
}

// run runs weir with cfg; reread reads the config file again at each
// signal from hup (nil for none: the built-in config).
func run(ctx context.Context, cfg *configs.Config, reread func(context.Context) (*configs.Config, error), hup <-chan os.Signal, roles map[string]bool, logger *slog.Logger) (rerr error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var ready atomic.Bool
	var wg sync.WaitGroup
	serveCtx, cancel := context.WithCancel(context.Background())
	// stop ends every component and listener and waits for them; the
	// broker is closed only after it (see the closers below), so nothing
	// still running publishes to a closed log.
	stop := func() {
		cancel()
		wg.Wait()
	}
	defer stop()
	errc := make(chan error, 64)

	var b broker.Broker
	var listenerSASL *kafkawire.SASL // the Kafka listener's users, which SIGHUP reloads
	if len(cfg.Broker.Kafka.Brokers) > 0 {
		// One process per data_dir, as the embedded log has it: the
		// instance id kept there names the process's Kafka
		// transactions, and two with one id fence each other's for as
		// long as both run.
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return fmt.Errorf("data_dir: %w", err)
		}
		lock, err := dirlock.Take(cfg.DataDir)
		if err != nil {
			return fmt.Errorf("data_dir: %w; it holds the instance id that names this process's Kafka transactions: give each process its own (--data-dir)", err)
		}
		defer lock.Release()
		kb, err := kafkaBackend(cfg.Broker, cfg.DataDir, logger)
		if err != nil {
			return err
		}
		defer func() {
			stop() // components first, then the client they use
			kb.Close()
		}()
		b = kb
		reg.MustRegister(kb.Collector()) // weir_consumer_lag of this process's groups
		logger.Info("using Kafka cluster", slog.Any("brokers", cfg.Broker.Kafka.Brokers))
	} else {
		// The embedded log's own: on a cluster it would be an
		// all-zero histogram of fsyncs that never happen here.
		fsync := prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "weir_broker_fsync_duration_seconds",
			Help:    "Time taken by fsync of segment files.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		})
		reg.MustRegister(fsync)
		log, err := embedded.Open(cfg.DataDir, brokerOptions(cfg, logger, fsync)...)
		if err != nil {
			return fmt.Errorf("open log: %w", err)
		}
		defer func() {
			stop() // components and the listener first, then the log
			if err := log.Close(); err != nil {
				logger.Error("closing log", slog.Any("error", err))
				// Not a clean stop (the next start recovers the
				// log): systemd and scripts see it in the exit code.
				if rerr == nil {
					rerr = fmt.Errorf("closing log (the next start recovers it): %w", err)
				}
			} else {
				logger.Info("log closed cleanly")
			}
		}()
		reg.MustRegister(log.Collector())
		b = log
		if listenerSASL, err = startKafkaListener(serveCtx, &wg, errc, cfg, log, logger, reg); err != nil {
			return err
		}
	}
	// Topics listed in the config exist from the start, with their config
	// (on a Kafka cluster, when weir creates them: one there already keeps
	// its own).
	for name, t := range cfg.Broker.Topics {
		tc := topicConfig(t)
		if len(cfg.Broker.Kafka.Brokers) == 0 {
			// The embedded log lays broker.topics over a topic's
			// stored config at every open (brokerOptions): stored
			// too, they would outlive their removal from the file.
			tc = broker.TopicConfig{Partitions: tc.Partitions}
		}
		err := b.CreateTopic(ctx, name, tc)
		switch {
		case err == nil, errors.Is(err, broker.ErrTopicExists):
		case len(cfg.Broker.Kafka.Brokers) > 0 && kafkacluster.Unreachable(err):
			// Created with its config when first produced to
			// (kafkacluster.WithTopics): a cluster still starting
			// stops nothing.
			logger.Warn("cannot create a configured topic now; it is created with its config once the cluster answers",
				slog.String("topic", name), slog.Any("error", err))
		case len(cfg.Broker.Kafka.Brokers) > 0 && kafkacluster.NotPermitted(err):
			// The cluster's admins create topics (as ensureTopic
			// leaves them to when producing): its config is theirs.
			logger.Warn("not permitted to create a configured topic; its config in broker.topics does not apply, the cluster's admins create it",
				slog.String("topic", name), slog.Any("error", err))
		default:
			return fmt.Errorf("create topic %s: %w", name, err)
		}
	}

	if cfg.HTTP.Listen.Enabled() {
		ln, err := net.Listen("tcp", string(cfg.HTTP.Listen))
		if err != nil {
			return fmt.Errorf("http listener: %w", err)
		}
		hs := observationServer(httpHandler(reg, &ready), logger, observationIdleTimeout)
		logger.Info("http listener started", slog.String("addr", ln.Addr().String()))
		ln = netutil.LimitListener(ln, observationMaxConnections)
		wg.Go(func() {
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("http: %w", err)
			}
		})
		wg.Go(func() {
			<-serveCtx.Done()
			sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
			defer c()
			hs.Shutdown(sctx)
		})
	}
	// SIGHUP reloads what can be reloaded (targets, inventory) and never
	// stops weir, whatever runs.
	reload := newReloads(reg)
	if listenerSASL != nil {
		reload.add(partKafkaSASL, func(cfg *configs.Config) error { return reloadKafkaSASL(listenerSASL, cfg.Broker.KafkaSASL) })
	}
	comps, err := buildComponents(deps{roles: roles, cfg: cfg, broker: b, logger: logger, reg: reg, reload: reload})
	if err != nil {
		return err
	}
	wg.Go(func() { reload.run(serveCtx, hup, reread, cfg, logger) })
	for _, c := range comps {
		wg.Go(func() {
			logger.Info("starting", slog.String("component", c.name))
			if err := c.run(serveCtx); err != nil && serveCtx.Err() == nil {
				if !strings.HasPrefix(err.Error(), c.name+": ") {
					err = fmt.Errorf("%s: %w", c.name, err) // "trap: listen ...", not "trap: trap: listen ..."
				}
				errc <- err
			}
		})
	}
	ready.Store(true)
	attrs := []any{slog.String("version", version), slog.String("data_dir", cfg.DataDir)}
	if len(roles) < 3 {
		// The stages not running here are the first thing to know when
		// nothing reaches a sink or enriched.*.
		var here []string
		for _, r := range []string{roleCollect, roleEnrich, roleSink} {
			if roles[r] {
				here = append(here, r)
			}
		}
		attrs = append(attrs, slog.String("roles", strings.Join(here, ",")))
	}
	logger.Info("weir running", attrs...)
	for _, w := range configWarnings(cfg) {
		logger.Warn(w)
	}
	select {
	case <-ctx.Done():
		logger.Info("shutting down (a second signal stops at once)")
	case err := <-errc:
		ready.Store(false)
		return err
	}
	ready.Store(false)
	return nil
}

// kafkaConnLimits returns the Kafka listener's connection bounds: in all,
// per client address (by default a quarter of the first, so that one host
// reconnecting in a loop never holds every slot) and the addresses with
// their own.
func kafkaConnLimits(b *configs.Broker) (maxConns, perIP int, overrides map[netip.Addr]int) {
	maxConns = cmp.Or(b.MaxConnections, kafkawire.DefaultMaxConnections)
	perIP = cmp.Or(b.MaxConnectionsPerIP, max(1, maxConns/4))
	return maxConns, perIP, configs.PerIPOverrides(b.MaxConnectionsPerIPOverrides)
}

// startKafkaListener serves the embedded log to Kafka clients. It
// returns the SASL users it requires (nil for none), for SIGHUP to
// reload.
func startKafkaListener(ctx context.Context, wg *sync.WaitGroup, errc chan<- error, cfg *configs.Config, log *embedded.Broker, logger *slog.Logger, reg prometheus.Registerer) (*kafkawire.SASL, error) {
	if !cfg.Broker.KafkaListen.Enabled() {
		return nil, nil
	}
	ln, err := net.Listen("tcp", string(cfg.Broker.KafkaListen))
	if err != nil {
		return nil, fmt.Errorf("kafka listener: %w", err)
	}
	// One produce request holds batches of many partitions: Kafka takes
	// up to 100 MiB (socket.request.max.bytes), and clients fill requests
	// to that (franz-go, sarama). Within what all connections may buffer,
	// and never below one batch of the largest size.
	buffered := max(int64(cmp.Or(cfg.Broker.MaxBufferedBytes, kafkawire.DefaultMaxBufferedRequestBytes)), int64(cfg.Broker.MaxMessageBytes)+1<<20)
	request := max(int64(cfg.Broker.MaxMessageBytes)+1<<20, min(kafkawire.DefaultMaxRequestBytes, buffered))
	maxConns, perIP, perIPOverrides := kafkaConnLimits(&cfg.Broker)
	wireOpts := []kafkawire.Option{
		kafkawire.WithLogger(logger.With(slog.String("component", "kafka"))),
		kafkawire.WithMaxRequestBytes(int(request)),
		kafkawire.WithMetrics(kafkaMetrics(reg)),
		kafkawire.WithMaxConnections(maxConns),
		kafkawire.WithMaxConnectionsPerIP(perIP, perIPOverrides),
		kafkawire.WithMaxBufferedRequestBytes(buffered),
		kafkawire.WithFrameTimeout(cmp.Or(cfg.Broker.RequestTimeout.Std(), kafkawire.DefaultFrameTimeout)),
	}
	if t := cfg.Broker.KafkaTLS; t != nil {
		// Read again when they change: a renewed certificate is served
		// without a restart.
		reloadFailed := func(err error) {
			logger.Error("kafka tls: certificate files changed but do not load; serving the previous ones", slog.Any("error", err))
		}
		tc, err := tlsconf.ServerReloading(t.CertFile, t.KeyFile, t.ClientCAFile, reloadFailed)
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("broker.kafka_tls: %w", err)
		}
		wireOpts = append(wireOpts, kafkawire.WithTLS(tc))
	}
	var auth *kafkawire.SASL
	if sc := cfg.Broker.KafkaSASL; sc != nil {
		auth, err = kafkawire.NewSASL(sc.Mechanisms, kafkaUsers(sc))
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("broker.kafka_sasl: %w", err)
		}
		wireOpts = append(wireOpts, kafkawire.WithSASL(auth))
	}
	if cfg.Broker.Flush.Policy == "always" {
		// Overlap the fsyncs of a request's partitions.
		wireOpts = append(wireOpts, kafkawire.WithParallelAppends(8))
	}
	if h := cfg.Broker.AdvertisedHost; h != "" {
		// Else each client is told the address its connection reached:
		// right for a loopback listener and for 0.0.0.0 alike (a
		// remote client told 127.0.0.1 would dial itself).
		wireOpts = append(wireOpts, kafkawire.WithAdvertisedAddr(h, listenPort(ln.Addr())))
	}
	srv := kafkawire.New(clientLog{log, cfg.Broker.AutoCreateTopics == nil || *cfg.Broker.AutoCreateTopics}, wireOpts...)
	logger.Info("kafka listener started", slog.String("addr", ln.Addr().String()),
		slog.Bool("tls", cfg.Broker.KafkaTLS != nil), slog.Bool("mutual_tls", cfg.Broker.KafkaTLS != nil && cfg.Broker.KafkaTLS.ClientCAFile != ""),
		slog.String("sasl", saslSummary(cfg.Broker.KafkaSASL)))
	wg.Go(func() {
		if err := srv.Serve(ctx, ln); err != nil && ctx.Err() == nil {
			errc <- fmt.Errorf("kafka listener: %w", err)
		}
	})
	return auth, nil
}

// partKafkaSASL is the reload part of the Kafka listener's users.
const partKafkaSASL = "kafka listener users"

func kafkaUsers(sc *configs.KafkaSASL) []kafkawire.User {
	users := make([]kafkawire.User, len(sc.Users))
	for i, u := range sc.Users {
		users[i] = kafkawire.User{Name: u.Name, Password: u.Password, ReadOnly: u.ReadOnly, Topics: u.Topics, Groups: u.Groups}
	}
	return users
}

// reloadKafkaSASL gives the listener the users and mechanisms of a
// reloaded broker.kafka_sasl: connections that authenticate afterwards
// use them, those already authenticated keep their session. Removing
// the block would let every client in without credentials: that takes a
// restart, and the listener keeps the users it has.
func reloadKafkaSASL(auth *kafkawire.SASL, sc *configs.KafkaSASL) error {
	if sc == nil {
		return errors.New("broker.kafka_sasl was removed: turning authentication off takes a restart; the Kafka listener keeps the users it has")
	}
	if err := auth.Update(sc.Mechanisms, kafkaUsers(sc)); err != nil {
		return fmt.Errorf("broker.kafka_sasl: %w", err)
	}
	return nil
}

// saslSummary is the mechanisms the Kafka listener requires, "off" for
// none.
func saslSummary(sc *configs.KafkaSASL) string {
	if sc == nil {
		return "off"
	}
	return strings.Join(sc.Mechanisms, ",")
}

// clientLog is the embedded log as the Kafka listener serves it: Kafka
// clients make a topic by asking for it only with
// broker.auto_create_topics on (Kafka's auto.create.topics.enable).
type clientLog struct {
	*embedded.Broker
	autoCreate bool
}

// AutoCreateTopics implements kafkawire.Log.
func (l clientLog) AutoCreateTopics() bool { return l.autoCreate }

// CreateTopic implements kafkawire.Log: clients' topics leave part of the
// partition bound to weir's own.
func (l clientLog) CreateTopic(ctx context.Context, name string, cfg broker.TopicConfig) error {
	return l.CreateClientTopic(ctx, name, cfg)
}

// ValidateCreateTopic implements kafkawire.TopicCreateValidator: what
// CreateTopic, a client's, would say.
func (l clientLog) ValidateCreateTopic(ctx context.Context, name string, cfg broker.TopicConfig) error {
	return l.ValidateCreateClientTopic(ctx, name, cfg)
}

// The listener reports where topic configs come from (DescribeConfigs
// sources) through the embedded broker's methods.
var (
	_ kafkawire.ConfigSourcer        = clientLog{}
	_ kafkawire.TopicCreateValidator = clientLog{}
)

// listenPort is the port a listener took (the one asked, or the one
// 127.0.0.1:0 picked).
func listenPort(addr net.Addr) int32 {
	_, p, _ := net.SplitHostPort(addr.String())
	port, _ := strconv.Atoi(p)
	return int32(port)
}

// observationIdleTimeout closes a keep-alive connection to http.listen
// no request came on for that long, as the prometheus sink does: net/http
// keeps one for ever by default, with its file descriptor, when a scraper
// holds it and goes away (behind a NAT).
const observationIdleTimeout = 5 * time.Minute

// observationMaxConnections bounds the connections http.listen serves at
// once; more wait in the kernel's accept queue, holding no file
// descriptor of weir's, until one closes. Scrapers and probes need a few;
// without a bound, one client holding connections open took every
// descriptor the log, the sinks and the other listeners need.
const observationMaxConnections = 256

// observationServer serves the self-observation endpoints.
func observationServer(h http.Handler, logger *slog.Logger, idle time.Duration) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idle,
		ErrorLog: slog.NewLogLogger(logger.With(slog.String("component", "http")).Handler(), slog.LevelWarn)}
}

func httpHandler(reg *prometheus.Registry, ready *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	// Profiles for diagnosing a slow weir, as Prometheus and most Go
	// servers offer; the listener is loopback by default.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "weir %s\n/metrics /healthz /readyz\n", version)
	})
	return mux
}
