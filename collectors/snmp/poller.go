// Package snmp polls SNMP agents (v1, v2c, v3) with the tables and scalars
// their profiles name and publishes one telemetry.Metric per table row, one
// per profile's scalars and one status record per poll to raw.snmp.
//
// Each target has its own goroutine and its own gosnmp session, reused
// across polls, so a slow or dead agent delays nothing else. Polls of a
// target happen at a stable offset within its interval (a hash of its
// name), which spreads many targets evenly over the interval instead of
// bursting at its start, and keeps the spread the same across restarts. A
// poll may take at most one interval; if it overruns, the slots it
// overran are counted as skipped, never queued up behind it.
package snmp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gosnmp/gosnmp"
	"go.yaml.in/yaml/v3"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/publish"
	"github.com/weirnet/weir/internal/runset"
	"github.com/weirnet/weir/internal/snmpv3"
	"github.com/weirnet/weir/internal/targetfile"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/telemetry"
)

// OIDs the poller reads on its own.
const (
	oidSysUpTime   = "1.3.6.1.2.1.1.3.0"
	oidSysObjectID = "1.3.6.1.2.1.1.2.0"
)

// Config is what a Poller needs.
type Config struct {
	Targets  []configs.SNMPTarget
	Profiles *profile.Set
	// MaxConcurrency bounds the polls in flight; default 64.
	MaxConcurrency int
	// Topic receives the records; default raw.snmp.
	Topic   string
	Broker  broker.Broker
	Logger  *slog.Logger
	Metrics *Metrics
	// Owner, when set, says whether this process polls a target: asked
	// at each of the target's slots, so when several weir processes
	// share the targets (internal/shard) a target handed over between
	// them is polled at the same slot by its new owner, once per
	// interval. Nil polls every target.
	Owner func(name string) bool
	// MaxWalkVarbinds bounds one column's walk (see target.walk);
	// default 1,000,000, ten times a 100,000-interface table.
	MaxWalkVarbinds int
	// MaxPollBytes bounds what a poll's walks hold of the agent's
	// answers, by their OIDs' and string values' length; default 256
	// MiB, past a 100,000-interface if-mib poll (about 90 MiB). The
	// varbind bound alone let an agent answering 64 KB strings make a
	// poll hold gigabytes within seconds.
	MaxPollBytes int
	// DeviceName names a target's device for the key of its records,
	// asked with the target's name and host at each poll: weir passes
	// enrichment's naming (enrich.DeviceNamer.SNMPTarget: the
	// inventory's name for the target), so the device's polls and the
	// records and events enriched from them share one key and
	// partition. nil, or "", keys them by the target's name. Only the
	// key changes; the records name the target.
	DeviceName func(target, host string) string
	// StateFile keeps the names, hosts and tags of the targets (weir uses
	// data_dir/snmp/targets.json), so that a target taken out of the
	// config while weir was stopped is told removed at the next start
	// (see publishRemoved); "" keeps nothing.
	StateFile string
}

// Poller polls every target on its schedule.
type Poller struct {
	cfg Config
	sem chan struct{}
	set runset.Set // the targets' goroutines

	mu       sync.Mutex
	targets  []*target    // the latest list (Update changes it)
	profiles *profile.Set // the latest profiles (Reload changes them)

	publishes publishFailures
	// known keeps StateFile: the targets, and those removed whose
	// removal was not published, until the next start tells them.
	known *targetfile.Keeper[knownTarget]
	// knownRetry is how often a failed save of StateFile is tried again
	// (0: wholefile.RetryEvery).
	knownRetry time.Duration
	// removedLog throttles the lines of removals not published: a reload
	// removing hundreds with the broker down gave a line each.
	removedLog throttle.Shared
}

// publishFailures is the run of failed publishes of all targets, logged
// once for all: a broker that cannot take records (a full disk, a
// cluster away) fails every target's publishes at once, which a line per
// target would repeat a thousand times.
type publishFailures struct {
	mu      sync.Mutex
	run     throttle.Run
	failing map[string]bool // the targets whose last publish failed
	held    map[string]bool // the targets that failed in the run
}

// failed notes target's failed publish; it logs the first of the run, and
// then one each throttle.Every with how many failed meanwhile.
func (f *publishFailures) failed(logger *slog.Logger, target string, err error, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing == nil {
		f.failing, f.held = map[string]bool{}, map[string]bool{}
	}
	f.failing[target], f.held[target] = true, true
	if n, due := f.run.Failed(now); due {
		logger.Warn("snmp publish failed; each target's records are retried until its next poll, then dropped (weir_snmp_polls_total{result=\"publish_error\"})",
			"failed_publishes", n, "targets", len(f.failing), "err", err)
	}
}

// succeeded notes target's publish went through; the run ends, logged,
// once no target's last publish failed.
func (f *publishFailures) succeeded(logger *slog.Logger, target string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if failed, held, ended := f.drop(target); ended {
		logger.Info("snmp publishes work again", "failed_publishes", failed, "targets", held)
	}
}

// forget drops a target that stopped (removed by a reload): a run it was
// the last of ends without a line, as nothing published again.
func (f *publishFailures) forget(target string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drop(target)
}

// drop takes target off the failing list; when it was the last, the run
// ends, with how many publishes failed in it and how many targets it held.
func (f *publishFailures) drop(target string) (failed, held int, ended bool) {
	if !f.failing[target] {
		return 0, 0, false
	}
	delete(f.failing, target)
	if len(f.failing) > 0 {
		return 0, 0, false
	}
	failed, held = f.run.Ended(), len(f.held)
	clear(f.held)
	return failed, held, true
}

