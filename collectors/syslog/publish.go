package syslog

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/publish"
	"github.com/weirnet/weir/telemetry"
)

// Batch limits: a batch is published when it is this big, or when the
// source has nothing more to read right now (so a quiet device's message
// is published at once and a busy one's in batches).
const (
	batchRecords = 1024
	batchBytes   = 1 << 20
)

// A publisher's arena starts at initialArena; a TCP connection's goes back
// to it once the connection is quiet after a batch grew it past
// maxKeptArena, and its batch slices are let go past maxKeptSpans records
// (see publisher.trim).
const (
	initialArena = 4 << 10
	maxKeptArena = 64 << 10
	maxKeptSpans = 256
)

var (
	headerSource = []byte("syslog")
	headerSchema = []byte(telemetry.SchemaLog)
)

// publisher accumulates one reader's messages into a batch and produces it.
// Values and keys live in one arena reused across batches, so a message
// costs no allocation here.
type publisher struct {
	c        *Collector
	listener string
	stats    *listenerStats
	parser   Parser
	log      telemetry.Log
	arena    []byte
	recs     []broker.Record
	spans    []span
	headers  []broker.Header
	sources  map[netip.AddrPort]sourceNames
	pub      publish.Publisher
	// grace is what publishing runs under: the reader's context, outliving
	// it by shutdownFlushTimeout (see publish.Grace). Made at the first
	// flush, so that all the reader's flushes after shutdown, however many
	// batches it still holds, share one deadline; finalFlush ends it.
	grace    context.Context
	endGrace context.CancelFunc
	// unsent marks the spans of the batch being published that were left
	// unsent (OnDrop), which the counters leave out; empty while none are.
	unsent []bool
}

// span is one message of the batch: its key and value in the arena, and
// what the metrics count of it once it is published.
type span struct {
	key, val [2]int
	raw      int32 // bytes received
	format   uint8 // formatIndex
	failed   bool  // did not parse
}

// sourceNames caches the strings of a sender's address: a device sends
// many messages from one address, and formatting it each time allocates.
type sourceNames struct{ addrPort, ip string }

const maxCachedSources = 4096

func (p *publisher) source(from netip.AddrPort) sourceNames {
	if n, ok := p.sources[from]; ok {
		return n
	}
	if p.sources == nil || len(p.sources) >= maxCachedSources {
		p.sources = make(map[netip.AddrPort]sourceNames)
	}
	// A dual-stack socket gives an IPv4 sender's address as IPv4-mapped
	// IPv6: written as IPv4, as TCP's accept gives it.
	n := sourceNames{addrPort: netip.AddrPortFrom(from.Addr().Unmap(), from.Port()).String(), ip: from.Addr().Unmap().String()}
	p.sources[from] = n
	return n
}

func (c *Collector) newPublisher(listener string, stats *listenerStats) *publisher {
	p := &publisher{
		c:        c,
		listener: listener,
		stats:    stats,
		parser:   Parser{Now: c.now},
		// The arena grows with use: an idle connection costs little.
		arena:   make([]byte, 0, initialArena),
		headers: []broker.Header{{Key: telemetry.HeaderSource, Value: headerSource}, {Key: telemetry.HeaderSchema, Value: headerSchema}},
		pub: publish.Publisher{
			Broker:     c.broker,
			Topic:      c.topic,
			Name:       "syslog",
			Logger:     c.logger.With(slog.String("listener", listener)),
			RefusedLog: &stats.refusedLog,
			// A reader stalled on the broker stops reading: retry soon.
			MinBackoff: 10 * time.Millisecond,
			OnRetry:    func(error, time.Duration) { stats.publishErrors.Inc() },
		},
	}
	p.pub.OnDrop = func(reason publish.Reason, i, n int, _ error) {
		if reason == publish.Refused {
			stats.dropped("rejected").Add(float64(n))
			return
		}
		stats.dropped("shutdown").Add(float64(n))
		if len(p.unsent) == 0 { // the first unsent of the batch
			p.unsent = slices.Grow(p.unsent, len(p.spans))[:len(p.spans)]
			clear(p.unsent)
		}
		for j := i; j < i+n; j++ {
			p.unsent[j] = true
		}
	}
	return p
}

// add parses one message and appends its record to the batch, and
// publishes the batch when it is full: it reports whether it did. raw may
// be reused by the caller once add returns. truncated marks a message cut
// at the size limit.
func (p *publisher) add(ctx context.Context, raw []byte, from netip.AddrPort, now time.Time, truncated bool) (flushed bool) {
	l := &p.log
	p.parser.Parse(raw, l)
	if truncated {
		l.ParseError = "message truncated at " + strconv.Itoa(len(raw)) + " bytes"
		if l.Format != FormatMalformed {
			l.ParseError += " (header parsed)"
		}
	}
	if !utf8.Valid(raw) {
		l.RawBytes = raw // JSON cannot carry these bytes in a string
	}
	src := p.source(from)
	l.SourceAddr = src.addrPort
	l.Listener = p.listener
	l.ReceivedAt = now
	l.Device = l.Hostname
	if l.Device == "" {
		l.Device = src.ip
	}
	if !utf8.ValidString(l.Device) {
		// The key is the device as the JSON value carries it.
		l.Device = strings.ToValidUTF8(l.Device, "\uFFFD")
	}
	// The key is the device's name as enrichment gives it (WithDeviceName),
	// so the records and events enriched from the line are in the
	// partition their key gives; the record itself stays as received.
	key := l.Device
	if p.c.deviceName != nil {
		if name := p.c.deviceName(l.Hostname, src.addrPort); name != "" {
			key = name
		}
	}
	keyStart := len(p.arena)
	p.arena = append(p.arena, key...)
	valStart := len(p.arena)
	p.arena = l.AppendJSON(p.arena)
	p.spans = append(p.spans, span{key: [2]int{keyStart, valStart}, val: [2]int{valStart, len(p.arena)},
		raw: int32(len(raw)), format: uint8(formatIndex(l.Format)), failed: l.ParseError != "" && l.Format == FormatMalformed})
	if len(p.spans) >= batchRecords || len(p.arena) >= batchBytes {
		// Full batch: publish now (this is where a slow broker pushes
		// back on the reader).
		p.flush(ctx)
		return true
	}
	return false
}

