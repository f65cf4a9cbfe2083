// Package trap receives SNMP notifications (v1, v2c and v3 traps, and
// informs) on UDP and publishes each as a telemetry.Trap to raw.traps.
//
// Every notification is published in the SNMPv2 form: v1 traps are
// converted as RFC 3584 section 3.1 says. Varbinds are named from the
// built-in table of standard notifications and objects and from the SNMP
// profiles. Senders with an unknown community or user are counted and
// dropped. Informs are acknowledged once the trap is in the log, so a
// sender retries what weir could not store.
package trap

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/promreg"
	"github.com/weirnet/weir/internal/publish"
	"github.com/weirnet/weir/internal/snmpv3"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/internal/udpdrops"
	"github.com/weirnet/weir/internal/udpsock"
	"github.com/weirnet/weir/telemetry"
)

// Outcomes, the "outcome" label of weir_trap_received_total.
const (
	OutcomePublished        = "published"
	OutcomeUnknownCommunity = "unknown_community"
	OutcomeUnknownUser      = "unknown_user"
	OutcomeAuthFailure      = "auth_failure"
	OutcomeWrongEngine      = "wrong_engine"
	OutcomeNotInTimeWindow  = "not_in_time_window"
	// OutcomeUnknownEngineID: a v3 inform localised for another engine
	// ID than the receiver's; answered with a Report (RFC 3414 section
	// 3.2, step 3) for the sender to discover it again.
	OutcomeUnknownEngineID = "unknown_engine_id"
	// OutcomeRetransmission: an inform sent again before its
	// acknowledgement arrived: acknowledged with it, published once.
	OutcomeRetransmission = "retransmission"
	// OutcomeLowSecurityLevel: a v3 notification below its user's
	// security_level (an unencrypted trap of an authPriv user, or one
	// neither signed nor encrypted, which anyone who knows the user name
	// could send): RFC 3414's unsupportedSecLevels.
	OutcomeLowSecurityLevel = "unsupported_security_level"
	OutcomeMalformed        = "malformed"
	// OutcomeDecryptionFailure: a v3 notification signed with its
	// user's right authentication key whose encrypted PDU does not
	// decrypt to one with the user's privacy key (a wrong priv password
	// or protocol): RFC 3414's decryptionError.
	OutcomeDecryptionFailure = "decryption_failure"
	OutcomeNotNotification   = "not_notification"
	OutcomeQueueFull         = "queue_full"
	OutcomePublishError      = "publish_error"
	OutcomeShutdown          = "shutdown"
	// OutcomeKernelDropped: the kernel dropped the datagram, its receive
	// buffer full (a flood); version unknown, as weir never read it.
	OutcomeKernelDropped = "kernel_dropped"
)

// Config is what a Receiver needs.
type Config struct {
	// Listen is the UDP address; default 127.0.0.1:5162.
	Listen string
	// Communities accepted from v1/v2c senders; empty accepts any.
	Communities []string
	// Users accepted from v3 senders.
	Users []configs.SNMPv3
	// Topic default raw.traps.
	Topic   string
	Broker  broker.Broker
	Names   *Names
	Logger  *slog.Logger
	Metrics *Metrics
	// QueueSize bounds the traps waiting to be published; beyond it
	// they are dropped and counted (UDP cannot push back). Default 65536.
	QueueSize int
	// QueueBytes bounds the memory they hold (as itemBytes estimates
	// it): a trap can hold 3,800 varbinds, and 65,536 of those would
	// hold tens of GiB while the broker stalls. Default 256 MiB.
	QueueBytes int64
	// EngineID is the receiver's SNMP engine ID for v3 informs, in hex
	// ("" the one kept in StateFile, or a new one): senders that need
	// it configured (Junos remote-engine, IOS "snmp-server engineID
	// remote") can be given a fixed one.
	EngineID string
	// StateFile keeps the engine ID and its boots across restarts (weir
	// uses data_dir/trap/engine.json); "" keeps nothing: a new engine at
	// every start, whose informs a running sender loses.
	StateFile string
	// DeviceName names the device a trap came from, for its key: weir
	// passes enrichment's naming (enrich.DeviceNamer.TrapDevice: the
	// inventory's name for the agent in snmpTrapAddress.0, else for the
	// sender), so a device's traps and the events enriched from them
	// share one key and partition. nil, or "", keys a trap by its
	// sender's address. Only the key changes; it is called from one
	// goroutine.
	DeviceName func(*telemetry.Trap) string
}

// Metrics are the receiver's self-metrics.
type Metrics struct {
	Received *prometheus.CounterVec
	Acked    prometheus.Counter
	// InvalidVarbinds counts varbinds whose value does not fit its type
	// (by type and reason: InvalidWrongLength, InvalidOutOfRange), kept
	// in their notification marked invalid.
	InvalidVarbinds *prometheus.CounterVec
}

// NewMetrics registers the receiver's metrics on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_trap_received_total",
			Help: "SNMP notifications received, by version (1, 2c, 3, unknown) and outcome (published, unknown_community, unknown_user, auth_failure, decryption_failure, wrong_engine, unknown_engine_id, not_in_time_window, retransmission, malformed, unsupported_security_level, not_notification, queue_full, publish_error, shutdown, kernel_dropped).",
		}, []string{"version", "outcome"}),
		Acked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weir_trap_informs_acknowledged_total",
			Help: "Informs acknowledged after they were published.",
		}),
		InvalidVarbinds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_trap_varbinds_invalid_total",
			Help: "Varbinds received whose value does not fit its type, by type and reason (wrong_length: an IpAddress not of 4 octets, an empty integer; out_of_range: an integer of more octets than its type holds); the notification is kept, the value marked invalid with its octets in hex.",
		}, []string{"type", "reason"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.Received = promreg.Register(reg, m.Received, &err)
	m.Acked = promreg.Register(reg, m.Acked, &err)
	m.InvalidVarbinds = promreg.Register(reg, m.InvalidVarbinds, &err)
	return m, err
}

