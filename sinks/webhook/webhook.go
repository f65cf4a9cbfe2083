// Package webhook is the webhook sink: records POSTed as JSON, one request
// per record (the record's value, or a text/template's output), or, with
// format alertmanager, events as alerts through the Alertmanager v2 API,
// resolved when the matching up or cleared event arrives.
package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/promreg"
	"github.com/weirnet/weir/internal/throttle"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/internal/httpx"
	"github.com/weirnet/weir/telemetry"
)

// Defaults.
const (
	DefaultTimeout = 10 * time.Second
	// ResendInterval re-posts firing alerts: Alertmanager resolves an
	// alert it has not heard of for resolve_timeout (5m by default), as
	// Prometheus does, so a link that stays down must be repeated.
	ResendInterval = time.Minute
	// DefaultConcurrency is how many posts the JSON form has in flight:
	// one post at a time, each failure's retry holding up every record
	// behind it, fell behind without bound at 135 records/s to a
	// receiver failing one post in ten.
	DefaultConcurrency = 4
)

// Sink posts records or alerts.
type Sink struct {
	url          string
	headers      map[string]string
	alertmanager bool
	tmpl         *template.Template
	client       *http.Client
	logger       *slog.Logger
	now          func() time.Time
	resend       time.Duration

	// lanes are the JSON form's posts in flight (sinks.Concurrent), each
	// with its scratch; Write posts on the first.
	lanes []jsonLane
	// holdUntil is when a receiver that answered Retry-After on one lane
	// may be posted to again, on any lane: the limit is the receiver's,
	// not a lane's.
	holdMu    sync.Mutex
	holdUntil time.Time

	// postMu is held through each post, and through a batch from its
	// encoding to the bookkeeping after its post: one post at a time, so
	// a re-send never overtakes the post that resolves an alert it
	// carries. mu guards active and its saving, never across a post, so
	// a slow or hung destination does not hold up the periodic save or
	// Close; Run takes postMu per chunk of a re-send, so a batch waits
	// for one chunk's post at most, not a round's.
	postMu sync.Mutex
	mu     sync.Mutex
	active map[string]Alert
	// resolved are the alerts resolved within resolvedRetention, as
	// posted (EndsAt set), by key: re-sent with the firing ones, so that
	// a firing post Alertmanager took after the resolution (one held up
	// in a hung Alertmanager or a proxy) does not keep the alert firing.
	// Not kept across restarts; an alert fired again leaves it.
	resolved map[string]resolvedAlert
	// statePath keeps active across restarts, so firing alerts are still
	// re-sent (and not left to expire in Alertmanager) after one; "" none.
	statePath string
	// Scratch of writeAlerts, reused from batch to batch.
	body  []byte
	keys  []byte
	lbls  []kv
	batch []alertRef
	// latest is, by the hash of a key, the last alert of the batch with
	// that key (its index in batch), so finding what the batch did with a
	// key costs no scan of it; a collision falls back to one.
	latest map[uint64]int
	seed   maphash.Seed
	// renames are the batch's device_renamed events, in order: the alerts
	// of each old name move to the new once the batch is accepted (see
	// moveRenamed); until then the batch's events of the new name find
	// them under the old (see renamedKey).
	renames []rename
	// dirty: active changed since it was last saved (at savedAt); it is
	// saved at most every saveEvery, by Run and at the stop, not after
	// every batch: its cost is that of every firing alert. What changed
	// in between is appended to the journal (statePath + ".journal")
	// before the batch is done, so a process killed before the next save
	// does not re-send as firing an alert it had ended; each save
	// empties it.
	dirty   bool
	savedAt time.Time
	// savedSum is the SHA-256 of the save the journal follows (the one
	// loaded or last written), in hex; the journal's first line names it
	// (journaled: that line is written), so that a journal left beside a
	// save an earlier weir wrote since (which knows no journal) is not
	// replayed over it.
	savedSum  string
	journaled bool
	journal   []byte // the batch's changes, scratch
	// fullLog throttles the warning that maxActiveAlerts are remembered.
	fullLog throttle.Throttle
	// resendFailures counts the re-send posts that failed (nil: not
	// counted, a sink built without a registerer).
	resendFailures prometheus.Counter
}

type kv struct{ k, v string }

// rename is a device_renamed event: the device's old name and its new.
type rename struct{ from, to string }

// resolvedAlert is an alert as its resolution was posted, re-sent until.
type resolvedAlert struct {
	alert Alert
	until time.Time
}

// resolvedRetention is how long a resolution is re-sent, as Prometheus
// re-sends its resolved alerts.
const resolvedRetention = 15 * time.Minute

// jsonLane is one lane's scratch: the body, and what a template is
// executed on, reused from post to post.
type jsonLane struct {
	buf  bytes.Buffer
	view configs.WebhookTemplateData
}

// alertRef is one alert of the batch being posted: where its key and
// labels are in the scratch, for the bookkeeping once it is accepted.
type alertRef struct {
	keyFrom, keyTo int
	lblFrom, lblTo int
	event          *telemetry.Event
	resolved       bool
	at             time.Time
	// The alert already firing that this event resolves or fires again:
	// one remembered (saved) or one fired earlier in the batch (the index
	// of its first event), else neither.
	saved    Alert
	hasSaved bool
	firedAt  int // -1: none
}

