package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/wholefile"
	"github.com/weirnet/weir/internal/yamlerr"
)

// reloads are what SIGHUP reloads while weir runs: each part that can
// take a new config without a restart (the SNMP and gNMI targets, the
// inventory) adds itself when it is wired. Everything else in the file
// takes effect at the next start.
type reloads struct {
	mu    sync.Mutex
	parts []reloadPart
	m     reloadMetrics
	// refused are the parts that refused the last reload and have not
	// taken it since (see took); badFile: the last reload's file had
	// errors, and nothing took it.
	refused []string
	badFile bool
}

// reloadMetrics tell an operator (or the tool that pushed the file) that
// a reload was refused, which otherwise only the log says; named as
// Prometheus names its own.
type reloadMetrics struct {
	total       *prometheus.CounterVec // result: success, failure
	lastSuccess prometheus.Gauge       // 1: the last reload took everywhere
	lastTime    prometheus.Gauge       // of the last successful reload (or the start)
}

// newReloads is the reloads of a process, its metrics registered on reg.
func newReloads(reg prometheus.Registerer) *reloads {
	m := reloadMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weir_config_reloads_total",
			Help: "SIGHUP reloads, by result (failure: the file had errors, or a part refused it and goes on as it was)."}, []string{"result"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: "weir_config_last_reload_successful",
			Help: "1 when the last reload (or the start) took the config everywhere, 0 when it was refused in part or whole."}),
		lastTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: "weir_config_last_reload_success_timestamp_seconds",
			Help: "When the config was last taken everywhere (the start, or a reload), in Unix seconds."}),
	}
	m.total.WithLabelValues("success")
	m.total.WithLabelValues("failure")
	m.lastSuccess.Set(1)
	m.lastTime.SetToCurrentTime()
	reg.MustRegister(m.total, m.lastSuccess, m.lastTime)
	return &reloads{m: m}
}

// result counts one reload; ok: every part took it.
func (r *reloads) result(ok bool) {
	if r.m.total == nil {
		return // made without metrics (tests)
	}
	if ok {
		r.m.total.WithLabelValues("success").Inc()
		r.m.lastSuccess.Set(1)
		r.m.lastTime.SetToCurrentTime()
		return
	}
	r.m.total.WithLabelValues("failure").Inc()
	r.m.lastSuccess.Set(0)
}

// The parts that reload targets, whose counts a reload logs, and the
// inventory, which its watch reloads too.
const (
	partSNMPTargets = "snmp targets"
	partGNMITargets = "gnmi targets"
	partInventory   = "inventory"
	partSyslogRules = "syslog rules"
)

type reloadPart struct {
	name  string
	apply func(*configs.Config) error
}

// errNotInUse is a part's answer to a reload that leaves it without a
// file before and after (no inventory, no syslog rules): it is neither
// named among the parts reloaded nor refused.
var errNotInUse = errors.New("not in use")

// add registers a part; apply gets the reloaded config, and an error
// leaves that part as it was.
func (r *reloads) add(name string, apply func(*configs.Config) error) {
	if r == nil {
		return // wired without reloading (tests)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parts = append(r.parts, reloadPart{name, apply})
}

// run reloads on every signal from hup until ctx ends. With a config file
// it is read (reread) and checked again (a file with errors changes
// nothing); without one (reread nil), the built-in config is what there
// is, so only the parts that read their own files (the inventory) change.
func (r *reloads) run(ctx context.Context, hup <-chan os.Signal, reread func(context.Context) (*configs.Config, error), current *configs.Config, logger *slog.Logger) {
	// The targets running, for the log line of the next reload.
	snmpTargets, gnmiTargets := current.SNMP.Targets, current.GNMI.Targets
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		cfg := current
		if reread != nil {
			next, err := reread(ctx)
			if ctx.Err() != nil {
				return // stopping: the file was not waited for
			}
			if err != nil {
				r.fileFailed(err, logger)
				continue
			}
			cfg = next
		}
		attrs := []any{
			slog.String("snmp_targets", fmt.Sprintf("%d -> %d", len(snmpTargets), len(cfg.SNMP.Targets))),
			slog.String("gnmi_targets", fmt.Sprintf("%d -> %d", len(gnmiTargets), len(cfg.GNMI.Targets))),
		}
		attrs = append(attrs, targetChanges("snmp", snmpTargets, cfg.SNMP.Targets, func(t configs.SNMPTarget) (string, configs.SNMPTarget) { return t.Name, t.Settings() })...)
		attrs = append(attrs, targetChanges("gnmi", gnmiTargets, cfg.GNMI.Targets, func(t configs.GNMITarget) (string, configs.GNMITarget) { return t.Name, t.Settings() })...)
		done := r.apply(cfg, restartNeeded(current, cfg), logger.With(attrs...))
		if slices.Contains(done, partSNMPTargets) {
			snmpTargets = cfg.SNMP.Targets
		}
		if slices.Contains(done, partGNMITargets) {
			gnmiTargets = cfg.GNMI.Targets
		}
	}
}

