package configs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"text/template"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/net/http/httpguts"

	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/internal/yamlerr"
	"github.com/weirnet/weir/telemetry"
)

// SinkTypes are the sink types weir knows (sinks.Registry builds them). The
// list lives here too so that `weir check` rejects a typo in `type:` with
// its line, without the configs package depending on every sink.
var SinkTypes = []string{"file", "influxdb", "kafka", "prometheus", "prometheus_remote_write", "webhook"}

// WebhookTemplateFuncs returns the functions a webhook sink's template may
// call besides text/template's own: json quotes a value as JSON. The
// webhook sink executes its template with them, and the config check
// parses it with them, so a template the sink can run is never refused
// here. A new map each call: nothing shared to modify.
func WebhookTemplateFuncs() template.FuncMap {
	return template.FuncMap{"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	}}
}

// WebhookTemplateData is what a webhook sink's template is executed on:
// the record's decoded value by schema, and the record with its key, value
// and header values as text.
type WebhookTemplateData struct {
	Record WebhookTemplateRecord
	Schema string
	Metric *telemetry.Metric
	Log    *telemetry.EnrichedLog
	Event  *telemetry.Event
}

// WebhookTemplateRecord is a record as a template sees it.
type WebhookTemplateRecord struct {
	Topic      string
	Partition  int32
	Offset     int64
	Timestamp  time.Time
	Key, Value string
	Headers    []WebhookTemplateHeader
}

// WebhookTemplateHeader is one record header as text.
type WebhookTemplateHeader struct{ Key, Value string }

// tryWebhookTemplate runs t on zero values of every schema at once, then
// looks for such a field in what that run skipped: a field the data does
// not have (`.Event.Typ`) fails on every record, so every record would be
// dead-lettered. Other failures (an index past a list's end) may be the
// zero values', not the template's: not reported.
func tryWebhookTemplate(t *template.Template) error {
	d := WebhookTemplateData{Metric: &telemetry.Metric{}, Log: &telemetry.EnrichedLog{}, Event: &telemetry.Event{}}
	err := t.Execute(io.Discard, &d)
	if err != nil && strings.Contains(err.Error(), "can't evaluate field") { // text/template's words; it has no error type for it
		return err
	}
	return templateFields(t, reflect.TypeOf(&d))
}

// Sink configures one sink (sinks/<type>); see the sinks package. Common
// settings come first; the per-type settings after them are flat, as in
// Telegraf's outputs, and a setting that does not apply to the type is
// rejected.
type Sink struct {
	// Type picks the sink: file, influxdb, kafka, prometheus,
	// prometheus_remote_write, webhook.
	Type string `yaml:"type"`
	// Name is unique among sinks; the sink's consumer group is
	// "sink-<name>" and its metrics carry sink="<name>".
	Name string `yaml:"name"`
	// Topics the sink consumes.
	Topics []string `yaml:"topics"`
	// Filter keeps only matching records; empty keeps all.
	Filter SinkFilter `yaml:"filter"`
	// BatchSize is the most records handed to the destination at once;
	// default 5000.
	BatchSize int `yaml:"batch_size"`
	// FlushInterval is how long a partial batch waits; default 1s.
	FlushInterval Duration `yaml:"flush_interval"`
	// Retry is the back-off for retryable failures.
	Retry SinkRetry `yaml:"retry"`
	// Start is where a sink with no committed offset yet (new, or
	// renamed) begins: earliest (the default: everything its topics
	// hold, a backfill) or latest (what comes from now on, for a
	// receiver such as a chat or Alertmanager that wants news, not days
	// of history).
	Start string `yaml:"start"`

	// HTTP destinations (influxdb, prometheus_remote_write, webhook).
	URL     string            `yaml:"url"`
	Timeout Duration          `yaml:"timeout"`
	Headers map[string]string `yaml:"headers"`
	// Gzip compresses influxdb request bodies; default true.
	Gzip *bool `yaml:"gzip"`

	// influxdb: v2 (org, bucket, token) or v1 (database, retention
	// policy, username, password). Version defaults to 2 when bucket is
	// set, else 1.
	Version         int    `yaml:"version"`
	Org             string `yaml:"org"`
	Bucket          string `yaml:"bucket"`
	Token           string `yaml:"token"`
	Database        string `yaml:"database"`
	RetentionPolicy string `yaml:"retention_policy"`
	Username        string `yaml:"username"`
	Password        string `yaml:"password"`

	// prometheus: the exposition endpoint; namespace, staleness and
	// max_series also for prometheus_remote_write.
	Listen      Address  `yaml:"listen"`
	MetricsPath string   `yaml:"metrics_path"` // default /metrics
	Staleness   Duration `yaml:"staleness"`    // default: DefaultStaleness
	// DefaultStaleness is the staleness of a prometheus (or remote write) sink that gives
	// none: the longer of DefaultPrometheusStaleness and twice the
	// longest interval the config's collectors update a series at (set
	// by Parse; a reload that changes the intervals changes it).
	DefaultStaleness Duration `yaml:"-"`
	Namespace        string   `yaml:"namespace"` // prefix of every name, optional
	// MaxSeries bounds the series a prometheus sink holds (a remote
	// write sink tracks for deletes); default DefaultPrometheusMaxSeries.
	MaxSeries int `yaml:"max_series"`

	// file: JSON lines.
	Path     string   `yaml:"path"`
	PerTopic bool     `yaml:"per_topic"` // one file per topic, named <path without .jsonl>.<topic>.jsonl
	MaxSize  ByteSize `yaml:"max_size"`  // rotate past this; default 100MiB
	MaxAge   Duration `yaml:"max_age"`   // rotate files older than this; default 24h
	Keep     *int     `yaml:"keep"`      // rotated files kept; default 7, 0: none
	Compress *bool    `yaml:"compress"`  // gzip rotated files; default true

	// webhook: json (the record, or Template's output) or alertmanager.
	Format   string `yaml:"format"`
	Template string `yaml:"template"`
	// Concurrency is how many posts a webhook in the JSON form has in
	// flight at once (records of one key in order, one at a time); 0:
	// the sink's default. Alertmanager's posts are one at a time.
	Concurrency int `yaml:"concurrency"`

	// kafka: mirror the topics to an external cluster.
	Brokers     []string `yaml:"brokers"`
	TopicPrefix string   `yaml:"topic_prefix"` // mirrored name = prefix + topic
	Compression string   `yaml:"compression"`  // none, gzip, snappy (default), lz4, zstd
	SASL        SASL     `yaml:"sasl"`
	// MaxBatchBytes bounds a produced batch, and so the largest record
	// mirrored; default DefaultKafkaMaxBatchBytes. A mirror topic's
	// lower max.message.bytes wins.
	MaxBatchBytes ByteSize `yaml:"max_batch_bytes"`

	// kafka, influxdb, prometheus_remote_write, webhook: a private CA,
	// a client certificate (mutual TLS), the name to check.
	TLS SinkTLS `yaml:"tls"`
}

// MaxWebhookConcurrency bounds a webhook sink's concurrency: posts in
// flight, each a connection to the receiver.
const MaxWebhookConcurrency = 64

// The kafka sink's batch limits (max_batch_bytes): the default is the
// size Kafka brokers take by default (message.max.bytes is 12 bytes over
// it).
const (
	DefaultKafkaMaxBatchBytes = 1 << 20
	MaxKafkaBatchBytes        = 64 << 20
)

// SinkTLS configures TLS to a destination.
type SinkTLS struct {
	// Enabled turns TLS on for the kafka sink without other settings;
	// the HTTP sinks use TLS for https:// URLs.
	Enabled            bool   `yaml:"enabled"`
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// Client is t as tlsconf reads it (Enabled aside).
func (t SinkTLS) Client() tlsconf.Client {
	return tlsconf.Client{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
}

// FilePaths are the files a file sink writes (cleaned): its path, or with
// per_topic one per topic (PerTopicPath).
func (s *Sink) FilePaths() []string {
	if !s.PerTopic {
		return []string{filepath.Clean(s.Path)}
	}
	var out []string
	for _, t := range s.Topics {
		out = append(out, filepath.Clean(PerTopicPath(s.Path, t)))
	}
	return out
}

// PerTopicPath is the file a per_topic file sink writes topic's records
// to: the topic before path's extension ("events.jsonl" ->
// "events.enriched.syslog.jsonl").
func PerTopicPath(path, topic string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + topic + ext
}

// SinkFilter selects records. Each list holds path.Match globs; a list that
// is empty does not filter. Each condition applies to the records that
// carry the attribute: measurements to metrics, severities to logs and
// events, event_types to events; tags to every record that has tags.
type SinkFilter struct {
	Measurements []string `yaml:"measurements"`
	// Tags must all match (device matches the tag "device").
	Tags map[string]string `yaml:"tags"`
	// Severities are syslog severity names in either spelling (err or
	// error, crit or critical, ...; emerg ... debug) or numbers, for logs
	// and events, or an event's other severities as written.
	Severities []string `yaml:"severities"`
	EventTypes []string `yaml:"event_types"`
}

// validate refuses a glob path.Match cannot read, which would never
// match (the sink refuses it at start too).
func (f *SinkFilter) validate(add func(key, format string, args ...any)) {
	check := func(key string, patterns ...string) {
		for _, p := range patterns {
			if _, err := path.Match(p, ""); err != nil {
				add("filter", "%s pattern %q: %v", key, p, err)
			}
		}
	}
	check("measurements", f.Measurements...)
	check("severities", f.Severities...)
	check("event_types", f.EventTypes...)
	for _, k := range slices.Sorted(maps.Keys(f.Tags)) {
		check("tags."+k, f.Tags[k])
	}
}

// SinkRetry is the back-off on retryable failures (connection refused,
// 5xx, 429): Initial doubling up to Max. MaxAttempts 0 retries until the
// destination is back, which is what at-least-once delivery needs: the
// broker's retention is the buffer meanwhile.
type SinkRetry struct {
	Initial     Duration `yaml:"initial"`      // default 100ms
	Max         Duration `yaml:"max"`          // default 30s
	MaxAttempts int      `yaml:"max_attempts"` // 0: forever; else dead-letter after this many
}

// perType lists the settings only some types accept.
var perType = map[string][]string{
	"url": {"influxdb", "prometheus_remote_write", "webhook"}, "timeout": {"influxdb", "kafka", "prometheus_remote_write", "webhook"},
	"headers": {"influxdb", "prometheus_remote_write", "webhook"},
	"gzip":    {"influxdb"},
	"version": {"influxdb"}, "org": {"influxdb"}, "bucket": {"influxdb"}, "token": {"influxdb"},
	"database": {"influxdb"}, "retention_policy": {"influxdb"}, "username": {"influxdb"}, "password": {"influxdb"},
	"listen": {"prometheus"}, "metrics_path": {"prometheus"}, "staleness": {"prometheus", "prometheus_remote_write"}, "max_series": {"prometheus", "prometheus_remote_write"}, "namespace": {"prometheus", "prometheus_remote_write"},
	"path": {"file"}, "per_topic": {"file"}, "max_size": {"file"}, "max_age": {"file"}, "keep": {"file"},
	"compress": {"file"},
	"format":   {"webhook"}, "template": {"webhook"}, "concurrency": {"webhook"},
	"tls":     {"influxdb", "kafka", "prometheus_remote_write", "webhook"},
	"brokers": {"kafka"}, "topic_prefix": {"kafka"}, "compression": {"kafka"}, "sasl": {"kafka"},
	"max_batch_bytes": {"kafka"},
}

// UnmarshalYAML decodes and validates one sink where its node is, so every
// error carries the line of the offending key. (The top-level validate
// does not know about sinks; doing it here keeps the sink rules in this
// file.)
func (s *Sink) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a sink is a mapping (type, name, topics, ...)", n.Line)
	}
	// Node.Decode does not inherit KnownFields, so check keys here and
	// report them as the strict decoder would: the loader's first pass
	// turns these into "unknown key" errors.
	if unknown := unknownSinkKeys(n, reflect.TypeOf(Sink{}), "configs.Sink"); len(unknown) > 0 {
		return &yaml.TypeError{Errors: unknown}
	}
	type plain Sink
	if err := n.Decode((*plain)(s)); err != nil {
		return err
	}
	var errs []string
	add := func(key, format string, args ...any) {
		line := n.Line
		if k := keyNode(n, key); k != nil {
			line = k.Line
		}
		name := s.Name
		if name == "" {
			name = "?"
		}
		errs = append(errs, fmt.Sprintf("line %d: sink %q: %s: %s", line, name, key, fmt.Sprintf(format, args...)))
	}
	s.validate(n, add)
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	return nil
}

func (s *Sink) validate(n *yaml.Node, add func(key, format string, args ...any)) {
	known := slices.Contains(SinkTypes, s.Type)
	if !known {
		add("type", "must be one of %s, not %q", strings.Join(SinkTypes, ", "), s.Type)
	}
	if s.Name == "" {
		add("name", "is required")
	} else if !validTopic("sink-" + s.Name) {
		add("name", "%q: use letters, digits, '.', '_' and '-' (it names the consumer group sink-<name>)", s.Name)
	}
	if len(s.Topics) == 0 {
		add("topics", "at least one topic is required")
	}
	for _, t := range s.Topics {
		if !validTopic(t) {
			add("topics", "invalid topic name %q", t)
		}
	}
	if s.BatchSize < 0 || s.BatchSize > 1_000_000 {
		add("batch_size", "must be between 1 and 1000000")
	}
	if s.FlushInterval < 0 {
		add("flush_interval", "must not be negative")
	}
	if s.Timeout < 0 {
		// Taken as unset, the default, without a word.
		add("timeout", "must not be negative (unset or 0: the sink's default)")
	}
	switch s.Start {
	case "", "earliest", "latest":
	default:
		add("start", "must be earliest or latest, not %q", s.Start)
	}
	if s.Retry.Initial < 0 || s.Retry.Max < 0 || s.Retry.MaxAttempts < 0 {
		add("retry", "initial, max and max_attempts must not be negative")
	}
	if s.Retry.Initial > 0 && s.Retry.Max > 0 && s.Retry.Max < s.Retry.Initial {
		add("retry", "max must be at least initial")
	}
	if (s.TLS.CertFile == "") != (s.TLS.KeyFile == "") {
		add("tls", "cert_file and key_file go together")
	}
	s.Filter.validate(add)
	// Settings of another type are most likely a copy-paste slip.
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if types, ok := perType[k]; ok && known && !slices.Contains(types, s.Type) {
			add(k, "does not apply to type %s (only %s)", s.Type, strings.Join(types, ", "))
		}
	}
	validateHeaders(s.Headers, add)
	switch s.Type {
	case "influxdb":
		s.validateURL(add)
		if s.Version != 0 && s.Version != 1 && s.Version != 2 {
			add("version", "must be 1 or 2")
		}
		if s.InfluxVersion() == 2 && (s.Bucket == "" || s.Org == "") {
			add("bucket", "v2 needs org and bucket")
		}
		if s.InfluxVersion() == 1 && s.Database == "" {
			add("database", "is required for InfluxDB v1 (or set org and bucket for v2)")
		}
	case "prometheus_remote_write":
		s.validateURL(add)
		s.validateSeries(add)
	case "webhook":
		s.validateURL(add)
		if s.Concurrency < 0 || s.Concurrency > MaxWebhookConcurrency {
			add("concurrency", "must be between 1 and %d, not %d", MaxWebhookConcurrency, s.Concurrency)
		}
		switch s.Format {
		case "", "json":
			if s.Template != "" {
				// text/template's errors begin "template: ", which the
				// key already says.
				if t, err := template.New("body").Funcs(WebhookTemplateFuncs()).Parse(s.Template); err != nil {
					add("template", "%s", strings.TrimPrefix(err.Error(), "template: "))
				} else if err := tryWebhookTemplate(t); err != nil {
					add("template", "%s", strings.TrimPrefix(err.Error(), "template: "))
				}
			}
		case "alertmanager":
			if s.Template != "" {
				add("template", "does not apply to format alertmanager")
			}
			if s.Concurrency > 1 {
				// One post at a time keeps a resolve after the alert it
				// ends, and the re-sends after both.
				add("concurrency", "applies to format json only: Alertmanager's batches are posted one at a time, in order")
			}
		default:
			add("format", "must be json or alertmanager, not %q", s.Format)
		}
	case "prometheus":
		if !s.Listen.Enabled() {
			add("listen", "is required (host:port)")
		}
		if s.MetricsPath != "" && !strings.HasPrefix(s.MetricsPath, "/") {
			add("metrics_path", "must start with /")
		}
		s.validateSeries(add)
	case "kafka":
		if len(s.Brokers) == 0 {
			add("brokers", "at least one host:port is required")
		}
		for _, b := range s.Brokers {
			if why := brokerError(b); why != "" {
				add("brokers", "%s", why)
			}
		}
		if s.MaxBatchBytes != 0 && (s.MaxBatchBytes < 1<<10 || s.MaxBatchBytes > MaxKafkaBatchBytes) {
			add("max_batch_bytes", "must be between 1KiB and 64MiB, not %d: a produce request carries batches of several partitions, and Kafka brokers refuse requests over socket.request.max.bytes (100MiB by default)", int64(s.MaxBatchBytes))
		}
		switch s.Compression {
		case "", "none", "gzip", "snappy", "lz4", "zstd":
		default:
			add("compression", "must be none, gzip, snappy, lz4 or zstd, not %q", s.Compression)
		}
		switch s.SASL.Mechanism {
		case "":
			// Credentials without a mechanism would be dropped: the
			// sink would connect without SASL.
			if s.SASL != (SASL{}) {
				add("sasl", "mechanism is required (%s): without it the sink would not authenticate", saslMechanisms)
			}
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
			if s.SASL.Username == "" {
				add("sasl", "username is required with mechanism %s", s.SASL.Mechanism)
			}
			if s.SASL.Password == "" {
				add("sasl", "password is required with mechanism %s", s.SASL.Mechanism)
			}
		default:
			add("sasl", "mechanism must be %s, not %q", saslMechanisms, s.SASL.Mechanism)
		}
		for _, t := range s.Topics {
			if !validTopic(s.TopicPrefix + t) {
				add("topic_prefix", "%q makes the invalid topic name %q", s.TopicPrefix, s.TopicPrefix+t)
			}
		}
	case "file":
		if s.Path == "" {
			add("path", "is required")
		}
		if s.MaxSize < 0 || s.MaxAge < 0 || (s.Keep != nil && *s.Keep < 0) {
			add("max_size", "max_size, max_age and keep must not be negative")
		}
	}
}