// Receiver listens for notifications.
type Receiver struct {
	cfg   Config
	names atomic.Pointer[Names] // cfg.Names, then SetNames'
	// access is who may send: cfg's communities and users, then
	// SetAccess's.
	access atomic.Pointer[access]
	ready  chan struct{}
	addr   net.Addr
	// engineID is this receiver's SNMP engine ID: v3 informs are sent
	// to it (the receiver of an inform is the authoritative engine), so
	// senders discover it first (RFC 3414 section 4).
	engineID string
	boots    uint32 // snmpEngineBoots: the starts of engineID (engineState)
	started  time.Time
	reports  atomic.Uint32 // usmStatsUnknownEngineIDs
	// notInTime is usmStatsNotInTimeWindows; unknownUsers,
	// wrongDigests, lowLevels and decryptionErrors the usmStats counters
	// of refusal Reports (see refusalReport).
	notInTime                                               atomic.Uint32
	unknownUsers, wrongDigests, lowLevels, decryptionErrors atomic.Uint32
	// clocks are the v3 trap senders' engine clocks (see inTime); the
	// read loop alone uses them.
	clocks map[string]engineClock
	// decodePanics counts datagrams that made the decoder panic
	// (recovered); the fuzz test reports them.
	decodePanics atomic.Int64
	// pub publishes to the broker; each batch gives a copy its outcomes.
	pub publish.Publisher
	// refusedLog throttles pub's refused records' log line.
	refusedLog throttle.Shared
	// informs keeps a sender's retransmissions of an inform from being
	// published again.
	informs *informMemo
	// queued is the itemBytes of the traps in the queue.
	queued atomic.Int64
	mu     sync.Mutex
}

// New checks the config and prepares the v3 users.
func New(cfg Config) (*Receiver, error) {
	if cfg.Broker == nil {
		return nil, errors.New("trap: no broker")
	}
	if cfg.Listen == "" {
		cfg.Listen = configs.DefaultTrapListen
	}
	if cfg.Topic == "" {
		cfg.Topic = telemetry.TopicRawTraps
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.Names == nil {
		cfg.Names = NewNames(nil)
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 65536
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = 256 << 20
	}
	if cfg.Metrics == nil {
		m, _ := NewMetrics(nil)
		cfg.Metrics = m
	}
	r := &Receiver{
		cfg:     cfg,
		ready:   make(chan struct{}),
		clocks:  map[string]engineClock{},
		started: time.Now(),
		pub:     publish.Publisher{Broker: cfg.Broker, Topic: cfg.Topic, Name: "trap", Logger: cfg.Logger},
		informs: newInformMemo(),
	}
	r.pub.RefusedLog = &r.refusedLog
	id, boots, note, err := startEngine(cfg.StateFile, cfg.EngineID, time.Now())
	if err != nil {
		return nil, fmt.Errorf("trap: %w", err)
	}
	if note != "" {
		cfg.Logger.Warn("trap: " + note)
	}
	r.engineID, r.boots = id, boots
	r.names.Store(cfg.Names)
	if err := r.SetAccess(cfg.Communities, cfg.Users); err != nil {
		return nil, err
	}
	return r, nil
}

// access is who may send notifications: the v1/v2c communities and the
// v3 users, with the decoder that knows the users' keys. It is read-only
// once built; SetAccess replaces it whole.
type access struct {
	communities map[string]bool     // empty accepts any
	users       map[string][]v3User // by user name: one entry per configured engine
	// dec decodes every datagram; the read loop alone uses it.
	dec *gosnmp.GoSNMP
}

// SetAccess replaces the communities and v3 users accepted (a config
// reloaded); datagrams read from then on are checked against them. On an
// error nothing changes.
func (r *Receiver) SetAccess(communities []string, users []configs.SNMPv3) error {
	a, err := newAccess(communities, users)
	if err != nil {
		return err
	}
	r.access.Store(a)
	return nil
}

func newAccess(communities []string, users []configs.SNMPv3) (*access, error) {
	a := &access{communities: map[string]bool{}, users: map[string][]v3User{},
		dec: &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel}}
	for _, c := range communities {
		a.communities[c] = true
	}
	if len(users) == 0 {
		return a, nil
	}
	table := gosnmp.NewSnmpV3SecurityParametersTable(gosnmp.Logger{})
	// The empty user decodes engine discovery probes, which carry
	// no user; anything else from it is dropped in decode.
	if err := table.Add("", &gosnmp.UsmSecurityParameters{AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv}); err != nil {
		return nil, fmt.Errorf("trap: %w", err)
	}
	for _, u := range users {
		usm, _, err := snmpv3.USM(u)
		if err != nil {
			return nil, fmt.Errorf("trap: user %s: %w", u.User, err)
		}
		if err := table.Add(u.User, usm); err != nil {
			return nil, fmt.Errorf("trap: user %s: %w", u.User, err)
		}
		a.users[u.User] = append(a.users[u.User], newV3User(u))
	}
	a.dec.SetTrapSecurityParametersTable(table)
	if err := a.pinDecoders(); err != nil {
		return nil, err
	}
	return a, nil
}

// pinDecoders gives every entry of a user with an entry pinned to an
// engine a decoder that knows only its own keys: gosnmp takes a message
// any of a user's entries authenticates, so one engine's keys could pass
// as another's, and the level to ask is that of the entry whose keys
// signed it (see decode).
func (a *access) pinDecoders() error {
	for _, entries := range a.users {
		if !slices.ContainsFunc(entries, func(u v3User) bool { return u.engine != "" }) {
			continue
		}
		for i := range entries {
			usm, _, err := snmpv3.USM(entries[i].cfg)
			if err != nil {
				return fmt.Errorf("trap: user %s: %w", entries[i].cfg.User, err)
			}
			table := gosnmp.NewSnmpV3SecurityParametersTable(gosnmp.Logger{})
			if err := table.Add(entries[i].cfg.User, usm); err != nil {
				return fmt.Errorf("trap: user %s: %w", entries[i].cfg.User, err)
			}
			entries[i].dec = &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel}
			entries[i].dec.SetTrapSecurityParametersTable(table)
		}
	}
	return nil
}

