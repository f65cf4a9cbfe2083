package snmp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// fakeAgent answers v2c requests with what handle returns (nil: silence):
// an agent that misbehaves in ways snmpd will not.
func fakeAgent(t *testing.T, handle func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket) string {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	dec := &gosnmp.GoSNMP{}
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			req, err := dec.SnmpDecodePacket(buf[:n])
			if err != nil {
				continue
			}
			resp := handle(req)
			if resp == nil {
				continue
			}
			resp.Version, resp.Community, resp.PDUType = req.Version, req.Community, gosnmp.GetResponse
			if resp.RequestID == 0 {
				resp.RequestID = req.RequestID
			}
			b, err := resp.MarshalMsg()
			if err != nil {
				panic(err)
			}
			conn.WriteTo(b, from)
		}
	}()
	return conn.LocalAddr().String()
}

const testColumn = "1.3.6.1.4.1.9999.1.1"

// oneColumnProfile is a profile "t1" of one table with one counter column,
// testColumn.
func oneColumnProfile(t *testing.T) *profile.Set {
	t.Helper()
	dir := t.TempDir()
	y := "name: t1\nmeasurement: x\ntables:\n  - measurement: tbl\n    index: [{name: idx, type: int}]\n" +
		"    columns:\n      - {name: c, oid: " + testColumn + ", type: counter}\n"
	if err := os.WriteFile(dir+"/t1.yaml", []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := profile.Load(configs.BuiltinSNMPProfiles(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tableAgent answers GETs with sysUpTime and GETBULKs on testColumn with
// rows(start row, max-repetitions): the packet to send back.
func tableAgent(t *testing.T, rows func(from int, reps uint32) *gosnmp.SnmpPacket) string {
	return fakeAgent(t, tableHandler(rows))
}

// tableHandler is tableAgent's answer to req.
func tableHandler(rows func(from int, reps uint32) *gosnmp.SnmpPacket) func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
	return func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		switch req.PDUType {
		case gosnmp.GetRequest:
			resp := &gosnmp.SnmpPacket{}
			for _, v := range req.Variables {
				if v.Name == ".1.3.6.1.2.1.1.3.0" {
					resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.TimeTicks, Value: uint32(1234)})
				} else {
					resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.NoSuchObject})
				}
			}
			return resp
		case gosnmp.GetBulkRequest:
			from := 0
			if rest, ok := strings.CutPrefix(strings.TrimPrefix(req.Variables[0].Name, "."), testColumn+"."); ok {
				from, _ = strconv.Atoi(rest)
			}
			resp := rows(from, req.MaxRepetitions)
			if resp.Error != gosnmp.NoError && len(resp.Variables) == 0 {
				resp.Variables = req.Variables
			}
			return resp
		}
		return nil
	}
}

// rowsFrom are rows from+1 .. from+n of testColumn.
func rowsFrom(from, n int) []gosnmp.SnmpPDU {
	var out []gosnmp.SnmpPDU
	for i := from + 1; i <= from+n; i++ {
		out = append(out, gosnmp.SnmpPDU{Name: fmt.Sprintf(".%s.%d", testColumn, i), Type: gosnmp.Counter32, Value: uint(i)})
	}
	return out
}

// pollTable polls a tableAgent once and returns the table rows
// published, the status record's fields and the poll's error.
func pollTable(t *testing.T, addr string, cfg func(*Config)) (int, map[string]any, error) {
	t.Helper()
	capture := snmptest.NewCapture()
	c := Config{
		Targets: []configs.SNMPTarget{testTarget("a", addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
			tc.MaxRepetitions = 5
		})},
		Profiles: oneColumnProfile(t),
		Broker:   capture,
	}
	if cfg != nil {
		cfg(&c)
	}
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	perr := p.PollOnce(context.Background(), "a")
	rows := 0
	for _, m := range decode(t, capture.Records()) {
		if m.Measurement == "tbl" {
			rows++
		}
	}
	return rows, statuses(t, capture.Records(), "a")[0].Fields, perr
}

// TestWalkAgentErrorFailsThePoll: an agent that ends a walk with an
// error-status (genErr here) fails the poll; gosnmp's walk returned the
// rows so far as a whole table, and the poll looked good.
func TestWalkAgentErrorFailsThePoll(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		if from == 0 {
			return &gosnmp.SnmpPacket{Variables: rowsFrom(0, 5)}
		}
		return &gosnmp.SnmpPacket{Error: gosnmp.GenErr, ErrorIndex: 1}
	})
	rows, st, err := pollTable(t, addr, nil)
	if err == nil || st["snmp_up"] != float64(0) || !strings.Contains(fmt.Sprint(st["error"]), "agent error GenErr after 5 varbinds") {
		t.Fatalf("err %v, %d rows, status %v", err, rows, st)
	}
}

