package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/enrich"
	"github.com/weirnet/weir/telemetry"
)

// enrichComponents builds the enrichment workers: members of the "enrich"
// group over raw.syslog, raw.snmp, raw.gnmi and raw.traps, sharing one inventory (watched for
// changes, and shared with the collectors: see deviceNames) and one rule table.
func enrichComponents(d deps) ([]component, error) {
	if !d.cfg.EnrichEnabled() {
		return nil, nil
	}
	logger := d.logger.With(slog.String("component", "enrich"))
	var comps []component
	names := d.names
	if names == nil { // wired alone (tests)
		var err error
		if names, comps, err = newDeviceNames(d); err != nil {
			return nil, err
		}
	}
	inv, targets := names.inv, names.targets
	n := d.cfg.Enrich.Workers
	if n == 0 {
		n = 2
	}
	cls := enrich.NewClassifier()
	if _, err := useSyslogRules(cls, d.cfg.Enrich.SyslogRules, logger); err != nil {
		return nil, fmt.Errorf("enrich.syslog_rules: %w", err)
	}
	// SIGHUP reads the file again, or the one the config names now (none:
	// weir's rules alone); a file refused leaves the rules in use.
	rulesFile := d.cfg.Enrich.SyslogRules // in use; reloads run one at a time
	d.reload.add(partSyslogRules, func(cfg *configs.Config) error {
		if cfg.Enrich.SyslogRules == "" && rulesFile == "" {
			return errNotInUse
		}
		if _, err := useSyslogRules(cls, cfg.Enrich.SyslogRules, logger); err != nil {
			return err
		}
		rulesFile = cfg.Enrich.SyslogRules
		return nil
	})
	dedup, threshold, window := d.cfg.Enrich.DedupWindow.Std(), d.cfg.Enrich.Flap.Threshold, d.cfg.Enrich.Flap.Window.Std()
	if dedup == 0 {
		dedup = enrich.DefaultDedupWindow
	}
	if threshold == 0 {
		threshold = enrich.DefaultFlapThreshold
	}
	if window == 0 {
		window = enrich.DefaultFlapWindow
	}
	m := enrich.NewWorkerMetrics(d.reg)
	// One detector for all workers: a link-down seen in syslog, a trap
	// and an SNMP poll is one event.
	rules := enrich.NewEventRules(dedup, max(threshold, 0), window)
	// A rename made while weir was stopped is found at the start.
	rules.KeepRenames(filepath.Join(d.cfg.DataDir, "enrich", "renames.json"), logger)
	// The SNMP and gNMI targets name hostless syslog lines and traps from
	// their addresses (SNMP's first), in every worker as in the
	// collectors' keys (deviceNames); gNMI's also find the inventory
	// entries of raw.gnmi targets by address.
	common := []enrich.WorkerOption{enrich.WithWorkerLogger(logger), enrich.WithWorkerMetrics(m), enrich.WithSharedEventRules(rules),
		enrich.WithSNMPTargets(targets), enrich.WithGNMITargets(names.gnmi)}
	if wu := d.cfg.Enrich.Warmup; wu != nil {
		common = append(common, enrich.WithWarmup(wu.Std()))
	}
	if len(d.cfg.Broker.Kafka.Brokers) > 0 {
		// A killed process's enrichment partitions wait this long for
		// another process, as its SNMP and gNMI targets do.
		common = append(common, enrich.WithSessionTimeout(d.cfg.Cluster.SessionTimeout.Std()))
	}
	// Each worker's lines name it: eight workers retrying one failure
	// (a cluster refusing weir) otherwise log eight identical lines.
	opts := func(member string, more ...enrich.WorkerOption) []enrich.WorkerOption {
		return append(append(slices.Clone(common), enrich.WithMemberID(member),
			enrich.WithWorkerLogger(logger.With(slog.String("worker", member)))), more...)
	}
	// Each worker reads the topic its collector writes (syslog.topic and
	// the others), so renaming one does not cut it off from enrichment.
	raw := func(topic, def string) enrich.WorkerOption { return enrich.WithInputTopic(cmp.Or(topic, def)) }
	if wu := d.cfg.Enrich.Warmup; wu == nil || wu.Std() > 0 {
		// After a start, no worker judges a live record before all four
		// kinds have read back what they enriched before: a syslog line
		// repeating a polled change is then a repeat.
		rules.HoldUntilWarm(4 * n)
	}
	for i := range n {
		w := enrich.NewWorker(d.broker, inv, cls, opts(fmt.Sprintf("enrich-%d", i), raw(d.cfg.Syslog.Topic, telemetry.TopicRawSyslog))...)
		comps = append(comps, component{name: fmt.Sprintf("enrich-%d", i), run: w.Run})
		mw := enrich.NewMetricsWorker(d.broker, inv, opts(fmt.Sprintf("enrich-metrics-%d", i), raw(d.cfg.SNMP.Topic, telemetry.TopicRawSNMP))...)
		comps = append(comps, component{name: fmt.Sprintf("enrich-metrics-%d", i), run: mw.Run})
		gw := enrich.NewMetricsWorker(d.broker, inv, opts(fmt.Sprintf("enrich-gnmi-%d", i), raw(d.cfg.GNMI.Topic, telemetry.TopicRawGNMI), enrich.WithGNMIInput())...)
		comps = append(comps, component{name: fmt.Sprintf("enrich-gnmi-%d", i), run: gw.Run})
		tw := enrich.NewTrapWorker(d.broker, inv, opts(fmt.Sprintf("enrich-traps-%d", i), raw(d.cfg.SNMP.Traps.Topic, telemetry.TopicRawTraps))...)
		comps = append(comps, component{name: fmt.Sprintf("enrich-traps-%d", i), run: tw.Run})
	}
	return comps, nil
}

// useSyslogRules puts the site's rules of the file at path (none: "")
// before the classifier's own, once their examples give what they say,
// and returns them (nil for none).
func useSyslogRules(cls *enrich.Classifier, path string, logger *slog.Logger) (*enrich.SyslogRules, error) {
	if path == "" {
		return nil, cls.UseSyslogRules(nil)
	}
	rules, err := enrich.ReadSyslogRules(path)
	if err != nil {
		return nil, err
	}
	if err := cls.UseSyslogRules(rules); err != nil {
		return nil, err
	}
	logger.Info("syslog rules loaded", slog.String("file", path), slog.Int("rules", rules.Len()))
	for _, w := range rules.Warnings() {
		logger.Warn("syslog rules: "+w, slog.String("file", path))
	}
	return rules, nil
}