// Alert is an Alertmanager v2 postable alert.
type Alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       *time.Time        `json:"endsAt,omitempty"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// New builds the webhook sink of cfg.
func New(cfg configs.Sink, env sinks.Env) (sinks.Destination, error) {
	return NewSink(cfg, env, time.Now, ResendInterval)
}

// NewSink is New with a clock and a re-send interval for tests.
func NewSink(cfg configs.Sink, env sinks.Env, now func() time.Time, resend time.Duration) (*Sink, error) {
	timeout := cfg.Timeout.Std()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	client, err := httpx.NewClient(timeout, cfg.TLS.Client())
	if err != nil {
		return nil, fmt.Errorf("webhook sink %s: %w", cfg.Name, err)
	}
	s := &Sink{url: cfg.URL, headers: cfg.Headers, alertmanager: cfg.Format == "alertmanager",
		client: client, logger: env.Logger, now: now, resend: resend, active: map[string]Alert{}, resolved: map[string]resolvedAlert{}}
	lanes := cfg.Concurrency
	if lanes <= 0 {
		lanes = DefaultConcurrency
	}
	if s.alertmanager {
		lanes = 1
	}
	s.lanes = make([]jsonLane, lanes)
	if tr, ok := client.Transport.(*http.Transport); ok {
		// Else all but two lanes' connections close after each post.
		tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, lanes)
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.alertmanager && env.Registerer != nil {
		// The re-sends are the only posts while no event comes (links
		// that stay down): without this, an Alertmanager that went away
		// showed in no metric while its alerts expired there.
		var err error
		failures := promreg.Register(env.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_webhook_sink_resend_failures_total",
			Help: resendFailuresHelp,
		}, []string{"sink"}), &err)
		if err != nil {
			return nil, fmt.Errorf("webhook sink %s: %w", cfg.Name, err)
		}
		s.resendFailures = failures.WithLabelValues(cfg.Name) // at 0 from the start
	}
	if s.alertmanager && env.StateDir != "" {
		s.statePath = filepath.Join(env.StateDir, cfg.Name+".alerts.json")
		if err := s.loadActive(); err != nil {
			return nil, fmt.Errorf("webhook sink %s: %w", cfg.Name, err)
		}
	}
	if cfg.Template != "" {
		t, err := template.New(cfg.Name).Funcs(configs.WebhookTemplateFuncs()).Parse(cfg.Template)
		if err != nil {
			return nil, fmt.Errorf("webhook sink %s: template: %w", cfg.Name, err)
		}
		s.tmpl = t
	}
	return s, nil
}

// Accepts: alertmanager takes events; the JSON form takes anything.
func (s *Sink) Accepts(schema string) bool { return !s.alertmanager || schema == telemetry.SchemaEvent }

// Write posts the batch.
func (s *Sink) Write(ctx context.Context, items []sinks.Item) error {
	if s.alertmanager {
		s.postMu.Lock()
		defer s.postMu.Unlock()
		return s.writeAlerts(ctx, items)
	}
	return s.WriteLane(ctx, 0, items)
}

// Lanes is how many posts the JSON form has in flight (see
// sinks.Concurrent): records of one key go one at a time, in order.
func (s *Sink) Lanes() int { return len(s.lanes) }

// WriteLane posts items one at a time on lane: a PartialError says how
// far it got.
func (s *Sink) WriteLane(ctx context.Context, lane int, items []sinks.Item) error {
	l := &s.lanes[lane]
	for i := range items {
		l.buf.Reset()
		var err error
		if s.tmpl != nil {
			if terr := s.tmpl.Execute(&l.buf, templateOf(&l.view, &items[i])); terr != nil {
				err = &sinks.RejectedError{Reason: "template", Err: templateError(terr, items[i].Schema)}
			}
		} else if v := items[i].Record.Value; len(v) == 0 {
			err = &sinks.RejectedError{Reason: "not_json", Err: errors.New("the record has no value (a tombstone): nothing to post as JSON")}
		} else if !json.Valid(v) {
			// Posted as application/json, the receiver's parser would
			// refuse it: a template can wrap it ({{json .Record.Value}}).
			err = &sinks.RejectedError{Reason: "not_json", Err: fmt.Errorf("the record's value is not JSON (%d bytes); the JSON form posts values as they are: give the sink a template to wrap it", len(v))}
		} else {
			l.buf.Write(v)
		}
		if err == nil {
			err = s.postRecord(ctx, l)
		}
		if err != nil {
			return &sinks.PartialError{Done: i, Err: err} // the first i are posted; item i failed
		}
	}
	return nil
}

// postRecord posts the lane's body, after any Retry-After a receiver gave
// on another lane.
func (s *Sink) postRecord(ctx context.Context, l *jsonLane) error {
	if err := s.waitHold(ctx); err != nil {
		return err
	}
	released, err := s.post(ctx, l.buf.Bytes())
	if !released {
		l.buf = bytes.Buffer{}
	}
	var re *sinks.RetryableError
	if errors.As(err, &re) && re.After > 0 {
		s.holdMu.Lock()
		if until := time.Now().Add(re.After); until.After(s.holdUntil) {
			s.holdUntil = until
		}
		s.holdMu.Unlock()
	}
	return err
}

// waitHold waits until the receiver's last Retry-After has passed.
func (s *Sink) waitHold(ctx context.Context) error {
	s.holdMu.Lock()
	wait := time.Until(s.holdUntil)
	s.holdMu.Unlock()
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// templateError is a template's failure on a record, without the
// "template: " text/template begins it with (the reason says it), and, for
// a nil pointer (.Event of a log: a sink over events and enriched.syslog),
// which of .Event, .Log and .Metric the record has.
func templateError(err error, schema string) error {
	msg := strings.TrimPrefix(err.Error(), "template: ")
	if !strings.Contains(msg, "nil pointer evaluating") {
		return errors.New(msg)
	}
	has := "none of .Event, .Log and .Metric: use .Record"
	switch schema {
	case telemetry.SchemaEvent:
		has = ".Event"
	case telemetry.SchemaLog:
		has = ".Log"
	case telemetry.SchemaMetric:
		has = ".Metric"
	}
	what := "is " + schema
	if schema == "" {
		what = "has no schema header"
	}
	return fmt.Errorf("%s (the record %s: it has %s)", msg, what, has)
}

// templateOf fills d from it, reusing the header slice. A template runs on
// text, not broker.Record's []byte: json quoted those as base64 and
// printing wrote "[101 100 ...]".
func templateOf(d *configs.WebhookTemplateData, it *sinks.Item) *configs.WebhookTemplateData {
	r := &it.Record
	hs := d.Record.Headers[:0]
	for _, h := range r.Headers {
		hs = append(hs, configs.WebhookTemplateHeader{Key: h.Key, Value: string(h.Value)})
	}
	*d = configs.WebhookTemplateData{Schema: it.Schema, Metric: it.Metric, Log: it.Log, Event: it.Event,
		Record: configs.WebhookTemplateRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp,
			Key: string(r.Key), Value: string(r.Value), Headers: hs}}
	return d
}

// Ends implements sinks.Resolver: in the Alertmanager form, the type of
// the event whose alert an event of type typ resolves (see resolves), so
// that the sink's filter takes the resolving event as it takes the
// alert's; in the JSON form no event ends another.
func (s *Sink) Ends(typ string) (string, bool) {
	if !s.alertmanager {
		return "", false
	}
	if typ == telemetry.TypeDeviceRenamed {
		return sinks.EndsAny, true // it moves whatever alerts the filter fired
	}
	return resolves(typ)
}

// resolves maps an event type to the alert it ends.
func resolves(typ string) (string, bool) {
	switch {
	case strings.HasSuffix(typ, "_cleared"):
		return strings.TrimSuffix(typ, "_cleared"), true
	case strings.HasSuffix(typ, "_up"):
		return strings.TrimSuffix(typ, "_up") + "_down", true
	case typ == "device_reachable":
		return typeUnreachable, true
	}
	return "", false
}

// resolvable reports whether some event ends alerts of this type; only
// those are re-sent. The others (config_changed, login_succeeded,
// login_failed) are sent once and end in Alertmanager after its
// resolve_timeout.
func resolvable(typ string) bool {
	return strings.HasSuffix(typ, "_down") || strings.HasSuffix(typ, "_flapping") || typ == typeUnreachable
}

// appendLabels appends the labels of the alert, sorted by name: the same
// for the firing and the resolving event, since Alertmanager matches them
// by their labels (severity differs between the two, so it is an
// annotation). The event's tags with values, then alertname, device and
// object (if any) over tags of those names. Tag keys are made valid label
// names; of tags that end up with one name, the smallest value is kept.
func appendLabels(dst []kv, alertname string, e *telemetry.Event) []kv {
	from := len(dst)
	for k, v := range e.Tags {
		k = labelName(k)
		if v != "" && k != "" && k != "alertname" && k != "device" && (k != "object" || e.Object == "") {
			dst = append(dst, kv{k, v})
		}
	}
	dst = append(dst, kv{"alertname", alertname}, kv{"device", e.Device})
	if e.Object != "" {
		dst = append(dst, kv{"object", e.Object})
	}
	slices.SortFunc(dst[from:], func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	kept := slices.CompactFunc(dst[from:], func(a, b kv) bool { return a.k == b.k })
	return dst[:from+len(kept)]
}

// labelName makes a tag key a label name Alertmanager's classic
// validation accepts ([a-zA-Z_][a-zA-Z0-9_]*): other characters become
// '_' (one per character), a leading digit gets a '_' before it. Valid
// keys come back as they are, without allocating.
func labelName(k string) string {
	valid := k != "" && (k[0] < '0' || k[0] > '9')
	for i := 0; i < len(k) && valid; i++ {
		valid = labelByte(k[i])
	}
	if valid || k == "" {
		return k
	}
	b := make([]byte, 0, len(k)+1)
	if k[0] >= '0' && k[0] <= '9' {
		b = append(b, '_')
	}
	for _, r := range k { // one '_' per character, not per byte
		if r < utf8.RuneSelf && labelByte(byte(r)) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

func labelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// prior finds the alert already firing that ref resolves or fires again.
// What the batch did with its key so far comes first (an alert it
// resolved is no longer firing, though s.active, updated after the post,
// still has it): the first event that fired it since, if any. Else the
// remembered alert.
func (s *Sink) prior(ref *alertRef) {
	key := s.keys[ref.keyFrom:ref.keyTo]
	if j, seen := s.lastWithKey(key); seen {
		r := &s.batch[j]
		switch {
		case r.resolved || !resolvable(r.event.Type):
		case r.hasSaved:
			ref.saved, ref.hasSaved = r.saved, true
		case r.firedAt >= 0:
			ref.firedAt = r.firedAt
		default:
			ref.firedAt = j // the first to fire it
		}
		return
	}
	if a, ok := s.active[string(key)]; ok {
		ref.saved, ref.hasSaved = a, true
	}
}

// typeUnreachable is the alert of an SNMP target that does not answer.
const typeUnreachable = "device_unreachable"

// earlierUnreachable is keys, whose key from from on is that of e's
// device_unreachable alert (e names an SNMP target as its object), with
// that key replaced by the key of the alert an earlier build fired for the
// same target, when that one is firing and e's own is not: before December
// 6, 2026 a target the inventory names otherwise gave its reachability
// events no object, and its alert is kept without one (with the target
// label its events carried, and keyed by its labels, as saves and the
// journal are). So the target's device_reachable ends it, with the labels
// it fired with, and its device_unreachable fires it again, rather than a
// second alert. Matched here, as each event comes, not keyed again at
// load: an alert of a target named as its device (no object) whose config
// gives it a tag named target is no earlier build's, and one ended after a
// restart by the earlier build's device_reachable (no object) is keyed as
// that event is.
func (s *Sink) earlierUnreachable(keys []byte, from int, e *telemetry.Event) []byte {
	target := e.Tags["target"]
	if target == "" {
		return keys
	}
	own := keys[from:]
	if _, firing := s.active[string(own)]; firing {
		return keys
	}
	if _, seen := s.lastWithKey(own); seen {
		return keys // the batch fired it (or ended it) under its own key
	}
	earlier := appendKeyOf(keys[len(keys):], typeUnreachable, e.Device, "")
	a, firing := s.active[string(earlier)]
	if !firing || a.Labels["alertname"] != typeUnreachable || a.Labels["object"] != "" || a.Labels["target"] != target {
		return keys
	}
	if j, seen := s.lastWithKey(earlier); seen && s.batch[j].resolved {
		return keys // ended earlier in the batch: e's is a new alert
	}
	return append(keys[:from], earlier...)
}

// renamedKey is keys, whose key from from on is that of e's alert name,
// with that key replaced by the key of the alert fired under the name e's
// device had before a rename earlier in the batch (or before a chain of
// them), when that one is firing, or fired earlier in the batch, and e's
// own is not: the rename moves it once the batch is accepted
// (moveRenamed), and e must end it, or fire it again, as the batch's next
// one would.
func (s *Sink) renamedKey(keys []byte, from int, name string, e *telemetry.Event) []byte {
	own := keys[from:]
	if _, firing := s.active[string(own)]; firing {
		return keys
	}
	if _, seen := s.lastWithKey(own); seen {
		return keys
	}
	obj := e.Object
	if obj == "" {
		obj = e.Tags["object"]
	}
	if earlier, ok := s.renamedFrom(keys[len(keys):], len(s.renames), name, e.Device, obj); ok && earlier != nil {
		return append(keys[:from], earlier...)
	}
	return keys
}

// renamedFrom is renamedKey's search back through the batch's renames
// before the i-th for those into device, the latest first, and each
// one's own renames before it: several old names may have become one
// (an SNMP and a gNMI target of one address, that an inventory entry
// added for it names both), so each is tried. It returns the key of the
// alert found (nil, true: one ended earlier in the batch, so e's is a
// new alert), written into buf; false: none.
func (s *Sink) renamedFrom(buf []byte, i int, name, device, obj string) ([]byte, bool) {
	for i--; i >= 0; i-- {
		r := s.renames[i]
		if r.to != device {
			continue
		}
		from, fromObj := r.from, telemetry.RenamedObjectID(name, obj, r.to, r.from)
		earlier := appendKeyOf(buf, name, from, fromObj)
		_, firing := s.active[string(earlier)]
		j, seen := s.lastWithKey(earlier)
		if seen && s.batch[j].resolved {
			return nil, true // ended earlier in the batch: e's is a new alert
		}
		if firing || seen {
			return earlier, true
		}
		if k, ok := s.renamedFrom(buf, i, name, from, fromObj); ok {
			return k, true
		}
	}
	return nil, false
}

// moveRenamed moves the firing alerts of each device the batch renamed to
// its new name, keeping their labels (Alertmanager knows an alert by
// them), so that the new name's events end them and fire them again. An
// alert the new name already has for the object stays; the old name's is
// then no longer re-sent, and ends in Alertmanager at its endsAt. Reports
// whether active changed; each move is journaled. One pass over active,
// however many renames. Under mu.
func (s *Sink) moveRenamed() bool {
	if len(s.renames) == 0 {
		return false
	}
	// Where each old name's alerts end up, the batch's renames taken in
	// order: edge1 renamed edge1-ams, then edge1-ams renamed ams-edge1.
	dest := map[string]string{}
	for _, r := range s.renames {
		from, to := string(appendValidUTF8(nil, r.from)), string(appendValidUTF8(nil, r.to))
		for k, v := range dest {
			if v == from {
				dest[k] = to
			}
		}
		if _, ok := dest[from]; !ok {
			dest[from] = to
		}
	}
	type move struct {
		to string
		a  Alert
	}
	var moves []move
	for key, a := range s.active {
		name, rest, _ := strings.Cut(key, "\x00")
		device, id, _ := strings.Cut(rest, "\x00")
		to, ok := dest[device]
		if !ok || to == device {
			continue
		}
		delete(s.active, key)
		s.journal = appendJournal(s.journal, key, nil)
		moves = append(moves, move{string(appendKeyOf(nil, name, to, telemetry.RenamedObjectID(name, id, device, to))), a})
	}
	for _, m := range moves {
		if _, ok := s.active[m.to]; ok {
			continue
		}
		s.active[m.to] = m.a
		s.journal = appendJournal(s.journal, m.to, &m.a)
	}
	return len(moves) > 0
}

// appendLabelsOf appends labels, the remembered alert's, as JSON: as own
// are appended (sorted, no map to sort) when they are the same, as they
// mostly are (the same path reporting the same object again).
func appendLabelsOf(b []byte, labels map[string]string, own []kv) []byte {
	if len(own) == len(labels) {
		same := true
		for _, x := range own {
			if v, ok := labels[x.k]; !ok || v != x.v {
				same = false
				break
			}
		}
		if same {
			return appendKVs(b, own)
		}
	}
	return appendMap(b, labels)
}

// lastWithKey is the index of the batch's last alert with key; seen is
// false when there is none (j is then -1 too).
func (s *Sink) lastWithKey(key []byte) (j int, seen bool) {
	j, ok := s.latest[maphash.Bytes(s.seed, key)]
	if !ok {
		return -1, false
	}
	if r := &s.batch[j]; string(s.keys[r.keyFrom:r.keyTo]) == string(key) {
		return j, true
	}
	for j := len(s.batch) - 1; j >= 0; j-- { // another key of that hash
		if r := &s.batch[j]; string(s.keys[r.keyFrom:r.keyTo]) == string(key) {
			return j, true
		}
	}
	return -1, false
}

// appendKey appends the key of e's alert: its name, its device and its
// object in the spelling all paths share (telemetry.ObjectID, computed
// here from the event's object, so events that carry no object_id, from
// an earlier build, key as the others do), so a link reported down by
// syslog (GigabitEthernet0/1) is resolved by the poll that finds it up
// (Gi0/1). Bytes that are not UTF-8 are written as U+FFFD, as the state
// file's JSON writes them.
func appendKey(dst []byte, alertname string, e *telemetry.Event) []byte {
	obj := e.Object
	if obj == "" {
		obj = e.Tags["object"]
	}
	return appendKeyOf(dst, alertname, e.Device, obj)
}

// appendKeyOf appends the key of an alert of device and object.
func appendKeyOf(dst []byte, alertname, device, object string) []byte {
	dst = appendValidUTF8(dst, alertname)
	dst = append(dst, 0)
	dst = appendValidUTF8(dst, device)
	dst = append(dst, 0)
	from := len(dst)
	dst = telemetry.AppendObjectID(dst, alertname, object)
	if !utf8.Valid(dst[from:]) {
		id := string(dst[from:])
		dst = appendValidUTF8(dst[:from], id)
	}
	return dst
}

// appendValidUTF8 appends s with each byte that is not UTF-8 as U+FFFD,
// as encoding/json writes it.
func appendValidUTF8(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(dst, s...)
	}
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[:n]...)
		}
		s = s[n:]
	}
	return dst
}

// writeAlerts posts the batch's events as alerts, encoded straight into a
// reused buffer (the same bytes json.Marshal of []Alert gives); the maps of
// an Alert are only made for the firing alerts it starts to remember.
func (s *Sink) writeAlerts(ctx context.Context, items []sinks.Item) error {
	s.mu.Lock()
	b, err := s.encodeAlerts(items)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if len(s.batch) == 0 { // renames alone: nothing to post
		s.mu.Lock()
		defer s.mu.Unlock()
		s.accepted()
		return nil
	}
	released, err := s.post(ctx, b)
	if !released {
		s.body = nil
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepted()
	return nil
}

// encodeAlerts encodes the batch's alerts into s.body (under mu: it reads
// active), noting in s.batch what each does.
func (s *Sink) encodeAlerts(items []sinks.Item) ([]byte, error) {
	b := append(s.body[:0], '[')
	s.keys, s.lbls, s.batch, s.renames = s.keys[:0], s.lbls[:0], s.batch[:0], s.renames[:0]
	if s.latest == nil {
		s.latest, s.seed = map[uint64]int{}, maphash.MakeSeed()
	}
	clear(s.latest)
	var err error
	now := s.now()
	for i := range items {
		e := items[i].Event
		// Not after now: a device clock ahead of weir's (local time
		// east of UTC, read as UTC) times its events in the future.
		// Alertmanager refuses a firing alert that starts after the
		// resolve_timeout it ends it at (400: the event would be
		// dead-lettered), and keeps one resolved in the future firing
		// until then.
		at := e.Time
		if at.IsZero() || at.After(now) {
			at = now
		}
		if e.Type == telemetry.TypeDeviceRenamed {
			// No alert: it moves the old name's (see renamedKey).
			if e.Object != "" && e.Object != e.Device {
				s.renames = append(s.renames, rename{from: e.Object, to: e.Device})
			}
			continue
		}
		if len(s.batch) > 0 {
			b = append(b, ',')
		}
		name, resolved := resolves(e.Type)
		if !resolved {
			name = e.Type
		}
		ref := alertRef{event: e, resolved: resolved, at: at, keyFrom: len(s.keys), lblFrom: len(s.lbls), firedAt: -1}
		s.keys = appendKey(s.keys, name, e)
		if name == typeUnreachable && e.Object != "" {
			s.keys = s.earlierUnreachable(s.keys, ref.keyFrom, e)
		}
		if len(s.renames) > 0 {
			s.keys = s.renamedKey(s.keys, ref.keyFrom, name, e)
		}
		s.lbls = appendLabels(s.lbls, name, e)
		ref.keyTo, ref.lblTo = len(s.keys), len(s.lbls)
		s.prior(&ref)
		s.latest[maphash.Bytes(s.seed, s.keys[ref.keyFrom:ref.keyTo])] = len(s.batch)
		s.batch = append(s.batch, ref)
		// The alert already firing is the one this event resolves, or
		// fires again: with its labels (Alertmanager matches alerts by
		// them, and the object may be spelt another way) and its start.
		startsAt := at
		b = append(b, `{"labels":`...)
		switch {
		case ref.hasSaved:
			startsAt = ref.saved.StartsAt
			b = appendLabelsOf(b, ref.saved.Labels, s.lbls[ref.lblFrom:ref.lblTo])
		case ref.firedAt >= 0:
			first := &s.batch[ref.firedAt]
			if first.hasSaved {
				startsAt = first.saved.StartsAt
				b = appendLabelsOf(b, first.saved.Labels, s.lbls[ref.lblFrom:ref.lblTo])
			} else {
				startsAt = first.at
				b = appendKVs(b, s.lbls[first.lblFrom:first.lblTo])
			}
		default:
			b = appendKVs(b, s.lbls[ref.lblFrom:ref.lblTo])
		}
		b = append(b, `,"annotations":{`...)
		if resolved {
			b = appendKV(b, "resolved_by", e.Type)
			b = append(b, ',')
			b = appendKV(b, "summary", e.Message)
		} else {
			b = append(b, `"cause":"`...)
			b = telemetry.AppendMarshalStringBody(b, e.Cause.Topic)
			b = append(b, '/')
			b = strconv.AppendInt(b, int64(e.Cause.Partition), 10)
			b = append(b, '@')
			b = strconv.AppendInt(b, e.Cause.Offset, 10)
			b = append(b, '"')
			if e.Count > 0 {
				b = append(b, `,"count":"`...)
				b = strconv.AppendInt(b, int64(e.Count), 10)
				b = append(b, '"')
			}
			if e.Severity != "" {
				b = append(b, ',')
				b = appendKV(b, "severity", e.Severity)
			}
			b = append(b, ',')
			b = appendKV(b, "summary", e.Message)
		}
		b = append(b, `},"startsAt":`...)
		if b, err = appendTime(b, startsAt); err != nil {
			break
		}
		if resolved {
			// Not before it started: Alertmanager refuses such an
			// alert (400), and the alert would go on firing. A device
			// clock off, or a down from syslog (device time) ended by
			// an up from SNMP (receive time), gives one.
			endsAt := at
			if endsAt.Before(startsAt) {
				endsAt = startsAt
			}
			b = append(b, `,"endsAt":`...)
			if b, err = appendTime(b, endsAt); err != nil {
				break
			}
		} else if resolvable(e.Type) {
			b = append(b, `,"endsAt":`...)
			if b, err = appendTime(b, s.firingUntil(now)); err != nil {
				break
			}
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	s.body = b
	if err != nil {
		return nil, &sinks.RejectedError{Reason: "encode", Err: fmt.Errorf("alert time: %w", err)}
	}
	return b, nil
}

// accepted updates the firing alerts (under mu) by the batch Alertmanager
// took: only once it has them, since a retry must send the same.
func (s *Sink) accepted() {
	changed := false
	s.journal = s.journal[:0]
	now := s.now()
	for i := range s.batch {
		ref := &s.batch[i]
		key := s.keys[ref.keyFrom:ref.keyTo]
		a, active := s.active[string(key)]
		switch {
		case ref.resolved:
			if active {
				delete(s.active, string(key))
				changed = true
				s.journal = appendJournal(s.journal, string(key), nil)
				if _, ok := s.resolved[string(key)]; ok || len(s.resolved) < maxActiveAlerts {
					// As posted: the labels and start it fired with.
					end := ref.at
					if end.Before(a.StartsAt) {
						end = a.StartsAt
					}
					a.EndsAt = &end
					a.Annotations = map[string]string{"resolved_by": ref.event.Type, "summary": ref.event.Message}
					s.resolved[string(key)] = resolvedAlert{alert: a, until: now.Add(resolvedRetention)}
				}
			}
		case !active && resolvable(ref.event.Type) && len(s.active) >= maxActiveAlerts:
			// Sent once, not re-sent: Alertmanager ends it after its
			// resolve_timeout unless an event fires it again.
			if n, ok := s.fullLog.Due(time.Now()); ok {
				s.logger.Warn("webhook sink: as many firing alerts remembered as it keeps; new ones are sent but not re-sent",
					"max", maxActiveAlerts, "times", n)
			}
		case !active && resolvable(ref.event.Type):
			e := ref.event
			l := make(map[string]string, ref.lblTo-ref.lblFrom)
			for _, x := range s.lbls[ref.lblFrom:ref.lblTo] {
				l[x.k] = x.v
			}
			a := Alert{Labels: l, Annotations: annotations(e), StartsAt: ref.at}
			s.active[string(key)] = a
			delete(s.resolved, string(key))
			changed = true
			s.journal = appendJournal(s.journal, string(key), &a)
		}
	}
	if s.moveRenamed() {
		changed = true
	}
	if changed {
		s.dirty = true
		if time.Since(s.savedAt) < saveEvery || !s.saveActive() {
			s.appendToJournal()
		}
	}
}

// journalEntry is one change to the firing alerts: Alert set, it began;
// nil, the alert of Key ended. The journal's first line has only Save:
// the SHA-256 of the save it follows.
type journalEntry struct {
	Save  string `json:"save,omitempty"`
	Key   string `json:"key,omitempty"`
	Alert *Alert `json:"alert,omitempty"`
}

func appendJournal(dst []byte, key string, a *Alert) []byte {
	line, _ := json.Marshal(journalEntry{Key: key, Alert: a})
	return append(append(dst, line...), '\n')
}

// appendToJournal writes the batch's changes after the last save's
// (without a sync: a killed process's writes are the kernel's). A failure
// costs what it would have saved, so it is logged.
func (s *Sink) appendToJournal() {
	if s.statePath == "" || len(s.journal) == 0 {
		return
	}
	f, err := os.OpenFile(s.journalPath(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		data := s.journal
		if !s.journaled {
			head, _ := json.Marshal(journalEntry{Save: s.savedSum})
			data = append(append(head, '\n'), data...)
		}
		if err = appendLines(f, data); err == nil {
			s.journaled = true
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.logger.Warn("webhook sink: could not keep the firing alerts' changes for a restart", "file", s.journalPath(), "err", err)
	}
}

func (s *Sink) journalPath() string { return s.statePath + ".journal" }

// appendLines appends lines to f (opened to append) on a line of their
// own: after a line cut short (a process killed in its write), it starts
// a new one, rather than end that one and be lost with it at the replay.
// A write that fails part way (a full disk) is taken back, so that it
// leaves no such line.
func appendLines(f *os.File, lines []byte) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			lines = append([]byte{'\n'}, lines...)
		}
	}
	if _, err := f.Write(lines); err != nil {
		f.Truncate(size)
		return err
	}
	return nil
}