// newV3User is u as decode checks it: its engine, and the least level of
// its traps, the level written in the config, else authentication (with
// passwords) as snmptrapd asks by default (see configs.SNMPv3.LevelGiven).
func newV3User(u configs.SNMPv3) v3User {
	usm, level, _ := snmpv3.USM(u) // checked by the caller
	if !u.LevelGiven {
		level = min(level, gosnmp.AuthNoPriv)
	}
	v := v3User{cfg: u, engine: configs.EngineIDHex(u.EngineID), level: level}
	if usm != nil {
		v.auth, v.keyed = newAuthKey(usm)
		v.priv = usm.PrivacyProtocol != gosnmp.NoPriv
	}
	return v
}

// v3User is one configured entry of a v3 user name.
type v3User struct {
	cfg    configs.SNMPv3
	engine string                // the sender engine ID it is for (hex, lower case); "" any
	level  gosnmp.SnmpV3MsgFlags // the least security level its messages need
	// dec, for the entries of a user pinned to engines, decodes with this
	// entry's keys alone (pinDecoders).
	dec *gosnmp.GoSNMP
	// auth is its authentication key, keyed false for an entry without
	// one (see preAuthenticate).
	auth  authKey
	keyed bool
	// priv: the entry has a privacy key.
	priv bool
}

// Addr returns the bound address once Run is listening (useful with port 0).
func (r *Receiver) Addr(ctx context.Context) (net.Addr, error) {
	select {
	case <-r.ready:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.addr, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type item struct {
	trap telemetry.Trap
	ack  []byte // the encoded inform response, sent once published
	to   net.Addr
	// inform is the inform's key in Receiver.informs; nil for a trap.
	inform *informKey
	size   int64 // itemBytes, while queued
	// reason is why a malformed datagram was dropped, for its log line.
	reason string
}

// itemBytes estimates the memory a decoded trap holds: its strings and
// the Varbind structs and boxed values beside them (within a factor of 2
// of the heap measured for a trap of 3,800 varbinds, see
// TestQueueMemoryBounded).
func itemBytes(it *item) int64 {
	n := 256 + len(it.ack) + len(it.trap.TrapOID) + len(it.trap.TrapName) + len(it.trap.Device) + len(it.trap.SourceAddr)
	for i := range it.trap.Varbinds {
		vb := &it.trap.Varbinds[i]
		n += 96 + len(vb.OID) + len(vb.Name)
		if s, ok := vb.Value.(string); ok {
			n += len(s)
		}
	}
	return int64(n)
}

// SetNames replaces the table varbinds are named by (the SNMP profiles
// read again at a reload); traps decoded from then on use it.
func (r *Receiver) SetNames(n *Names) {
	if n != nil {
		r.names.Store(n)
	}
}

// Run listens until ctx is done.
func (r *Receiver) Run(ctx context.Context) error {
	conn, err := net.ListenPacket("udp", r.cfg.Listen)
	if err != nil {
		return fmt.Errorf("trap: listen %s: %w", r.cfg.Listen, err)
	}
	var watchDone chan struct{}
	if uc, ok := conn.(*net.UDPConn); ok {
		// A burst (a chassis losing power sends hundreds at once) must
		// wait in the kernel, not be dropped there.
		if got, ok := udpsock.SetReadBuffer(uc, readBufferSize); ok && got < readBufferSize {
			r.cfg.Logger.Warn("trap: UDP receive buffer smaller than wanted; raise net.core.rmem_max or run as root",
				"addr", uc.LocalAddr().String(), "wanted", readBufferSize, "got", got)
		}
		watchDone = make(chan struct{})
		go func() {
			defer close(watchDone)
			udpdrops.New(uc).Run(ctx, 2*time.Second, func(n uint64) {
				r.cfg.Metrics.Received.WithLabelValues("unknown", OutcomeKernelDropped).Add(float64(n))
				r.cfg.Logger.Warn("trap: kernel dropped UDP datagrams (receive buffer full)", "addr", uc.LocalAddr().String(), "dropped", n)
			})
		}()
		defer func() { <-watchDone }()
	}
	r.mu.Lock()
	r.addr = conn.LocalAddr()
	r.mu.Unlock()
	close(r.ready)
	r.cfg.Logger.Info("trap receiver listening", "addr", conn.LocalAddr().String(),
		"engine_id", hex.EncodeToString([]byte(r.engineID)), "engine_boots", r.boots)

	// Of pointers: an item is about 280 bytes, and a channel of 65,536
	// of them took 18 MB from the start, idle; one allocation a trap
	// is nothing at trap rates.
	queue := make(chan *item, r.cfg.QueueSize)
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		r.publishLoop(ctx, conn, queue)
	}()
	// Stopping ends the reads, not the socket: the informs published
	// during the drain are acknowledged on it, so their senders do not
	// send them again. It is closed once the drain is over.
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()

	buf := make([]byte, 65535)
	readBackoff := time.Duration(0)
	drops := &throttle.Set{Max: 4096} // by outcome and sender: who sends what is dropped
	// Refusals and engine discovery have a budget each: a flood of one
	// does not silence the other.
	var refusals, discoveries refusalReports
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			// A socket error that repeats must not spin a core.
			readBackoff = min(max(2*readBackoff, time.Millisecond), time.Second)
			r.cfg.Logger.Warn("trap read failed", "err", err, "retry_in", readBackoff)
			select {
			case <-time.After(readBackoff):
			case <-ctx.Done():
			}
			continue
		}
		readBackoff = 0
		now := time.Now()
		it, version, outcome := r.decode(buf[:n], from, now)
		if version == "3" && it.ack == nil && outcome != "" {
			if rep := r.refusalReport(buf[:n], outcome, &refusals, now); rep != nil {
				it.ack, it.to = rep, from
			}
		}
		if (outcome == outcomeDiscovery || outcome == OutcomeUnknownEngineID) && !discoveries.allow(now) {
			// Unauthenticated, and about twice the probe's size: from
			// a forged address, weir would reflect them at any rate.
			it.ack = nil
		}
		if outcome != "" && it.ack != nil {
			// A Report: to an engine discovery probe, or to an inform
			// outside the time window.
			if _, err := conn.WriteTo(it.ack, it.to); err != nil {
				r.cfg.Logger.Warn("trap report failed", "to", it.to.String(), "err", err)
			}
		}
		if outcome == outcomeDiscovery {
			continue
		}
		if outcome != "" {
			r.cfg.Metrics.Received.WithLabelValues(version, outcome).Inc()
			// An inform answered with weir's clock is a sender being
			// resynchronised (after every weir restart), which sends it
			// again: counted, logged at debug.
			resync := outcome == OutcomeNotInTimeWindow && it.ack != nil
			reason := ""
			if outcome == OutcomeMalformed {
				reason = it.reason // the others' outcome says it
			}
			r.logDrop(drops, outcome, version, from, reason, resync)
			continue
		}
		if it.inform != nil {
			if copied, ack := r.informs.receive(*it.inform, it.ack, it.to, time.Now()); copied {
				r.cfg.Metrics.Received.WithLabelValues(version, OutcomeRetransmission).Inc()
				if ack != nil {
					r.acknowledge(conn, ack, it.to)
				}
				continue
			}
		}
		it.size = itemBytes(&it)
		full := r.queued.Add(it.size) > r.cfg.QueueBytes
		if !full {
			select {
			case queue <- &it:
				continue
			default:
			}
		}
		r.queued.Add(-it.size)
		if it.inform != nil {
			r.informs.dropped(*it.inform)
		}
		r.cfg.Metrics.Received.WithLabelValues(version, OutcomeQueueFull).Inc()
		r.logDrop(drops, OutcomeQueueFull, version, from, "", false)
	}
	close(queue)
	<-pubDone
	return nil
}