// TestWalkTooBigAsksForFewer: tooBig halves max-repetitions, and the walk
// goes on from where it was.
func TestWalkTooBigAsksForFewer(t *testing.T) {
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		switch {
		case reps > 2:
			return &gosnmp.SnmpPacket{Error: gosnmp.TooBig}
		case from >= 7:
			return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
		}
		return &gosnmp.SnmpPacket{Variables: rowsFrom(from, min(int(reps), 7-from))}
	})
	rows, st, err := pollTable(t, addr, nil)
	if err != nil || rows != 7 || st["snmp_up"] != float64(1) {
		t.Fatalf("err %v, %d rows (want 7), status %v", err, rows, st)
	}
}

// TestWalkStopsAtMaxVarbinds: a table that never ends fails the poll at
// the bound, with that reason, rather than fill memory until the
// deadline and fail as a timeout.
func TestWalkStopsAtMaxVarbinds(t *testing.T) {
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: rowsFrom(from, int(reps))}
	})
	_, st, err := pollTable(t, addr, func(c *Config) { c.MaxWalkVarbinds = 100 })
	if err == nil || !strings.Contains(fmt.Sprint(st["error"]), "more than 100 varbinds") {
		t.Fatalf("err %v, status %v", err, st)
	}
}

// TestWalkStopsAtMaxPollBytes: an agent answering a walk with large
// strings (a table that never ends, of 16 KB values) fails the poll at the
// bound of what the poll holds, with that reason. Bounded by the varbind
// count alone (a million), 40,000 such varbinds took the heap to 1.1 GB
// in two seconds, and a million of 64 KB would have had weir killed for
// its memory.
func TestWalkStopsAtMaxPollBytes(t *testing.T) {
	big := []byte(strings.Repeat("A", 16000))
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		var vbs []gosnmp.SnmpPDU
		for i := from + 1; i <= from+3; i++ {
			vbs = append(vbs, gosnmp.SnmpPDU{Name: fmt.Sprintf(".%s.%d", testColumn, i), Type: gosnmp.OctetString, Value: big})
		}
		return &gosnmp.SnmpPacket{Variables: vbs}
	})
	_, st, err := pollTable(t, addr, func(c *Config) { c.MaxPollBytes = 4 << 20 })
	if err == nil || st["snmp_up"] != float64(0) || !strings.Contains(fmt.Sprint(st["error"]), "the poll's answers hold more than 4 MiB (262 varbinds of this column)") {
		t.Fatalf("err %v, status %v", err, st)
	}
	// The default bound.
	p, err := New(Config{Profiles: loadProfiles(t), Broker: snmptest.NewCapture()})
	if err != nil {
		t.Fatal(err)
	}
	if p.cfg.MaxPollBytes != 256<<20 {
		t.Errorf("default MaxPollBytes %d", p.cfg.MaxPollBytes)
	}
}

// TestWalkOIDNotIncreasing: an agent that answers an OID at or before
// the last one (a loop) fails the walk, within a response too.
func TestWalkOIDNotIncreasing(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: append(rowsFrom(0, 3), rowsFrom(1, 1)...)}
	})
	_, st, err := pollTable(t, addr, nil)
	if err == nil || !strings.Contains(fmt.Sprint(st["error"]), "OID not increasing") {
		t.Fatalf("err %v, status %v", err, st)
	}
}