// New checks the targets against the profiles.
func New(cfg Config) (*Poller, error) {
	if cfg.Broker == nil {
		return nil, errors.New("snmp: no broker")
	}
	if cfg.Profiles == nil {
		return nil, errors.New("snmp: no profiles")
	}
	if cfg.MaxConcurrency <= 0 {
		cfg.MaxConcurrency = configs.DefaultSNMPMaxConcurrency
	}
	if cfg.Topic == "" {
		cfg.Topic = telemetry.TopicRawSNMP
	}
	if cfg.MaxWalkVarbinds <= 0 {
		cfg.MaxWalkVarbinds = 1_000_000
	}
	if cfg.MaxPollBytes <= 0 {
		cfg.MaxPollBytes = 256 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.Metrics == nil {
		m, err := NewMetrics(nil)
		if err != nil {
			return nil, err
		}
		cfg.Metrics = m
	}
	p := &Poller{cfg: cfg, sem: make(chan struct{}, cfg.MaxConcurrency), profiles: cfg.Profiles}
	p.known = targetfile.New(cfg.StateFile, p.knownTargets, func(k knownTarget) string { return k.Name }, cfg.Logger, "snmp")
	// A reload's removals (publishRemoved) share one bound, however many.
	p.set.GoneWithin = publishGrace
	targets, err := p.build(cfg.Profiles, cfg.Targets)
	if err != nil {
		return nil, err
	}
	p.targets = targets
	return p, nil
}

// CheckTargets reports the targets a poller with these profiles would
// refuse (New, Update), one line each: other parts that follow the SNMP
// targets (enrichment's device names) take a target list only when the
// poller would.
func CheckTargets(profiles *profile.Set, cfgs []configs.SNMPTarget) error {
	var errs []string
	for _, tc := range cfgs {
		if err := profiles.Check(tc.Profiles.Names); err != nil {
			errs = append(errs, fmt.Sprintf("snmp target %s (line %d): %v", tc.Name, tc.Line, err))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// build checks targets against the profiles and makes their pollers.
func (p *Poller) build(profiles *profile.Set, cfgs []configs.SNMPTarget) ([]*target, error) {
	if err := CheckTargets(profiles, cfgs); err != nil {
		return nil, err
	}
	targets := make([]*target, 0, len(cfgs))
	setKey := "" // of the whole set, for the auto targets: once
	for _, tc := range cfgs {
		t := &target{cfg: tc, p: p, set: profiles, log: p.cfg.Logger.With("target", tc.Name)}
		if tc.Profiles.Auto {
			if setKey == "" {
				var all []*profile.Profile
				for _, name := range profiles.Names() {
					pr, _ := profiles.Get(name)
					all = append(all, pr)
				}
				setKey = profilesText(all)
			}
			t.profKey = setKey
		} else {
			t.profiles, _ = profiles.Resolve(tc.Profiles.Names, false, "")
			t.profKey = profilesText(t.profiles)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// Run polls until ctx is done, then closes every session.
func (p *Poller) Run(ctx context.Context) error {
	p.mu.Lock()
	targets := p.targets
	members := p.members(targets)
	p.mu.Unlock()
	p.removedWhileStopped(ctx, targets)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { p.known.Run(ctx, p.knownRetry) })
	p.set.Run(ctx, members)
	return nil
}

// Update replaces the targets while the poller runs (a config reload):
// added targets start at their next slot, removed ones stop, changed ones
// restart with their new settings, and unchanged ones go on with their
// sessions and schedules. A target that does not check out against the
// profiles fails the whole update, and the running targets stay.
func (p *Poller) Update(cfgs []configs.SNMPTarget) error {
	return p.Reload(nil, cfgs)
}

// Reload is Update with profiles read again (a SIGHUP after a profile
// file was edited); nil keeps the profiles the poller has. A target whose
// profiles changed restarts with them, as a changed target does; with
// `profiles: auto`, any change to the set restarts it, to choose again.
func (p *Poller) Reload(profiles *profile.Set, cfgs []configs.SNMPTarget) error {
	p.mu.Lock()
	if profiles == nil {
		profiles = p.profiles
	}
	p.mu.Unlock()
	targets, err := p.build(profiles, cfgs)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.targets, p.profiles = targets, profiles
	p.mu.Unlock()
	// The set keeps an unchanged target's goroutine (and the target it
	// runs, with its session); the one built for it here is dropped.
	p.set.Update(p.members(targets))
	p.known.Save()
	return nil
}

// members are the targets' goroutines, keyed by name, config (the line a
// target is written on does not count) and profiles.
func (p *Poller) members(targets []*target) []runset.Member {
	out := make([]runset.Member, len(targets))
	for i, t := range targets {
		out[i] = runset.Member{Name: t.cfg.Name, Config: memberConfig{t.cfg.Settings(), t.profilesKey()}, Value: t, Run: t.run,
			Gone: func(ctx context.Context) {
				p.cfg.Metrics.forget(t.cfg.Name)
				if !t.owned {
					return
				}
				if !t.publishRemoved(ctx) {
					p.known.SaveSince(p.known.Unsaid(t.known()))
				}
			}}
	}
	return out
}

// PollOnce polls one target now, outside its schedule (for tests and
// `weir check`-style probes); it publishes like a scheduled poll.
func (p *Poller) PollOnce(ctx context.Context, name string) error {
	p.mu.Lock()
	targets := p.targets
	p.mu.Unlock()
	for _, t := range targets {
		if t.cfg.Name == name {
			defer t.close()
			return t.pollAndPublish(ctx, time.Now().Add(t.cfg.Interval), nil)
		}
	}
	return fmt.Errorf("snmp: no target %q", name)
}

// target is one agent: its config, session and resolved profiles. Only
// its own goroutine touches it.
type target struct {
	cfg      configs.SNMPTarget
	p        *Poller
	log      *slog.Logger
	sess     *gosnmp.GoSNMP
	set      *profile.Set // the profiles the target was built with
	profKey  string       // what of them a reload compares (profilesKey)
	profiles []*profile.Profile
	// sysObjectID the auto profiles were resolved for.
	autoFor string
	// owned: this process polled the target at its last slot.
	owned bool
	// wrongLogged names the columns a value of the wrong type was logged
	// for (once each; they are counted every time), the scalars the
	// agent has no instance at (logNoInstance), and a sysUpTime it does
	// not give (logNoUptime).
	wrongLogged map[string]bool
	// partialLog throttles the log line of walks cut short.
	partialLog throttle.Throttle
	// publishBytes is the size of the last poll's records, to size the
	// next one's buffer at once.
	publishBytes int
	// failing counts the polls failed in a row (for the log: a dead
	// target is logged when it fails, then every failLogEvery, and
	// when it answers again); failingSince is when the first failed,
	// failResult its last result, failLogged when it was last logged.
	failing      int
	failingSince time.Time
	failResult   string
	failLogged   time.Time
	// failSeen are the results of the run's failures so far: a target
	// failing by turns in two ways (a slow agent timing out, then cut
	// off at its interval) is logged for each way once, not at each turn.
	failSeen []string
	// overrunning counts the polls that ran into the next slot since
	// overrunLogged, when one was last logged (at most every
	// failLogEvery), and overrunSkipped the slots they skipped.
	overrunning    int
	overrunSkipped int
	overrunLogged  time.Time
	// privProbed is when diagnosePriv last asked the agent (probePriv).
	privProbed time.Time
	// lastResult is the last poll's result (weir_snmp_polls_total).
	lastResult string
	// diagnosed: the last poll's failure was diagnosed (the agent asked
	// again), which may run past the next slot.
	diagnosed bool
}

// failLogEvery is how often a target that goes on failing is logged
// again: 1,000 dead targets logged at every poll would be a line a
// second for each minute of interval.
const failLogEvery = 10 * time.Minute

// Offset returns where in its interval a target polls: a hash of the name,
// so it is stable across restarts and spreads targets evenly.
func Offset(name string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return time.Duration(h.Sum64() % uint64(interval))
}

// firstSlot is the first instant at or after now that is offset past a
// multiple of interval (since Go's zero time: for an interval that divides
// a day, since midnight UTC).
func firstSlot(now time.Time, interval, offset time.Duration) time.Time {
	base := now.Truncate(interval).Add(offset)
	for base.Before(now) {
		base = base.Add(interval)
	}
	// Truncate drops now's monotonic clock reading, and every later slot
	// would follow the wall clock: an NTP step back of an hour would stop
	// polling for an hour. As an offset from now, the slot keeps it.
	return now.Add(base.Sub(now))
}

// wallSkew is how far the wall clock moved against the monotonic clock
// between then and now (both read with time.Now, or derived from such a
// reading): 0 while neither was stepped or suspended.
func wallSkew(now, then time.Time) time.Duration {
	return now.Round(0).Sub(then.Round(0)) - now.Sub(then)
}

func (t *target) run(ctx context.Context) {
	defer t.close()
	defer t.p.publishes.forget(t.cfg.Name)
	m := t.p.cfg.Metrics
	// At zero from the start, so an alert on its rate or increase sees
	// the first skip (a series born at 1 shows no increase); where
	// processes share the targets, from the first slot this one owns.
	zero := func() {
		m.Skipped.WithLabelValues(t.cfg.Name)
		m.Varbinds.WithLabelValues(t.cfg.Name)
		m.Retries.WithLabelValues(t.cfg.Name)
	}
	if t.p.cfg.Owner == nil {
		zero()
	}
	interval := t.cfg.Interval
	next := firstSlot(time.Now(), interval, Offset(t.cfg.Name, interval))
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if skew := wallSkew(time.Now(), next); skew > time.Second || skew < -time.Second {
			// The wall clock stepped (NTP correcting a clock that was
			// off at boot) or the host was suspended since next was
			// set: the slots are the wall clock's, which every process
			// sharing the targets follows. This one is skipped.
			t.log.Info("snmp: the wall clock moved; polling at its slots again", "by", skew.Round(time.Millisecond))
			m.Skipped.WithLabelValues(t.cfg.Name).Inc()
			next = firstSlot(time.Now(), interval, Offset(t.cfg.Name, interval))
			timer.Reset(time.Until(next))
			continue
		}
		deadline := next.Add(interval)
		if owns := t.p.cfg.Owner; owns != nil && !owns(t.cfg.Name) {
			// Another weir process polls it now.
			if t.owned {
				t.log.Debug("snmp target handed over to another process")
				t.owned = false
				t.close()
				// The process that polls it now says when it last
				// answered: a frozen time here would read as a dead
				// target.
				m.LastSuccess.DeleteLabelValues(t.cfg.Name)
			}
			m.NotOwned.Inc()
			next = next.Add(interval)
			timer.Reset(time.Until(next))
			continue
		}
		if !t.owned {
			if t.p.cfg.Owner != nil {
				t.log.Debug("snmp target taken over from another process")
				zero()
			}
			t.owned = true
		}
		if !t.acquire(ctx, deadline) {
			if ctx.Err() != nil {
				return
			}
			// No slot all interval: this poll is skipped, and the
			// next one is due now.
			m.Skipped.WithLabelValues(t.cfg.Name).Inc()
			next = deadline
			timer.Reset(time.Until(next))
			continue
		}
		// A slot taken too late for the agent's timeout and retries
		// before the next slot: the poll would be cut off by weir's own
		// deadline and read as the agent timing out (a device down that
		// is not). Skip it; the next one is due at that slot.
		if need := min(t.cfg.Timeout*time.Duration(t.cfg.Retries+1), interval/2); time.Until(deadline) < need {
			<-t.p.sem
			m.Skipped.WithLabelValues(t.cfg.Name).Inc()
			t.log.Debug("snmp poll skipped: its concurrency slot came too late", "left", time.Until(deadline).Round(time.Millisecond))
			next = deadline
			timer.Reset(time.Until(next))
			continue
		}
		_ = t.pollAndPublish(ctx, deadline, func() { <-t.p.sem })
		if ctx.Err() != nil {
			return // a poll cut short by the stop overran nothing
		}
		next = deadline
		if now := time.Now(); !now.Before(next) && !t.silentToTheSlot(now, next) {
			// The poll ran into the following slot(s): skip them
			// rather than start late polls back to back.
			missed := now.Sub(next)/interval + 1
			m.Skipped.WithLabelValues(t.cfg.Name).Add(float64(missed))
			if t.diagnosed {
				// Its probes ran past the slot, not the poll: no
				// overrun of the interval to warn of.
				t.log.Debug("snmp poll slot skipped: the failure's diagnosis ran into it", "skipped", int(missed))
			} else {
				t.logOverrun(interval, int(missed), now)
			}
			next = next.Add(missed * interval)
		}
		timer.Reset(time.Until(next))
	}
}

// silentToTheSlot reports whether the last poll, which ended at now past
// the slot, was one of an agent that answered nothing, cut off at the
// slot a moment after its timeouts would have ended it: a poll starts a
// moment past its slot, so one whose timeout x (retries+1) fills the
// interval (as the config allows) ends a moment past the next. That slot
// is polled, late by the moment: skipped, a dead agent would be polled
// every other interval and logged as overrunning its interval, and
// asking a silent agent again costs it nothing.
func (t *target) silentToTheSlot(now, slot time.Time) bool {
	return t.lastResult == ResultTimeout && now.Sub(slot) < min(t.cfg.Interval/10, time.Second)
}

// acquire takes a concurrency slot, giving up at deadline.
func (t *target) acquire(ctx context.Context, deadline time.Time) bool {
	select {
	case t.p.sem <- struct{}{}:
		return true
	default:
	}
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	select {
	case t.p.sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	case <-wait.C:
		return false
	}
}

func (t *target) close() {
	if t.sess != nil && t.sess.Conn != nil {
		_ = t.sess.Conn.Close()
	}
	t.sess = nil
}

// session returns the target's gosnmp session, connecting on first use or
// after an error dropped it.
func (t *target) session() (*gosnmp.GoSNMP, error) {
	if t.sess != nil {
		return t.sess, nil
	}
	s, err := newSession(t.cfg)
	if err != nil {
		return nil, fmt.Errorf("snmp %s: %w", t.cfg.Name, err)
	}
	if err := connect(s, t.droppedDatagram); err != nil {
		return nil, fmt.Errorf("snmp %s: connect %s: %w", t.cfg.Name, net.JoinHostPort(t.cfg.Host, strconv.Itoa(int(t.cfg.Port))), err)
	}
	t.sess = s
	return s, nil
}

// droppedDatagram counts a datagram the target's socket dropped before
// gosnmp read it (filterConn), by reason.
func (t *target) droppedDatagram(reason string) {
	t.p.cfg.Metrics.DroppedDatagrams.WithLabelValues(t.cfg.Name, reason).Inc()
}

// newSession maps a target's config to a gosnmp session.
func newSession(c configs.SNMPTarget) (*gosnmp.GoSNMP, error) {
	s := &gosnmp.GoSNMP{
		Target:         c.Host,
		Port:           c.Port,
		Transport:      "udp",
		Community:      c.Community,
		Timeout:        c.Timeout,
		Retries:        c.Retries,
		MaxRepetitions: uint32(c.MaxRepetitions),
		MaxOids:        gosnmp.MaxOids,
		Context:        context.Background(),
		// A multi-homed agent may answer from another address; a
		// connected socket never sees those answers.
		UseUnconnectedUDPSocket: c.UnconnectedUDP,
	}
	switch c.Version {
	case "1":
		s.Version = gosnmp.Version1
	case "2c":
		s.Version = gosnmp.Version2c
	case "3":
		s.Version = gosnmp.Version3
		usm, flags, err := snmpv3.USM(c.V3)
		if err != nil {
			return nil, err
		}
		s.SecurityModel = gosnmp.UserSecurityModel
		s.MsgFlags = flags
		s.SecurityParameters = usm
		s.ContextName = c.V3.ContextName
	default:
		return nil, fmt.Errorf("unknown SNMP version %q", c.Version)
	}
	return s, nil
}

// poll is one poll's outcome.
type poll struct {
	start, end time.Time
	// lastAnswer is when the agent last answered a request of the poll.
	lastAnswer time.Time
	uptime     uint32
	varbinds   int
	// retries counts requests sent again after no answer in time.
	retries int
	// unmatched counts datagrams read since the last answer taken:
	// none answered the request under way.
	unmatched int
	// held is the length of the OIDs and string values the poll's walks
	// read (varbindSize), bounded by Config.MaxPollBytes.
	held    int
	records []telemetry.Metric
	err     error
	// lastOID is the greatest OID the agent answered with a value in
	// the poll; ends are the walks it ended with endOfMibView (or v1's
	// noSuchName). A walk ended so before lastOID was cut short (see
	// partialWalks).
	lastOID string
	ends    []walkEnd
	partial int
}

// walkEnd is a column walk the agent ended after OID at, saying its MIB
// view ends there, for reason (PartialEndOfMibView, PartialNoSuchName), or
// with an answer of nothing (PartialEmptyAnswer), wrapped to an OID
// before the one asked (PartialWrapped), or with a GET's exception
// (PartialNoSuchObject).
type walkEnd struct{ column, at, reason string }

// saw notes an OID the agent answered with a value.
func (res *poll) saw(pdu gosnmp.SnmpPDU) {
	switch pdu.Type {
	case gosnmp.EndOfMibView, gosnmp.NoSuchObject, gosnmp.NoSuchInstance:
		return
	}
	if res.lastOID == "" || oidCompare(pdu.Name, res.lastOID) > 0 {
		res.lastOID = pdu.Name
	}
}

// pollAndPublish polls, publishes the records and the status record, and
// updates the self-metrics. release, when set, is called once the agent is
// done with, before publishing: a broker that is stuck (a Kafka partition
// without a leader) then holds up this target's publish, for at most an
// interval, but not the concurrency slot other targets poll with.
func (t *target) pollAndPublish(ctx context.Context, deadline time.Time, release func()) error {
	if release == nil {
		release = func() {}
	}
	release = sync.OnceFunc(release)
	defer release() // on every return
	m := t.p.cfg.Metrics
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	reused := t.sess != nil // the last poll went well on this session
	res := t.poll(pctx)
	if res.err != nil && reused && t.cfg.Version == "3" && pctx.Err() == nil && strings.Contains(res.err.Error(), "not authentic") {
		// The agent restarted (its engine boots, time or ID moved): it
		// answers with an unauthenticated report, which gosnmp discards
		// as not authentic instead of learning the engine's new state.
		// A fresh session discovers it; only if that fails too is the
		// user's auth wrong.
		t.log.Debug("snmp v3 session refused after working; discovering the engine again", "err", res.err)
		t.close()
		start := res.start
		res = t.poll(pctx)
		res.start = start
	}
	if ctx.Err() != nil && res.err != nil {
		return ctx.Err() // shutting down: not the agent's fault
	}
	// (gosnmp gives the deadline's error when the socket's read deadline,
	// set to it, fires: maybe before pctx's own timer has.)
	if errors.Is(res.err, context.DeadlineExceeded) && !res.lastAnswer.IsZero() &&
		res.end.Sub(res.lastAnswer) < t.cfg.Timeout*time.Duration(t.cfg.Retries+1) {
		// Cut off at the next slot while the agent was answering (a
		// large table, a slow agent, a lossy path): the request in
		// flight had not used up its tries since the last answer, so
		// the interval is too short for the poll, which a timeout
		// would blame on the agent.
		res.err = t.cutOff(res)
	} else if errors.Is(res.err, context.DeadlineExceeded) {
		// Waiting for an agent that does not answer, at the next slot:
		// "context deadline exceeded" alone reads as weir's fault.
		at := strings.TrimPrefix(res.err.Error(), "snmp "+t.cfg.Name+": ")
		at = strings.TrimSuffix(at, ": "+context.DeadlineExceeded.Error())
		res.err = fmt.Errorf("snmp %s: %s: no answer by the next slot (timeout %v x (retries %d + 1), interval %v): %w",
			t.cfg.Name, at, t.cfg.Timeout, t.cfg.Retries, t.cfg.Interval, context.DeadlineExceeded)
	} else if errors.Is(res.err, syscall.ECONNREFUSED) {
		// The host answered ICMP port unreachable: "recvfrom: connection
		// refused" alone does not say so for UDP, nor which address.
		res.err = fmt.Errorf("%w: nothing listens on udp %s (the host answered port unreachable): is the agent running, on that port?",
			res.err, net.JoinHostPort(t.cfg.Host, strconv.Itoa(int(t.cfg.Port))))
	}
	// The agent is done with: the slot goes to another target before any
	// diagnosis below, which asks the agent again.
	release()
	t.diagnosed = false
	if res.err != nil && t.cfg.Version == "3" {
		// A poll of an agent that answered nothing ran to its deadline
		// when its timeouts fill the interval: the probes get time of
		// their own (only when probePriv lets them run), else each
		// would fail at once on the expired deadline and read as a
		// dead agent, a wrong priv password reported as a timeout.
		dctx := pctx
		if time.Until(deadline) < t.cfg.Timeout {
			var cancel context.CancelFunc
			dctx, cancel = context.WithTimeout(ctx, 3*t.cfg.Timeout)
			defer cancel()
		}
		switch {
		case strings.Contains(res.err.Error(), "not authentic"):
			res.err = t.diagnoseV3(dctx, res.err)
			t.diagnosed = true
		case (t.cfg.V3.SecurityLevel != "noAuthNoPriv" || t.cfg.V3.ContextName != "") && classify(res.err) == ResultTimeout &&
			res.varbinds == 0 && t.probePriv(res.end):
			// Nothing of the poll was answered: a context the agent
			// does not have or a wrong priv password (both of which
			// Net-SNMP answers with silence), a user it does not have
			// (which pysnmp answers with silence), or a dead agent. One
			// request lost mid-walk is none of them.
			res.err = t.diagnoseSilence(dctx, res.err)
			t.diagnosed = true
		}
		res.end = time.Now() // the probe is part of the poll
	} else if res.err != nil && classify(res.err) == ResultTimeout && res.unmatched > 0 && res.varbinds == 0 && res.lastAnswer.IsZero() {
		// Something answered, but never a request of the poll: gosnmp
		// drops an answer with another request ID and waits on, and
		// the request times out. The agent is not down nor refusing the
		// community, as the timeout would say; it answers wrongly
		// (counted error). Only when nothing of the poll was answered:
		// after an answer, a late duplicate of it (a request sent again
		// and answered twice) would read so before a plain timeout.
		res.err = fmt.Errorf("%v (the agent sent %d datagram(s) but no answer to the request: they carry other request IDs, or do not decode; a broken agent, or another program answering on its port)", res.err, res.unmatched)
	} else if res.err != nil && classify(res.err) == ResultTimeout && res.varbinds == 0 && res.lastAnswer.IsZero() {
		// Agents drop a request whose community they do not accept
		// without a word (RFC 3584 lets them; Net-SNMP does): a typo
		// in community reads as a dead agent. Nothing can ask which.
		// The community is not shown: it is a password.
		res.err = fmt.Errorf("%w (nothing was answered: the agent is down or unreachable, or does not accept the community, which agents answer with silence)", res.err)
	}
	res.records = append(res.records, t.status(res))
	// Until shortly before the next slot (a tenth of the interval, at most
	// a second): a broker that is down or stuck costs this poll, not the
	// next one too, which starts on time. A poll done later than that has
	// until the slot, and one that ran past it that margin, for a healthy
	// broker's round trip. When weir stops, a publish under way has
	// publishGrace to finish.
	margin := min(t.cfg.Interval/10, time.Second)
	pubDeadline := deadline.Add(-margin)
	switch now := time.Now(); {
	case now.Before(pubDeadline):
	case now.Before(deadline):
		pubDeadline = deadline
	default:
		pubDeadline = now.Add(margin)
	}
	graceCtx, stopGrace := publish.Grace(ctx, publishGrace)
	pubCtx, cancelPub := context.WithDeadline(graceCtx, pubDeadline)
	err := t.publish(pubCtx, res.records)
	cancelPub()
	stopGrace()
	name := t.cfg.Name
	dur := res.end.Sub(res.start)
	m.Duration.WithLabelValues(name).Observe(dur.Seconds())
	m.Varbinds.WithLabelValues(name).Add(float64(res.varbinds))
	m.Retries.WithLabelValues(name).Add(float64(res.retries))
	result := classify(res.err)
	if err != nil && result == ResultOK {
		result = ResultPublishError
	}
	m.Polls.WithLabelValues(name, result).Inc()
	t.lastResult = result
	if res.err != nil || err != nil {
		// A target that has not answered since weir started (or took
		// it over) exports 0, as gNMI's last update does: without a
		// series, time() - last_success alerts would never fire for a
		// mistyped address. One that answered before keeps its time.
		m.LastSuccess.WithLabelValues(name)
	}
	// Noted whether the poll failed or not: a target whose agent went
	// silent during an outage publishes its status again when the broker
	// is back, and the outage ends.
	if err != nil {
		t.p.publishes.failed(t.p.cfg.Logger, name, err, res.end)
	} else {
		t.p.publishes.succeeded(t.p.cfg.Logger, name)
	}
	if res.err != nil {
		t.logFailure(result, dur, res.err, res.end)
		// A fresh session next time: after a timeout or an auth
		// failure the agent may have rebooted (new engine boots) or
		// its address may resolve elsewhere.
		t.close()
		return res.err
	}
	if err != nil {
		return err
	}
	m.LastSuccess.WithLabelValues(name).Set(float64(res.end.UnixNano()) / 1e9)
	if t.failing > 0 {
		t.log.Info("snmp poll succeeded again", "failed_polls", t.failing, "failing_for", res.end.Sub(t.failingSince).Round(time.Second))
		t.failing = 0
	}
	return nil
}

// cutOff is the error of a poll weir cut off at the end of its interval
// while the agent was still answering. It does not wrap the deadline:
// such a poll counts as an error, not as a timeout.
func (t *target) cutOff(res poll) error {
	at := strings.TrimPrefix(res.err.Error(), "snmp "+t.cfg.Name+": ")
	at = strings.TrimSuffix(at, ": "+context.DeadlineExceeded.Error())
	if res.retries > 0 {
		// The time went waiting for answers that never came, not on a
		// table too large: a longer interval would not help.
		return fmt.Errorf("snmp %s: poll cut off at the end of its interval (%v) after %d varbinds and %d requests sent again "+
			"after no answer within the timeout (%v): requests or answers are being lost (at %s)",
			t.cfg.Name, t.cfg.Interval, res.varbinds, res.retries, t.cfg.Timeout, at)
	}
	return fmt.Errorf("snmp %s: poll cut off at the end of its interval (%v) after %d varbinds, the agent answering all along: "+
		"it needs a longer interval or a larger max_repetitions (at %s)", t.cfg.Name, t.cfg.Interval, res.varbinds, at)
}

// logFailure logs a failed poll: the first of a run of failures, the
// first of each other result in the run, and then one every failLogEvery
// with how many failed meanwhile (weir_snmp_polls_total counts each).
func (t *target) logFailure(result string, dur time.Duration, err error, now time.Time) {
	t.failing++
	if t.failing == 1 {
		t.failingSince = now
		t.failSeen = t.failSeen[:0]
	}
	seen := slices.Contains(t.failSeen, result)
	if !seen {
		t.failSeen = append(t.failSeen, result)
	}
	if t.failing > 1 && seen && now.Sub(t.failLogged) < failLogEvery {
		return
	}
	if t.failing == 1 || !seen {
		t.log.Warn("snmp poll failed", "result", result, "duration", dur, "err", err)
	} else {
		t.log.Warn("snmp poll still failing", "result", result, "failed_polls", t.failing,
			"failing_for", now.Sub(t.failingSince).Round(time.Second), "err", err)
	}
	t.failResult, t.failLogged = result, now
}

// logOverrun logs a poll that ran into the next slot(s), skipping missed
// of them: at most once every failLogEvery, the later lines with how many
// polls overran and how many slots they skipped since the last line
// (weir_snmp_polls_skipped_total counts each skipped slot). A slow agent
// cut off at the end of every interval, or every other one, would
// otherwise be a line at every other slot.
func (t *target) logOverrun(interval time.Duration, missed int, now time.Time) {
	t.overrunning++
	t.overrunSkipped += missed
	if !t.overrunLogged.IsZero() && now.Sub(t.overrunLogged) < failLogEvery {
		return
	}
	if t.overrunning == 1 {
		t.log.Warn("snmp poll overran its interval", "interval", interval, "skipped", missed)
	} else {
		t.log.Warn("snmp polls still overrunning their interval", "interval", interval, "overran_polls", t.overrunning,
			"skipped", t.overrunSkipped, "since", now.Sub(t.overrunLogged).Round(time.Second))
	}
	t.overrunning, t.overrunSkipped, t.overrunLogged = 0, 0, now
}

// publishGrace bounds a publish under way when weir stops, as the other
// collectors bound their drain.
const publishGrace = 5 * time.Second

// diagnoseV3 explains an authentication failure. Net-SNMP and most agents
// answer a bad digest or an unknown user with an unauthenticated report,
// which gosnmp discards as "not authentic" without saying which. Asking
// again without authentication makes the agent name the problem: it
// reports usmStatsUnknownUserNames for an unknown user; a known user
// means the digest, i.e. the auth password or protocol, was wrong.
func (t *target) diagnoseV3(ctx context.Context, cause error) error {
	sent, err := t.probeUptime(ctx, "noAuthNoPriv", t.cfg.V3.ContextName)
	if !sent {
		return cause
	}
	user := t.cfg.V3.User
	switch {
	case errors.Is(err, gosnmp.ErrUnknownUsername):
		return t.unknownUser()
	case errors.Is(err, gosnmp.ErrUnknownSecurityLevel), err == nil,
		err != nil && !timedOut(err):
		// A known user. At authPriv, one the agent has no privacy for
		// (created with an auth password only) is refused with an
		// unauthenticated report too (usmStatsUnsupportedSecLevels):
		// answered at authNoPriv, its auth settings are right.
		if t.cfg.V3.SecurityLevel == "authPriv" {
			if sent, err := t.probeUptime(ctx, "authNoPriv", t.cfg.V3.ContextName); sent && err == nil {
				return fmt.Errorf("snmp %s: %w: the agent answers user %q at authNoPriv but not at authPriv: the user has no privacy there; "+
					"set security_level: authNoPriv, or give the user a priv password on the agent", t.cfg.Name, gosnmp.ErrUnknownSecurityLevel, user)
			}
		}
		return fmt.Errorf("snmp %s: %w: check auth_password and auth_protocol of user %q (the agent's reply failed authentication)", t.cfg.Name, gosnmp.ErrWrongDigest, user)
	}
	return cause
}

// probePriv reports whether a v3 timeout is worth diagnoseSilence's
// probes (a request more each, of up to a timeout, to a maybe dead
// agent): at the first failure of a run, while the last one was found to
// be the priv settings or the context, and every failLogEvery of a run of
// timeouts (an agent back with other priv settings).
func (t *target) probePriv(now time.Time) bool {
	if t.failing == 0 || t.failResult == ResultAuth || now.Sub(t.privProbed) >= failLogEvery {
		t.privProbed = now
		return true
	}
	return false
}

// diagnoseSilence explains a v3 poll the agent answered nothing of: a
// context_name, then the priv settings (which Net-SNMP drops requests for
// without a word), then the user (which pysnmp, snmpsim's agent, drops
// requests of without a word, but reports when asked without
// authentication).
func (t *target) diagnoseSilence(ctx context.Context, cause error) error {
	if t.cfg.V3.ContextName != "" {
		sent, err := t.probeUptime(ctx, t.cfg.V3.SecurityLevel, "")
		if sent && (err == nil || classify(err) != ResultTimeout) {
			return fmt.Errorf("snmp %s: %w: the agent answers user %q without a context but not in context %q: check context_name (%v)",
				t.cfg.Name, errUnknownContext, t.cfg.V3.User, t.cfg.V3.ContextName, cause)
		}
	}
	if t.cfg.V3.SecurityLevel == "authPriv" {
		if err := t.diagnosePriv(ctx, cause); err != cause {
			return err
		}
	}
	if sent, err := t.probeUptime(ctx, "noAuthNoPriv", t.cfg.V3.ContextName); sent && errors.Is(err, gosnmp.ErrUnknownUsername) {
		return t.unknownUser()
	}
	return cause
}

// unknownUser is the error of a v3 user the agent reports it does not have.
func (t *target) unknownUser() error {
	return fmt.Errorf("snmp %s: %w: the agent has no user %q", t.cfg.Name, gosnmp.ErrUnknownUsername, t.cfg.V3.User)
}

// errUnknownContext is a v3 context_name the agent does not have.
var errUnknownContext = errors.New("unknown context")

// diagnosePriv explains a v3 authPriv timeout. Net-SNMP drops a request
// it cannot decrypt without a word, so a wrong priv password looks like a
// dead agent. If the same user is answered without privacy, the agent is
// alive and the priv settings are what is wrong.
func (t *target) diagnosePriv(ctx context.Context, cause error) error {
	sent, err := t.probeUptime(ctx, "authNoPriv", t.cfg.V3.ContextName)
	switch {
	case !sent || err != nil && classify(err) == ResultTimeout:
		return cause // the agent does not answer at all
	case errors.Is(err, gosnmp.ErrUnknownUsername):
		return t.unknownUser()
	case t.cfg.V3.ContextName != "":
		// diagnoseSilence found no answer in the default context to
		// tell a context the agent does not have from the priv
		// settings by (pysnmp has none but the ones configured).
		return fmt.Errorf("snmp %s: %w (or %w): the agent answers user %q without privacy but not with it in context %q: check priv_password and priv_protocol, and context_name (%v)",
			t.cfg.Name, gosnmp.ErrDecryption, errUnknownContext, t.cfg.V3.User, t.cfg.V3.ContextName, cause)
	}
	return fmt.Errorf("snmp %s: %w: the agent answers user %q without privacy but not with it: check priv_password and priv_protocol (%v)",
		t.cfg.Name, gosnmp.ErrDecryption, t.cfg.V3.User, cause)
}

// probeUptime asks the agent once for sysUpTime as the target's v3 user at
// securityLevel in contextName and returns the answer's error. sent is
// false when no request went out (or gosnmp panicked; see poll).
func (t *target) probeUptime(ctx context.Context, securityLevel, contextName string) (sent bool, err error) {
	defer func() {
		if recover() != nil {
			sent, err = false, nil
		}
	}()
	probe := t.cfg
	probe.V3.SecurityLevel = securityLevel
	probe.V3.ContextName = contextName
	probe.Retries = 0
	s, err := newSession(probe)
	if err != nil {
		return false, nil
	}
	s.Context = ctx
	if err := connect(s, t.droppedDatagram); err != nil {
		return false, nil
	}
	defer s.Conn.Close()
	_, err = s.Get([]string{oidSysUpTime})
	return true, err
}

func classify(err error) string {
	switch {
	case err == nil:
		return ResultOK
	// Auth first: a diagnosed priv failure wraps the timeout it caused.
	case errors.Is(err, gosnmp.ErrUnknownUsername), errors.Is(err, gosnmp.ErrWrongDigest),
		errors.Is(err, gosnmp.ErrDecryption), errors.Is(err, gosnmp.ErrUnknownSecurityLevel),
		errors.Is(err, gosnmp.ErrUnknownEngineID), errors.Is(err, gosnmp.ErrNotInTimeWindow),
		errors.Is(err, errAccessRefused), errors.Is(err, errUnknownContext), strings.Contains(err.Error(), "not authentic"):
		return ResultAuth
	case timedOut(err):
		return ResultTimeout
	}
	return ResultError
}

// timedOut reports an agent that did not answer in time: gosnmp's retries
// spent on timeouts, the poll's deadline, or a socket's. Not by the
// error's text, which names the target (a target "fw-timeout-lab" failed
// every way as a timeout).
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, gosnmp.ErrMaxRetriesExceeded) ||
		errors.As(err, &ne) && ne.Timeout()
}

func (t *target) status(res poll) telemetry.Metric {
	up := int64(1)
	errText := ""
	if res.err != nil {
		up = 0
		errText = res.err.Error()
	}
	return telemetry.Metric{
		V:           telemetry.Version,
		Measurement: telemetry.MeasurementSNMPStatus,
		Device:      t.cfg.Name,
		Tags:        t.baseTags(),
		Fields: map[string]any{
			"snmp_up":          up,
			"duration_seconds": res.end.Sub(res.start).Seconds(),
			"varbinds":         int64(res.varbinds),
			"error":            errText,
			"partial_walks":    int64(res.partial),
		},
		Time:       res.start,
		ReceivedAt: res.end,
		Uptime:     res.uptime,
		Source:     "snmp",
	}
}

// publishRemoved says that a reload removed the target, which this
// process polled last: a snmp_status record of the target with the one
// field removed (true) and no snmp_up. Enrichment ends the target's
// reachability with it, so an outage it was in when it was taken out of
// the config (a device decommissioned) is cleared rather than alerted on
// for good. Bounded by publishGrace: the reload waits for it (the
// removals of one reload, or of one start, share it: they go at once).
// False when the record was not taken.
func (t *target) publishRemoved(ctx context.Context) bool {
	now := time.Now()
	m := telemetry.Metric{
		V:           telemetry.Version,
		Measurement: telemetry.MeasurementSNMPStatus,
		Device:      t.cfg.Name,
		Tags:        t.baseTags(),
		Fields:      map[string]any{"removed": true},
		Time:        now,
		ReceivedAt:  now,
		Source:      "snmp",
	}
	pctx, cancel := context.WithTimeout(ctx, publishGrace)
	defer cancel()
	if err := t.publish(pctx, []telemetry.Metric{m}); err != nil {
		if n, ok := t.p.removedLog.Due(time.Now()); ok {
			t.log.Warn("snmp: the removed target's last status was not published; weir's next start publishes it", "err", err, "times", n)
		}
		return false
	}
	return true
}

func (t *target) baseTags() map[string]string {
	tags := make(map[string]string, len(t.cfg.Tags)+1)
	for k, v := range t.cfg.Tags {
		tags[k] = v
	}
	tags[profile.TagAgent] = t.cfg.Host
	return tags
}

func (t *target) publish(ctx context.Context, ms []telemetry.Metric) error {
	recs := make([]broker.Record, 0, len(ms))
	key := []byte(t.cfg.Name)
	if t.p.cfg.DeviceName != nil {
		if name := t.p.cfg.DeviceName(t.cfg.Name, t.cfg.Host); name != "" {
			key = []byte(name)
		}
	}
	headers := []broker.Header{
		{Key: telemetry.HeaderSource, Value: []byte("snmp")},
		{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaMetric)},
	}
	// One buffer for the poll's records (each keeps its own bytes of it
	// when it grows), encoded without reflection: the same bytes
	// json.Marshal gives.
	buf := make([]byte, 0, t.publishBytes) // the last poll's size
	var keys []string
	for i := range ms {
		start := len(buf)
		var err error
		if buf, keys, err = ms[i].AppendJSON(buf, keys); err != nil {
			return fmt.Errorf("snmp %s: encode %s: %w", t.cfg.Name, ms[i].Measurement, err)
		}
		recs = append(recs, broker.Record{Timestamp: ms[i].Time, Key: key, Value: buf[start:len(buf):len(buf)], Headers: headers})
	}
	t.publishBytes = len(buf)
	// Retried while the broker fails, until ctx ends; a record the broker
	// refuses (over its size limit) is dropped alone, not the poll.
	var refused error
	pub := publish.Publisher{Broker: t.p.cfg.Broker, Topic: t.p.cfg.Topic, Name: "snmp",
		OnDrop: func(reason publish.Reason, _, _ int, err error) {
			if reason == publish.Refused && refused == nil {
				refused = err
			}
		}}
	res, err := pub.Publish(ctx, recs)
	switch {
	case err != nil:
		return fmt.Errorf("snmp %s: publish to %s: %d of %d records not taken: %w", t.cfg.Name, t.p.cfg.Topic, res.Unsent+res.Refused, len(recs), err)
	case refused != nil:
		return fmt.Errorf("snmp %s: publish to %s: %d of %d records refused: %w", t.cfg.Name, t.p.cfg.Topic, res.Refused, len(recs), refused)
	}
	return nil
}

// poll reads every scalar and table of the target's profiles.
func (t *target) poll(ctx context.Context) (res poll) {
	res.start = time.Now()
	defer func() { res.end = time.Now() }()
	defer func() {
		// gosnmp's decoder panics on some malformed packets (a fuzzer
		// found one in v3 headers); one broken agent must not take
		// weir down with it.
		if p := recover(); p != nil {
			res.err = fmt.Errorf("snmp %s: malformed response from the agent (decoder panic: %v)", t.cfg.Name, p)
		}
	}()
	s, err := t.session()
	if err != nil {
		res.err = err
		return res
	}
	// gosnmp checks this context between retries and bounds each
	// request's deadline by it.
	s.Context = ctx
	defer func() { s.Context = context.Background() }()
	// gosnmp calls OnRetry before each try after a request's first (and
	// once more before it gives up), OnSent after each send: a send after
	// OnRetry is a retry. A lossy path shows only in these.
	retrying := false
	s.OnRetry = func(*gosnmp.GoSNMP) { retrying = true }
	s.OnSent = func(*gosnmp.GoSNMP) {
		if retrying {
			res.retries++
			retrying = false
		}
	}
	// OnRecv is called for every datagram read, OnFinish when a request
	// got its answer: what is left counts datagrams that answered no
	// request of the poll (another request ID, which gosnmp drops
	// without a word and waits on).
	s.OnRecv = func(*gosnmp.GoSNMP) { res.unmatched++ }
	s.OnFinish = func(*gosnmp.GoSNMP) { res.unmatched = 0 }
	// Datagrams dropped before gosnmp reads them (filterConn) answered
	// no request either.
	fc, _ := s.Conn.(*filterConn)
	if fc != nil {
		fc.onDrop = func() { res.unmatched++ }
	}
	// What waits in the socket of a session kept from the poll before
	// came before any request of this one: late answers (to a request
	// sent again, both tries answered), which gosnmp would read first.
	// Counted unmatched, with an agent down since, they made its timeout
	// read as an agent answering with other request IDs.
	if n := dropStale(s.Conn); n > 0 && fc != nil && fc.dropped != nil {
		for range n {
			fc.dropped(DropLate)
		}
	}
	defer func() {
		s.OnRetry, s.OnSent, s.OnRecv, s.OnFinish = nil, nil, nil, nil
		if fc != nil {
			fc.onDrop = nil
		}
	}()
	// gosnmp looks at the context only between retries: a request to a
	// dead agent would hold up weir's stop (or a reload removing the
	// target) for its whole timeout. Cancelled (not at its deadline,
	// which gosnmp's request deadline already meets), the socket is
	// closed, which ends the read at once; the target is stopping, and
	// its session goes with it.
	defer context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			_ = s.Conn.Close()
		}
	})()

	if t.cfg.Profiles.Auto && t.autoFor == "" {
		if err := t.resolveAuto(s, &res); err != nil {
			res.err = err
			return res
		}
	}

	// Scalars, with sysUpTime always: it dates every record of the poll.
	oids := []string{oidSysUpTime}
	for _, p := range t.profiles {
		for _, sc := range p.Scalars {
			oids = append(oids, sc.OID)
		}
	}
	values, err := t.get(s, dedupe(oids), &res)
	if err != nil {
		res.err = err
		return res
	}
	// sysUpTime, also where a profile polls hrSystemUptime: the agent's
	// coldStart trap carries it, so the poll and the trap of one restart
	// give one boot time (enrich's bootTime); the host's uptime would
	// date the reboot earlier, and make it two device_rebooted.
	if v, ok := values[oidSysUpTime]; ok {
		if n, ok := counterValue(v); ok {
			res.uptime = uint32(n)
		}
	}
	if res.uptime == 0 {
		t.logNoUptime(values[oidSysUpTime])
	}
	if t.cfg.Profiles.Auto {
		// Re-resolve if the device changed (replaced hardware, new OS).
		if v, ok := values[oidSysObjectID]; ok {
			if oid := strings.TrimPrefix(fmt.Sprint(v.Value), "."); oid != t.autoFor && oid != "" {
				t.autoFor = ""
			}
		}
	}

	walked := map[string][]gosnmp.SnmpPDU{}
	walk := func(col string) ([]gosnmp.SnmpPDU, error) {
		if pdus, ok := walked[col]; ok {
			return pdus, nil
		}
		pdus, err := t.walk(s, col, &res)
		if err != nil {
			return nil, err
		}
		walked[col] = pdus
		return pdus, nil
	}
	// The scalar rows first, the system row first of all: its sysName
	// names the device for enrichment (an inventory may list it by that
	// name alone), for the rows after it in the poll; profiles go in
	// name order, and if-mib's rows, or the scalar rows of bgp4-mib,
	// host-resources, icmp and ip, would come before it.
	for _, p := range t.profiles {
		if r, ok := t.scalarRecord(p, values, res); ok {
			if r.Measurement == "snmp_system" {
				res.records = slices.Insert(res.records, 0, r)
			} else {
				res.records = append(res.records, r)
			}
		}
	}
	for _, p := range t.profiles {
		for ti := range p.Tables {
			rows, err := t.tableRecords(&p.Tables[ti], walk, res)
			if err != nil {
				res.err = err
				return res
			}
			res.records = append(res.records, rows...)
		}
	}
	t.partialWalks(&res)
	return res
}