// publishLoop publishes in batches: whatever has queued up while the
// previous batch was being written, so a burst costs few Produce calls
// and a lone trap is not delayed.
func (r *Receiver) publishLoop(ctx context.Context, conn net.PacketConn, queue <-chan *item) {
	const maxBatch = 1024
	// One deadline for the whole drain after ctx ends, however many
	// batches are queued: a broker that is down (a Kafka cluster away)
	// must not hold up weir's exit past systemd's stop timeout.
	dctx, stop := publish.Grace(ctx, shutdownDrainTimeout)
	defer stop()
	batch := make([]item, 0, maxBatch)
	for it := range queue {
		batch = append(batch[:0], *it)
		size := it.size
	more:
		for len(batch) < maxBatch {
			select {
			case it, ok := <-queue:
				if !ok {
					break more
				}
				batch = append(batch, *it)
				size += it.size
			default:
				break more
			}
		}
		r.publish(dctx, conn, batch)
		r.queued.Add(-size) // held until published: QueueBytes counts the batch too
	}
}

// key is a trap's record key: its device's name (Config.DeviceName), else
// the sender's address.
func (r *Receiver) key(tr *telemetry.Trap) []byte {
	if r.cfg.DeviceName != nil {
		if name := r.cfg.DeviceName(tr); name != "" {
			return []byte(name)
		}
	}
	return []byte(tr.Device)
}

// shutdownDrainTimeout bounds publishing what is queued when weir stops.
const shutdownDrainTimeout = 5 * time.Second

// readBufferSize is the UDP receive buffer the listener asks for.
const readBufferSize = 8 << 20

// publish produces a batch until the broker takes it or ctx (the drain
// deadline) ends; what is left then is dropped and counted as shutdown.
func (r *Receiver) publish(ctx context.Context, conn net.PacketConn, batch []item) {
	recs := make([]broker.Record, 0, len(batch))
	headers := []broker.Header{
		{Key: telemetry.HeaderSource, Value: []byte("trap")},
		{Key: telemetry.HeaderSchema, Value: []byte(telemetry.SchemaTrap)},
	}
	n := 0
	for i := range batch {
		v, err := json.Marshal(&batch[i].trap)
		if err != nil {
			// Cannot happen: every value is a JSON type. Taken out
			// of the batch so recs[i] is batch[i]'s record.
			r.cfg.Metrics.Received.WithLabelValues(batch[i].trap.Version, OutcomeMalformed).Inc()
			continue
		}
		batch[n] = batch[i]
		n++
		recs = append(recs, broker.Record{Timestamp: batch[i].trap.ReceivedAt, Key: r.key(&batch[i].trap), Value: v, Headers: headers})
	}
	batch = batch[:n]
	// A broker error (a full disk) is retried, with back-off up to 5 s,
	// until ctx ends. A trap the broker refuses for good (a record over
	// its size limit) is sent alone and dropped as publish_error: retrying
	// it forever would stall every trap behind it.
	outcomes := make([]string, len(recs))
	pub := r.pub
	pub.OnDrop = func(reason publish.Reason, i, n int, _ error) {
		outcome := OutcomeShutdown
		if reason == publish.Refused {
			outcome = OutcomePublishError
		}
		for j := i; j < i+n; j++ {
			outcomes[j] = outcome
		}
	}
	var res publish.Result
	var err error
	if err = ctx.Err(); err != nil {
		// The drain's time is over: the batches still queued are
		// dropped without a try. A broker may not return at once for a
		// context already done (the Kafka backend, the cluster down,
		// takes about 7 s), and one try per batch would hold weir's
		// stop that long for each.
		res.Unsent = len(recs)
		pub.OnDrop(publish.Unsent, 0, len(recs), err)
	} else {
		res, err = pub.Publish(ctx, recs)
	}
	for i := range batch {
		if outcomes[i] == "" {
			outcomes[i] = OutcomePublished
		}
		r.cfg.Metrics.Received.WithLabelValues(batch[i].trap.Version, outcomes[i]).Inc()
	}
	if res.Unsent > 0 {
		r.cfg.Logger.Error("trap publish abandoned at shutdown; dropped, informs not acknowledged", "topic", r.cfg.Topic, "traps", res.Unsent, "err", err)
	}
	now := time.Now()
	for i := range batch {
		it := &batch[i]
		switch {
		case it.ack == nil:
		case outcomes[i] != OutcomePublished:
			if it.inform != nil {
				r.informs.dropped(*it.inform) // a copy of it is a new try
			}
		default:
			r.acknowledge(conn, it.ack, it.to)
			if it.inform != nil {
				for _, w := range r.informs.published(*it.inform, now) {
					r.acknowledge(conn, w.ack, w.to)
				}
			}
		}
	}
}