func formatIndex(f string) int {
	switch f {
	case FormatRFC5424:
		return 0
	case FormatRFC3164:
		return 1
	case FormatCisco:
		return 2
	}
	return 3
}

// flush produces the batch, retrying with back-off until it is accepted: a
// broker error (a full disk) stalls reading instead of losing messages.
// Once ctx ends it keeps trying until shutdownFlushTimeout after that,
// across all of the reader's flushes, so the messages already accepted
// are published on shutdown; it returns false if that time ran out with
// the batch unpublished (what was left is counted as dropped, shutdown).
// A message the broker refuses for good (over its size limit) is dropped
// and counted (rejected), not retried: that would stall the connection
// for good. ctx is the reader's, the same at every call.
func (p *publisher) flush(ctx context.Context) bool {
	if len(p.spans) == 0 {
		return true
	}
	if p.grace == nil {
		p.grace, p.endGrace = publish.Grace(ctx, shutdownFlushTimeout)
	}
	// The arena does not move while the batch is built, so the records
	// can point into it now.
	p.recs = p.recs[:0]
	for _, s := range p.spans {
		p.recs = append(p.recs, broker.Record{
			Key:     p.arena[s.key[0]:s.key[1]],
			Value:   p.arena[s.val[0]:s.val[1]],
			Headers: p.headers,
		})
	}
	start := time.Now()
	p.unsent = p.unsent[:0]
	res, err := p.pub.Publish(p.grace, p.recs)
	if err == nil {
		p.stats.publishSeconds.Observe(time.Since(start).Seconds())
	}
	if res.Unsent > 0 {
		// Read, so acknowledged to a TCP sender, and lost: the
		// counter is gone with the process, the log is not.
		p.c.logger.Error("syslog: publishing stopped before the batch was published; dropped",
			slog.String("listener", p.listener), slog.String("topic", p.c.topic),
			slog.Int("records", res.Unsent), slog.Any("err", err))
	}
	// Received and published: all but what was left unsent (those refused
	// count as received, and as dropped).
	p.count(p.spans, p.unsent)
	p.reset()
	return err == nil
}

// count adds the spans not marked unsent to the message, byte and parse
// failure counters.
func (p *publisher) count(spans []span, unsent []bool) {
	var msgs, bytes [4]int
	failures := 0
	for i, s := range spans {
		if len(unsent) > 0 && unsent[i] {
			continue
		}
		msgs[s.format]++
		bytes[s.format] += int(s.raw)
		if s.failed {
			failures++
		}
	}
	for i, n := range msgs {
		if n > 0 {
			p.stats.messages[i].Add(float64(n))
			p.stats.bytes[i].Add(float64(bytes[i]))
		}
	}
	if failures > 0 {
		p.stats.parseFailures.Add(float64(failures))
	}
}

func (p *publisher) reset() {
	p.arena = p.arena[:0]
	p.spans = p.spans[:0]
	clear(p.recs)
}

// bloated reports whether the publisher, its batch published, holds more
// than a quiet connection keeps: what a batch of large messages (one
// 64 KiB line of control bytes is about 400 KiB of JSON), or of very many
// small ones, grew.
func (p *publisher) bloated() bool {
	return len(p.spans) == 0 && (cap(p.arena) > maxKeptArena || cap(p.spans) > maxKeptSpans)
}

// trim lets go of what bloated reports.
func (p *publisher) trim() {
	if !p.bloated() {
		return
	}
	p.arena = make([]byte, 0, initialArena)
	p.spans, p.recs, p.unsent = nil, nil, nil
	p.log = telemetry.Log{} // it holds the last message's strings
}

// shutdownFlushTimeout bounds a publish after shutdown: a broker that
// refuses writes must not hold up weir's shutdown forever.
const shutdownFlushTimeout = 5 * time.Second

// Once weir stops, a reader goes on reading what the kernel holds for it
// (for a TCP connection acknowledged to the sender, which counts it sent),
// which would be lost with the socket: until a read finds nothing for
// drainQuiet, at most shutdownDrain. Readers are closed
// shutdownDrain+drainGrace after the stop whatever they do.
const (
	drainQuiet    = 50 * time.Millisecond
	shutdownDrain = 500 * time.Millisecond
	drainGrace    = 250 * time.Millisecond
)

// drainDeadline is a draining reader's next read deadline: drainQuiet from
// now, but not past by.
func drainDeadline(by time.Time) time.Time {
	if d := time.Now().Add(drainQuiet); d.Before(by) {
		return d
	}
	return by
}

// finalFlush publishes what is left when a reader stops, even though its
// context is done, within shutdownFlushTimeout of its end, and releases
// the grace context.
func (p *publisher) finalFlush(ctx context.Context) {
	p.flush(ctx)
	if p.endGrace != nil {
		p.endGrace()
	}
}
