// Package sim is a small SNMP agent for labs and scale tests: it answers
// GET, GETNEXT and GETBULK (v1 and v2c) for the system group and a
// synthetic IF-MIB (ifTable and ifXTable) whose counters grow at steady
// per-interface rates, 32-bit counters wrapping as on a real router. gosnmp
// has no agent, so requests are decoded and responses encoded with its
// packet functions.
//
// The MIB is not materialised: GETNEXT walks an ordered list of about forty
// objects (scalars and table columns over ifIndex 1..N) and computes the
// successor, so an agent with 20,000 interfaces costs no memory and a
// thousand agents share nothing but code.
package sim

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Options describe one agent.
type Options struct {
	// Name is sysName; Seed varies the counters between agents.
	Name       string
	Seed       uint64
	Interfaces int
	// Community accepted (any if empty).
	Community string
	// Delay before each response (a slow agent).
	Delay time.Duration
	// Dead agents receive and never answer.
	Dead bool
	// RebootEvery restarts sysUpTime and every counter (a reload).
	RebootEvery time.Duration
	// V3, if set, is the one SNMPv3 user the agent also accepts (any
	// security level its passwords allow).
	V3 *gosnmp.UsmSecurityParameters
}

// Agent is a running simulated agent.
type Agent struct {
	opts     Options
	conn     net.PacketConn
	start    time.Time
	dec      *gosnmp.GoSNMP
	requests atomic.Int64
	mu       sync.Mutex
	sources  map[string]bool // remote addresses seen
	// oper is, per interface told (SetOperStatus), whether it is up;
	// the others are up but every tenth. down is when each interface
	// told was down: its counters stand still then, as a real port's.
	oper map[int]bool
	down map[int]*downTimes
	// v3 decodes USM requests; engineID is this agent's; reports
	// counts the reports sent (only the Serve goroutine touches it).
	v3       *gosnmp.GoSNMP
	engineID string
	reports  uint
}

// Listen binds an agent to addr (udp, e.g. 127.0.0.1:16100).
func Listen(addr string, opts Options) (*Agent, error) {
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("sim: listen %s: %w", addr, err)
	}
	if opts.Interfaces < 0 {
		opts.Interfaces = 0
	}
	a := &Agent{opts: opts, conn: conn, start: time.Now(), dec: &gosnmp.GoSNMP{}, sources: map[string]bool{}}
	if opts.V3 != nil {
		// RFC 3411 engine ID: enterprise 0, format 5 (octets), then
		// the seed, so an agent keeps its ID across runs.
		id := []byte{0x80, 0, 0, 0, 0x05, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(id[5:], opts.Seed)
		a.engineID = string(id)
		table := gosnmp.NewSnmpV3SecurityParametersTable(gosnmp.Logger{})
		// The empty user decodes discovery probes.
		if err := table.Add("", &gosnmp.UsmSecurityParameters{AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv}); err != nil {
			conn.Close()
			return nil, err
		}
		user := opts.V3.Copy()
		if err := table.Add(opts.V3.UserName, user); err != nil {
			conn.Close()
			return nil, fmt.Errorf("sim: v3 user %s: %w", opts.V3.UserName, err)
		}
		a.v3 = &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel}
		a.v3.SetTrapSecurityParametersTable(table)
	}
	return a, nil
}

// SetOperStatus sets interface idx's ifOperStatus (1-based, as ifIndex)
// up(1) or down(2): a lab's device whose polls say what its syslog does.
func (a *Agent) SetOperStatus(idx int, up bool) {
	a.setOperStatus(idx, up, time.Now())
}

func (a *Agent) setOperStatus(idx int, up bool, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.oper == nil {
		a.oper, a.down = map[int]bool{}, map[int]*downTimes{}
	}
	was := a.operUpLocked(idx)
	a.oper[idx] = up
	dt := a.down[idx]
	if dt == nil {
		dt = &downTimes{}
		if !was {
			dt.since = a.start // down from the start (every tenth)
		}
		a.down[idx] = dt
	}
	switch {
	case was && !up:
		dt.since = now
	case !was && up:
		dt.spans = append(dt.spans, [2]time.Time{dt.since, now})
		dt.since = time.Time{}
		// A reboot's counters start again: a span before the
		// current uptime's start counts no more.
		if a.opts.RebootEvery > 0 {
			from := now.Add(-a.state(now).uptime)
			dt.spans = slices.DeleteFunc(dt.spans, func(sp [2]time.Time) bool { return sp[1].Before(from) })
		}
	}
}

