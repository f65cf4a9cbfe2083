package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// mix is the lines weir-sim syslog sends by turns, formatted with the
// sequence number, the device number and the sequence number's three low
// bytes (mixLine): each line is a new object (a new peer, interface or
// session), so that de-duplication keeps every event for the latency
// figure. Each gets " seq=RUN-N" appended, so loss is counted from what
// arrives, not from what was sent.
var mix = []string{
	"<189>%[1]d: edge%[2]d: Nov 29 14:03:01.004 UTC: %%BGP-5-ADJCHANGE: neighbor 10.0.0.2 Up",
	"<187>%[1]d: Nov 29 14:02:11.123: %%LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/%[2]d, changed state to down",
	"<28>Nov 29 14:06:07 mx%[2]d mib2d[1234]: SNMP_TRAP_LINK_DOWN: ifIndex %[1]d, ifAdminStatus up(1), ifOperStatus down(2), ifName ge-0/0/1",
	"<165>1 2026-11-29T14:06:07.123+00:00 mx%[2]d mib2d 1234 SNMP_TRAP_LINK_DOWN [junos@2636.1.1.1.2.29 snmp-interface-index=\"%[1]d\"] ifIndex %[1]d down",
	"<189>Nov 29 14:07:09 leaf%[2]d Bgp: %%BGP-5-ADJCHANGE: peer 10.%[3]d.%[4]d.%[5]d (VRF default AS 65004) old state Established event HoldTimerExpired new state Idle",
	"<30>1 2026-11-29T14:08:00.000001+00:00 host%[2]d systemd %[1]d - - Started Session %[1]d of User netops.",
	"<189>: 2026 Nov 29 14:03:01 UTC: %%ETHPORT-5-IF_DOWN_LINK_FAILURE: Interface Ethernet1/%[2]d is down (Link failure) %[1]d",
	"<13>Nov 29 14:08:10 host%[2]d netops: hello from logger %[1]d",
}

// mixLine appends the mix's line for seq to b. A peer's address is
// 10.x.y.z from seq's low bytes: a valid IPv4 address, new for each of
// 16 million lines (it was 10.3.3.<seq>, no address at all).
func mixLine(b []byte, seq, devices int) []byte {
	return fmt.Appendf(b, mix[seq%len(mix)], seq, seq%devices, seq>>16&255, seq>>8&255, seq&255)
}

func syslogCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("weir-sim syslog", flag.ContinueOnError)
	target := fs.String("target", "127.0.0.1:5514", "weir's syslog listener")
	proto := fs.String("protocol", "tcp", "udp or tcp")
	framing := fs.String("framing", "octet", "tcp framing: octet or newline")
	rate := fs.Int("rate", 0, "messages per second over all connections (0: as fast as possible)")
	count := fs.Int("count", 100000, "messages to send")
	conns := fs.Int("connections", 1, "TCP connections (UDP: sending sockets); weir refuses more from one address than the listener's max_connections_per_ip (1024 by default)")
	devices := fs.Int("devices", 100, "distinct device names")
	verify := fs.String("verify-brokers", "", "after sending, read raw.syslog from these Kafka brokers and report arrival rate and loss by sequence number")
	topic := fs.String("topic", "raw.syslog", "topic to verify")
	latency := fs.Bool("latency", false, "with --verify-brokers: also read the events topic and report, for this run's events, the time from receiving the message (received_at) to the event being in the log (its record timestamp)")
	var vf verifyFlags
	vf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	src, err := vf.source(*verify)
	if err != nil {
		return err
	}
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	var startEnd int64
	var endsBefore map[int32]int64 // each partition's end before the run
	if *verify != "" {
		if endsBefore, err = listOffsets(ctx, src, *topic, false); err != nil {
			return err
		}
		for _, e := range endsBefore {
			startEnd += e
		}
	}

	per := *count / *conns
	var counts sendCounts
	var wg sync.WaitGroup
	errc := make(chan error, *conns)
	start := time.Now()
	for c := 0; c < *conns; c++ {
		first := c * per
		n := per
		if c == *conns-1 {
			n = *count - first
		}
		wg.Go(func() {
			if err := sendSyslog(ctx, *proto, *framing, *target, run, first, n, *devices, float64(*rate)/float64(*conns), &counts); err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	// Timed from the first connection: a wait for weir to listen is no
	// part of the send rate.
	if at := counts.firstConnect.Load(); at > start.UnixNano() {
		start = time.Unix(0, at)
	}
	sendTime := time.Since(start)
	close(errc)
	for err := range errc {
		return err
	}
	sent, cut := counts.sent.Load(), counts.cut.Load()
	fmt.Printf("sent %d messages over %d %s connection(s) in %v: %.0f msg/s\n",
		sent, *conns, *proto, sendTime.Round(time.Millisecond), float64(sent)/sendTime.Seconds())
	if n := counts.reconnects.Load(); n > 0 || cut > 0 {
		fmt.Printf("connections broken and made again: %d; %d more messages were in writes they cut (some may have arrived)\n", n, cut)
	}
	if d := counts.delayed.Load(); d > 0 {
		fmt.Printf("not sent while the target was down: %d messages (--rate's share of the time down); sent after the reconnect at --rate, not in a burst, so the run took that much longer\n", d)
	}
	if *verify == "" {
		return nil
	}
	// What was cut is looked for too: loss counts over all that was
	// written, so a cut message that arrived is not counted twice.
	written := sent + cut
	got, lastChange, err := verifyCount(ctx, src, *topic, run, endsBefore, startEnd, written)
	if err != nil {
		return err
	}
	inLog := lastChange.Sub(start) // when the log last grew
	// Records of this run that retention deleted before they were read
	// back (a partition's log start moved past where it ended before the
	// run) were in the log: not lost.
	starts, err := listOffsets(ctx, src, *topic, true)
	if err != nil {
		return err
	}
	var deleted int64
	for p, s := range starts {
		deleted += max(0, s-endsBefore[p])
	}
	lost := max(0, written-int64(got)-deleted)
	notes := ""
	if cut > 0 {
		notes = fmt.Sprintf("; up to %d of them in cut writes", min(lost, cut))
	}
	if deleted > 0 {
		notes += fmt.Sprintf("; %d more deleted by retention before they were read back", deleted)
	}
	fmt.Printf("in the log: %d of %d (lost %d, %.3f%%%s), end to end %.0f msg/s (%v until the last was in the log)\n",
		got, written, lost, 100*float64(lost)/float64(written), notes, float64(got+int(deleted))/inLog.Seconds(), inLog.Round(time.Millisecond))
	if *latency {
		return reportEventLatency(ctx, src, *topic, run)
	}
	return nil
}

// verifyCount waits until the log has grown by sent records past startEnd
// (the sum of endsBefore) or stops growing, then counts the distinct
// sequence numbers of run past endsBefore. It returns when the log last
// grew.
func verifyCount(ctx context.Context, brokers source, topic, run string, endsBefore map[int32]int64, startEnd, sent int64) (int, time.Time, error) {
	want := startEnd + sent
	var end int64
	lastChange := time.Now()
	for {
		e, err := endOffsetSum(ctx, brokers, topic)
		if err != nil {
			return 0, lastChange, err
		}
		if e != end {
			end, lastChange = e, time.Now()
		}
		if end >= want || time.Since(lastChange) > 3*time.Second {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Other writers (another sender, devices) fill the log too, so its
	// end can pass want before this run's last records are in it: count
	// until all are there or the count stops rising.
	got, err := countRun(ctx, brokers, topic, run, endsBefore, int(sent), 3*time.Second)
	return got, lastChange, err
}

// reportEventLatency waits for the events topic to stop growing, then
// matches this run's events to the raw records that caused them (by the
// cause's partition and offset) and prints the percentiles of event
// record time minus the raw record's received_at.
func reportEventLatency(ctx context.Context, brokers source, rawTopic, run string) error {
	const eventsTopic = "events"
	var end int64 = -1
	for lastChange := time.Now(); time.Since(lastChange) < 3*time.Second; time.Sleep(100 * time.Millisecond) {
		e, err := endOffsetSum(ctx, brokers, eventsTopic)
		if err != nil {
			return err
		}
		if e != end {
			end, lastChange = e, time.Now()
		}
	}
	type pos struct {
		partition int32
		offset    int64
	}
	eventAt := map[pos]time.Time{}
	err := readTopic(ctx, brokers, eventsTopic, func(r *kgo.Record) {
		var ev struct {
			Cause struct {
				Topic     string
				Partition int32
				Offset    int64
			}
		}
		if json.Unmarshal(r.Value, &ev) == nil && ev.Cause.Topic == rawTopic {
			eventAt[pos{ev.Cause.Partition, ev.Cause.Offset}] = r.Timestamp
		}
	})
	if err != nil {
		return err
	}
	var lat []time.Duration
	err = readTopic(ctx, brokers, rawTopic, func(r *kgo.Record) {
		at, ok := eventAt[pos{r.Partition, r.Offset}]
		if !ok {
			return
		}
		var l struct {
			Raw        string
			ReceivedAt time.Time `json:"received_at"`
		}
		if json.Unmarshal(r.Value, &l) != nil {
			return
		}
		if m := seqRE.FindStringSubmatch(l.Raw); m != nil && m[1] == run {
			lat = append(lat, at.Sub(l.ReceivedAt))
		}
	})
	if err != nil {
		return err
	}
	if len(lat) == 0 {
		return errors.New("no events of this run found in the events topic")
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	// The event's time in the log is its record's timestamp, in whole
	// milliseconds (Kafka's), rounded down: a figure can be up to 1 ms
	// short, and under a millisecond shows as negative.
	fmt.Printf("events of this run: %d; receive to event in the log (±1 ms: record timestamps are milliseconds): p50 %v, p99 %v, p99.9 %v, max %v\n",
		len(lat), q(0.50).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond),
		q(0.999).Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	return nil
}

// readTopic reads every partition of topic from its start to the end it
// had when the read began (records retention deleted before it are not
// waited for), or until nothing comes for 5 s, or ctx ends.
func readTopic(ctx context.Context, brokers source, topic string, each func(*kgo.Record)) error {
	return readTopicFrom(ctx, brokers, topic, nil, each)
}

// readTopicFrom is readTopic from the offsets in from (the start for a
// partition not in it): a run's records are past the ends the topic had
// before the run, and reading a busy log from its start each time costs
// more with every run.
func readTopicFrom(ctx context.Context, brokers source, topic string, from map[int32]int64, each func(*kgo.Record)) error {
	ends, err := listOffsets(ctx, brokers, topic, false)
	if err != nil {
		return err
	}
	left := map[int32]int64{} // partitions not read to their end yet
	assign := map[int32]kgo.Offset{}
	for p, e := range ends {
		if e > from[p] {
			left[p] = e
			assign[p] = kgo.NewOffset().AtStart()
			if o, ok := from[p]; ok {
				assign[p] = kgo.NewOffset().At(o)
			}
		}
	}
	if len(left) == 0 {
		return nil
	}
	cl, err := brokers.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}))
	if err != nil {
		return err
	}
	defer cl.Close()
	for len(left) > 0 && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		f := cl.PollFetches(pctx)
		cancel()
		if f.NumRecords() == 0 && pctx.Err() != nil {
			break // nothing for 5 s, or ctx ended
		}
		if f.NumRecords() == 0 {
			time.Sleep(100 * time.Millisecond) // an error (the broker gone): not a busy loop
		}
		f.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Partition]
			if !ok || r.Offset >= end {
				return // past the end the read began at
			}
			each(r)
			if r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return ctx.Err()
}

// sendCounts are a run's figures over all its connections.
type sendCounts struct {
	// sent: datagrams sent, or lines TCP took (a write that returned).
	sent atomic.Int64
	// cut: lines of TCP writes a broken connection failed, which may or
	// may not have reached the target.
	cut        atomic.Int64
	reconnects atomic.Int64
	// delayed: messages --rate would have sent while a TCP target was
	// down, sent after the reconnect at the rate rather than in a burst.
	delayed atomic.Int64
	// firstConnect: when the run's first TCP connection was made (Unix
	// nanoseconds; 0: none yet), after any wait for the listener.
	firstConnect atomic.Int64
	// waitNoted: the wait for the listener was told on stderr (once a
	// run, not once a connection).
	waitNoted atomic.Bool
}

// sendSyslog sends n messages from first on one connection, at rate a
// second (0: as fast as it can; a fraction when --rate is below
// --connections).
func sendSyslog(ctx context.Context, proto, framing, target, run string, first, n, devices int, rate float64, counts *sendCounts) error {
	var w frameWriter
	if proto == "tcp" {
		tw, err := dialTCP(ctx, target, counts)
		if err != nil {
			return err
		}
		defer tw.close()
		w = tw
	} else {
		uw, err := dialUDP(target, counts)
		if err != nil {
			return err
		}
		defer uw.conn.Close()
		w = uw
	}
	var msg, frame []byte
	start := time.Now()
	reconnects := w.reconnected()
	i := 0
	for ; i < n && ctx.Err() == nil; i++ {
		seq := first + i
		msg = mixLine(msg[:0], seq, devices)
		msg = fmt.Appendf(msg, " seq=%s-%d", run, seq)
		switch {
		case proto == "udp":
			frame = msg
		case framing == "octet":
			frame = strconv.AppendInt(frame[:0], int64(len(msg)), 10)
			frame = append(append(frame, ' '), msg...)
		default:
			frame = append(append(frame[:0], msg...), '\n')
		}
		if err := w.write(ctx, frame); err != nil {
			return err
		}
		if rate > 0 && i%100 == 99 {
			if err := w.flush(ctx); err != nil {
				return err
			}
			if r := w.reconnected(); r != reconnects {
				// Back after a break: on at the rate from now, not a
				// burst of all that was due while the target was down.
				reconnects = r
				done := int64(i + 1)
				if due := int64(time.Since(start).Seconds() * rate); due > done {
					counts.delayed.Add(due - done)
				}
				start = time.Now().Add(-time.Duration(float64(done) / rate * float64(time.Second)))
			}
			// The loop's test of ctx ends the run when the wait ended early.
			sleepCtx(ctx, time.Duration(float64(i+1)/rate*float64(time.Second))-time.Since(start))
		}
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
	if i < n {
		// Stopped before the end, what was written flushed.
		return fmt.Errorf("stopped after %d of %d messages: %w", i, n, context.Cause(ctx))
	}
	return nil
}

// sleepCtx waits d, or until ctx ends: at a low --rate the wait between
// bursts is long, and Ctrl-C must not wait for it.
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// frameWriter sends frames to the target.
type frameWriter interface {
	write(ctx context.Context, frame []byte) error
	flush(ctx context.Context) error
	// reconnected is how many times the connection was made again
	// after a break: the sender's pace starts over after one.
	reconnected() int64
}

// udpWriter sends a datagram per frame.
type udpWriter struct {
	conn   net.Conn
	counts *sendCounts
}

func dialUDP(target string, counts *sendCounts) (*udpWriter, error) {
	conn, err := net.Dial("udp", target)
	if err != nil {
		return nil, err
	}
	return &udpWriter{conn: conn, counts: counts}, nil
}

func (u *udpWriter) write(_ context.Context, frame []byte) error {
	_, err := u.conn.Write(frame)
	switch {
	case err == nil:
		u.counts.sent.Add(1)
	case !errors.Is(err, syscall.ECONNREFUSED):
		return err
	} // else: nothing listens for now (weir restarting): lost, as a device's datagram is
	return nil
}

func (u *udpWriter) flush(context.Context) error { return nil }

func (u *udpWriter) reconnected() int64 { return 0 }

// tcpWriter buffers frames and writes them to a TCP connection, which it
// makes again when the target breaks it (weir restarting), as a device's
// TCP syslog does. The lines of a write that failed are counted cut: TCP
// does not say which of them arrived.
type tcpWriter struct {
	target  string
	counts  *sendCounts
	buf     []byte
	pending int64 // frames in buf

	// connected: a connection was made (a later one is a reconnect);
	// reconnects counts those.
	connected  bool
	reconnects int64

	mu   sync.Mutex
	conn net.Conn // nil while broken or not made yet
	// unwatch ends the watch that unblocks a write when ctx ends.
	unwatch func() bool
}

// tcpBuffer is how much the writer holds before writing: big writes, as
// a relay's, not one syscall per line.
const tcpBuffer = 256 << 10

// dialTCP connects to target, waiting for it to listen as a reconnect
// does (weir-sim may be started before weir), until ctx ends. An address
// that cannot be right (no port, a name that does not resolve) is an
// error at once.
func dialTCP(ctx context.Context, target string, counts *sendCounts) (*tcpWriter, error) {
	t := &tcpWriter{target: target, counts: counts, buf: make([]byte, 0, tcpBuffer+64<<10)}
	// A target that stops reading (weir while its broker refuses
	// writes) blocks the write: the end of ctx (Ctrl-C) must end it,
	// after a second for the last flush.
	t.unwatch = context.AfterFunc(ctx, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.conn != nil {
			t.conn.SetWriteDeadline(time.Now().Add(time.Second))
		}
	})
	if _, err := t.connection(ctx); err != nil {
		t.unwatch()
		return nil, err
	}
	return t, nil
}

func (t *tcpWriter) write(ctx context.Context, frame []byte) error {
	t.buf = append(t.buf, frame...)
	t.pending++
	if len(t.buf) >= tcpBuffer {
		return t.flush(ctx)
	}
	return nil
}

// flush writes what is buffered, on a new connection if the last one
// broke. It fails only when ctx ended.
func (t *tcpWriter) flush(ctx context.Context) error {
	if t.pending == 0 {
		return nil
	}
	conn, err := t.connection(ctx)
	if err != nil {
		return err
	}
	if _, err := conn.Write(t.buf); err != nil {
		t.counts.cut.Add(t.pending)
		t.buf, t.pending = t.buf[:0], 0
		t.drop(conn)
		if ctx.Err() != nil {
			return fmt.Errorf("stopped with %s not reading: %w", t.target, err)
		}
		fmt.Fprintf(os.Stderr, "weir-sim: %s: %v; reconnecting\n", t.target, err)
		return nil
	}
	t.counts.sent.Add(t.pending)
	t.buf, t.pending = t.buf[:0], 0
	return nil
}

// connection is the connection to write on, made (every 200 ms until
// ctx ends) if there is none yet or it broke.
func (t *tcpWriter) connection(ctx context.Context) (net.Conn, error) {
	t.mu.Lock()
	conn := t.conn
	t.mu.Unlock()
	if conn != nil {
		return conn, nil
	}
	since := time.Now()
	waitNoted := false
	// With ctx: a target whose SYNs go unanswered keeps a connect
	// waiting some two minutes, past Ctrl-C.
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", t.target)
		if err == nil {
			t.mu.Lock()
			t.conn = conn
			if ctx.Err() != nil {
				conn.SetWriteDeadline(time.Now().Add(time.Second))
			}
			t.mu.Unlock()
			switch {
			case t.connected:
				t.reconnects++
				t.counts.reconnects.Add(1)
				fmt.Fprintf(os.Stderr, "weir-sim: %s: connected again after %v\n", t.target, time.Since(since).Round(time.Millisecond))
			case waitNoted:
				fmt.Fprintf(os.Stderr, "weir-sim: %s: connected after waiting %v\n", t.target, time.Since(since).Round(time.Millisecond))
			}
			if !t.connected {
				t.connected = true
				t.counts.firstConnect.CompareAndSwap(0, time.Now().UnixNano())
			}
			return conn, nil
		}
		if !t.connected {
			if wrongAddress(err) {
				return nil, err
			}
			if t.counts.waitNoted.CompareAndSwap(false, true) {
				waitNoted = true
				fmt.Fprintf(os.Stderr, "weir-sim: %s: %v; waiting for the listener (trying every 200ms, Ctrl-C to stop)\n", t.target, err)
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped while %s could not be reached: %w", t.target, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// wrongAddress reports whether a dial's error says the address itself is
// wrong (no port, a name that does not resolve): waiting would not help.
func wrongAddress(err error) bool {
	var ae *net.AddrError
	var de *net.DNSError
	return errors.As(err, &ae) || errors.As(err, &de) && de.IsNotFound
}

func (t *tcpWriter) reconnected() int64 { return t.reconnects }

func (t *tcpWriter) drop(conn net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	conn.Close()
	t.conn = nil
}

func (t *tcpWriter) close() {
	t.unwatch()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn != nil {
		t.conn.Close()
	}
}

// endOffsetSum is the sum of topic's partitions' end offsets.
func endOffsetSum(ctx context.Context, brokers source, topic string) (int64, error) {
	ends, err := listOffsets(ctx, brokers, topic, false)
	var sum int64
	for _, o := range ends {
		sum += o
	}
	return sum, err
}

// listOffsets returns each partition's log start offset (start) or end
// offset.
func listOffsets(ctx context.Context, brokers source, topic string, start bool) (map[int32]int64, error) {
	cl, err := brokers.client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	list := kadm.NewClient(cl).ListEndOffsets
	if start {
		list = kadm.NewClient(cl).ListStartOffsets
	}
	listed, err := list(ctx, topic)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[o.Partition] = o.Offset
		}
	})
	return out, nil
}

var seqRE = regexp.MustCompile(`seq=([0-9a-z]+)-(\d+)`)

// countRun counts the distinct sequence numbers of run in topic past the
// offsets from, reading again until it has want of them or a read finds
// none new for settle.
func countRun(ctx context.Context, brokers source, topic, run string, from map[int32]int64, want int, settle time.Duration) (int, error) {
	seen := map[int]bool{}
	at := maps.Clone(from)
	if at == nil {
		at = map[int32]int64{}
	}
	lastNew := time.Now()
	for {
		before := len(seen)
		err := readTopicFrom(ctx, brokers, topic, at, func(r *kgo.Record) {
			at[r.Partition] = r.Offset + 1
			var l struct{ Raw string }
			if json.Unmarshal(r.Value, &l) != nil {
				return
			}
			if m := seqRE.FindStringSubmatch(l.Raw); m != nil && m[1] == run {
				n, _ := strconv.Atoi(m[2])
				seen[n] = true
			}
		})
		if err != nil {
			return len(seen), err
		}
		if len(seen) > before {
			lastNew = time.Now()
		}
		if len(seen) >= want || time.Since(lastNew) >= settle {
			return len(seen), nil
		}
		select {
		case <-ctx.Done():
			return len(seen), ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
