// Package sim is a simulated gNMI target for labs and tests: OpenConfig
// interface counters that grow with time, interface oper-status and BGP
// neighbor session states that toggle now and then. It implements
// Capabilities and Subscribe (STREAM with SAMPLE, ON_CHANGE and
// TARGET_DEFINED, ONCE, POLL; updates only; suppress redundant and
// ON_CHANGE with heartbeats), with optional TLS and username/password
// checking. Get and Set are not implemented.
//
// Served paths:
//
//	/interfaces/interface[name=EthernetN]/state/counters/{in-octets,...}   uint64, 10 per interface
//	/interfaces/interface[name=EthernetN]/state/oper-status   UP or DOWN
//	/interfaces/interface[name=EthernetN]/state/ifindex   N (uint32), never changing
//	/interfaces/interface[name=EthernetN]/ethernet/state/port-speed   SPEED_100GB, never changing
//	/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor[neighbor-address=10.0.0.N]/state/session-state   ESTABLISHED or IDLE
//
// With PROTO encoding leaves are sent typed (uint_val, string_val); with
// JSON or JSON_IETF, each container (an interface's counters) is one update
// whose value is a JSON object of its leaves, unless the subscription names
// a single leaf.
package sim

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Counters are the leaves of every interface's state/counters.
var Counters = []string{
	"in-octets", "in-unicast-pkts", "in-multicast-pkts", "in-broadcast-pkts", "in-discards", "in-errors",
	"out-octets", "out-unicast-pkts", "out-multicast-pkts", "out-discards",
}

// Config describes one simulated target.
type Config struct {
	// Interfaces is the number of interfaces (Ethernet1..N); default 8.
	Interfaces int
	// Neighbors is the number of BGP neighbors (10.0.0.1..N); default 4.
	Neighbors int
	// ToggleEvery flips one neighbor's session state this often; 0 uses
	// 30s, negative never toggles.
	ToggleEvery time.Duration
	// FlapEvery takes an interface's oper-status DOWN this often and
	// back UP one period later, each interface in turn; 0 or negative
	// never (every interface stays UP).
	FlapEvery time.Duration
	// ClockOffset is added to every notification's timestamp: a target
	// whose clock is ahead (positive) or behind (negative) of the
	// collector's.
	ClockOffset time.Duration
	// DefaultSample is the sample interval for SAMPLE subscriptions that
	// give none, and for TARGET_DEFINED counters; default 10s.
	DefaultSample time.Duration
	// Username and Password, when set, must come as gRPC metadata.
	Username, Password string
	// TLS serves TLS with this config (set ClientAuth and ClientCAs to
	// require client certificates); nil serves plaintext.
	TLS *tls.Config
	// Logger (default: discard).
	Logger *slog.Logger
}

// Server is one simulated target.
type Server struct {
	gpb.UnimplementedGNMIServer
	cfg    Config
	start  time.Time
	ifaces []iface
	// leaves are the ON_CHANGE leaves: each neighbor's session-state,
	// then each interface's oper-status.
	leaves []stateLeaf

	mu      sync.Mutex
	states  []bool // per leaf: established, or up
	changed chan struct{}
	version int
	// Per interface, how long it was down before, and since when it is
	// (zero while up): its counters stand still while it is down.
	downFor   []time.Duration
	downSince []time.Time
}

// stateLeaf is one leaf with two values: a BGP neighbor's session-state or
// an interface's oper-status.
type stateLeaf struct {
	container []*gpb.PathElem // the leaf's state container
	name      string          // session-state, oper-status
	key       string          // the leaf in sub.last
	up, down  string
	number    bool // up (= down) is a uint32's digits, sent as a number: ifindex
}

// path is the leaf's full path.
func (l *stateLeaf) path() []*gpb.PathElem {
	return append(append([]*gpb.PathElem(nil), l.container...), &gpb.PathElem{Name: l.name})
}

func (l *stateLeaf) value(up bool) string {
	if up {
		return l.up
	}
	return l.down
}