// StartsAtEnd reports whether the sink, without a committed offset,
// begins at the log end (start: latest) rather than the log start.
func (s *Sink) StartsAtEnd() bool { return s.Start == "latest" }

func (s *Sink) validateURL(add func(key, format string, args ...any)) {
	// The URL is not echoed: its user info, path and query hold the
	// secrets (?api_key=, a chat hook's token), and the error is printed
	// by weir check and logged after a SIGHUP. Its scheme is safe to name.
	u, err := url.Parse(s.URL)
	switch {
	case s.URL == "":
		add("url", "must be an http:// or https:// URL")
	case err != nil:
		add("url", "does not parse: %s", urlProblem(err))
	case u.Scheme == "":
		add("url", "must be an http:// or https:// URL, not one without a scheme")
	case u.Scheme != "http" && u.Scheme != "https":
		add("url", "must be an http:// or https:// URL, not %s://", u.Scheme)
	case u.Host == "":
		add("url", "has no host")
	}
	if s.TLS.Enabled {
		add("tls", "enabled applies to type kafka only: an https:// URL turns TLS on")
	}
	if s.TLS != (SinkTLS{}) && u != nil && u.Scheme == "http" {
		add("tls", "applies to https:// URLs only, not http://")
	}
}

// urlProblem is what url.Parse found wrong, without the URL or the part it
// quotes: an unencoded / or # in a password reads as a bad port holding
// the rest of it.
func urlProblem(err error) string {
	var ue *url.Error
	msg := err.Error()
	if errors.As(err, &ue) {
		msg = ue.Err.Error()
	}
	msg, _, _ = strings.Cut(msg, ` "`)
	return strings.TrimPrefix(msg, "net/url: ")
}