// partialWalks flags the walks an agent ended with endOfMibView (RFC 3416
// section 4.2.3: nothing follows in its MIB view), or with noSuchName, its
// SNMPv1 form (or in the other ways walkEnd lists), although it answered
// with objects after that point in the same poll: it stopped early (a
// time or size limit of its own, a broken subagent), and the table is cut
// short. An agent that stops early in the last column it has cannot be
// told from one whose table ends there. The rows read are kept; each is
// counted and logged, at most once per throttle interval for the target.
func (t *target) partialWalks(res *poll) {
	for _, e := range res.ends {
		if res.lastOID == "" || oidCompare(e.at, res.lastOID) >= 0 {
			continue
		}
		res.partial++
		t.p.cfg.Metrics.PartialWalks.WithLabelValues(t.cfg.Name, e.reason).Inc()
		if n, ok := t.partialLog.Due(time.Now()); ok {
			t.log.Warn("snmp agent ended a walk saying its MIB view ends (endOfMibView, noSuchName, an answer without varbinds, one wrapped to an OID before the one asked, or noSuchObject/noSuchInstance) but has objects after it: the table is cut short",
				"reason", e.reason, "column", strings.TrimPrefix(e.column, "."), "after", strings.TrimPrefix(e.at, "."),
				"next_seen", strings.TrimPrefix(res.lastOID, "."), "times", n)
		}
	}
}

