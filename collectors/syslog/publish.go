package syslog

import (
	"context"
	"log/slog"
	"net/netip"
	"time"
	"unicode/utf8"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// Batch limits: a batch is published when it is this big, or when the
// source has nothing more to read right now (so a quiet device's message
// is published at once and a busy one's in batches).
const (
	batchRecords = 1024
	batchBytes   = 1 << 20
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
	counts   [4]int // per format, flushed to metrics with the batch
	bytes    [4]int // per format
	failures int
	// grace is what publishing runs under: the reader's context, outliving
	// it by shutdownFlushTimeout (see shutdownGrace). Made at the first
	// flush, so that all the reader's flushes after shutdown, however many
	// batches it still holds, share one deadline; finalFlush ends it.
	grace    context.Context
	endGrace context.CancelFunc
}

type span struct{ key, val [2]int }

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
	n := sourceNames{addrPort: from.String(), ip: from.Addr().Unmap().String()}
	p.sources[from] = n
	return n
}

func (c *Collector) newPublisher(listener string, stats *listenerStats) *publisher {
	return &publisher{
		c:        c,
		listener: listener,
		stats:    stats,
		parser:   Parser{Now: c.now},
		// The arena grows with use: an idle connection costs nothing.
		arena:   make([]byte, 0, 4<<10),
		headers: []broker.Header{{Key: telemetry.HeaderSource, Value: headerSource}, {Key: telemetry.HeaderSchema, Value: headerSchema}},
	}
}

// add parses one message and appends its record to the batch, and
// publishes the batch when it is full: it reports whether it did. raw may
// be reused by the caller once add returns. truncated marks a message cut
// at the size limit.
func (p *publisher) add(ctx context.Context, raw []byte, from netip.AddrPort, now time.Time, truncated bool) (flushed bool) {
	l := &p.log
	p.parser.Parse(raw, l)
	if truncated {
		l.ParseError = "message truncated at " + itoa(len(raw)) + " bytes"
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
	keyStart := len(p.arena)
	p.arena = append(p.arena, l.Device...)
	valStart := len(p.arena)
	p.arena = l.AppendJSON(p.arena)
	p.spans = append(p.spans, span{key: [2]int{keyStart, valStart}, val: [2]int{valStart, len(p.arena)}})
	p.counts[formatIndex(l.Format)]++
	p.bytes[formatIndex(l.Format)] += len(raw)
	if l.ParseError != "" && l.Format == FormatMalformed {
		p.failures++
	}
	if len(p.spans) >= batchRecords || len(p.arena) >= batchBytes {
		// Full batch: publish now (this is where a slow broker pushes
		// back on the reader).
		p.flush(ctx)
		return true
	}
	return false
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
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
// the batch unpublished. ctx is the reader's, the same at every call.
func (p *publisher) flush(ctx context.Context) bool {
	if len(p.spans) == 0 {
		return true
	}
	if p.grace == nil {
		p.grace, p.endGrace = shutdownGrace(ctx)
	}
	ctx = p.grace
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
	if !p.produce(ctx, p.recs) {
		p.stats.dropped("shutdown").Add(float64(len(p.recs)))
		p.reset()
		return false
	}
	p.stats.publishSeconds.Observe(time.Since(start).Seconds())
	for i, n := range p.counts {
		if n > 0 {
			p.stats.messages[i].Add(float64(n))
		}
	}
	for i, n := range p.bytes {
		if n > 0 {
			p.stats.bytes[i].Add(float64(n))
		}
	}
	if p.failures > 0 {
		p.stats.parseFailures.Add(float64(p.failures))
	}
	p.reset()
	return true
}

// produce publishes recs, retrying with back-off until the broker accepts
// them or ctx ends (false); flush gives it a ctx that outlives shutdown. When the broker refuses the batch itself (a
// record over its size limit), the records are published one by one and
// those refused are dropped, counted and logged: retrying them forever
// would stall the connection for good.
func (p *publisher) produce(ctx context.Context, recs []broker.Record) bool {
	backoff := 10 * time.Millisecond
	for {
		err := p.c.broker.Produce(ctx, p.c.topic, recs)
		if err == nil {
			return true
		}
		if broker.Refused(err) {
			if len(recs) == 1 {
				p.stats.dropped("rejected").Inc()
				p.c.logger.Error("syslog: broker refused a message; dropped", slog.String("listener", p.listener),
					slog.Int("bytes", len(recs[0].Value)), slog.Any("error", err))
				return true
			}
			for i := range recs {
				if !p.produce(ctx, recs[i:i+1]) {
					return false
				}
			}
			return true
		}
		p.stats.publishErrors.Inc()
		p.c.logger.Error("syslog: publishing failed, retrying", slog.String("listener", p.listener),
			slog.Int("messages", len(recs)), slog.Any("error", err), slog.Duration("retry_in", backoff))
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return false
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (p *publisher) reset() {
	p.arena = p.arena[:0]
	p.spans = p.spans[:0]
	p.counts = [4]int{}
	p.bytes, p.failures = [4]int{}, 0
	clear(p.recs)
}

// shutdownFlushTimeout bounds a publish after shutdown: a broker that
// refuses writes must not hold up weir's shutdown forever.
const shutdownFlushTimeout = 5 * time.Second

// shutdownGrace returns a context that ends shutdownFlushTimeout after ctx
// does (or after now, if ctx has ended). Producing with ctx itself would
// lose the batch in flight on shutdown: the Kafka client fails records
// whose context is cancelled.
func shutdownGrace(ctx context.Context) (context.Context, context.CancelFunc) {
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(shutdownFlushTimeout, cancel) })
	return gctx, func() { stop(); cancel() }
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
