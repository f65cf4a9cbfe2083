package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/enrich"
	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/internal/yamlerr"
	"github.com/weirnet/weir/sinks/file"
)

// checkCmd validates a config file without starting anything.
func checkCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("weir check [-c FILE] [--skip-files]", stderr)
	file := fs.String("c", "configs/weir.yaml", "config file to check")
	fs.StringVar(file, "config", "configs/weir.yaml", "config file to check")
	skipFiles := fs.Bool("skip-files", false, "do not read the files the config names (the inventory, the syslog rules, TLS certificates and keys, file sinks' paths): for a config meant for another machine or a container")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return &exitError{2, fmt.Errorf("check: unexpected argument %q: a config file goes after -c (weir check -c %s)", pos[0], pos[0])}
	}
	// -c '': what weir run -c '' runs with.
	name, cfg := "(no config, weir's defaults)", configs.Defaults()
	if *file != "" {
		var err error
		name = *file
		if cfg, err = configs.Load(*file); err != nil {
			if !flagGiven(fs, "c") && !flagGiven(fs, "config") && errors.Is(err, os.ErrNotExist) {
				// The user named no file: say which one was looked for.
				wd, _ := os.Getwd()
				err = fmt.Errorf("%w (the file checked without -c, from the directory weir runs in, %s: give -c FILE)", err, wd)
			}
			return &exitError{1, err}
		}
	}
	// The inventory is read as weir run reads it, so a broken one fails
	// here and not at the next start or SIGHUP.
	if inv := cfg.Enrich.Inventory; inv != "" && cfg.EnrichEnabled() && !*skipFiles {
		loaded, err := checkInventory(cfg)
		if err != nil {
			return &exitError{1, err}
		}
		for _, w := range loaded.Warnings() {
			fmt.Fprintf(stderr, "%s: warning: %s\n", inv, w)
		}
	}
	// So are the site's syslog rules, examples and all.
	if cfg.Enrich.SyslogRules != "" && cfg.EnrichEnabled() && !*skipFiles {
		_, rules, err := checkSyslogRules(cfg)
		if err != nil {
			return &exitError{1, err}
		}
		for _, w := range rules.Warnings() {
			fmt.Fprintf(stderr, "%s: warning: %s\n", rules.Path(), w)
		}
	}
	if !*skipFiles {
		if err := checkDataDir(cfg); err != nil {
			return &exitError{1, err}
		}
		if err := errors.Join(checkTLSFiles(cfg, nil), checkSinkPaths(cfg)); err != nil {
			return &exitError{1, fmt.Errorf("%s: %w", name, err)}
		}
		for _, w := range sinkPathWarnings(cfg) {
			fmt.Fprintf(stderr, "%s: warning: %s\n", name, w)
		}
	}
	for _, w := range configWarnings(cfg) {
		fmt.Fprintf(stderr, "%s: warning: %s\n", name, w)
	}
	// On a Kafka cluster the embedded log and its listener do not run.
	log := fmt.Sprintf("data_dir %s, kafka %s", cfg.DataDir, cfg.Broker.KafkaListen)
	if k := cfg.Broker.Kafka; len(k.Brokers) > 0 {
		log = "kafka cluster " + strings.Join(k.Brokers, ",")
	}
	fmt.Fprintf(stdout, "%s: ok (%s, http %s, %d topic overrides)\n", name, log, cfg.HTTP.Listen, len(cfg.Broker.Topics))
	return nil
}

// checkDataDir refuses a data_dir that weir run cannot make or use as a
// directory: a file, or a path through one. One missing is fine (weir run
// makes it), and so is one that is not readable here: check may run as
// another user than weir.
func checkDataDir(cfg *configs.Config) error {
	fi, err := os.Stat(cfg.DataDir)
	switch {
	case err == nil && !fi.IsDir():
		err = fmt.Errorf("%s is not a directory", cfg.DataDir)
	case errors.Is(err, syscall.ENOTDIR):
	default:
		return nil
	}
	where := cfg.File + ":"
	if line := cfg.Line("data_dir"); line > 0 {
		where += strconv.Itoa(line) + ":"
	}
	return fmt.Errorf("%s data_dir: %w", where, err)
}

// checkInventory loads the inventory cfg names, as weir run does; its
// error names the setting and its line.
func checkInventory(cfg *configs.Config) (*enrich.Inventory, error) {
	inv, err := enrich.LoadInventory(cfg.Enrich.Inventory, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("%s enrich.inventory: %w", settingAt(cfg, "enrich.inventory"), err)
	}
	return inv, nil
}

// checkSyslogRules reads the syslog rules file cfg names and runs its
// examples, as weir run does, and returns weir's rules with them, and the
// file's (nil for none); its error names the setting and its line.
func checkSyslogRules(cfg *configs.Config) (*enrich.Classifier, *enrich.SyslogRules, error) {
	cls := enrich.NewClassifier()
	rules, err := useSyslogRules(cls, cfg.Enrich.SyslogRules, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, fmt.Errorf("%s enrich.syslog_rules: %w", settingAt(cfg, "enrich.syslog_rules"), err)
	}
	return cls, rules, nil
}

// settingAt is where the config file sets key: "FILE:LINE:", or
// "FILE:" when the line is not known.
func settingAt(cfg *configs.Config, key string) string {
	where := cfg.File + ":"
	if line := cfg.Line(key); line > 0 {
		where += strconv.Itoa(line) + ":"
	}
	return where
}