// targetChanges are the log attributes naming the targets a reload adds,
// removes and changes (restarted with their new settings), as
// kind_added, kind_removed and kind_changed, each left out when empty.
// key gives a target's name and what tells a change (its settings less
// the line it is written on).
func targetChanges[T any](kind string, before, after []T, key func(T) (string, T)) []any {
	was := make(map[string]T, len(before))
	for _, t := range before {
		name, k := key(t)
		was[name] = k
	}
	var added, changed []string
	for _, t := range after {
		name, k := key(t)
		old, ok := was[name]
		switch {
		case !ok:
			added = append(added, name)
		case !reflect.DeepEqual(old, k):
			changed = append(changed, name)
		}
		delete(was, name)
	}
	removed := slices.Sorted(maps.Keys(was))
	var attrs []any
	for _, l := range []struct {
		what  string
		names []string
	}{{"added", added}, {"removed", removed}, {"changed", changed}} {
		if len(l.names) > 0 {
			attrs = append(attrs, slog.String(kind+"_"+l.what, nameList(l.names)))
		}
	}
	return attrs
}

// nameList joins names for a log line, the first 20 and a count of the
// rest: a reload of a thousand targets is not a line of a thousand names.
func nameList(names []string) string {
	const most = 20
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

// fileFailed counts a reload whose file had errors and logs it.
func (r *reloads) fileFailed(err error, logger *slog.Logger) {
	r.mu.Lock()
	r.refused, r.badFile = nil, true
	r.mu.Unlock()
	r.result(false) // before the log line, which tests wait for
	logger.Error("SIGHUP: config not reloaded; the running one stays", slog.Any("error", yamlerr.Brief(err)))
}

// took notes that part, which refused the last reload, has taken it since
// (the inventory's watch loaded the file fixed): once every part that
// refused has, the config is taken everywhere, and the metrics say so.
func (r *reloads) took(part string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.refused, part)
	if i < 0 {
		return
	}
	r.refused = slices.Delete(r.refused, i, i+1)
	if len(r.refused) == 0 && !r.badFile && r.m.total != nil {
		r.m.lastSuccess.Set(1)
		r.m.lastTime.SetToCurrentTime()
	}
}

// apply hands cfg to every part, logs what each did and counts the
// reload; it returns the names of the parts that took it.
func (r *reloads) apply(cfg *configs.Config, restart []string, logger *slog.Logger) (done []string) {
	r.mu.Lock()
	parts := append([]reloadPart(nil), r.parts...)
	// The inventory's Reload below is observed as its watch's loads
	// are: it is this reload being taken, not the last one.
	r.refused = nil
	r.mu.Unlock()
	var refused []string
	used := 0
	for _, p := range parts {
		err := p.apply(cfg)
		if errors.Is(err, errNotInUse) {
			continue
		}
		used++
		if err != nil {
			logger.Error("SIGHUP: not reloaded; it goes on as it was", slog.String("part", p.name), slog.Any("error", yamlerr.Brief(err)))
			refused = append(refused, p.name)
			continue
		}
		done = append(done, p.name)
	}
	r.mu.Lock()
	r.refused, r.badFile = refused, false
	r.mu.Unlock()
	if used == 0 {
		r.result(true)
		logger.Info("SIGHUP: nothing in this process reloads")
		return nil
	}
	r.result(len(done) == used)
	if len(done) == 0 {
		logger.Warn("SIGHUP: reloaded nothing; every part goes on as it was (see the errors above)",
			slog.String("restart_needed", strings.Join(restart, ", ")))
		return nil
	}
	switch {
	case len(refused) > 0:
		// Not the line of a reload that took: the metric says it failed.
		attrs := []any{slog.String("parts", strings.Join(done, ", ")), slog.String("refused", strings.Join(refused, ", "))}
		if len(restart) > 0 {
			attrs = append(attrs, slog.String("restart_needed", strings.Join(restart, ", ")))
		}
		logger.Warn("SIGHUP: reloaded in part; the parts that refused go on as they were (see the errors above)", attrs...)
	case len(restart) > 0:
		logger.Warn("SIGHUP: reloaded; these sections changed and take effect at restart", slog.String("parts", strings.Join(done, ", ")),
			slog.String("restart_needed", strings.Join(restart, ", ")))
	default:
		logger.Info("SIGHUP: reloaded", slog.String("parts", strings.Join(done, ", ")))
	}
	return done
}

// A config file modified less than configSettle ago may still be being
// written (an editor, a script, a deploy tool writing in chunks), and
// a file cut short can parse, with the first targets only: a reload
// waits until it has not changed for that long, at most configSettleMax
// (a modification time in the future).
const (
	configSettle    = 500 * time.Millisecond
	configSettleMax = 10 * time.Second
)