// downTimes is when an interface was down: spans, and since while it is.
type downTimes struct {
	spans [][2]time.Time
	since time.Time // zero while up
}

// within is how long of from to to the interface was down.
func (dt *downTimes) within(from, to time.Time) time.Duration {
	overlap := func(a, b time.Time) time.Duration {
		a, b = later(a, from), earlier(b, to)
		return max(b.Sub(a), 0)
	}
	var d time.Duration
	for _, sp := range dt.spans {
		d += overlap(sp[0], sp[1])
	}
	if !dt.since.IsZero() {
		d += overlap(dt.since, to)
	}
	return d
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// operUp reports whether interface idx is up: as told, else all but
// every tenth.
func (a *Agent) operUp(idx int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.operUpLocked(idx)
}

func (a *Agent) operUpLocked(idx int) bool {
	if up, ok := a.oper[idx]; ok {
		return up
	}
	return idx%10 != 0
}

// carried is how long of the current uptime interface idx carried
// traffic: none while down.
func (s state) carried(idx int) time.Duration {
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if dt, ok := a.down[idx]; ok {
		return s.uptime - dt.within(s.now.Add(-s.uptime), s.now)
	}
	if !a.operUpLocked(idx) {
		return 0 // every tenth, down for good
	}
	return s.uptime
}

// Addr is the agent's address.
func (a *Agent) Addr() net.Addr { return a.conn.LocalAddr() }

// Requests counts the requests answered.
func (a *Agent) Requests() int64 { return a.requests.Load() }

// Sources counts the distinct client addresses (IP and port) that sent
// requests: a poller that reuses its session shows one.
func (a *Agent) Sources() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.sources)
}

// Serve answers requests until ctx is done.
func (a *Agent) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { a.conn.Close() })
	defer stop()
	buf := make([]byte, 65535)
	for {
		n, from, err := a.conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			continue
		}
		a.mu.Lock()
		a.sources[from.String()] = true
		a.mu.Unlock()
		if a.opts.Dead {
			continue
		}
		resp, err := a.handle(buf[:n], time.Now())
		if err != nil || resp == nil {
			continue // not for us, or not decodable: agents stay silent
		}
		if a.opts.Delay > 0 {
			select {
			case <-time.After(a.opts.Delay):
			case <-ctx.Done():
				return nil
			}
		}
		_, _ = a.conn.WriteTo(resp, from)
		a.requests.Add(1)
	}
}

// maxVarbinds bounds one response so it fits a UDP datagram.
const maxVarbinds = 1000

func (a *Agent) handle(pkt []byte, now time.Time) (out []byte, err error) {
	defer func() {
		// gosnmp's decoder panics on some malformed v3 headers (see
		// FuzzHandle); an agent drops such a datagram.
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("malformed packet: %v", p)
		}
	}()
	if isV3(pkt) {
		return a.handleV3(pkt, now)
	}
	req, err := a.dec.SnmpDecodePacket(pkt)
	if err != nil {
		return nil, err
	}
	if req.Version == gosnmp.Version3 {
		return nil, errors.New("v3 without a user")
	}
	if a.opts.Community != "" && req.Community != a.opts.Community {
		return nil, errors.New("wrong community")
	}
	resp := &gosnmp.SnmpPacket{
		Version:   req.Version,
		Community: req.Community,
		PDUType:   gosnmp.GetResponse,
		RequestID: req.RequestID,
	}
	if err := a.answer(req, resp, now); err != nil {
		return nil, err
	}
	return resp.MarshalMsg()
}