// maxActiveAlerts bounds the firing alerts remembered (re-sent every
// minute and kept for a restart): a network has far fewer things down at
// once, and a sender inventing objects must not grow it without bound.
const maxActiveAlerts = 50_000

// saveEvery is how often changes to the firing alerts are saved: a crash
// loses what changed since (alerts re-sent that had ended, or not re-sent
// that had begun, until their next event).
const saveEvery = 5 * time.Second

// resendFailuresHelp is the help of weir_webhook_sink_resend_failures_total.
const resendFailuresHelp = "Alertmanager form: re-sends of the firing alerts (every minute) that Alertmanager did not take; the next round tries again, and its alerts expire there after its resolve_timeout meanwhile."

// firingUntil is the endsAt of a firing alert that an event resolves,
// posted at now: past the next re-sends, as Prometheus gives its alerts
// (four re-send intervals), so that Alertmanager keeps it firing whatever
// its resolve_timeout (which only applies to an alert posted without
// endsAt: at 30s, a link that stayed down was resolved for half of every
// minute), and ends it that long after the last re-send when weir is gone.
func (s *Sink) firingUntil(now time.Time) time.Time { return now.Add(4 * s.resend) }

// resendChunk is how many firing alerts one re-send posts: one post of
// all of them could take longer than the timeout.
const resendChunk = 1000