type iface struct {
	prefix *gpb.Path
	name   string
	rate   float64
	base   uint64
}

var bgpBase = []*gpb.PathElem{
	{Name: "network-instances"}, {Name: "network-instance", Key: map[string]string{"name": "default"}},
	{Name: "protocols"}, {Name: "protocol", Key: map[string]string{"identifier": "BGP", "name": "BGP"}},
	{Name: "bgp"}, {Name: "neighbors"},
}

// New builds a target.
func New(cfg Config) *Server {
	if cfg.Interfaces <= 0 {
		cfg.Interfaces = 8
	}
	if cfg.Neighbors <= 0 {
		cfg.Neighbors = 4
	}
	if cfg.ToggleEvery == 0 {
		cfg.ToggleEvery = 30 * time.Second
	}
	if cfg.DefaultSample <= 0 {
		cfg.DefaultSample = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, start: time.Now(), changed: make(chan struct{})}
	for i := 1; i <= cfg.Interfaces; i++ {
		name := "Ethernet" + strconv.Itoa(i)
		s.ifaces = append(s.ifaces, iface{
			name: name,
			prefix: &gpb.Path{Elem: []*gpb.PathElem{
				{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": name}}, {Name: "state"}, {Name: "counters"},
			}},
			rate: float64((i-1)%loadSteps+1) * ifaceLoad,
			base: uint64(i) * 1_000_000,
		})
	}
	for i := 1; i <= cfg.Neighbors; i++ {
		addr := "10.0.0." + strconv.Itoa(i)
		nb := &gpb.PathElem{Name: "neighbor", Key: map[string]string{"neighbor-address": addr}}
		s.leaves = append(s.leaves, stateLeaf{container: append(append([]*gpb.PathElem(nil), bgpBase...), nb, &gpb.PathElem{Name: "state"}),
			name: "session-state", key: addr, up: "ESTABLISHED", down: "IDLE"})
	}
	for _, ifc := range s.ifaces {
		s.leaves = append(s.leaves, stateLeaf{container: ifc.prefix.GetElem()[:3:3], name: "oper-status", key: ifc.name + "/oper-status", up: "UP", down: "DOWN"})
	}
	// After the leaves toggle and Flap index: never changed.
	for _, ifc := range s.ifaces {
		container := append(ifc.prefix.GetElem()[:2:2], &gpb.PathElem{Name: "ethernet"}, &gpb.PathElem{Name: "state"})
		const speed = "openconfig-if-ethernet:SPEED_100GB"
		s.leaves = append(s.leaves, stateLeaf{container: container, name: "port-speed", key: ifc.name + "/port-speed", up: speed, down: speed})
	}
	for i, ifc := range s.ifaces {
		index := strconv.Itoa(i + 1)
		s.leaves = append(s.leaves, stateLeaf{container: ifc.prefix.GetElem()[:3:3], name: "ifindex", key: ifc.name + "/ifindex", up: index, down: index, number: true})
	}
	s.downFor, s.downSince = make([]time.Duration, len(s.ifaces)), make([]time.Time, len(s.ifaces))
	s.states = make([]bool, len(s.leaves))
	for i := range s.states {
		s.states[i] = true
	}
	return s
}

// statePatterns are the leaves' paths with any key, for a subscription
// naming a neighbor or interface this target lacks.
var statePatterns = [][]*gpb.PathElem{
	append(append([]*gpb.PathElem(nil), bgpBase...), &gpb.PathElem{Name: "neighbor", Key: map[string]string{"neighbor-address": "*"}},
		&gpb.PathElem{Name: "state"}, &gpb.PathElem{Name: "session-state"}),
	{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "*"}}, {Name: "state"}, {Name: "oper-status"}},
	{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "*"}}, {Name: "ethernet"}, {Name: "state"}, {Name: "port-speed"}},
	{{Name: "interfaces"}, {Name: "interface", Key: map[string]string{"name": "*"}}, {Name: "state"}, {Name: "ifindex"}},
}