// InfluxVersion is the InfluxDB API version: 2 when a bucket is set,
// unless Version says otherwise.
func (s *Sink) InfluxVersion() int {
	if s.Version != 0 {
		return s.Version
	}
	if s.Bucket != "" {
		return 2
	}
	return 1
}

func keyNode(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// unknownSinkKeys reports keys of mapping n that t has no yaml tag for,
// descending into struct-typed fields, in the strict decoder's wording.
func unknownSinkKeys(n *yaml.Node, t reflect.Type, typeName string) []string {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		fields[tag] = t.Field(i).Type
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if yamlerr.IsMergeKey(k) {
			for _, m := range yamlerr.MergedMappings(n.Content[i+1]) {
				out = append(out, unknownSinkKeys(m, t, typeName)...)
			}
			continue
		}
		ft, ok := fields[k.Value]
		if !ok {
			out = append(out, fmt.Sprintf("line %d: field %s not found in type %s", k.Line, k.Value, typeName))
			continue
		}
		if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() && ft.Name() != "" {
			out = append(out, unknownSinkKeys(n.Content[i+1], ft, "configs."+ft.Name())...)
		}
	}
	return out
}

// UnknownSinkTopics lists, per sink name, the topics it reads that no part
// of weir writes: not a topic of weir's own, a collector's configured
// topic or one under broker.topics. Most are typos ("evnets"), on which a
// sink would wait for ever without a word; some are written by Kafka
// clients, so they are warned about, not refused.
func (c *Config) UnknownSinkTopics() map[string][]string {
	own := c.ownTopics()
	var out map[string][]string
	for _, s := range c.Sinks {
		for _, t := range s.Topics {
			_, known := own[t]
			if _, listed := c.Broker.Topics[t]; !known && !listed {
				if out == nil {
					out = map[string][]string{}
				}
				out[s.Name] = append(out[s.Name], t)
			}
		}
	}
	return out
}