// loadActive reads the firing alerts a previous run kept.
func (s *Sink) loadActive() error {
	data, err := os.ReadFile(s.statePath)
	if errors.Is(err, fs.ErrNotExist) {
		// None yet (the first save failed): the journal follows
		// this "save" of nothing, named by the sum of no bytes, so
		// that a save written since by an earlier weir is told
		// from it.
		s.savedSum = sum(nil)
		s.replayJournal()
		return nil
	}
	if err != nil {
		return fmt.Errorf("firing alerts: %w", err)
	}
	s.savedSum = sum(data)
	var saved map[string]Alert
	if err := json.Unmarshal(data, &saved); err != nil {
		// A damaged file costs re-sends, not the sink.
		s.logger.Warn("webhook sink: ignoring unreadable firing alerts file", "file", s.statePath, "err", err)
		return nil
	}
	// Keyed again from their labels, as the events that end them are:
	// an earlier build keyed them by the object as the event spelt it.
	// One a rename moved (see moveRenamed) keeps its key: its labels
	// name the device it fired under.
	for key, a := range saved {
		l := a.Labels
		if _, rest, ok := strings.Cut(key, "\x00"); ok {
			if device, _, _ := strings.Cut(rest, "\x00"); device != string(appendValidUTF8(nil, l["device"])) {
				s.active[key] = a
				continue
			}
		}
		s.active[string(appendKeyOf(nil, l["alertname"], l["device"], l["object"]))] = a
	}
	s.replayJournal()
	return nil
}