// Serve serves gNMI on lis until ctx is done, then stops every stream and
// returns.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	opts := []grpc.ServerOption{
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := s.auth(ctx); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := s.auth(ss.Context()); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	}
	if s.cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.cfg.TLS)))
	}
	srv := grpc.NewServer(opts...)
	gpb.RegisterGNMIServer(srv, s)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		<-ctx.Done()
		srv.Stop()
	})
	if s.cfg.ToggleEvery > 0 && s.cfg.Neighbors > 0 {
		wg.Go(func() { s.toggle(ctx, s.cfg.ToggleEvery, 1, 0, s.cfg.Neighbors) })
	}
	if s.cfg.FlapEvery > 0 {
		wg.Go(func() { s.toggle(ctx, s.cfg.FlapEvery, 2, s.cfg.Neighbors, len(s.ifaces)) })
	}
	err := srv.Serve(lis)
	cancel()
	wg.Wait()
	if err == grpc.ErrServerStopped {
		err = nil
	}
	return err
}

func (s *Server) auth(ctx context.Context) error {
	if s.cfg.Username == "" && s.cfg.Password == "" {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	u, p := md.Get("username"), md.Get("password")
	if len(u) == 0 {
		return status.Error(codes.Unauthenticated, "missing username and password metadata")
	}
	if u[0] != s.cfg.Username || len(p) == 0 || p[0] != s.cfg.Password {
		return status.Error(codes.Unauthenticated, "invalid username or password")
	}
	return nil
}

// toggle flips leaves first..first+n-1 in turn, one every period, each
// times times in a row (2: down, then back up).
func (s *Server) toggle(ctx context.Context, period time.Duration, times, first, n int) {
	t := time.NewTicker(period)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.flip(first + i/times%n)
		}
	}
}

// Toggle flips neighbor i's session state (0-based) and wakes ON_CHANGE
// subscribers.
func (s *Server) Toggle(i int) { s.flip(i) }

// Flap flips interface i's oper-status (0-based) and wakes ON_CHANGE
// subscribers.
func (s *Server) Flap(i int) { s.flip(s.cfg.Neighbors + i) }

// SetOperStatus sets interface i's oper-status (0-based) UP or DOWN and,
// when that changes it, wakes ON_CHANGE subscribers: a lab's device whose
// stream says what its syslog does.
func (s *Server) SetOperStatus(i int, up bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.cfg.Neighbors + i; i >= 0 && i < len(s.ifaces) && s.states[j] != up {
		s.flipLocked(j)
	}
}

func (s *Server) flip(i int) {
	s.mu.Lock()
	s.flipLocked(i)
	s.mu.Unlock()
}

func (s *Server) flipLocked(i int) {
	s.states[i] = !s.states[i]
	if k := i - s.cfg.Neighbors; k >= 0 && k < len(s.ifaces) { // an oper-status
		now := time.Now()
		if s.states[i] {
			s.downFor[k] += now.Sub(s.downSince[k])
			s.downSince[k] = time.Time{}
		} else {
			s.downSince[k] = now
		}
	}
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) snapshot() ([]bool, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bool(nil), s.states...), s.changed
}

// Capabilities lists the models and encodings.
func (s *Server) Capabilities(context.Context, *gpb.CapabilityRequest) (*gpb.CapabilityResponse, error) {
	return &gpb.CapabilityResponse{
		SupportedModels: []*gpb.ModelData{
			{Name: "openconfig-interfaces", Organization: "OpenConfig working group", Version: "3.0.0"},
			{Name: "openconfig-network-instance", Organization: "OpenConfig working group", Version: "4.0.0"},
		},
		SupportedEncodings: []gpb.Encoding{gpb.Encoding_JSON, gpb.Encoding_JSON_IETF, gpb.Encoding_PROTO},
		GNMIVersion:        "0.10.0",
	}, nil
}