// SinkTopicsOfOtherRecords returns, by sink name, the topics of weir's
// own a sink reads whose records its type does not write (events to an
// influxdb sink, metrics to an Alertmanager webhook), each with what they
// hold: the sink skips them, counted as filtered, and says nothing.
func (c *Config) SinkTopicsOfOtherRecords() map[string][]TopicRecords {
	holds := c.ownTopics()
	var out map[string][]TopicRecords
	for _, s := range c.Sinks {
		writes := ""
		switch {
		case s.Type == "influxdb", s.Type == "prometheus", s.Type == "prometheus_remote_write":
			writes = "metrics"
		case s.Type == "webhook" && s.Format == "alertmanager":
			writes = "events"
		default:
			continue // any record
		}
		for _, t := range s.Topics {
			if h := holds[t]; h != "" && h != writes {
				if out == nil {
					out = map[string][]TopicRecords{}
				}
				out[s.Name] = append(out[s.Name], TopicRecords{Topic: t, Holds: h, Writes: writes})
			}
		}
	}
	return out
}

// OwnTopics is the topics some part of weir writes with this config,
// sorted: what a sink topic UnknownSinkTopics reports may be a typo of.
func (c *Config) OwnTopics() []string {
	return slices.Sorted(maps.Keys(c.ownTopics()))
}