// replayJournal applies the changes made after the last save, in order (a
// change the save had already is made again, to the same end). A line cut
// short by a crash is skipped: each line is a change of its own, and those
// after it were made later. A head line names the save the changes after
// it follow: those after the last head naming this save are replayed (a
// save whose journal could not be removed leaves older changes and heads
// before it); with no head naming it, the save was written since by a weir
// that knows no journal (a downgrade, then this build again) and the
// journal is older than the save.
func (s *Sink) replayJournal() {
	data, err := os.ReadFile(s.journalPath())
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.logger.Warn("webhook sink: ignoring unreadable firing alerts journal", "file", s.journalPath(), "err", err)
		}
		return
	}
	torn := 0
	var changes []journalEntry
	heads, follows := 0, false
	for line := range bytes.Lines(data) {
		var e journalEntry
		if json.Unmarshal(line, &e) != nil || e.Key == "" && e.Save == "" {
			torn++
			continue
		}
		if e.Save != "" {
			heads++
			if e.Save == s.savedSum {
				changes, follows = changes[:0], true
			}
			continue
		}
		changes = append(changes, e)
	}
	if torn > 0 {
		s.logger.Warn("webhook sink: skipped firing alerts journal lines cut short", "file", s.journalPath(), "lines", torn)
	}
	if heads > 0 && !follows {
		s.logger.Warn("webhook sink: ignoring a firing alerts journal older than the save", "file", s.journalPath())
		os.Remove(s.journalPath())
		return
	}
	s.journaled = true // appended to until the next save
	for _, e := range changes {
		if e.Alert == nil {
			delete(s.active, e.Key)
		} else if _, ok := s.active[e.Key]; ok || len(s.active) < maxActiveAlerts {
			s.active[e.Key] = *e.Alert
		}
	}
	if len(data) > 0 {
		s.dirty = true // saved, and the journal emptied, at the first save
	}
}