// acknowledge sends an inform's response.
func (r *Receiver) acknowledge(conn net.PacketConn, ack []byte, to net.Addr) {
	if _, err := conn.WriteTo(ack, to); err != nil {
		r.cfg.Logger.Warn("trap inform acknowledgement failed", "to", to.String(), "err", err)
		return
	}
	r.cfg.Metrics.Acked.Inc()
}

// logDrop logs a dropped notification with its sender, so a device with a
// wrong community or key can be found (the counter has no address); once
// per throttle.Every per outcome and sending host, with how many there
// were, so a noisy device does not hide a quiet one. reason, when not "",
// says why a malformed one was (the logged one's: others of the same
// sender may have had other reasons).
func (r *Receiver) logDrop(drops *throttle.Set, outcome, version string, from net.Addr, reason string, quiet bool) {
	host := from.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	n, ok := drops.Due(outcome+" "+host, time.Now())
	if !ok {
		return
	}
	level := slog.LevelWarn
	if outcome == OutcomeNotNotification || quiet {
		level = slog.LevelDebug // a Get sent to the trap port, say: not a device's trap gone missing
	}
	args := []any{"outcome", outcome, "version", version, "from", from.String(), "times", n}
	if reason != "" {
		args = append(args, "reason", reason)
	}
	r.cfg.Logger.Log(context.Background(), level, "trap dropped", args...)
}

// decode turns one datagram into a trap, or says why it was dropped. It
// must survive any input (see FuzzDecode).
func (r *Receiver) decode(pkt []byte, from net.Addr, now time.Time) (it item, version, outcome string) {
	version = "unknown"
	defer func() {
		// gosnmp's decoder is not hardened against every malformed
		// packet; one bad datagram must not stop the receiver.
		if p := recover(); p != nil {
			r.decodePanics.Add(1)
			it, outcome = item{reason: fmt.Sprintf("decoder panic: %v", p)}, OutcomeMalformed
		}
	}()
	version = peekVersion(pkt)
	acc := r.access.Load()
	if version == "3" && len(acc.users) == 0 {
		return it, version, OutcomeUnknownUser
	}
	if len(acc.users) > 0 {
		// Any message gosnmp may read as v3, not only those whose
		// version is in the shortest form.
		if outcome := acc.preAuthenticate(pkt); outcome != "" {
			if outcome == OutcomeMalformed {
				it.reason = "neither SNMPv1/v2c nor an SNMPv3 header that parses"
			}
			return it, version, outcome
		}
	}
	// Values gosnmp would refuse, failing the whole notification, or
	// cut: it decodes the rest from a copy without them.
	received := pkt
	bad := invalidValues(pkt)
	if len(bad) > 0 {
		if patched, ok := acc.withoutInvalid(pkt, bad); ok {
			pkt = patched
		} else {
			bad = nil
		}
	}
	p, err := acc.dec.UnmarshalTrap(pkt, false)
	if err != nil {
		return malformedBecause(err), version, acc.classify(pkt, err, r.senderEngine(pkt))
	}
	if p == nil {
		return item{reason: "nothing decoded"}, version, OutcomeMalformed
	}
	keepUnknownValues(received, p)
	applyInvalid(p, bad)
	switch p.Version {
	case gosnmp.Version1:
		version = "1"
	case gosnmp.Version2c:
		version = "2c"
	case gosnmp.Version3:
		version = "3"
	default:
		// gosnmp reads any other version as v1/v2c; published, it would
		// skip the community check below. RFC 3412 (section 7.2, step
		// 2) drops it (snmpInBadVersions).
		return item{reason: fmt.Sprintf("SNMP version %d is none of 0 (v1), 1 (v2c) and 3 (v3)", p.Version)}, "unknown", OutcomeMalformed
	}
	tr := telemetry.Trap{
		V:          telemetry.Version,
		Version:    version,
		SourceAddr: from.String(),
		ReceivedAt: now,
		Varbinds:   []telemetry.Varbind{},
	}
	if host, _, err := net.SplitHostPort(from.String()); err == nil {
		tr.Device = host
	} else {
		tr.Device = from.String()
	}
	switch version {
	case "1", "2c":
		if len(acc.communities) > 0 && !acc.communities[p.Community] {
			return it, version, OutcomeUnknownCommunity
		}
		tr.Community = p.Community
	case "3":
		usm, ok := p.SecurityParameters.(*gosnmp.UsmSecurityParameters)
		if !ok {
			return item{reason: "SNMPv3 message without USM security parameters"}, version, OutcomeMalformed
		}
		if p.PDUType == gosnmp.GetRequest && len(p.Variables) == 0 && usm.UserName == "" {
			// An engine discovery probe before a v3 inform: report
			// our engine ID, boots and time.
			rep, err := r.report(p)
			if err != nil {
				return item{reason: "encoding the Report: " + err.Error()}, version, OutcomeMalformed
			}
			return item{ack: rep, to: from}, version, outcomeDiscovery
		}
		if usm.UserName == "" {
			return it, version, OutcomeUnknownUser
		}
		if p.PDUType == gosnmp.InformRequest && usm.AuthoritativeEngineID != r.engineID {
			// An inform localised for another engine (weir's before
			// its engine ID changed, or the sender's configured one):
			// the Report lets a sender that can rediscover; Net-SNMP
			// does not, so it is counted and logged.
			rep, err := r.report(p)
			if err != nil {
				return item{reason: "encoding the Report: " + err.Error()}, version, OutcomeMalformed
			}
			return item{ack: rep, to: from}, version, OutcomeUnknownEngineID
		}
		tr.User = usm.UserName
		// A trap's authoritative engine is its sender; an inform's is
		// weir (checked above), and the sender names itself only in
		// the authenticated contextEngineID (RFC 3413 section 3.2).
		sender := usm.AuthoritativeEngineID
		if p.PDUType == gosnmp.InformRequest {
			sender = p.ContextEngineID
		}
		// gosnmp takes a message at the level its flags claim, with any
		// of the user's entries: the entries for the sender's engine
		// say which it may come from, and the least level it needs. A
		// pinned user's is the level of the entry whose keys signed it.
		least, matched := gosnmp.AuthPriv, false
		var signErr error
		senderHex := hex.EncodeToString([]byte(sender))
		for _, u := range acc.users[usm.UserName] {
			switch {
			case u.engine != "" && u.engine != senderHex, matched && u.dec != nil:
			case u.dec == nil:
				matched, least = true, min(least, u.level)
			default:
				if _, signErr = u.dec.UnmarshalTrap(pkt, false); signErr == nil {
					matched, least = true, u.level
				}
			}
		}
		if !matched && signErr != nil {
			return malformedBecause(signErr), version, acc.classify(pkt, signErr, senderHex) // an entry for the engine, none whose keys signed it
		}
		if !matched {
			return it, version, OutcomeWrongEngine
		}
		if p.MsgFlags&gosnmp.AuthPriv < least {
			return it, version, OutcomeLowSecurityLevel
		}
		tr.EngineID, tr.SecurityLevel = senderHex, securityLevelName(p.MsgFlags)
		if p.PDUType == gosnmp.InformRequest && !r.informInTime(p, usm) {
			// The sender's notion of this engine's clock is off (or
			// the inform is replayed): a Report with the clock, signed,
			// lets a genuine sender send it again in time.
			rep, err := r.timeReport(p, usm)
			if err != nil {
				return it, version, OutcomeNotInTimeWindow
			}
			return item{ack: rep, to: from}, version, OutcomeNotInTimeWindow
		}
		if p.PDUType != gosnmp.InformRequest && !r.inTime(p, usm, now) {
			return it, version, OutcomeNotInTimeWindow
		}
	}
	switch p.PDUType {
	case gosnmp.Trap:
		if p.Version != gosnmp.Version1 {
			return it, version, OutcomeNotNotification
		}
		if !fromV1(&tr, p, r.names.Load()) {
			return item{reason: fmt.Sprintf("v1 generic-trap %d not in 0..6 (RFC 1157)", p.GenericTrap)}, version, OutcomeMalformed
		}
	case gosnmp.SNMPv2Trap, gosnmp.InformRequest:
		tr.Inform = p.PDUType == gosnmp.InformRequest
		if !fromV2(&tr, p.Variables, r.names.Load()) {
			return item{reason: "no snmpTrapOID.0 as first or second varbind (RFC 3416 section 4.2.6)"}, version, OutcomeMalformed
		}
	default:
		return it, version, OutcomeNotNotification
	}
	it.trap = tr
	for _, b := range bad {
		typ, _ := typeName(gosnmp.Asn1BER(b.tag))
		r.cfg.Metrics.InvalidVarbinds.WithLabelValues(typ, b.reason).Inc()
	}
	if tr.Inform {
		ack, err := r.informResponse(p)
		if err != nil {
			return item{reason: "encoding the inform's Response: " + err.Error()}, version, OutcomeMalformed
		}
		it.ack, it.to = ack, from
		it.inform = &informKey{from: from.String(), version: version, principal: tr.Community + tr.User, requestID: p.RequestID,
			varbinds: varbindsDigest(p.Variables)}
	}
	return it, version, ""
}