// sub is one subscription resolved against the tree.
type sub struct {
	path       []*gpb.PathElem
	mode       gpb.SubscriptionMode
	interval   time.Duration
	heartbeat  time.Duration
	suppress   bool
	counters   bool // matches some counters
	states     bool // matches some session-state or oper-status leaves
	next       time.Time
	nextBeat   time.Time
	last       map[string]string // suppress_redundant / on_change: last value sent per leaf
	singleLeaf bool
	sel        [][]int // per interface, the counters selected
}

// Subscribe serves one subscription list.
func (s *Server) Subscribe(stream gpb.GNMI_SubscribeServer) error {
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	list := req.GetSubscribe()
	if list == nil {
		return status.Error(codes.InvalidArgument, "the first request must be a SubscriptionList")
	}
	enc := list.GetEncoding()
	if enc != gpb.Encoding_JSON && enc != gpb.Encoding_JSON_IETF && enc != gpb.Encoding_PROTO {
		return status.Errorf(codes.Unimplemented, "encoding %s not supported", enc)
	}
	var subs []*sub
	for _, x := range list.GetSubscription() {
		p := append(append([]*gpb.PathElem(nil), list.GetPrefix().GetElem()...), x.GetPath().GetElem()...)
		sb := &sub{path: p, mode: x.GetMode(), interval: time.Duration(x.GetSampleInterval()), heartbeat: time.Duration(x.GetHeartbeatInterval()), suppress: x.GetSuppressRedundant()}
		sb.counters, sb.states, sb.singleLeaf = s.matches(p)
		if sb.counters {
			sb.sel = s.selectCounters(p)
		}
		if !sb.counters && !sb.states {
			return status.Errorf(codes.NotFound, "path %s matches nothing this target serves", pathString(p))
		}
		if sb.interval == 0 {
			sb.interval = s.cfg.DefaultSample
		}
		subs = append(subs, sb)
	}
	w := &writer{s: s, stream: stream, enc: enc}
	ctx := stream.Context()
	sendAll := func() error {
		states, _ := s.snapshot()
		for _, sb := range subs {
			if err := w.send(sb, time.Now(), states, false); err != nil {
				return err
			}
		}
		return w.sync()
	}
	switch list.GetMode() {
	case gpb.SubscriptionList_ONCE:
		return sendAll()
	case gpb.SubscriptionList_POLL:
		if err := sendAll(); err != nil {
			return err
		}
		for {
			r, err := stream.Recv()
			if err != nil {
				return nil // the client went away
			}
			if r.GetPoll() == nil {
				return status.Error(codes.InvalidArgument, "a POLL subscription takes only Poll requests")
			}
			if err := sendAll(); err != nil {
				return err
			}
		}
	}
	// STREAM.
	states, changed := s.snapshot()
	now := time.Now()
	if !list.GetUpdatesOnly() {
		for _, sb := range subs {
			if err := w.send(sb, now, states, false); err != nil {
				return err
			}
		}
	} else {
		for _, sb := range subs {
			sb.last = w.values(sb, now, states) // the baseline changes are measured against
		}
	}
	if err := w.sync(); err != nil {
		return err
	}
	for _, sb := range subs {
		sb.next = now.Add(sb.interval)
		sb.nextBeat = now.Add(sb.heartbeat)
	}
	// The client's half of the stream: a STREAM subscription has no more
	// requests, but its end means the client left.
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for {
			if _, err := stream.Recv(); err != nil {
				return
			}
		}
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// The next sample or heartbeat due.
		var due time.Time
		for _, sb := range subs {
			if at, ok := s.nextSend(sb); ok && (due.IsZero() || at.Before(due)) {
				due = at
			}
		}
		var timerC <-chan time.Time
		if !due.IsZero() {
			d := time.Until(due)
			if d <= 0 {
				// Behind (or sampling as fast as possible): send now,
				// but still notice the client leaving.
				select {
				case <-ctx.Done():
					return nil
				case <-gone:
					return nil
				default:
				}
			} else {
				timer.Reset(d)
				timerC = timer.C
				select {
				case <-ctx.Done():
					return nil
				case <-gone:
					return nil
				case <-changed:
					states, changed = s.snapshot()
					if err := s.onChange(w, subs, states); err != nil {
						return err
					}
					timer.Stop() // Go 1.23 timers: no stale value to drain
					continue
				case <-timerC:
				}
			}
		} else {
			select {
			case <-ctx.Done():
				return nil
			case <-gone:
				return nil
			case <-changed:
				states, changed = s.snapshot()
				if err := s.onChange(w, subs, states); err != nil {
					return err
				}
				continue
			}
		}
		now := time.Now()
		for _, sb := range subs {
			if !s.sampled(sb) {
				// ON_CHANGE with a heartbeat: every value again, changed
				// or not (gNMI 3.5.1.5.2).
				if sb.heartbeat > 0 && !now.Before(sb.nextBeat) {
					if err := w.send(sb, now, states, false); err != nil {
						return err
					}
					sb.nextBeat = now.Add(sb.heartbeat)
				}
				continue
			}
			if now.Before(sb.next) {
				continue
			}
			beat := sb.heartbeat > 0 && !now.Before(sb.nextBeat)
			if beat {
				sb.nextBeat = now.Add(sb.heartbeat)
			}
			if err := w.send(sb, now, states, sb.suppress && !beat); err != nil {
				return err
			}
			sb.next = sb.next.Add(sb.interval)
			if sb.next.Before(now) {
				sb.next = now.Add(sb.interval)
				if sb.interval < time.Millisecond {
					sb.next = now
				}
			}
		}
	}
}