// saveActive writes the firing alerts (to a temporary file renamed over
// the old, so a crash leaves one or the other whole). Failing costs only
// the re-sends after a restart, so it is logged, not returned: the batch
// was delivered.
func (s *Sink) saveActive() bool {
	if s.statePath == "" {
		s.dirty = false
		return true
	}
	s.dirty, s.savedAt = false, time.Now()
	data, err := json.Marshal(s.active)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(s.statePath), 0o755)
	}
	if err == nil {
		tmp := s.statePath + ".tmp"
		if err = os.WriteFile(tmp, data, 0o644); err == nil {
			err = os.Rename(tmp, s.statePath)
		}
	}
	if err == nil {
		// The save has what the journal had.
		s.savedSum, s.journaled = sum(data), false
		if rerr := os.Remove(s.journalPath()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = rerr
		}
	}
	if err != nil {
		s.logger.Warn("webhook sink: could not keep the firing alerts for a restart", "file", s.statePath, "err", err)
	}
	return err == nil
}

// sum is the hex SHA-256 of a save.
func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// annotations of a firing alert.
func annotations(e *telemetry.Event) map[string]string {
	ann := map[string]string{"summary": e.Message}
	if e.Severity != "" {
		ann["severity"] = e.Severity
	}
	if e.Count > 0 {
		ann["count"] = strconv.Itoa(e.Count)
	}
	ann["cause"] = fmt.Sprintf("%s/%d@%d", e.Cause.Topic, e.Cause.Partition, e.Cause.Offset)
	return ann
}