// checkSinkPaths looks at the paths of file sinks: weir check refuses one
// that cannot be a file now; weir run starts with it and the sink
// retries (a volume not mounted yet).
func checkSinkPaths(cfg *configs.Config) error {
	var errs []error
	for _, s := range cfg.Sinks {
		if s.Type != "file" {
			continue
		}
		for _, p := range s.FilePaths() {
			if err := file.Unusable(p); err != nil {
				errs = append(errs, fmt.Errorf("sink %q: %w", s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// sinkPathWarnings are the file sinks' paths this user cannot write a
// file at (a directory of another user's, a read-only volume): warnings,
// since weir may run as another user, and weir run retries them as an
// outage.
func sinkPathWarnings(cfg *configs.Config) []string {
	var out []string
	for _, s := range cfg.Sinks {
		if s.Type != "file" {
			continue
		}
		for _, p := range s.FilePaths() {
			if err := file.Unwritable(p); err != nil {
				out = append(out, fmt.Sprintf("sink %q: path %s: cannot be written as user %s (%v): weir run, as this user, would retry it for ever",
					s.Name, p, userName(), err))
			}
		}
	}
	return out
}

// userName names the user weir runs as, for a warning.
func userName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "uid " + strconv.Itoa(os.Getuid())
}

// checkTLSFiles reads every certificate, key and CA file cfg names that
// the parts of roles use (nil: every role), as those parts do when weir
// run starts them.
func checkTLSFiles(cfg *configs.Config, roles map[string]bool) error {
	has := func(role string) bool { return roles == nil || roles[role] }
	var errs []error
	client := func(where string, c tlsconf.Client) {
		if _, err := c.Config(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	if t := cfg.Broker.Kafka.TLS; t != nil && len(cfg.Broker.Kafka.Brokers) > 0 {
		client("broker.kafka", t.Client())
	}
	for _, s := range cfg.Sinks {
		if c := s.TLS.Client(); !c.IsZero() && has(roleSink) {
			client(fmt.Sprintf("sink %q", s.Name), c)
		}
	}
	for _, t := range cfg.GNMI.Targets {
		if t.TLS != nil && !t.Insecure && has(roleCollect) {
			client(fmt.Sprintf("gnmi target %q", t.Name), t.TLS.Client())
		}
	}
	if t := cfg.Broker.KafkaTLS; t != nil && cfg.Broker.KafkaListen.Enabled() && len(cfg.Broker.Kafka.Brokers) == 0 {
		if _, err := tlsconf.Server(t.CertFile, t.KeyFile, t.ClientCAFile); err != nil {
			errs = append(errs, fmt.Errorf("broker.kafka_tls: %w", err))
		}
	}
	for i, l := range cfg.Syslog.Listeners {
		if l.Protocol == "tls" && cfg.SyslogEnabled() && has(roleCollect) {
			if _, err := tlsconf.Server(l.CertFile, l.KeyFile, l.ClientCAFile); err != nil {
				errs = append(errs, fmt.Errorf("syslog.listeners[%d]: %w", i, err))
			}
		}
	}
	return errors.Join(errs...)
}

// configWarnings are what weir check and weir run warn of in a config
// they take: sinks reading topics nothing writes, or of records they skip
// or fail on, settings that leave something open, addresses that likely
// mean something else.
func configWarnings(cfg *configs.Config) []string {
	out := unknownSinkTopics(cfg)
	other := cfg.SinkTopicsOfOtherRecords()
	for _, s := range cfg.Sinks {
		for _, t := range other[s.Name] {
			out = append(out, fmt.Sprintf("sink %q reads topic %q, of %s: %s sink writes %s only and skips them (counted in weir_sink_filtered_total)",
				s.Name, t.Topic, t.Holds, article(sinkKind(s)), t.Writes))
		}
	}
	out = append(out, cfg.WebhookTemplateWarnings()...)
	out = append(out, cfg.AlertmanagerURLWarnings()...)
	out = append(out, cfg.GNMIWarnings()...)
	out = append(out, cfg.SecurityWarnings()...)
	return append(out, cfg.AddressWarnings()...)
}

// article is kind with "a" or "an" before it, as it is read ("an
// influxdb sink").
func article(kind string) string {
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// sinkKind names a sink's type as a warning does: its format too where
// that decides what it takes.
func sinkKind(s configs.Sink) string {
	if s.Type == "webhook" && s.Format == "alertmanager" {
		return "webhook (format alertmanager)"
	}
	return s.Type
}

// unknownSinkTopics words configs.UnknownSinkTopics as warnings, in a
// stable order.
func unknownSinkTopics(cfg *configs.Config) []string {
	var out []string
	unknown := cfg.UnknownSinkTopics()
	own := cfg.OwnTopics()
	for _, s := range cfg.Sinks {
		for _, t := range unknown[s.Name] {
			typo := "a typo?"
			if k := yamlerr.ClosestKey(t, own); k != "" {
				typo = "did you mean " + k + "?"
			}
			out = append(out, fmt.Sprintf("sink %q reads topic %q, which no part of weir writes (%s a Kafka client's topic is fine)", s.Name, t, typo))
		}
	}
	return out
}