// TestSlotUnavailableSkipsOnePoll: a target that waits a whole interval
// for a concurrency slot skips that poll only, and polls at the next slot;
// it skipped the next one too, counting two.
func TestSlotUnavailableSkipsOnePoll(t *testing.T) {
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	})
	capture := snmptest.NewCapture()
	metrics, _ := NewMetrics(nil)
	interval := 2 * time.Second // room for a poll under -race on a loaded machine
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("starved", addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
			tc.Interval, tc.Timeout = interval, 200*time.Millisecond
		})},
		Profiles: oneColumnProfile(t), Broker: capture, Metrics: metrics, MaxConcurrency: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	first := firstSlot(time.Now(), interval, Offset("starved", interval))
	if time.Until(first) < interval/2 {
		// Too close: the poller could start after it. Let it pass, so
		// that the poller's first slot is this one.
		time.Sleep(time.Until(first) + 10*time.Millisecond)
		first = first.Add(interval)
	}
	// Another poll holds the only slot until just after the first slot's
	// window ends.
	p.sem <- struct{}{}
	var released atomic.Bool
	time.AfterFunc(time.Until(first.Add(interval+50*time.Millisecond)), func() { <-p.sem; released.Store(true) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	time.Sleep(time.Until(first.Add(3*interval + interval/2))) // slots 1 to 4
	cancel()
	<-done
	polls := len(statuses(t, capture.Records(), "starved"))
	skipped := testutil.ToFloat64(metrics.Skipped.WithLabelValues("starved"))
	if !released.Load() || polls != 3 || skipped != 1 {
		t.Errorf("%d polls and %v skipped in 4 slots, the first without a free slot: want 3 and 1", polls, skipped)
	}
}

// TestCounter64Listed: a counter the agent sends as Counter64 is listed in
// the record's counters64, so a rate never takes its going back for a
// 32-bit wrap; a Counter32 is not.
func TestCounter64Listed(t *testing.T) {
	for _, typ := range []gosnmp.Asn1BER{gosnmp.Counter32, gosnmp.Counter64} {
		addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
			if from > 0 {
				return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
			}
			v := any(uint(5))
			if typ == gosnmp.Counter64 {
				v = uint64(5)
			}
			return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: "." + testColumn + ".1", Type: typ, Value: v}}}
		})
		capture := snmptest.NewCapture()
		p, err := New(Config{
			Targets: []configs.SNMPTarget{testTarget("a", addr, func(tc *configs.SNMPTarget) {
				tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
			})},
			Profiles: oneColumnProfile(t), Broker: capture,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.PollOnce(context.Background(), "a"); err != nil {
			t.Fatal(err)
		}
		rows := 0
		for _, m := range decode(t, capture.Records()) {
			if m.Measurement != "tbl" {
				continue
			}
			rows++
			wide := len(m.Counters64) == 1 && m.Counters64[0] == "c"
			if fmt.Sprint(m.Counters) != "[c]" || wide != (typ == gosnmp.Counter64) {
				t.Errorf("%v: counters %v, counters64 %v", typ, m.Counters, m.Counters64)
			}
		}
		if rows != 1 {
			t.Errorf("%v: %d rows", typ, rows)
		}
	}
}

// TestWrongTypeCounted: a counter column answered with an OCTET STRING
// (or a negative number) is left out of the row and counted, not dropped
// without a word.
func TestWrongTypeCounted(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		if from > 0 {
			return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
		}
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{
			{Name: "." + testColumn + ".1", Type: gosnmp.OctetString, Value: []byte("n/a")},
			{Name: "." + testColumn + ".2", Type: gosnmp.Integer, Value: -5},
			{Name: "." + testColumn + ".3", Type: gosnmp.Counter32, Value: uint(7)},
		}}
	})
	metrics, _ := NewMetrics(nil)
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("a", addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
		})},
		Profiles: oneColumnProfile(t), Broker: capture, Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(metrics.WrongType.WithLabelValues("a", "c")); n != 2 {
		t.Errorf("%v values of the wrong type counted, want 2", n)
	}
	withValue := 0
	for _, m := range decode(t, capture.Records()) {
		if m.Measurement == "tbl" && m.Fields["c"] != nil {
			withValue++
		}
	}
	if withValue != 1 {
		t.Errorf("%d rows with a value, want 1", withValue)
	}
}

// stuckFor is a broker whose Produce of one target's records blocks until
// its context ends, as a Kafka partition without a leader does.
type stuckFor struct {
	*snmptest.Capture
	key string
}

func (b stuckFor) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if len(recs) > 0 && string(recs[0].Key) == b.key {
		<-ctx.Done()
		return ctx.Err()
	}
	return b.Capture.Produce(ctx, topic, recs)
}

// heldFor is a broker whose Produce of one target's records does not
// return until release is closed, whatever its context says: the worst
// a broker can do to a poller that holds its concurrency slot while it
// publishes.
type heldFor struct {
	*snmptest.Capture
	key     string
	release chan struct{}
}

func (b heldFor) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if len(recs) > 0 && string(recs[0].Key) == b.key {
		<-b.release
		return errors.New("held")
	}
	return b.Capture.Produce(ctx, topic, recs)
}