// informResponse encodes the Response PDU for an inform: the same request
// ID and varbinds, error-status noError (RFC 3416 section 4.2.7).
func (r *Receiver) informResponse(p *gosnmp.SnmpPacket) ([]byte, error) {
	resp := *p
	if slices.ContainsFunc(p.Variables, func(v gosnmp.SnmpPDU) bool { _, bad := v.Value.(invalidValue); return bad }) {
		// gosnmp cannot encode a value that does not fit its type:
		// the Response echoes it as NULL (senders match it by request
		// ID, not by its varbinds).
		resp.Variables = slices.Clone(p.Variables)
		for i, v := range resp.Variables {
			if _, bad := v.Value.(invalidValue); bad {
				resp.Variables[i] = gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.Null}
			}
		}
	}
	resp.PDUType = gosnmp.GetResponse
	resp.Error = gosnmp.NoError
	resp.ErrorIndex = 0
	if p.Version == gosnmp.Version3 {
		// The response goes at the request's security level with the
		// same user and keys; gosnmp signs and encrypts on marshal.
		// A fresh salt: reusing the request's would reuse its IV.
		usm, ok := p.SecurityParameters.Copy().(*gosnmp.UsmSecurityParameters)
		if !ok {
			return nil, errors.New("not USM")
		}
		if len(usm.PrivacyParameters) > 0 {
			salt := make([]byte, len(usm.PrivacyParameters))
			if _, err := rand.Read(salt); err != nil {
				return nil, err
			}
			usm.PrivacyParameters = salt
		}
		usm.AuthoritativeEngineTime = r.engineTime()
		resp.SecurityParameters = usm
		resp.MsgFlags = p.MsgFlags &^ gosnmp.Reportable
	}
	return resp.MarshalMsg()
}

// outcomeDiscovery marks a datagram answered with a Report; it is not a
// notification and not counted as received.
const outcomeDiscovery = "discovery"

const (
	oidUsmStatsUnknownEngineIDs = ".1.3.6.1.6.3.15.1.1.4.0"
	oidUsmStatsNotInTimeWindows = ".1.3.6.1.6.3.15.1.1.2.0"
)