// isV3 reads the message's version field: a SEQUENCE whose first element
// is INTEGER 3.
func isV3(pkt []byte) bool {
	if len(pkt) < 2 || pkt[0] != 0x30 {
		return false
	}
	i := 2
	if pkt[1]&0x80 != 0 {
		i += int(pkt[1] & 0x7f)
	}
	return i+3 <= len(pkt) && pkt[i] == 0x02 && pkt[i+1] == 1 && pkt[i+2] == 3
}

// handleV3 serves USM requests: engine discovery is answered with a
// report of this agent's engine ID, boots and time (RFC 3414 section 4);
// requests are authenticated and decrypted with the user's keys localised
// to that engine ID, and answered at the same security level.
func (a *Agent) handleV3(pkt []byte, now time.Time) ([]byte, error) {
	if a.v3 == nil {
		return nil, errors.New("v3 not configured")
	}
	req, err := a.v3.UnmarshalTrap(pkt, false)
	if err != nil {
		return nil, err // unknown user, bad digest: stay silent
	}
	usm, ok := req.SecurityParameters.(*gosnmp.UsmSecurityParameters)
	if !ok {
		return nil, errors.New("not USM")
	}
	if usm.UserName == "" || usm.AuthoritativeEngineID != a.engineID {
		// A discovery probe, or keys localised for another engine:
		// either way the sender needs this engine's ID.
		return a.report(req, now)
	}
	resp := *req
	resp.PDUType = gosnmp.GetResponse
	resp.Error, resp.ErrorIndex = gosnmp.NoError, 0
	resp.Variables = nil
	resp.MsgFlags = req.MsgFlags &^ gosnmp.Reportable
	if err := a.answer(req, &resp, now); err != nil {
		return nil, err
	}
	sp, _ := usm.Copy().(*gosnmp.UsmSecurityParameters)
	if len(sp.PrivacyParameters) > 0 {
		// A fresh salt: reusing the request's would reuse its IV.
		sp.PrivacyParameters = make([]byte, len(sp.PrivacyParameters))
		_, _ = rand.Read(sp.PrivacyParameters)
	}
	sp.AuthoritativeEngineBoots, sp.AuthoritativeEngineTime = 1, a.engineTime(now)
	resp.SecurityParameters = sp
	return resp.MarshalMsg()
}

func (a *Agent) report(req *gosnmp.SnmpPacket, now time.Time) ([]byte, error) {
	a.reports++
	rep := &gosnmp.SnmpPacket{
		Version:       gosnmp.Version3,
		MsgFlags:      gosnmp.NoAuthNoPriv,
		SecurityModel: gosnmp.UserSecurityModel,
		MsgID:         req.MsgID,
		MsgMaxSize:    65507,
		SecurityParameters: &gosnmp.UsmSecurityParameters{
			AuthoritativeEngineID:    a.engineID,
			AuthoritativeEngineBoots: 1,
			AuthoritativeEngineTime:  a.engineTime(now),
			AuthenticationProtocol:   gosnmp.NoAuth,
			PrivacyProtocol:          gosnmp.NoPriv,
		},
		ContextEngineID: a.engineID,
		PDUType:         gosnmp.Report,
		RequestID:       req.RequestID,
		Variables: []gosnmp.SnmpPDU{{
			Name: ".1.3.6.1.6.3.15.1.1.4.0", Type: gosnmp.Counter32, Value: uint(a.reports),
		}},
	}
	return rep.MarshalMsg()
}

func (a *Agent) engineTime(now time.Time) uint32 { return uint32(now.Sub(a.start) / time.Second) }