// post sends body; released says whether body's buffer may be reused.
func (s *Sink) post(ctx context.Context, body []byte) (released bool, err error) {
	req, rb, err := httpx.NewRequest(ctx, s.url, body)
	if err != nil {
		return true, &sinks.RejectedError{Reason: "request", Err: err}
	}
	defer func() { released = rb.Released(httpx.ReleaseWait) }()
	req.Header.Set("Content-Type", "application/json")
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return false, httpx.Transport("webhook sink", err)
	}
	return false, httpx.Classify("webhook sink", resp, s.now())
}

// Run re-posts firing alerts as it starts and then every re-send
// interval (alertmanager format only); failures are logged, the next
// round tries again.
func (s *Sink) Run(ctx context.Context) error {
	if !s.alertmanager {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(s.resend)
	defer t.Stop()
	save := time.NewTicker(saveEvery)
	defer save.Stop()
	defer s.saveIfDirty()
	// The alerts a restart loaded, at once: their endsAt is four
	// intervals after their last post, so after a stop longer than about
	// three, waiting one more would have Alertmanager resolve them and
	// then take them for firing again (a notification of each).
	s.resendRound(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-save.C:
			s.saveIfDirty()
			continue
		case <-t.C:
		}
		s.resendRound(ctx)
	}
}