// timeReport answers an inform outside the time window with a Report of
// usmStatsNotInTimeWindows and this engine's boots and time,
// authenticated with the sender's user (RFC 3414 section 3.2, step 7a)
// so that the sender can trust the clock it learns from it.
func (r *Receiver) timeReport(p *gosnmp.SnmpPacket, usm *gosnmp.UsmSecurityParameters) ([]byte, error) {
	sec, ok := usm.Copy().(*gosnmp.UsmSecurityParameters)
	if !ok {
		return nil, errors.New("not USM")
	}
	sec.AuthoritativeEngineBoots, sec.AuthoritativeEngineTime = r.boots, r.engineTime()
	sec.PrivacyParameters = nil
	return r.reportPacket(p, gosnmp.AuthNoPriv, sec, oidUsmStatsNotInTimeWindows, r.notInTime.Add(1))
}

// report answers an engine discovery probe (RFC 3414 section 4) or an
// inform for another engine with usmStatsUnknownEngineIDs and this
// engine's ID, boots and time, unauthenticated as the RFC says.
func (r *Receiver) report(p *gosnmp.SnmpPacket) ([]byte, error) {
	sec := &gosnmp.UsmSecurityParameters{
		AuthoritativeEngineID:    r.engineID,
		AuthoritativeEngineBoots: r.boots,
		AuthoritativeEngineTime:  r.engineTime(),
		AuthenticationProtocol:   gosnmp.NoAuth,
		PrivacyProtocol:          gosnmp.NoPriv,
	}
	return r.reportPacket(p, gosnmp.NoAuthNoPriv, sec, oidUsmStatsUnknownEngineIDs, r.reports.Add(1))
}

// reportPacket encodes a Report answering p with one usmStats counter,
// at the security level flags give (gosnmp signs it when they ask).
func (r *Receiver) reportPacket(p *gosnmp.SnmpPacket, flags gosnmp.SnmpV3MsgFlags, sec *gosnmp.UsmSecurityParameters, oid string, count uint32) ([]byte, error) {
	rep := &gosnmp.SnmpPacket{
		Version:            gosnmp.Version3,
		MsgFlags:           flags,
		SecurityModel:      gosnmp.UserSecurityModel,
		MsgID:              p.MsgID,
		MsgMaxSize:         65507,
		SecurityParameters: sec,
		ContextEngineID:    r.engineID,
		ContextName:        p.ContextName,
		PDUType:            gosnmp.Report,
		RequestID:          p.RequestID,
		Variables:          []gosnmp.SnmpPDU{{Name: oid, Type: gosnmp.Counter32, Value: uint(count)}},
	}
	return rep.MarshalMsg()
}

// engineTime is snmpEngineTime: seconds since the engine started (this
// process, boots counting the starts).
func (r *Receiver) engineTime() uint32 { return uint32(time.Since(r.started) / time.Second) }

// peekVersion reads the version field without decoding the rest: the
// datagram is a SEQUENCE whose first element is an INTEGER 0, 1 or 3.
func peekVersion(pkt []byte) string {
	if len(pkt) < 2 || pkt[0] != 0x30 {
		return "unknown"
	}
	i := 2
	if pkt[1]&0x80 != 0 {
		i += int(pkt[1] & 0x7f)
	}
	if i+3 > len(pkt) || pkt[i] != 0x02 || pkt[i+1] != 1 {
		return "unknown"
	}
	switch pkt[i+2] {
	case 0:
		return "1"
	case 1:
		return "2c"
	case 3:
		return "3"
	}
	return "unknown"
}

// classify is the outcome of pkt, which gosnmp refused with err: a
// decryption failure when pkt is encrypted and signed with the
// authentication key of an entry of its user for sender (the sending
// engine ID in hex; "" when it cannot be read, an inform's being
// encrypted) that has a privacy key (the digest was right, so what failed
// after it is the decryption: RFC 3414 section 3.2 step 8), else what err
// says.
func (a *access) classify(pkt []byte, err error, sender string) string {
	if h, ok := parseV3Header(pkt); ok && h.flags&byte(gosnmp.AuthPriv) == byte(gosnmp.AuthPriv) {
		for _, u := range a.users[h.user] {
			if u.engine != "" && sender != "" && u.engine != sender {
				continue // another sender's keys (see decode)
			}
			if u.keyed && u.priv && u.auth.authenticates(pkt, h) {
				return OutcomeDecryptionFailure
			}
		}
	}
	return classify(err)
}

// malformedBecause is the item of a datagram gosnmp refused with err:
// err's text is the reason, should classify find it malformed.
func malformedBecause(err error) item {
	return item{reason: "decoding: " + err.Error()}
}

// senderEngine is the sending engine ID of pkt, a v3 message, in hex as
// a user's engine_id is: its authoritative engine ID, unless that is
// weir's own (an inform, whose sender names itself in the encrypted
// contextEngineID): "" then, and for a message whose header does not
// parse.
func (r *Receiver) senderEngine(pkt []byte) string {
	h, ok := parseV3Header(pkt)
	if !ok || h.engineID == r.engineID {
		return ""
	}
	return hex.EncodeToString([]byte(h.engineID))
}

// securityLevelName is the level flags claim, as configs and Net-SNMP
// spell it.
func securityLevelName(flags gosnmp.SnmpV3MsgFlags) string {
	switch flags & gosnmp.AuthPriv {
	case gosnmp.AuthPriv:
		return "authPriv"
	case gosnmp.AuthNoPriv:
		return "authNoPriv"
	}
	return "noAuthNoPriv"
}

// classify is the outcome gosnmp's err gives a message.
func classify(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "no security parameters found"), strings.Contains(msg, "unknown user"):
		return OutcomeUnknownUser
	case strings.Contains(msg, "authentic"), strings.Contains(msg, "credentials"),
		strings.Contains(msg, "decrypt"), strings.Contains(msg, "security level"):
		return OutcomeAuthFailure
	}
	return OutcomeMalformed
}

// OIDs of RFC 3584's v1-to-v2 conversion and of the v2 trap header.
const (
	oidSysUpTime0          = "1.3.6.1.2.1.1.3.0"
	oidSnmpTrapOID0        = "1.3.6.1.6.3.1.1.4.1.0"
	oidSnmpTrapAddress0    = "1.3.6.1.6.3.18.1.3.0"
	oidSnmpTrapCommunity0  = "1.3.6.1.6.3.18.1.4.0"
	oidSnmpTrapEnterprise0 = "1.3.6.1.6.3.1.1.4.3.0"
	oidSnmpTraps           = "1.3.6.1.6.3.1.1.5"
)