// ownTopics maps the topics weir's parts write to what they hold:
// "metrics", "logs", "traps", "events", or "" for dead.letter (any).
func (c *Config) ownTopics() map[string]string {
	holds := map[string]string{telemetry.TopicDeadLetter: ""}
	for _, t := range []string{telemetry.TopicRawSNMP, telemetry.TopicRawGNMI, telemetry.TopicEnrichedMetrics, c.SNMP.Topic, c.GNMI.Topic} {
		holds[t] = "metrics"
	}
	for _, t := range []string{telemetry.TopicRawSyslog, telemetry.TopicEnrichedSyslog, c.Syslog.Topic} {
		holds[t] = "logs"
	}
	holds[telemetry.TopicRawTraps], holds[c.SNMP.Traps.Topic] = "traps", "traps"
	holds[telemetry.TopicEvents] = "events"
	delete(holds, "") // a collector's topic left unset
	return holds
}

// AlertmanagerURLWarnings are the webhook sinks of format alertmanager
// whose url's path does not end /api/v2/alerts, Alertmanager's alerts
// API: one given Alertmanager's address alone (http://host:9093) is
// answered 404 or 405, and its alerts retried for good. A proxy or a
// receiver of its own may take them at another path, so a warning. The
// url is not echoed (see validateURL).
func (c *Config) AlertmanagerURLWarnings() []string {
	var out []string
	for _, s := range c.Sinks {
		if s.Type != "webhook" || s.Format != "alertmanager" {
			continue
		}
		u, err := url.Parse(s.URL)
		if err != nil || u.Host == "" || strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v2/alerts") {
			continue // an error of the config already, or as it should be
		}
		what := "does not end /api/v2/alerts"
		if u.Path == "" || u.Path == "/" {
			what = "is empty: it is Alertmanager's address alone"
		}
		out = append(out, fmt.Sprintf("sink %q (format alertmanager): its url's path %s; Alertmanager takes alerts at /api/v2/alerts "+
			"(url: http://127.0.0.1:9093/api/v2/alerts) and answers 404 or 405 elsewhere, which is retried for good", s.Name, what))
	}
	return out
}