// answer fills resp's varbinds for a GET, GETNEXT or GETBULK request.
func (a *Agent) answer(req, resp *gosnmp.SnmpPacket, now time.Time) error {
	st := a.state(now)
	switch req.PDUType {
	case gosnmp.GetRequest:
		for _, v := range req.Variables {
			oid, err := parseOID(v.Name)
			if err != nil {
				return err
			}
			resp.Variables = append(resp.Variables, st.get(oid))
		}
	case gosnmp.GetNextRequest:
		for _, v := range req.Variables {
			oid, err := parseOID(v.Name)
			if err != nil {
				return err
			}
			resp.Variables = append(resp.Variables, st.next(oid))
		}
	case gosnmp.GetBulkRequest:
		if req.Version == gosnmp.Version1 {
			return errors.New("GETBULK in v1")
		}
		nonRep := min(int(req.NonRepeaters), len(req.Variables))
		for _, v := range req.Variables[:nonRep] {
			oid, err := parseOID(v.Name)
			if err != nil {
				return err
			}
			resp.Variables = append(resp.Variables, st.next(oid))
		}
		reps := req.Variables[nonRep:]
		cursors := make([][]uint32, len(reps))
		for i, v := range reps {
			var err error
			if cursors[i], err = parseOID(v.Name); err != nil {
				return err
			}
		}
		maxRep := int(req.MaxRepetitions)
		if len(reps) > 0 {
			maxRep = min(maxRep, (maxVarbinds-nonRep)/len(reps))
		}
		for r := 0; r < maxRep; r++ {
			for i := range cursors {
				pdu := st.next(cursors[i])
				resp.Variables = append(resp.Variables, pdu)
				if pdu.Type != gosnmp.EndOfMibView {
					cursors[i], _ = parseOID(pdu.Name)
				}
			}
		}
	default:
		return fmt.Errorf("unsupported PDU %v", req.PDUType)
	}
	if req.Version == gosnmp.Version1 {
		// v1 has no exceptions: noSuchName with the index of the
		// first variable that has no value.
		for i, v := range resp.Variables {
			if v.Type == gosnmp.NoSuchObject || v.Type == gosnmp.NoSuchInstance || v.Type == gosnmp.EndOfMibView {
				resp.Error, resp.ErrorIndex = gosnmp.NoSuchName, uint8(min(i+1, 255))
				resp.Variables = req.Variables
				break
			}
		}
	}
	return nil
}

// state is the agent at one instant.
type state struct {
	a      *Agent
	now    time.Time
	uptime time.Duration
}

func (a *Agent) state(now time.Time) state {
	up := now.Sub(a.start)
	if a.opts.RebootEvery > 0 {
		up %= a.opts.RebootEvery
	}
	return state{a: a, now: now, uptime: up}
}

// object is a scalar or a table column.
type object struct {
	oid    []uint32
	column bool
	value  func(s state, idx int) gosnmp.SnmpPDU
}

var (
	mib2      = []uint32{1, 3, 6, 1, 2, 1}
	objects   = buildObjects()
	endOfView = gosnmp.SnmpPDU{Type: gosnmp.EndOfMibView}
)

func oidOf(base []uint32, rest ...uint32) []uint32 {
	return append(append([]uint32(nil), base...), rest...)
}