// TestStuckPublishFreesTheSlot: a target whose records the broker cannot
// take does not hold the concurrency slot while it waits, so the other
// targets are still polled: with one slot, the other target is polled
// again and again while the stuck target's publish has not returned.
func TestStuckPublishFreesTheSlot(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	})
	capture := snmptest.NewCapture()
	var targets []configs.SNMPTarget
	for _, name := range []string{"stuck", "fine"} {
		targets = append(targets, testTarget(name, addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
			tc.Interval, tc.Timeout = 200*time.Millisecond, 100*time.Millisecond
		}))
	}
	b := heldFor{Capture: capture, key: "stuck", release: make(chan struct{})}
	p, err := New(Config{Targets: targets, Profiles: oneColumnProfile(t), Broker: b, MaxConcurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); close(b.release); <-done }()
	if !capture.WaitFor(30*time.Second, func(recs []broker.Record) bool { return len(statuses(t, recs, "fine")) >= 4 }) {
		t.Errorf("the other target polled %d times while the stuck target's publish held: it waited for the slot",
			len(statuses(t, capture.Records(), "fine")))
	}
}

// flakyBroker fails the first fails produces (a disk full for a moment),
// and refuses any call holding a record that contains refuse, as a broker
// refuses a batch with a record over its size limit.
type flakyBroker struct {
	*snmptest.Capture
	fails  int
	refuse string
}

func (b *flakyBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if b.fails > 0 {
		b.fails--
		return errors.New("injected: no space left on device")
	}
	for _, r := range recs {
		if b.refuse != "" && strings.Contains(string(r.Value), b.refuse) {
			return fmt.Errorf("%w: %d bytes", broker.ErrRecordTooLarge, len(r.Value))
		}
	}
	return b.Capture.Produce(ctx, topic, recs)
}

// TestPublishRetriedAndRefusedAlone: a poll's records are kept through a
// broker failure that passes within the interval, and a record the broker
// refuses is dropped alone (the poll counted publish_error), not the poll.
func TestPublishRetriedAndRefusedAlone(t *testing.T) {
	addr := tableAgent(t, func(from int, reps uint32) *gosnmp.SnmpPacket {
		if from >= 3 {
			return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
		}
		return &gosnmp.SnmpPacket{Variables: rowsFrom(from, min(int(reps), 3-from))}
	})
	for _, tc := range []struct {
		name   string
		fails  int
		refuse string
		result string
		want   []string
	}{
		{"outage", 2, "", ResultOK, []string{"tbl", "tbl", "tbl", "snmp_status"}},
		{"refused", 0, `"snmp_status"`, ResultPublishError, []string{"tbl", "tbl", "tbl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &flakyBroker{Capture: snmptest.NewCapture(), fails: tc.fails, refuse: tc.refuse}
			metrics, _ := NewMetrics(nil)
			target := testTarget("r1", addr, func(c *configs.SNMPTarget) {
				c.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
				c.Interval = 10 * time.Second
			})
			p, err := New(Config{Targets: []configs.SNMPTarget{target}, Profiles: oneColumnProfile(t), Broker: b, Metrics: metrics})
			if err != nil {
				t.Fatal(err)
			}
			p.PollOnce(context.Background(), "r1")
			var got []string
			for _, m := range decode(t, b.Records()) {
				got = append(got, m.Measurement)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("published %v, want %v", got, tc.want)
			}
			if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("r1", tc.result)); n != 1 {
				t.Errorf("polls with result %s: %v, want 1", tc.result, n)
			}
		})
	}
}

// TestBrokerOutageKeepsPollSchedule: while the broker cannot take a
// target's records, its publish is given up shortly before the next slot,
// so that poll is not skipped (a publish given up at the slot made every
// other poll a skipped "overrun", halving the polling in an outage).
func TestBrokerOutageKeepsPollSchedule(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	})
	metrics, _ := NewMetrics(nil)
	target := testTarget("stuck", addr, func(tc *configs.SNMPTarget) {
		tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
		tc.Interval, tc.Timeout = 500*time.Millisecond, 200*time.Millisecond
	})
	p, err := New(Config{Targets: []configs.SNMPTarget{target}, Profiles: oneColumnProfile(t),
		Broker: stuckFor{snmptest.NewCapture(), "stuck"}, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3100*time.Millisecond)
	defer cancel()
	p.Run(ctx)
	polls := testutil.ToFloat64(metrics.Polls.WithLabelValues("stuck", ResultPublishError))
	skipped := testutil.ToFloat64(metrics.Skipped.WithLabelValues("stuck"))
	if skipped > 0 || polls < 5 {
		t.Errorf("in 3.1 s at a 500ms interval with the broker down: %v polls, %v skipped; want a poll at every slot (5 or more), none skipped", polls, skipped)
	}
}

// netBroker answers as a broker over the network does (the Kafka
// backend): a produce takes a round trip, and one whose context has ended
// fails at once, as franz-go fails the records of a cancelled context.
type netBroker struct {
	*snmptest.Capture
	rtt time.Duration
}

func (b netBroker) Produce(ctx context.Context, topic string, recs []broker.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(b.rtt):
	}
	return b.Capture.Produce(ctx, topic, recs)
}