// WebhookTemplateWarnings are the topics of weir's own a webhook sink
// reads on whose records its template fails: one reading .Event's fields
// without {{with .Event}} fails on every log, metric and trap record (the
// record has no event), and each is dead-lettered. Valid for a sink whose
// topics are events only, so a warning, not an error.
func (c *Config) WebhookTemplateWarnings() []string {
	holds := c.ownTopics()
	var out []string
	for _, s := range c.Sinks {
		if s.Type != "webhook" || s.Template == "" || s.Format == "alertmanager" {
			continue
		}
		t, err := template.New("body").Funcs(WebhookTemplateFuncs()).Parse(s.Template)
		if err != nil {
			continue // an error of the config already
		}
		for _, topic := range s.Topics {
			h := holds[topic]
			if h == "" {
				continue // dead.letter, or a topic not weir's: anything
			}
			err := t.Execute(io.Discard, templateDataOf(h))
			if err == nil || !strings.Contains(err.Error(), "nil pointer evaluating") { // text/template's words
				continue
			}
			out = append(out, fmt.Sprintf("sink %q reads topic %q, of %s: its template fails on them (%s), and they go to dead.letter; "+
				"put the fields of a record's kind in {{with .Event}}...{{end}} (or .Log, .Metric), or read topics of that kind only",
				s.Name, topic, h, strings.TrimPrefix(err.Error(), "template: ")))
		}
	}
	return out
}