// fromV1 converts a v1 trap per RFC 3584 section 3.1: a generic trap
// becomes snmpTraps.(generic+1), an enterprise-specific one
// enterprise.0.specific; the agent address, community and enterprise are
// appended as snmpTrapAddress.0, snmpTrapCommunity.0 and
// snmpTrapEnterprise.0.
func fromV1(tr *telemetry.Trap, p *gosnmp.SnmpPacket, names *Names) bool {
	enterprise := strings.TrimPrefix(p.Enterprise, ".")
	switch {
	case p.GenericTrap >= 0 && p.GenericTrap < 6:
		tr.TrapOID = fmt.Sprintf("%s.%d", oidSnmpTraps, p.GenericTrap+1)
	case p.GenericTrap == 6: // enterpriseSpecific
		tr.TrapOID = fmt.Sprintf("%s.0.%d", enterprise, p.SpecificTrap)
	default:
		return false // RFC 1157 defines 0 to 6
	}
	tr.TrapName = names.Notification(tr.TrapOID)
	tr.Uptime = uint32(p.Timestamp)
	for _, v := range p.Variables {
		tr.Varbinds = append(tr.Varbinds, varbind(v, names))
	}
	tr.Varbinds = append(tr.Varbinds,
		telemetry.Varbind{OID: oidSnmpTrapAddress0, Name: "snmpTrapAddress.0", Type: "ipaddress", Value: p.AgentAddress},
		telemetry.Varbind{OID: oidSnmpTrapCommunity0, Name: "snmpTrapCommunity.0", Type: "octet_string", Value: p.Community},
		telemetry.Varbind{OID: oidSnmpTrapEnterprise0, Name: "snmpTrapEnterprise.0", Type: "oid", Value: enterprise},
	)
	return true
}

// fromV2 takes sysUpTime.0 and snmpTrapOID.0, the first two varbinds of
// every v2 notification, into the record's fields and keeps the rest.
func fromV2(tr *telemetry.Trap, vars []gosnmp.SnmpPDU, names *Names) bool {
	for i, v := range vars {
		oid := strings.TrimPrefix(v.Name, ".")
		switch {
		case i < 2 && oid == oidSysUpTime0:
			if n, ok := v.Value.(uint32); ok {
				tr.Uptime = n
			} else if n, ok := v.Value.(uint); ok {
				tr.Uptime = uint32(n)
			} else if _, bad := v.Value.(invalidValue); bad {
				// Not an uptime: kept as received, marked invalid.
				tr.Varbinds = append(tr.Varbinds, varbind(v, names))
			}
		case i < 2 && oid == oidSnmpTrapOID0:
			s, _ := v.Value.(string)
			tr.TrapOID = strings.TrimPrefix(s, ".")
		default:
			tr.Varbinds = append(tr.Varbinds, varbind(v, names))
		}
	}
	if tr.TrapOID == "" {
		return false // RFC 3416 4.2.6: snmpTrapOID.0 is mandatory
	}
	tr.TrapName = names.Notification(tr.TrapOID)
	return true
}

func varbind(v gosnmp.SnmpPDU, names *Names) telemetry.Varbind {
	oid := strings.TrimPrefix(v.Name, ".")
	vb := telemetry.Varbind{OID: oid, Name: names.Object(oid)}
	// known false: not a type of SNMP's (see keepUnknownValues), its
	// bytes go in hex.
	var known bool
	vb.Type, known = typeName(v.Type)
	switch x := v.Value.(type) {
	case invalidValue:
		// Contents that do not fit the type (see invalidValues).
		vb.Value = hex.EncodeToString(x.raw)
		vb.Type += "_invalid_hex"
	case []byte:
		// Text: NUL padding trimmed, but something left to read; all
		// zero bytes, or only line breaks and tabs, are binary.
		if s := strings.TrimRight(string(x), "\x00"); known && (len(x) == 0 || utf8.ValidString(s) && printable(s) && strings.TrimLeft(s, "\t\n\r") != "") {
			vb.Value = s
		} else {
			vb.Value = hex.EncodeToString(x)
			vb.Type += "_hex"
		}
	case string:
		vb.Value = strings.TrimPrefix(x, ".")
		if v.Type != gosnmp.ObjectIdentifier {
			vb.Value = x
		}
	case float32:
		vb.Value = finite(float64(x))
	case float64:
		vb.Value = finite(x)
	case nil:
		vb.Value = nil
	default:
		vb.Value = x
	}
	return vb
}

// typeName is a varbind type's name in a record; known false for a tag
// SNMP does not define ("0x45").
func typeName(t gosnmp.Asn1BER) (string, bool) {
	switch t {
	case gosnmp.Integer:
		return "integer", true
	case gosnmp.OctetString:
		return "octet_string", true
	case gosnmp.ObjectIdentifier:
		return "oid", true
	case gosnmp.IPAddress:
		return "ipaddress", true
	case gosnmp.Counter32:
		return "counter32", true
	case gosnmp.Gauge32:
		return "gauge32", true
	case gosnmp.TimeTicks:
		return "timeticks", true
	case gosnmp.Counter64:
		return "counter64", true
	case gosnmp.Uinteger32:
		return "uinteger32", true
	case gosnmp.Opaque, gosnmp.OpaqueFloat, gosnmp.OpaqueDouble:
		return "opaque", true
	case gosnmp.Null:
		return "null", true
	case gosnmp.NoSuchObject:
		return "no_such_object", true
	case gosnmp.NoSuchInstance:
		return "no_such_instance", true
	case gosnmp.EndOfMibView:
		return "end_of_mib_view", true
	}
	return fmt.Sprintf("0x%02x", byte(t)), false
}

// finite keeps NaN and infinities, which JSON cannot carry, as text.
func finite(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Sprint(f)
	}
	return f
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return false
		}
	}
	return true
}