// TestLatePollPublishedToAHealthyBroker: a poll that finishes in the last
// tenth of its interval (a slow agent, or a concurrency slot taken late)
// is still published by a healthy broker that needs a round trip (it had
// a context already ended, which the Kafka backend fails at once).
func TestLatePollPublishedToAHealthyBroker(t *testing.T) {
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		if from == 0 {
			time.Sleep(930 * time.Millisecond) // the agent is slow: 93% of the interval
			return &gosnmp.SnmpPacket{Variables: rowsFrom(0, 2)}
		}
		return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
	})
	metrics, _ := NewMetrics(nil)
	capture := snmptest.NewCapture()
	target := testTarget("late", addr, func(tc *configs.SNMPTarget) {
		tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
		tc.Interval, tc.Timeout = time.Second, 990*time.Millisecond
	})
	p, err := New(Config{Targets: []configs.SNMPTarget{target}, Profiles: oneColumnProfile(t),
		Broker: netBroker{capture, 2 * time.Millisecond}, Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = p.PollOnce(context.Background(), "late")
	took := time.Since(start)
	if took >= time.Second {
		t.Skipf("the poll took %v, past its interval: too slow a machine to check a late poll", took)
	}
	if n := len(statuses(t, capture.Records(), "late")); n != 1 || err != nil {
		t.Errorf("poll done in %v of a 1 s interval, broker healthy (2 ms round trip): %d status records published, err %v; want the poll published",
			took, n, err)
	}
	if n := testutil.ToFloat64(metrics.Polls.WithLabelValues("late", ResultPublishError)); n != 0 {
		t.Errorf("polls counted publish_error: %v, want 0", n)
	}
}

// TestSkippedCountedFromZero: a target's skipped-polls series exists at 0
// from its start, so an alert on its increase sees the first skip.
func TestSkippedCountedFromZero(t *testing.T) {
	metrics, _ := NewMetrics(nil)
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("quiet", "127.0.0.1:1", func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
			tc.Interval = time.Hour // no poll while the test runs
		})},
		Profiles: oneColumnProfile(t), Broker: snmptest.NewCapture(), Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(5 * time.Second); testutil.CollectAndCount(metrics.Skipped) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no weir_snmp_polls_skipped_total series for the target")
		}
	}
	if n := testutil.ToFloat64(metrics.Skipped.WithLabelValues("quiet")); n != 0 {
		t.Fatalf("skipped %v, want 0", n)
	}
}

// TestCounterFromTextIsExact: a counter column some agents answer with its
// digits in an OCTET STRING (a 64-bit counter offered to SNMPv1 managers)
// is taken exactly as written, not through a float64 that rounds it past
// 2^53 and turns one past 2^63 into 2^63; text that is no whole number
// that fits 64 bits is of the wrong type, as "n/a" is.
func TestCounterFromTextIsExact(t *testing.T) {
	values := []string{"9007199254740993", "18446744073709551615", "18446744073709551616", "12.5", " 42 "}
	addr := tableAgent(t, func(from int, _ uint32) *gosnmp.SnmpPacket {
		if from > 0 {
			return &gosnmp.SnmpPacket{Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.9999.2", Type: gosnmp.Integer, Value: 1}}}
		}
		var vbs []gosnmp.SnmpPDU
		for i, v := range values {
			vbs = append(vbs, gosnmp.SnmpPDU{Name: fmt.Sprintf(".%s.%d", testColumn, i+1), Type: gosnmp.OctetString, Value: []byte(v)})
		}
		return &gosnmp.SnmpPacket{Variables: vbs}
	})
	metrics, _ := NewMetrics(nil)
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("a", addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
		})},
		Profiles: oneColumnProfile(t), Broker: capture, Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range capture.Records() {
		var m struct {
			Measurement string            `json:"measurement"`
			Tags        map[string]string `json:"tags"`
			Fields      map[string]json.RawMessage
		}
		if err := json.Unmarshal(r.Value, &m); err != nil {
			t.Fatal(err)
		}
		if m.Measurement == "tbl" && m.Fields["c"] != nil {
			got[m.Tags["idx"]] = string(m.Fields["c"])
		}
	}
	want := map[string]string{"1": "9007199254740993", "2": "18446744073709551615", "5": "42"}
	if !maps.Equal(got, want) {
		t.Errorf("counters published %v, want %v", got, want)
	}
	if n := testutil.ToFloat64(metrics.WrongType.WithLabelValues("a", "c")); n != 2 {
		t.Errorf("%v values of the wrong type counted, want 2 (2^64 and 12.5)", n)
	}
}