// templateDataOf is a record of what a topic holds ("metrics", "logs",
// "events", "traps") as a webhook template sees it: zero values, and only
// that kind's field set.
func templateDataOf(holds string) *WebhookTemplateData {
	d := &WebhookTemplateData{}
	switch holds {
	case "metrics":
		d.Schema, d.Metric = telemetry.SchemaMetric, &telemetry.Metric{}
	case "logs":
		d.Schema, d.Log = telemetry.SchemaLog, &telemetry.EnrichedLog{}
	case "events":
		d.Schema, d.Event = telemetry.SchemaEvent, &telemetry.Event{}
	case "traps":
		d.Schema = telemetry.SchemaTrap
	}
	return d
}

// validateSeries checks the keys bounding the series a prometheus sink
// serves or a remote write sink tracks.
func (s *Sink) validateSeries(add func(key, format string, args ...any)) {
	if s.Staleness < 0 {
		add("staleness", "must not be negative")
	}
	if s.MaxSeries < 0 {
		add("max_series", "must not be negative")
	}
}

// TopicRecords is a topic a sink reads, what it holds and what the sink
// writes.
type TopicRecords struct{ Topic, Holds, Writes string }

// DefaultPrometheusMaxSeries is how many series a prometheus sink holds
// when the config sets no max_series: well past a large network's
// (10,000 interfaces of 30 fields are 300,000); about 200 bytes each
// (sinks/prometheus BenchmarkSeriesMemory), so 200 MB.
const DefaultPrometheusMaxSeries = 1_000_000