// sampled reports whether a subscription sends on a timer: SAMPLE, and
// TARGET_DEFINED or ON_CHANGE over counters (which change all the time).
func (s *Server) sampled(sb *sub) bool {
	switch sb.mode {
	case gpb.SubscriptionMode_SAMPLE:
		return true
	default:
		return sb.counters
	}
}

// nextSend is when sb sends next on a timer: its next sample, or its
// next heartbeat for an ON_CHANGE one that has heartbeats; false for none.
func (s *Server) nextSend(sb *sub) (time.Time, bool) {
	if s.sampled(sb) {
		return sb.next, true
	}
	return sb.nextBeat, sb.heartbeat > 0
}

func (s *Server) onChange(w *writer, subs []*sub, states []bool) error {
	now := time.Now()
	for _, sb := range subs {
		if sb.mode == gpb.SubscriptionMode_SAMPLE || !sb.states {
			continue
		}
		if err := w.sendStates(sb, now, states, true); err != nil {
			return err
		}
	}
	return nil
}

// selectCounters lists, per interface, the counters path selects.
func (s *Server) selectCounters(p []*gpb.PathElem) [][]int {
	out := make([][]int, len(s.ifaces))
	for i := range s.ifaces {
		for j, c := range Counters {
			leaf := append(append([]*gpb.PathElem(nil), s.ifaces[i].prefix.GetElem()...), &gpb.PathElem{Name: c})
			if prefixOf(p, leaf, false) {
				out[i] = append(out[i], j)
			}
		}
	}
	return out
}

// counterPaths are the relative paths of the counters, shared read-only.
var counterPaths = func() []*gpb.Path {
	out := make([]*gpb.Path, len(Counters))
	for j, c := range Counters {
		out[j] = &gpb.Path{Elem: []*gpb.PathElem{{Name: c}}}
	}
	return out
}()

// matches reports which parts of the tree a path selects.
func (s *Server) matches(p []*gpb.PathElem) (counters, states, single bool) {
	// Any interface's, any counter: a path naming one (Ethernet2, or
	// in-errors) selects it.
	for _, sel := range s.selectCounters(p) {
		if len(sel) > 0 {
			counters = true
			single = len(p) == len(s.ifaces[0].prefix.GetElem())+1
			break
		}
	}
	for _, leaf := range statePatterns {
		if prefixOf(p, leaf, true) {
			states = true
			single = single || len(p) == len(leaf)
		}
	}
	return counters, states, single
}