func buildObjects() []object {
	str := func(f func(s state, idx int) string) func(state, int) gosnmp.SnmpPDU {
		return func(s state, idx int) gosnmp.SnmpPDU {
			return gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte(f(s, idx))}
		}
	}
	integer := func(f func(s state, idx int) int) func(state, int) gosnmp.SnmpPDU {
		return func(s state, idx int) gosnmp.SnmpPDU { return gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: f(s, idx)} }
	}
	gauge := func(f func(s state, idx int) uint) func(state, int) gosnmp.SnmpPDU {
		return func(s state, idx int) gosnmp.SnmpPDU { return gosnmp.SnmpPDU{Type: gosnmp.Gauge32, Value: f(s, idx)} }
	}
	// Counters: octets grow at the interface's rate; packets are
	// octets/800; discards and errors a millionth of the packets.
	c64 := func(dir, div uint64) func(state, int) gosnmp.SnmpPDU {
		return func(s state, idx int) gosnmp.SnmpPDU {
			return gosnmp.SnmpPDU{Type: gosnmp.Counter64, Value: s.octets(idx, dir) / div}
		}
	}
	c32 := func(dir, div uint64) func(state, int) gosnmp.SnmpPDU {
		return func(s state, idx int) gosnmp.SnmpPDU {
			return gosnmp.SnmpPDU{Type: gosnmp.Counter32, Value: uint(uint32(s.octets(idx, dir) / div))}
		}
	}
	const in, out = 0, 1
	ifT := oidOf(mib2, 2, 2, 1)
	ifX := oidOf(mib2, 31, 1, 1, 1)
	col := func(base []uint32, n uint32, v func(state, int) gosnmp.SnmpPDU) object {
		return object{oid: oidOf(base, n), column: true, value: v}
	}
	scalar := func(oid []uint32, v func(state, int) gosnmp.SnmpPDU) object {
		return object{oid: oid, value: v}
	}
	name := func(_ state, idx int) string { return fmt.Sprintf("Ethernet%d", idx) }
	return []object{
		scalar(oidOf(mib2, 1, 1, 0), str(func(s state, _ int) string { return "weir-sim SNMP agent" })),
		scalar(oidOf(mib2, 1, 2, 0), func(state, int) gosnmp.SnmpPDU {
			return gosnmp.SnmpPDU{Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.4.1.99999.1"}
		}),
		scalar(oidOf(mib2, 1, 3, 0), func(s state, _ int) gosnmp.SnmpPDU {
			return gosnmp.SnmpPDU{Type: gosnmp.TimeTicks, Value: uint32(s.uptime / (10 * time.Millisecond))}
		}),
		scalar(oidOf(mib2, 1, 4, 0), str(func(state, int) string { return "lab@example.net" })),
		scalar(oidOf(mib2, 1, 5, 0), str(func(s state, _ int) string { return s.a.opts.Name })),
		scalar(oidOf(mib2, 1, 6, 0), str(func(state, int) string { return "weir lab" })),
		scalar(oidOf(mib2, 2, 1, 0), integer(func(s state, _ int) int { return s.a.opts.Interfaces })),
		col(ifT, 1, integer(func(_ state, idx int) int { return idx })),
		col(ifT, 2, str(name)),
		col(ifT, 3, integer(func(state, int) int { return 6 })), // ethernetCsmacd
		col(ifT, 4, integer(func(state, int) int { return 9100 })),
		col(ifT, 5, gauge(func(s state, idx int) uint { return uint(min(s.speed(idx), 4294967295)) })),
		col(ifT, 6, func(s state, idx int) gosnmp.SnmpPDU {
			return gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte{0x02, 0x00, byte(s.a.opts.Seed), byte(s.a.opts.Seed >> 8), byte(idx >> 8), byte(idx)}}
		}),
		col(ifT, 7, integer(func(state, int) int { return 1 })),
		col(ifT, 8, integer(func(s state, idx int) int { return 1 + btoi(!s.a.operUp(idx)) })),
		col(ifT, 9, func(state, int) gosnmp.SnmpPDU { return gosnmp.SnmpPDU{Type: gosnmp.TimeTicks, Value: uint32(0)} }),
		col(ifT, 10, c32(in, 1)),
		col(ifT, 11, c32(in, 800)),
		col(ifT, 12, c32(in, 80000)),
		col(ifT, 13, c32(in, 800_000_000)),
		col(ifT, 14, c32(in, 900_000_000)),
		col(ifT, 15, c32(in, 1_000_000_000)),
		col(ifT, 16, c32(out, 1)),
		col(ifT, 17, c32(out, 800)),
		col(ifT, 18, c32(out, 80000)),
		col(ifT, 19, c32(out, 800_000_000)),
		col(ifT, 20, c32(out, 900_000_000)),
		col(ifX, 1, str(name)),
		col(ifX, 2, c32(in, 100000)),
		col(ifX, 3, c32(in, 200000)),
		col(ifX, 4, c32(out, 100000)),
		col(ifX, 5, c32(out, 200000)),
		col(ifX, 6, c64(in, 1)),
		col(ifX, 7, c64(in, 800)),
		col(ifX, 8, c64(in, 100000)),
		col(ifX, 9, c64(in, 200000)),
		col(ifX, 10, c64(out, 1)),
		col(ifX, 11, c64(out, 800)),
		col(ifX, 12, c64(out, 100000)),
		col(ifX, 13, c64(out, 200000)),
		col(ifX, 14, integer(func(state, int) int { return 1 })),
		col(ifX, 15, gauge(func(s state, idx int) uint { return uint(s.speed(idx) / 1_000_000) })),
		col(ifX, 16, integer(func(state, int) int { return 2 })),
		col(ifX, 17, integer(func(state, int) int { return 1 })),
		col(ifX, 18, str(func(_ state, idx int) string { return fmt.Sprintf("uplink %d", idx) })),
		col(ifX, 19, func(state, int) gosnmp.SnmpPDU { return gosnmp.SnmpPDU{Type: gosnmp.TimeTicks, Value: uint32(0)} }), // no discontinuity since boot
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// speed is 1, 10 or 100 Gbit/s by interface.
func (s state) speed(idx int) uint64 {
	return []uint64{1e9, 10e9, 100e9}[idx%3]
}

// octets is the interface's byte counter: a load between 1% and 40% of
// its speed, steady while it is up, plus a per-agent start value so
// agents differ.
func (s state) octets(idx int, dir uint64) uint64 {
	h := (uint64(idx)*2654435761 + s.a.opts.Seed*40503 + dir*7919) % 40
	bytesPerSec := s.speed(idx) / 8 * (h + 1) / 100
	start := (s.a.opts.Seed*1_000_003 + uint64(idx)*97 + dir) % 1_000_000_000
	if s.a.opts.RebootEvery > 0 {
		start = 0 // a reboot resets counters
	}
	return start + uint64(s.carried(idx).Seconds()*float64(bytesPerSec))
}

func (s state) get(oid []uint32) gosnmp.SnmpPDU {
	name := formatOID(oid)
	for _, o := range objects {
		if !o.column {
			if cmpOID(oid, o.oid) == 0 {
				pdu := o.value(s, 0)
				pdu.Name = name
				return pdu
			}
			continue
		}
		if len(oid) == len(o.oid)+1 && cmpOID(oid[:len(o.oid)], o.oid) == 0 {
			if idx := int(oid[len(o.oid)]); idx >= 1 && idx <= s.a.opts.Interfaces {
				pdu := o.value(s, idx)
				pdu.Name = name
				return pdu
			}
			return gosnmp.SnmpPDU{Name: name, Type: gosnmp.NoSuchInstance}
		}
	}
	return gosnmp.SnmpPDU{Name: name, Type: gosnmp.NoSuchObject}
}

// next is GETNEXT: the first instance after oid.
func (s state) next(oid []uint32) gosnmp.SnmpPDU {
	n := s.a.opts.Interfaces
	for _, o := range objects {
		if !o.column {
			if cmpOID(o.oid, oid) > 0 {
				pdu := o.value(s, 0)
				pdu.Name = formatOID(o.oid)
				return pdu
			}
			continue
		}
		if n == 0 {
			continue
		}
		idx := 0
		switch c := cmpOID(oid, o.oid); {
		case c < 0 && !hasPrefix(o.oid, oid):
			idx = 1 // oid sorts before the column
		case hasPrefix(oid, o.oid):
			if len(oid) == len(o.oid) {
				idx = 1
			} else {
				idx = int(oid[len(o.oid)]) + 1
			}
		case c < 0:
			idx = 1 // oid is a prefix of the column (a walk of the table)
		default:
			continue // oid is past the column
		}
		if idx >= 1 && idx <= n {
			pdu := o.value(s, idx)
			pdu.Name = formatOID(append(append(make([]uint32, 0, len(o.oid)+1), o.oid...), uint32(idx)))
			return pdu
		}
	}
	pdu := endOfView
	pdu.Name = formatOID(oid)
	return pdu
}

func hasPrefix(oid, prefix []uint32) bool {
	return len(oid) >= len(prefix) && cmpOID(oid[:len(prefix)], prefix) == 0
}

func cmpOID(a, b []uint32) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func parseOID(s string) ([]uint32, error) {
	s = strings.TrimPrefix(s, ".")
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ".")
	out := make([]uint32, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("bad OID %q", s)
		}
		out[i] = uint32(v)
	}
	return out, nil
}

func formatOID(oid []uint32) string {
	b := make([]byte, 0, len(oid)*4)
	for _, v := range oid {
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return string(b)
}