// DefaultPrometheusStaleness is a prometheus sink's staleness when the
// config gives none and no collector updates less often.
const DefaultPrometheusStaleness = 5 * time.Minute

// defaultStaleness gives each prometheus or remote write sink without a staleness (as its
// DefaultStaleness) the longer of DefaultPrometheusStaleness and twice the longest interval the
// collectors update a series at, and refuses a staleness that is not
// longer than that interval: its series would vanish between updates.
func (c *Config) defaultStaleness(add func(path, format string, args ...any)) {
	longest, what := c.longestUpdateInterval()
	for i := range c.Sinks {
		s := &c.Sinks[i]
		switch {
		case s.Type != "prometheus" && s.Type != "prometheus_remote_write":
		case s.Staleness == 0:
			s.DefaultStaleness = Duration(max(DefaultPrometheusStaleness, 2*longest))
		case s.Staleness > 0 && s.Staleness.Std() <= longest:
			add(fmt.Sprintf("sinks[%d].staleness", i), "%v is not longer than %s (%v): each series would vanish between its updates; leave it out for twice that",
				s.Staleness.Std(), what, longest)
		}
	}
}

// longestUpdateInterval is the longest interval at which the collectors
// update a series on a schedule, and what sets it: SNMP poll intervals,
// gNMI sample, heartbeat and poll intervals. (on_change without a
// heartbeat has no schedule: its series stay until staleness passes.)
func (c *Config) longestUpdateInterval() (time.Duration, string) {
	var longest time.Duration
	var what string
	for _, t := range c.SNMP.Targets {
		if t.Interval > longest {
			longest, what = t.Interval, fmt.Sprintf("the SNMP interval of target %s", t.Name)
		}
	}
	for _, t := range c.GNMI.Targets {
		for _, s := range t.Subscriptions {
			d := max(s.SampleInterval, s.HeartbeatInterval).Std()
			if s.Mode == "poll" {
				d = s.PollInterval.Std()
			}
			if d > longest {
				longest, what = d, fmt.Sprintf("a gNMI interval of target %s", t.Name)
			}
		}
	}
	return longest, what
}

// validateHeaders refuses headers Go's HTTP client would refuse at every
// request (retried for ever, every record), those it drops without a
// word, and one name given twice in different cases. A value is never
// shown: it is most often a token.
func validateHeaders(headers map[string]string, add func(key, format string, args ...any)) {
	seen := map[string]string{} // by name in lower case, as given
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		if prev, dup := seen[strings.ToLower(k)]; dup {
			// Names are case-insensitive: one value would be sent, as
			// the map's order fell.
			add("headers", "%q and %q are one header (HTTP names are case-insensitive): give it once", prev, k)
		}
		seen[strings.ToLower(k)] = k
		switch {
		case !httpguts.ValidHeaderFieldName(k):
			add("headers", "header name %q is not one HTTP allows (letters, digits and !#$%%&'*+-.^_`|~, no spaces)", k)
		case !httpguts.ValidHeaderFieldValue(headers[k]):
			add("headers", "header %q: its value has a character HTTP does not allow in one (a newline, as a YAML block scalar or an environment file may leave at its end, or another control character)", k)
		case strings.EqualFold(k, "Host"):
			add("headers", "header %q is not sent (the client takes the host from url): put the name in url, and for TLS in tls.server_name", k)
		case strings.EqualFold(k, "Content-Length"), strings.EqualFold(k, "Transfer-Encoding"), strings.EqualFold(k, "Trailer"):
			add("headers", "header %q is the HTTP client's own (it frames the body), not sent as given: remove it", k)
		}
	}
}