// prefixOf reports whether sub selects leaf: every element of sub matches
// (name equal or "*", each key equal or "*"); with loose, keys the leaf
// has as "*" match any value.
func prefixOf(sub, leaf []*gpb.PathElem, loose bool) bool {
	if len(sub) > len(leaf) {
		return false
	}
	for i, e := range sub {
		l := leaf[i]
		if e.GetName() != "*" && e.GetName() != l.GetName() {
			return false
		}
		for k, v := range e.GetKey() {
			lv, ok := l.GetKey()[k]
			if !ok {
				return false
			}
			if v != "*" && lv != v && !(loose && lv == "*") {
				return false
			}
		}
	}
	return true
}

// writer sends notifications on one stream.
type writer struct {
	s      *Server
	stream gpb.GNMI_SubscribeServer
	enc    gpb.Encoding
}

func (w *writer) sync() error {
	return w.stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}})
}

// counterValue is interface i's counter j at now: grown at its rate over
// the time the interface was up, standing still while it is down.
func (w *writer) counterValue(i, j int, now time.Time) uint64 {
	ifc := &w.s.ifaces[i]
	return ifc.base + uint64(j) + uint64(w.s.upFor(i, now).Seconds()*ifc.rate*counterShare[j])
}

// upFor is how long of its life to now interface i was up.
func (s *Server) upFor(i int, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	down := s.downFor[i]
	if since := s.downSince[i]; !since.IsZero() && now.After(since) {
		down += now.Sub(since)
	}
	return max(now.Sub(s.start)-down, 0)
}

// ifaceLoad is interface N's in-octets a second over N: 2 Gbit/s, so the
// eight interfaces of a lab target run at 2% to 16% of their 100 Gbit/s
// port-speed, as a dashboard's utilisation panel would show a spine.
// Past loadSteps interfaces the load goes round again (Ethernet9 as
// Ethernet1): at 2×N Gbit/s, Ethernet51 on would carry more than its port.
const ifaceLoad = 250_000_000

// loadSteps is how many interfaces' loads ifaceLoad steps through.
const loadSteps = 8

// counterShare is each counter's rate (in Counters' order) as a share of
// its interface's in-octets rate: packets of 800 octets on average, a few
// multicast and broadcast ones, and a trickle of discards and errors.
var counterShare = []float64{
	1, 1.0 / 800, 1.0 / 80_000, 1.0 / 400_000, 1.0 / 80_000_000, 1.0 / 250_000_000,
	0.6, 0.6 / 800, 1.0 / 100_000, 1.0 / 100_000_000,
}

// values returns the current value of every leaf sb selects, by path.
func (w *writer) values(sb *sub, now time.Time, states []bool) map[string]string {
	out := map[string]string{}
	if sb.counters {
		for i := range w.s.ifaces {
			ifc := &w.s.ifaces[i]
			for j, c := range Counters {
				leaf := append(append([]*gpb.PathElem(nil), ifc.prefix.GetElem()...), &gpb.PathElem{Name: c})
				if prefixOf(sb.path, leaf, false) {
					out[ifc.name+"/"+c] = strconv.FormatUint(w.counterValue(i, j, now), 10)
				}
			}
		}
	}
	if sb.states {
		for i := range w.s.leaves {
			if l := &w.s.leaves[i]; prefixOf(sb.path, l.path(), false) {
				out[l.key] = l.value(states[i])
			}
		}
	}
	return out
}