func (t *target) resolveAuto(s *gosnmp.GoSNMP, res *poll) error {
	values, err := t.get(s, []string{oidSysObjectID}, res)
	if err != nil {
		return err
	}
	v, ok := values[oidSysObjectID]
	if !ok {
		return fmt.Errorf("snmp %s: profiles auto: the agent has no sysObjectID", t.cfg.Name)
	}
	oid := strings.TrimPrefix(fmt.Sprint(v.Value), ".")
	ps, err := t.set.Resolve(t.cfg.Profiles.Names, true, oid)
	if err != nil {
		return fmt.Errorf("snmp %s: %w", t.cfg.Name, err)
	}
	t.profiles, t.autoFor = ps, oid
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	t.log.Info("snmp profiles chosen by sysObjectID", "sysObjectID", oid, "profiles", names)
	return nil
}

// get reads scalars, at most MaxOids per request. Missing objects are
// absent from the result, not errors.
func (t *target) get(s *gosnmp.GoSNMP, oids []string, res *poll) (map[string]gosnmp.SnmpPDU, error) {
	out := make(map[string]gosnmp.SnmpPDU, len(oids))
	for start := 0; start < len(oids); start += gosnmp.MaxOids {
		chunk := oids[start:min(start+gosnmp.MaxOids, len(oids))]
		if err := t.getChunk(s, chunk, out, res); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (t *target) getChunk(s *gosnmp.GoSNMP, chunk []string, out map[string]gosnmp.SnmpPDU, res *poll) error {
	pkt, err := s.Get(chunk)
	if err == nil {
		err = checkResponse(pkt)
	}
	if err != nil {
		return fmt.Errorf("snmp %s: get %s: %w", t.cfg.Name, chunk[0], err)
	}
	res.lastAnswer = time.Now()
	if pkt.Error != gosnmp.NoError {
		// SNMPv1 fails a whole GET for one missing object
		// (noSuchName at error-index): drop that object and ask again.
		if pkt.Error == gosnmp.NoSuchName && pkt.ErrorIndex > 0 && int(pkt.ErrorIndex) <= len(chunk) {
			t.logNoInstance(chunk[pkt.ErrorIndex-1]) // v1's noSuchInstance
			rest := append(append([]string(nil), chunk[:pkt.ErrorIndex-1]...), chunk[pkt.ErrorIndex:]...)
			if len(rest) == 0 {
				return nil
			}
			return t.getChunk(s, rest, out, res)
		}
		// The answer would not fit the agent's message size: ask for
		// the objects in halves, down to one a request.
		if pkt.Error == gosnmp.TooBig && len(chunk) > 1 {
			half := len(chunk) / 2
			if err := t.getChunk(s, chunk[:half], out, res); err != nil {
				return err
			}
			return t.getChunk(s, chunk[half:], out, res)
		}
		// The object at fault, where the agent says which (error-index).
		at := chunk[0]
		if i := int(pkt.ErrorIndex); i > 0 && i <= len(chunk) {
			at = chunk[i-1]
		}
		if pkt.Error == gosnmp.AuthorizationError {
			return fmt.Errorf("snmp %s: get %s: %w", t.cfg.Name, at, t.accessRefused())
		}
		return fmt.Errorf("snmp %s: get %s: agent error %v", t.cfg.Name, at, pkt.Error)
	}
	for _, v := range pkt.Variables {
		res.varbinds++
		if present(v) {
			out[strings.TrimPrefix(v.Name, ".")] = v
			res.saw(v)
		} else if v.Type == gosnmp.NoSuchInstance {
			t.logNoInstance(v.Name)
		}
	}
	return nil
}

// logNoInstance logs, once per OID, a scalar the agent has no instance at
// if its OID does not end in .0: most often a profile that names the object
// (sysLocation, 1.3.6.1.2.1.1.6) rather than its instance (….6.0), which
// would never give a value without a word. A table cell that is gone
// (….2.2.1.10.7) is logged once too.
func (t *target) logNoInstance(oid string) {
	if strings.HasSuffix(oid, ".0") {
		return // an instance the agent lacks: the object is missing
	}
	if t.wrongLogged == nil {
		t.wrongLogged = map[string]bool{}
	}
	if key := "noSuchInstance " + oid; !t.wrongLogged[key] {
		t.wrongLogged[key] = true
		t.log.Warn("snmp agent has no instance at a scalar's OID; a scalar's OID ends in .0 (the instance), a table cell's in its index",
			"oid", strings.TrimPrefix(oid, "."))
	}
}

// logNoUptime logs, once per target, an agent that answered the poll but
// gave no sysUpTime (v, absent or not TimeTicks): a view that leaves the
// system group out. The records go out without an uptime, so enrichment
// cannot tell a restart from a counter wrap and raises no device_rebooted;
// the poll works, and without a word that would go unnoticed. A sysUpTime
// of 0 (an agent in its first hundredth of a second) is not logged.
func (t *target) logNoUptime(v gosnmp.SnmpPDU) {
	if v.Type == gosnmp.TimeTicks {
		return
	}
	if t.wrongLogged == nil {
		t.wrongLogged = map[string]bool{}
	}
	if key := "noSysUpTime"; !t.wrongLogged[key] {
		t.wrongLogged[key] = true
		got := "nothing"
		if v.Name != "" {
			got = fmt.Sprintf("%v %v", v.Type, v.Value)
		}
		t.log.Warn("snmp agent gives no sysUpTime: its restarts cannot be told from counter wraps, and raise no device_rebooted; let its view include 1.3.6.1.2.1.1.3.0",
			"oid", oidSysUpTime, "got", got)
	}
}

// walk reads a column with GETBULK (GETNEXT for v1). The agent's answers
// are checked as gosnmp's walk does not: an error-status ends the walk with
// an error rather than with the rows so far (a table cut short would look
// like a good poll), tooBig halves max-repetitions, OIDs must increase, and
// a walk stops with an error past Config.MaxWalkVarbinds (a table that never
// ends, or a loop, would otherwise fill memory until the poll's deadline).
func (t *target) walk(s *gosnmp.GoSNMP, oid string, res *poll) ([]gosnmp.SnmpPDU, error) {
	root := "." + strings.TrimPrefix(oid, ".")
	var out []gosnmp.SnmpPDU
	fail := func(format string, args ...any) ([]gosnmp.SnmpPDU, error) {
		return nil, fmt.Errorf("snmp %s: walk %s: %s", t.cfg.Name, oid, fmt.Sprintf(format, args...))
	}
	reps := s.MaxRepetitions
	if reps == 0 {
		reps = 10
	}
	last, seen := root, 0
	for {
		var pkt *gosnmp.SnmpPacket
		var err error
		if s.Version == gosnmp.Version1 {
			pkt, err = s.GetNext([]string{last})
		} else {
			pkt, err = s.GetBulk([]string{last}, 0, reps)
		}
		if err == nil {
			err = checkResponse(pkt)
		}
		if err != nil {
			return nil, fmt.Errorf("snmp %s: walk %s: %w", t.cfg.Name, oid, err)
		}
		res.lastAnswer = time.Now()
		switch {
		case pkt.Error == gosnmp.NoError:
		case pkt.Error == gosnmp.NoSuchName:
			// SNMPv1's end of the MIB view; some v2c agents end a
			// GETBULK past their last object so too, as snmpbulkwalk
			// and gosnmp's walk take it.
			res.ends = append(res.ends, walkEnd{column: root, at: last, reason: PartialNoSuchName})
			return out, nil
		case pkt.Error == gosnmp.TooBig && reps > 1:
			reps /= 2 // the answer did not fit a datagram: ask for fewer
			continue
		case pkt.Error == gosnmp.AuthorizationError:
			return nil, fmt.Errorf("snmp %s: walk %s: %w", t.cfg.Name, oid, t.accessRefused())
		default:
			return fail("agent error %v after %d varbinds", pkt.Error, seen)
		}
		if len(pkt.Variables) == 0 {
			// Nothing, and no error: the end of the table, or an agent
			// that left out what did not fit its message size (RFC
			// 3416 section 4.2.3 lets it drop them all). Objects after
			// it in the poll tell the second: flagged as endOfMibView's.
			res.ends = append(res.ends, walkEnd{column: root, at: last, reason: PartialEmptyAnswer})
			return out, nil
		}
		for i, pdu := range pkt.Variables {
			res.varbinds++
			if pdu.Type == gosnmp.EndOfMibView {
				// The end of the agent's view, it says; objects after
				// it (in this answer or another walk) say otherwise.
				res.ends = append(res.ends, walkEnd{column: root, at: last, reason: PartialEndOfMibView})
				for _, rest := range pkt.Variables[i+1:] {
					res.saw(rest)
				}
				return out, nil
			}
			if pdu.Type == gosnmp.NoSuchObject || pdu.Type == gosnmp.NoSuchInstance {
				// Exceptions of a GET only (RFC 3416 section 4.2.2):
				// a GETNEXT or GETBULK is answered with the next
				// object or endOfMibView, as snmpd does at a
				// table's end and its MIB view's. An agent that
				// says so anyway ends the walk (as snmpbulkwalk
				// takes it), flagged as an early endOfMibView is
				// when objects come after it.
				res.ends = append(res.ends, walkEnd{column: root, at: last, reason: PartialNoSuchObject})
				for _, rest := range pkt.Variables[i+1:] {
					res.saw(rest)
				}
				return out, nil
			}
			if oidCompare(pdu.Name, last) <= 0 {
				if !strings.HasPrefix(pdu.Name, root+".") {
					// Outside the column and before the OID asked:
					// no successor. Some agents wrap to the start of
					// their MIB at its end, for endOfMibView; one
					// that does so mid-table (objects after it in the
					// poll) cut the table short, as an early
					// endOfMibView does: flagged the same way.
					res.ends = append(res.ends, walkEnd{column: root, at: last, reason: PartialWrapped})
					return out, nil
				}
				return fail("OID not increasing: %s after %s", pdu.Name, last)
			}
			res.saw(pdu)
			if !strings.HasPrefix(pdu.Name, root+".") {
				if last == root && i == 0 {
					// Nothing under oid: it may name an object itself.
					return t.walkLeaf(s, root, res)
				}
				return out, nil // past the column
			}
			if seen++; seen > t.p.cfg.MaxWalkVarbinds {
				return fail("more than %d varbinds: a table this large, or an agent that loops", t.p.cfg.MaxWalkVarbinds)
			}
			if res.held += varbindSize(pdu); res.held > t.p.cfg.MaxPollBytes {
				return fail("the poll's answers hold more than %d MiB (%d varbinds of this column): values this large, or an agent that loops",
					t.p.cfg.MaxPollBytes>>20, seen)
			}
			last = pdu.Name
			if present(pdu) {
				out = append(out, pdu)
			}
		}
	}
}

// varbindSize is what a varbind a walk keeps holds of the agent's answer,
// as far as the agent chooses it: its OID, and a string's length.
func varbindSize(pdu gosnmp.SnmpPDU) int {
	n := len(pdu.Name)
	switch v := pdu.Value.(type) {
	case []byte:
		n += len(v)
	case string:
		n += len(v)
	}
	return n
}

// walkLeaf is a walk of an OID that names an object rather than a
// subtree: a GET of it, as gosnmp's walk falls back to.
func (t *target) walkLeaf(s *gosnmp.GoSNMP, root string, res *poll) ([]gosnmp.SnmpPDU, error) {
	pkt, err := s.Get([]string{root})
	if err == nil {
		err = checkResponse(pkt)
	}
	if err != nil {
		return nil, fmt.Errorf("snmp %s: walk %s: %w", t.cfg.Name, root, err)
	}
	res.lastAnswer = time.Now()
	var out []gosnmp.SnmpPDU
	if pkt.Error == gosnmp.NoError {
		for _, pdu := range pkt.Variables {
			res.varbinds++
			if pdu.Name == root && present(pdu) {
				out = append(out, pdu)
			}
		}
	}
	return out, nil
}

// errAccessRefused is an agent's error-status authorizationError: its
// access control (VACM) refuses the credentials weir polls with.
var errAccessRefused = errors.New("agent error AuthorizationError")

// accessRefused is errAccessRefused with what to check: for SNMPv3, the
// security level (an agent that lets a user read at authPriv only refuses
// it at authNoPriv), else the community's access.
func (t *target) accessRefused() error {
	if t.cfg.Version == "3" {
		return fmt.Errorf("%w: the agent refuses user %q at %s: check security_level against the user's access on the agent (its rouser or group level, and view)",
			errAccessRefused, t.cfg.V3.User, t.cfg.V3.SecurityLevel)
	}
	return fmt.Errorf("%w: the agent refuses the community: check its access on the agent (rocommunity, view)", errAccessRefused)
}

// checkResponse fails an answer that is not a Response PDU. gosnmp matches
// answers to requests by request ID only, so a peer that sends the request
// back (a UDP echo service on the port, a reflecting middlebox) would pass
// as an agent with a Null for every object, and the poll as a good one
// without data; and an SNMPv3 Report it does not recognise is returned
// without an error.
func checkResponse(pkt *gosnmp.SnmpPacket) error {
	if pkt.PDUType == gosnmp.GetResponse {
		return nil
	}
	if pkt.PDUType == gosnmp.Report && len(pkt.Variables) > 0 {
		oid := strings.TrimPrefix(pkt.Variables[0].Name, ".")
		if err, ok := usmReports[oid]; ok {
			// A USM error the agent still reports after gosnmp's
			// retry: an auth result, as gosnmp's own errors are.
			return fmt.Errorf("agent answered with a Report PDU (%s): %w", oid, err)
		}
		return fmt.Errorf("agent answered with a Report PDU (%s), not a response", oid)
	}
	return fmt.Errorf("agent answered with a %v PDU, not a response", pkt.PDUType)
}

// usmReports are RFC 3414's usmStats counters an agent reports, as the
// errors gosnmp gives for them.
var usmReports = map[string]error{
	"1.3.6.1.6.3.15.1.1.1.0": gosnmp.ErrUnknownSecurityLevel,
	"1.3.6.1.6.3.15.1.1.2.0": gosnmp.ErrNotInTimeWindow,
	"1.3.6.1.6.3.15.1.1.3.0": gosnmp.ErrUnknownUsername,
	"1.3.6.1.6.3.15.1.1.4.0": gosnmp.ErrUnknownEngineID,
	"1.3.6.1.6.3.15.1.1.5.0": gosnmp.ErrWrongDigest,
	"1.3.6.1.6.3.15.1.1.6.0": gosnmp.ErrDecryption,
}

// oidCompare compares two dotted OIDs numerically, arc by arc, with or
// without a leading dot, without allocating.
func oidCompare(a, b string) int {
	a, b = strings.TrimPrefix(a, "."), strings.TrimPrefix(b, ".")
	for a != "" && b != "" {
		x, restA := nextArc(a)
		y, restB := nextArc(b)
		if x != y {
			return cmp.Compare(x, y)
		}
		a, b = restA, restB
	}
	return cmp.Compare(len(a), len(b))
}

// nextArc splits the first arc off a dotted OID.
func nextArc(s string) (uint64, string) {
	var n uint64
	i := 0
	for ; i < len(s) && s[i] != '.'; i++ {
		n = n*10 + uint64(s[i]-'0')
	}
	if i < len(s) {
		i++ // the dot
	}
	return n, s[i:]
}

func (t *target) scalarRecord(p *profile.Profile, values map[string]gosnmp.SnmpPDU, res poll) (telemetry.Metric, bool) {
	if len(p.Scalars) == 0 {
		return telemetry.Metric{}, false
	}
	tags := t.baseTags()
	base := len(tags) // the target's tags and agent (which a tag of that name shares)
	fields := map[string]any{}
	var counters counterNames
	for i := range p.Scalars {
		sc := &p.Scalars[i]
		v, ok := values[sc.OID]
		if !ok {
			continue
		}
		if outOfRange(v) {
			t.invalidValue(sc, v)
		} else if !setValue(sc, v, tags, fields, &counters) {
			t.wrongType(sc, v)
		}
	}
	if len(fields) == 0 && len(tags) == base {
		return telemetry.Metric{}, false // the agent has none of them
	}
	return t.metric(p.Measurement, tags, fields, counters, res), true
}

// counterNames are a record's counter fields, and those of them the agent
// sent as Counter64 (telemetry.Metric.Counters64).
type counterNames struct{ all, wide []string }

func (t *target) metric(measurement string, tags map[string]string, fields map[string]any, counters counterNames, res poll) telemetry.Metric {
	sort.Strings(counters.all)
	sort.Strings(counters.wide)
	return telemetry.Metric{
		V:           telemetry.Version,
		Measurement: measurement,
		Device:      t.cfg.Name,
		Tags:        tags,
		Fields:      fields,
		Counters:    counters.all,
		Counters64:  counters.wide,
		Time:        res.start,
		ReceivedAt:  time.Now(),
		Uptime:      res.uptime,
		Source:      "snmp",
	}
}

// setValue puts one varbind where its type says: a tag, or a typed field.
// It reports false for a value the column's type cannot take (a counter or
// gauge that is not a number, a negative counter), which it leaves out.
func setValue(m *profile.Metric, v gosnmp.SnmpPDU, tags map[string]string, fields map[string]any, counters *counterNames) bool {
	switch m.Type {
	case profile.TypeLabel:
		tags[m.Name] = text(v, m)
	case profile.TypeString:
		fields[m.Name] = text(v, m)
	case profile.TypeCounter:
		n, ok := counterValue(v)
		if !ok {
			return false
		}
		fields[m.Name] = n
		counters.all = append(counters.all, m.Name)
		if v.Type == gosnmp.Counter64 {
			counters.wide = append(counters.wide, m.Name)
		}
	case profile.TypeGauge:
		n, ok := numeric(v)
		if !ok {
			return false
		}
		fields[m.Name] = n
	}
	return true
}

// wrongType counts a value setValue left out, and logs the first of each
// column of the target: an agent that answers a column so does it every
// poll.
func (t *target) wrongType(m *profile.Metric, v gosnmp.SnmpPDU) {
	t.p.cfg.Metrics.WrongType.WithLabelValues(t.cfg.Name, m.Name).Inc()
	if t.wrongLogged == nil {
		t.wrongLogged = map[string]bool{}
	}
	if !t.wrongLogged[m.Name] {
		t.wrongLogged[m.Name] = true
		t.log.Warn("snmp value of the wrong type left out", "column", m.Name, "oid", v.Name, "type", v.Type.String(), "value", text(v, m))
	}
}

// outOfRange reports a value past its SNMP type's range (RFC 2578 section
// 7.1): gosnmp decodes an INTEGER, Counter32 or Gauge32 of more octets
// than 32 bits need into a wider Go integer, where Net-SNMP's decoder
// refuses it. (A TimeTicks or Unsigned32 so encoded gosnmp cuts to its
// low 32 bits, past telling.)
func outOfRange(v gosnmp.SnmpPDU) bool {
	switch v.Type {
	case gosnmp.Integer:
		n, ok := v.Value.(int)
		return ok && (n < math.MinInt32 || n > math.MaxInt32)
	case gosnmp.Counter32, gosnmp.Gauge32:
		n, ok := v.Value.(uint)
		return ok && uint64(n) > math.MaxUint32
	}
	return false
}

// invalidValue counts a value outOfRange left out of its record, and logs
// the first of each column of the target.
func (t *target) invalidValue(m *profile.Metric, v gosnmp.SnmpPDU) {
	t.p.cfg.Metrics.InvalidValues.WithLabelValues(t.cfg.Name, m.Name, InvalidOutOfRange).Inc()
	if t.wrongLogged == nil {
		t.wrongLogged = map[string]bool{}
	}
	if key := "out_of_range " + m.Name; !t.wrongLogged[key] {
		t.wrongLogged[key] = true
		t.log.Warn("snmp value past its type's range left out (encoded in more octets than the type holds)",
			"column", m.Name, "oid", v.Name, "type", v.Type.String(), "value", fmt.Sprint(v.Value))
	}
}

type cell struct {
	m   *profile.Metric
	pdu gosnmp.SnmpPDU
}

// tableRecords walks a table's columns and joins and builds one record
// per row.
func (t *target) tableRecords(tb *profile.Table, walk func(string) ([]gosnmp.SnmpPDU, error), res poll) ([]telemetry.Metric, error) {
	rows := map[string][]cell{}
	var order []string
	addColumn := func(c *profile.Metric, create bool) error {
		pdus, err := walk(c.OID)
		if err != nil {
			return err
		}
		prefix := "." + c.OID + "."
		for _, pdu := range pdus {
			suffix, ok := strings.CutPrefix(pdu.Name, prefix)
			if !ok {
				continue
			}
			if _, exists := rows[suffix]; !exists {
				if !create {
					continue // a joined table adds to rows, never makes them
				}
				order = append(order, suffix)
			}
			rows[suffix] = append(rows[suffix], cell{c, pdu})
		}
		return nil
	}
	for ci := range tb.Columns {
		if err := addColumn(&tb.Columns[ci], true); err != nil {
			return nil, err
		}
	}
	for ji := range tb.Joins {
		j := &tb.Joins[ji]
		if j.On == "" {
			for ci := range j.Columns {
				if err := addColumn(&j.Columns[ci], false); err != nil {
					return nil, err
				}
			}
			continue
		}
		// Lookup join: the value of column On is the other table's
		// index.
		for ci := range j.Columns {
			c := &j.Columns[ci]
			pdus, err := walk(c.OID)
			if err != nil {
				return nil, err
			}
			byIndex := make(map[string]gosnmp.SnmpPDU, len(pdus))
			prefix := "." + c.OID + "."
			for _, pdu := range pdus {
				if suffix, ok := strings.CutPrefix(pdu.Name, prefix); ok {
					byIndex[suffix] = pdu
				}
			}
			for suffix, cells := range rows {
				for _, cl := range cells {
					if cl.m.Name != j.On {
						continue
					}
					if pdu, ok := byIndex[text(cl.pdu, &profile.Metric{})]; ok {
						rows[suffix] = append(rows[suffix], cell{c, pdu})
					}
				}
			}
		}
	}
	sortIndexes(order)
	out := make([]telemetry.Metric, 0, len(order))
	for _, suffix := range order {
		tags := t.baseTags()
		for k, v := range decodeIndex(suffix, tb.Index) {
			tags[k] = v
		}
		fields := map[string]any{}
		var counters counterNames
		for _, cl := range rows[suffix] {
			if outOfRange(cl.pdu) {
				t.invalidValue(cl.m, cl.pdu)
			} else if !setValue(cl.m, cl.pdu, tags, fields, &counters) {
				t.wrongType(cl.m, cl.pdu)
			}
		}
		out = append(out, t.metric(tb.Measurement, tags, fields, counters, res))
	}
	return out, nil
}

// sortIndexes orders row suffixes numerically, as the agent does.
func sortIndexes(s []string) {
	slices.SortFunc(s, oidCompare)
}

func dedupe(oids []string) []string {
	seen := make(map[string]bool, len(oids))
	out := oids[:0]
	for _, o := range oids {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// memberConfig is what a running target is compared by at a reload
// (reflect.DeepEqual).
type memberConfig struct {
	target   configs.SNMPTarget
	profiles string
}

// profilesKey is what of the profiles a target polls with: the ones it
// names, or the whole set it chooses from by sysObjectID.
func (t *target) profilesKey() string { return t.profKey }

// profilesText is profiles as a reload compares them: their YAML, without
// the file and lines they were read from (yaml:"-"), so that a comment or
// a blank line added to a file restarts no target.
func profilesText(ps []*profile.Profile) string {
	b, err := yaml.Marshal(ps)
	if err != nil {
		return fmt.Sprintf("%p", ps) // not expected; compared as changed
	}
	return string(b)
}