// loadSettled loads the config file once it has not been modified for
// settle (or maxWait has passed), and again if it changed while it was
// read; then it waits for the inventory and syslog rules files it names
// in the same way, as SIGHUP reads those too (a script writing both, or a
// file copied in and signalled at once); ctx ending stops the wait.
func loadSettled(ctx context.Context, file string, settle, maxWait time.Duration) (*configs.Config, error) {
	deadline := time.Now().Add(maxWait)
	for {
		st, err := waitSettled(ctx, file, settle, deadline)
		if err != nil {
			return nil, err
		}
		if st != nil && !st.Mode().IsRegular() && !st.IsDir() {
			// A pipe (-c <(envsubst < weir.yaml)) was read at start; read
			// again, its open would wait for a writer for good, holding
			// this and every later reload.
			return nil, fmt.Errorf("config: %s is not a regular file (%s): it was read at start; restart weir to change it", file, wholefile.Kind(st.Mode()))
		}
		cfg, err := configs.Load(file) // its error names the file
		if after, serr := os.Stat(file); st != nil && serr == nil && time.Now().Before(deadline) &&
			(!after.ModTime().Equal(st.ModTime()) || after.Size() != st.Size()) {
			continue // written as it was read
		}
		if err != nil {
			return cfg, err
		}
		for _, f := range []string{cfg.Enrich.Inventory, cfg.Enrich.SyslogRules} {
			if f == "" {
				continue
			}
			if _, err := waitSettled(ctx, f, settle, deadline); err != nil {
				return nil, err
			}
		}
		return cfg, err
	}
}

// waitSettled returns the file's state once it has not been modified for
// settle, or at the deadline (a modification time in the future); nil
// when it cannot be read, for its reader to report. Only ctx ending is an
// error.
func waitSettled(ctx context.Context, file string, settle time.Duration, deadline time.Time) (os.FileInfo, error) {
	for {
		st, err := os.Stat(file)
		if err != nil {
			return nil, nil
		}
		wait := settle - time.Since(st.ModTime())
		if wait <= 0 || !time.Now().Before(deadline) {
			return st, nil
		}
		t := time.NewTimer(min(wait, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// restartNeeded lists the sections of the config file (by their YAML
// keys) that differ between the config weir started with and next, apart
// from what a reload applies (SNMP and gNMI targets; the inventory is its
// own file): those take effect at the next start.
func restartNeeded(started, next *configs.Config) []string {
	a, b := *started, *next
	// Targets are applied, resolved against snmp.defaults and
	// gnmi.subscriptions: those are applied with them.
	a.SNMP.Targets, b.SNMP.Targets = nil, nil
	a.SNMP.Defaults, b.SNMP.Defaults = configs.SNMPTargetSpec{}, configs.SNMPTargetSpec{}
	// The profiles are read again with the file and applied with the
	// targets (and the trap receiver's varbind names), profiles_dir's from
	// the directory the new file names.
	a.SNMP.Profiles, b.SNMP.Profiles = nil, nil
	a.SNMP.ProfilesDir, b.SNMP.ProfilesDir = "", ""
	// The trap receiver's communities and users are applied.
	a.SNMP.Traps.Communities, b.SNMP.Traps.Communities = nil, nil
	a.SNMP.Traps.Users, b.SNMP.Traps.Users = nil, nil
	a.GNMI.Targets, b.GNMI.Targets = nil, nil
	// The inventory is read from the file the new config names.
	a.Enrich.Inventory, b.Enrich.Inventory = "", ""
	a.Enrich.SyslogRules, b.Enrich.SyslogRules = "", ""
	a.GNMI.Subscriptions, b.GNMI.Subscriptions = nil, nil
	a.File, b.File = "", ""
	// The Kafka listener's users and mechanisms are applied, unless
	// authentication is turned on or off.
	if a.Broker.KafkaSASL != nil && b.Broker.KafkaSASL != nil {
		a.Broker.KafkaSASL, b.Broker.KafkaSASL = nil, nil
	}
	// Defaults that follow the targets' intervals are applied with them.
	a.Sinks, b.Sinks = withoutDerived(a.Sinks), withoutDerived(b.Sinks)
	return changedKeys(reflect.ValueOf(a), reflect.ValueOf(b), "", 2)
}

// changedKeys names the YAML keys of structs a and b whose values differ,
// as paths under prefix ("broker.kafka_sasl"), looking depth levels deep
// into structs: a section's key says which setting waits for the start,
// where "enrich" alone did not.
func changedKeys(a, b reflect.Value, prefix string, depth int) []string {
	var out []string
	for i := range a.NumField() {
		name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		fa, fb := a.Field(i), b.Field(i)
		if reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			continue
		}
		if fa.Kind() == reflect.Struct && depth > 1 {
			if sub := changedKeys(fa, fb, prefix+name+".", depth-1); len(sub) > 0 {
				out = append(out, sub...)
				continue
			}
		}
		out = append(out, prefix+name)
	}
	return out
}

// withoutDerived is sinks without what a reload applies to the running
// sinks (a prometheus sink's staleness, set or the default Parse derives
// from the collectors' intervals, and its max_series), for comparison.
func withoutDerived(sinks []configs.Sink) []configs.Sink {
	out := slices.Clone(sinks)
	for i := range out {
		out[i].Staleness, out[i].DefaultStaleness, out[i].MaxSeries = 0, 0, 0
	}
	return out
}