// send sends what sb selects; with onlyChanged, only leaves whose value
// differs from the last sent.
func (w *writer) send(sb *sub, now time.Time, states []bool, onlyChanged bool) error {
	if sb.last == nil {
		sb.last = map[string]string{}
	}
	if sb.counters {
		ts := now.Add(w.s.cfg.ClockOffset).UnixNano()
		for i := range w.s.ifaces {
			ifc := &w.s.ifaces[i]
			if len(sb.sel[i]) == 0 {
				continue
			}
			n := &gpb.Notification{Timestamp: ts, Prefix: ifc.prefix, Update: make([]*gpb.Update, 0, len(sb.sel[i]))}
			var obj map[string]json.RawMessage
			for _, j := range sb.sel[i] {
				c := Counters[j]
				v := w.counterValue(i, j, now)
				if sb.suppress || onlyChanged {
					k := ifc.name + "/" + c
					sv := strconv.FormatUint(v, 10)
					if onlyChanged && sb.last[k] == sv {
						continue
					}
					sb.last[k] = sv
				}
				if w.enc == gpb.Encoding_PROTO || sb.singleLeaf {
					n.Update = append(n.Update, &gpb.Update{Path: counterPaths[j], Val: w.scalar(v)})
				} else {
					if obj == nil {
						obj = make(map[string]json.RawMessage, len(sb.sel[i]))
					}
					obj[c] = json.RawMessage(w.counter64(v))
				}
			}
			if len(obj) > 0 {
				b, _ := json.Marshal(obj)
				n.Update = append(n.Update, &gpb.Update{Path: &gpb.Path{}, Val: w.blob(b)})
			}
			if len(n.Update) == 0 {
				continue
			}
			if err := w.stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
				return err
			}
		}
	}
	if sb.states {
		return w.sendStates(sb, now, states, onlyChanged)
	}
	return nil
}

// sendStates sends the session-state, oper-status, port-speed and
// ifindex leaves sb selects, each in its own notification.
func (w *writer) sendStates(sb *sub, now time.Time, states []bool, onlyChanged bool) error {
	if sb.last == nil {
		sb.last = map[string]string{}
	}
	for i := range w.s.leaves {
		l := &w.s.leaves[i]
		if !prefixOf(sb.path, l.path(), false) {
			continue
		}
		v := l.value(states[i])
		if onlyChanged && sb.last[l.key] == v {
			continue
		}
		sb.last[l.key] = v
		prefix := &gpb.Path{Elem: l.container}
		var val *gpb.TypedValue
		switch {
		case l.number && w.enc == gpb.Encoding_PROTO:
			n, _ := strconv.ParseUint(v, 10, 32)
			val = &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: n}}
		case l.number:
			val = w.blob([]byte(v)) // a uint32: unquoted in JSON_IETF too
		case w.enc == gpb.Encoding_PROTO:
			val = &gpb.TypedValue{Value: &gpb.TypedValue_StringVal{StringVal: v}}
		default:
			val = w.blob([]byte(strconv.Quote(v)))
		}
		n := &gpb.Notification{Timestamp: now.Add(w.s.cfg.ClockOffset).UnixNano(), Prefix: prefix, Update: []*gpb.Update{{Path: &gpb.Path{Elem: []*gpb.PathElem{{Name: l.name}}}, Val: val}}}
		if err := w.stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_Update{Update: n}}); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) scalar(v uint64) *gpb.TypedValue {
	if w.enc == gpb.Encoding_PROTO {
		return &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: v}}
	}
	return w.blob([]byte(w.counter64(v)))
}

// counter64 is v as JSON: JSON_IETF (RFC 7951 6.1) quotes 64-bit integers,
// as real targets do.
func (w *writer) counter64(v uint64) string {
	if w.enc == gpb.Encoding_JSON_IETF {
		return strconv.Quote(strconv.FormatUint(v, 10))
	}
	return strconv.FormatUint(v, 10)
}

func (w *writer) blob(b []byte) *gpb.TypedValue {
	if w.enc == gpb.Encoding_JSON_IETF {
		return &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: b}}
	}
	return &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: b}}
}

func pathString(es []*gpb.PathElem) string {
	s := ""
	for _, e := range es {
		s += "/" + e.GetName()
		for k, v := range e.GetKey() {
			s += fmt.Sprintf("[%s=%s]", k, v)
		}
	}
	if s == "" {
		return "/"
	}
	return s
}