// resendRound re-posts the firing alerts, resendChunk at a time, until a
// post fails (the next round tries again). Each chunk is taken
// from the firing alerts as they are just before its post, under postMu:
// an alert a batch ends meanwhile is not posted firing after its end. The
// lock over the state (mu) is not held across a post.
func (s *Sink) resendRound(ctx context.Context) {
	s.mu.Lock()
	keys := make([]string, 0, len(s.active)+len(s.resolved))
	for k := range s.active {
		keys = append(keys, k)
	}
	firing := len(keys)
	now := s.now()
	for k, r := range s.resolved {
		if now.After(r.until) {
			delete(s.resolved, k)
		} else {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	chunk := make([]Alert, 0, min(resendChunk, len(keys)))
	for from := 0; from < len(keys) && ctx.Err() == nil; from += resendChunk {
		s.postMu.Lock()
		s.mu.Lock()
		chunk = chunk[:0]
		until := s.firingUntil(s.now()) // one for the chunk's post
		for _, k := range keys[from:min(from+resendChunk, len(keys))] {
			if a, ok := s.active[k]; ok {
				a.EndsAt = &until // a copy: the remembered alert keeps none
				chunk = append(chunk, a)
			} else if r, ok := s.resolved[k]; ok {
				chunk = append(chunk, r.alert)
			}
		}
		s.mu.Unlock()
		var err error
		if len(chunk) > 0 {
			body, _ := json.Marshal(chunk)
			_, err = s.post(ctx, body)
		}
		s.postMu.Unlock()
		if err != nil && ctx.Err() == nil {
			if s.resendFailures != nil {
				s.resendFailures.Inc()
			}
			s.logger.Warn("webhook sink: re-sending firing alerts failed", "alerts", firing, "resolved", len(keys)-firing, "err", err)
			return
		}
	}
}

// saveIfDirty saves the firing alerts if they changed since last saved.
func (s *Sink) saveIfDirty() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dirty {
		s.saveActive()
	}
}

// Close saves the firing alerts if they changed and releases idle
// connections.
func (s *Sink) Close() error {
	s.saveIfDirty()
	s.client.CloseIdleConnections()
	return nil
}
