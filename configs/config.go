// Package configs loads, validates and defaults weir's YAML configuration.
//
// Loading is strict: unknown keys and bad values are rejected with the file,
// the line and a reason, so a typo never silently falls back to a default.
// Scalars may reference environment variables as ${NAME} (an error if NAME
// is unset) or ${NAME:-default}, which keeps secrets out of the file.
package configs

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/internal/wholefile"
	"github.com/weirnet/weir/internal/yamlerr"
	"go.yaml.in/yaml/v3"
)

// Config is the whole weir.yaml.
type Config struct {
	// DataDir holds the embedded broker's log.
	DataDir string     `yaml:"data_dir"`
	HTTP    HTTPConfig `yaml:"http"`
	Broker  Broker     `yaml:"broker"`
	Log     LogConfig  `yaml:"log"`
	Syslog  Syslog     `yaml:"syslog"`
	Enrich  Enrich     `yaml:"enrich"`
	GNMI    GNMI       `yaml:"gnmi"`
	Sinks   []Sink     `yaml:"sinks"`
	SNMP    SNMP       `yaml:"snmp"`
	Cluster Cluster    `yaml:"cluster"`

	// File is where the config was read from ("" for built-in defaults).
	File string `yaml:"-"`
	// lines are the lines of the keys Line reports.
	lines map[string]int
}

// Line is the line key ("data_dir", "http.listen", "sinks[2].listen":
// data_dir and the keys of Listeners) is written on, 0
// if it is not written (a default) or not one of those: for errors found
// after Parse, when weir run uses the value.
func (c *Config) Line(key string) int { return c.lines[key] }

// keepLines notes the lines Line reports.
func (c *Config) keepLines(root *yaml.Node) {
	keys := []string{"data_dir", "http.listen", "broker.kafka_listen", "snmp.traps.listen", "enrich.inventory", "enrich.syslog_rules"}
	for i := range c.Syslog.Listeners {
		keys = append(keys, fmt.Sprintf("syslog.listeners[%d]", i))
	}
	for i := range c.Sinks {
		keys = append(keys, fmt.Sprintf("sinks[%d].listen", i))
	}
	for _, k := range keys {
		if line, ok := findLine(root, k); ok {
			if c.lines == nil {
				c.lines = map[string]int{}
			}
			c.lines[k] = line
		}
	}
}

// HTTPConfig is the self-observation endpoint (/metrics, /healthz, /readyz).
type HTTPConfig struct {
	Listen Address `yaml:"listen"`
}

// LogConfig sets weir's own logging.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text or json
}

// Broker configures the embedded log and its Kafka listener.
type Broker struct {
	// KafkaListen is the Kafka wire-protocol listener; "off" disables it.
	KafkaListen Address `yaml:"kafka_listen"`
	// AdvertisedHost is the host name clients are told to connect to;
	// unset, each client is told the address its connection reached.
	AdvertisedHost    string   `yaml:"advertised_host"`
	DefaultPartitions int32    `yaml:"default_partitions"`
	AutoCreateTopics  *bool    `yaml:"auto_create_topics"`
	MaxMessageBytes   ByteSize `yaml:"max_message_bytes"`
	// MaxPartitions bounds all topics' partitions together, each
	// holding open files; 0 (default): half the open-file limit.
	MaxPartitions int `yaml:"max_partitions"`
	// MaxConnections bounds the Kafka listener's concurrent client
	// connections; default 4096.
	MaxConnections int `yaml:"max_connections"`
	// MaxConnectionsPerIP bounds the Kafka listener's concurrent
	// connections from one client address (Kafka's
	// max.connections.per.ip); default a quarter of max_connections,
	// so that one host cannot hold them all.
	MaxConnectionsPerIP int `yaml:"max_connections_per_ip"`
	// MaxConnectionsPerIPOverrides sets another bound for some
	// addresses (Kafka's max.connections.per.ip.overrides), such as a
	// NAT gateway many clients share: IP address to connections.
	MaxConnectionsPerIPOverrides map[string]int `yaml:"max_connections_per_ip_overrides"`
	// MaxBufferedBytes bounds the request bytes the Kafka listener's
	// connections hold together while requests arrive (Kafka's
	// queued.max.request.bytes); default 256MiB, at least
	// max_message_bytes plus 1MiB.
	MaxBufferedBytes ByteSize `yaml:"max_buffered_bytes"`
	// RequestTimeout is how long a Kafka client's request may take to
	// arrive once its length has; default 30s.
	RequestTimeout Duration `yaml:"request_timeout"`
	// OffsetsRetention is how long a consumer group with no member and
	// no commit keeps its committed offsets (Kafka's
	// offsets.retention.minutes); default 7d, -1 for ever.
	OffsetsRetention Duration `yaml:"offsets_retention"`
	Flush            Flush    `yaml:"flush"`
	// Compression is the codec weir's own records are written with:
	// none, snappy (default), lz4, zstd or gzip (see Codec).
	Compression Codec            `yaml:"compression"`
	Retention   Retention        `yaml:"retention"`
	Segment     Segment          `yaml:"segment"`
	Topics      map[string]Topic `yaml:"topics"`
	// KafkaTLS serves the Kafka listener over TLS; nil: plaintext.
	KafkaTLS *ListenerTLS `yaml:"kafka_tls"`
	// KafkaSASL requires Kafka clients to authenticate; nil: no
	// authentication.
	KafkaSASL *KafkaSASL `yaml:"kafka_sasl"`
	// Kafka runs weir on an Apache Kafka cluster instead of the embedded
	// log: with brokers set, nothing is stored locally and there is no
	// Kafka listener (clients use the cluster).
	Kafka Kafka `yaml:"kafka"`
}

// Kafka is the Kafka-cluster backend.
type Kafka struct {
	Brokers           []string `yaml:"brokers"`
	ClientID          string   `yaml:"client_id"`
	ReplicationFactor int16    `yaml:"replication_factor"`
	TLS               *TLS     `yaml:"tls"`
	SASL              *SASL    `yaml:"sasl"`
}

// ListenerTLS is a TLS listener's certificate and key, and a CA to
// require and verify client certificates with (mutual TLS), named as a
// syslog TLS listener names them. The files are read again when they
// change.
type ListenerTLS struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`
}

// KafkaSASL is the SASL authentication the Kafka listener requires.
type KafkaSASL struct {
	// Mechanisms enabled: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512.
	Mechanisms []string    `yaml:"mechanisms"`
	Users      []KafkaUser `yaml:"users"`
}

// KafkaUser is one user of the Kafka listener.
type KafkaUser struct {
	Name     string `yaml:"name"`
	Password string `yaml:"password"`
	// ReadOnly users may read topics and use consumer groups, but not
	// produce, create, delete or alter topics, nor delete groups.
	ReadOnly bool `yaml:"read_only"`
	// Topics and Groups, when set, are the only topics and consumer
	// groups the user may use: names, or prefixes ending in "*".
	Topics []string `yaml:"topics"`
	Groups []string `yaml:"groups"`
}

// TLS for a client connection.
type TLS struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// Client is t as tlsconf reads it.
func (t TLS) Client() tlsconf.Client {
	return tlsconf.Client{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
}

// saslMechanisms are the SASL mechanisms weir speaks, as errors name them.
const saslMechanisms = "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"

// RetainForever reports whether a retention time d, as written in the
// config or given to weir topics create, means keep records for ever: -1
// (which parses as -1ns) or -1s.
func RetainForever(d time.Duration) bool { return d == -1 || d == -time.Second }

// SASL credentials to a Kafka cluster (broker.kafka.sasl, a Kafka sink's
// sasl): mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
type SASL struct {
	Mechanism string `yaml:"mechanism"`
	Username  string `yaml:"username"`
	Password  string `yaml:"password"`
}

// Flush is the durability policy.
type Flush struct {
	// Policy is "interval" (fsync every Interval, group commit) or
	// "always" (fsync before acknowledging).
	Policy   FlushPolicy `yaml:"policy"`
	Interval Duration    `yaml:"interval"`
}

// Retention bounds what each partition keeps. -1 is unbounded.
type Retention struct {
	Time  Duration `yaml:"time"`
	Bytes ByteSize `yaml:"bytes"`
}

// Segment sets when the active segment rolls.
type Segment struct {
	Bytes ByteSize `yaml:"bytes"`
	Age   Duration `yaml:"age"`
}

// Topic overrides the defaults for one topic.
type Topic struct {
	Partitions int32     `yaml:"partitions"`
	Retention  Retention `yaml:"retention"`
	Segment    Segment   `yaml:"segment"`
}

// Defaults returns the configuration weir runs with when there is no file:
// data under ./weir-data, the Kafka listener on 127.0.0.1:9092 and HTTP on
// 127.0.0.1:8080.
func Defaults() *Config {
	yes := true
	return &Config{
		DataDir: "./weir-data",
		HTTP:    HTTPConfig{Listen: "127.0.0.1:8080"},
		Broker: Broker{
			KafkaListen:       "127.0.0.1:9092",
			DefaultPartitions: 6,
			AutoCreateTopics:  &yes,
			MaxMessageBytes:   8 << 20,
			Flush:             Flush{Policy: "interval", Interval: Duration(100 * time.Millisecond)},
			Compression:       "snappy",
			Retention:         Retention{Time: Duration(7 * 24 * time.Hour), Bytes: 1 << 30},
			Segment:           Segment{Bytes: 256 << 20, Age: Duration(7 * 24 * time.Hour)},
		},
		Log: LogConfig{Level: "info", Format: "text"},
		Cluster: Cluster{
			ShardTargets:   SwitchAuto,
			Group:          DefaultShardGroup,
			Topic:          DefaultShardTopic,
			Partitions:     DefaultShardPartitions,
			SessionTimeout: Duration(DefaultShardSessionTimeout),
		},
	}
}

// Load reads and validates a config file; fields it does not set keep the
// defaults.
func Load(path string) (*Config, error) {
	data, err := wholefile.Read(path, wholefile.MaxBytes) // /dev/zero, a log named by mistake: refused
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if noSettings(data) {
		// A file truncated as it was being written, read at a SIGHUP,
		// would stop every target.
		return nil, fmt.Errorf("config: %s has no settings (empty, or comments only); run without -c for the built-in defaults", path)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, withFile(path, err)
	}
	cfg.File = path
	return cfg, nil
}

// noSettings reports whether data is YAML with no document in it: nothing,
// white space or comments. A document that does not parse has settings,
// for Parse to refuse.
func noSettings(data []byte) bool {
	if len(bytes.TrimSpace(data)) == 0 {
		return true
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return false
	}
	return n.Kind == 0 || n.Kind == yaml.DocumentNode && (len(n.Content) == 0 || n.Content[0].Tag == "!!null")
}

// Parse parses and validates config bytes.
func Parse(data []byte) (*Config, error) {
	cfg := Defaults()
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	first, err := firstDocument(data)
	if err != nil {
		return nil, err
	}
	if first != nil {
		// The key checks below follow aliases into merged mappings.
		if err := yamlerr.AliasCycle(first); err != nil {
			return nil, err
		}
	}
	// Pass 1: unknown keys, with their lines, before env expansion could
	// turn a typo into a type error.
	if errs := unknownKeys(data); len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	// Pass 2: the values, with ${ENV} expanded in scalars.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlerr.Clean(err, data, nil)
	}
	// Before the expansion, which follows aliases: an anchor under an
	// extension key is expanded where a section uses it, and a ${VAR} in
	// one nothing uses need not be set.
	dropExtensionKeys(&root)
	if err := expandEnv(&root, map[*yaml.Node]bool{}); err != nil {
		return nil, err
	}
	emptySections(&root)
	// A list written as a mapping, with its key: yaml.v3 says only the
	// line, which may start two mappings ("snmp:" and "targets: {...}").
	var shapes []string
	if len(root.Content) > 0 {
		checkKeys(root.Content[0], reflect.TypeOf(Config{}), "", &shapes)
	}
	// Pass 1 stops at the first value it cannot take (a ${ENV} not yet
	// expanded where a duration or an address goes), leaving the keys
	// after it unchecked: checked here again, on the expanded file.
	if unknown := unknownKeyErrors(shapes); len(unknown) > 0 {
		return nil, errors.New(strings.Join(unknown, "\n"))
	}
	if shapes = shapeErrors(shapes); len(shapes) > 0 {
		return nil, errors.New(strings.Join(shapes, "\n"))
	}
	if err := root.Decode(cfg); err != nil {
		// The sections that check their own keys (sinks, snmp, gnmi)
		// report them here when pass 1 stopped early.
		var te *yaml.TypeError
		if errors.As(err, &te) {
			if unknown := unknownKeyErrors(te.Errors); len(unknown) > 0 {
				return nil, errors.New(strings.Join(unknown, "\n"))
			}
		}
		return nil, yamlerr.Clean(err, data, &root)
	}
	if err := cfg.validate(&root); err != nil {
		return nil, err
	}
	cfg.keepLines(&root)
	return cfg, nil
}

// firstDocument returns the file's first YAML document (nil if it does
// not parse: the parse proper reports it), and refuses a document after
// it (two files joined, each starting with ---): the decoder reads the
// first alone, and the second's targets and sinks would be dropped
// without a word.
func firstDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first yaml.Node
	if dec.Decode(&first) != nil {
		return nil, nil
	}
	return &first, yamlerr.NextDocument(dec, "weir reads one document a file")
}

// emptySections makes a top-level section of no value ("snmp:" with its
// keys commented out) an empty mapping, as "snmp: {}": YAML reads it as
// null, which would leave the section unset rather than present with its
// defaults (for snmp, the trap receiver).
func emptySections(root *yaml.Node) {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return
	}
	m := root.Content[0].Content
	for i := 1; i < len(m); i += 2 {
		// Only "snmp:" and nothing: "snmp: null" and "snmp: ~" say
		// there is none (a template rendering a section left out).
		if v := m[i]; v.Kind == yaml.ScalarNode && v.Tag == "!!null" && v.Value == "" && sectionKeys[m[i-1].Value] {
			*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: v.Line, Column: v.Column}
		}
	}
}

// topLevelType is how yaml.v3 names the file's top level in its errors.
var topLevelType = reflect.TypeOf(Config{}).String()

// dropExtensionKeys removes the top-level extension keys (x-lab: &lab
// ..., see yamlerr.IsExtensionKey) from the parsed file, so that the
// checks and the decode after it do not see them.
func dropExtensionKeys(root *yaml.Node) {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return
	}
	m := root.Content[0]
	kept := m.Content[:0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && yamlerr.IsExtensionKey(k.Value) {
			continue
		}
		kept = append(kept, m.Content[i], m.Content[i+1])
	}
	m.Content = kept
}

// sectionKeys are the top-level keys whose values are sections (structs),
// not scalars or lists.
var sectionKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(Config{})
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && f.Type.Kind() == reflect.Struct {
			keys[name] = true
		}
	}
	return keys
}()

func unknownKeys(data []byte) []string {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var probe Config
	err := dec.Decode(&probe)
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return nil
	}
	return unknownKeyErrors(te.Errors)
}

// unknownKeyErrors words the "field foo not found in type T" errors among
// errs (yaml.v3's, and checkKeys' with a key path for T) as unknown keys,
// and leaves out the others.
func unknownKeyErrors(errs []string) []string {
	var out []string
	// A key misspelt in an anchored mapping is met again at each merge
	// (<<: *anchor) of it; one line and key is one mistake.
	seen := map[string]bool{}
	for _, e := range errs {
		// "line 3: field foo not found in type configs.Broker"
		i := strings.Index(e, " not found in type ")
		if i < 0 {
			continue
		}
		if seen[e[:i]] {
			continue
		}
		seen[e[:i]] = true
		if yamlerr.UnknownExtensionKey(e, topLevelType) {
			continue
		}
		// checkKeys says what to write instead after the section;
		// yaml.v3 names the section's Go type.
		section, hint, _ := strings.Cut(e[i+len(" not found in type "):], " (")
		if hint != "" {
			hint = " (" + hint
		} else if t, ok := keyTypes[section]; ok {
			key := e[strings.LastIndex(e[:i], "field ")+len("field ") : i]
			hint = keyHint(key, yamlKeys(t))
			if section == topLevelType && (key == "devices" || key == "ranges") {
				hint = " (an inventory file? weir reads it from enrich.inventory in its config: check that config)"
			}
		}
		out = append(out, e[:i]+": unknown key in "+sectionName(section)+hint)
	}
	return out
}

func sectionName(goType string) string {
	goType = strings.TrimPrefix(goType, "configs.")
	if name, ok := sectionNames[goType]; ok {
		return name
	}
	return strings.ToLower(goType)
}

// sectionNames name the sections whose Go type is not their key (a path
// from checkKeys, or a type such as Flush, lower-cased, is).
var sectionNames = map[string]string{
	"Config":         "the top level",
	"":               "the top level",
	"HTTPConfig":     "http",
	"LogConfig":      "log",
	"Kafka":          "broker.kafka",
	"ListenerTLS":    "broker.kafka_tls",
	"KafkaSASL":      "broker.kafka_sasl",
	"KafkaUser":      "a user of broker.kafka_sasl",
	"Flush":          "broker.flush",
	"Flap":           "enrich.flap",
	"Topic":          "a topic of broker.topics",
	"SyslogListener": "a syslog listener",
	"SinkFilter":     "a sink's filter",
	"SinkRetry":      "a sink's retry",
	"SinkTLS":        "a sink's tls",
}

// expandEnv replaces ${NAME} and ${NAME:-default} in every scalar under
// n, following aliases (into an anchor under a dropped extension key), and
// each node once: seen holds those done, so a value expanded to text with
// "${" in it is not expanded again through another alias.
func expandEnv(n *yaml.Node, seen map[*yaml.Node]bool) error {
	if seen[n] {
		return nil
	}
	seen[n] = true
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return expandEnv(n.Alias, seen)
	}
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		v, err := expandRefs(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		n.Value = v
		// An expanded value is data, not YAML: it stays one scalar, and
		// a string unless it reads as a number or a boolean, so that
		// `workers: ${WORKERS}` fills an integer (yaml.v3 refuses a
		// !!str there); a string field takes the text as it is either
		// way. An explicit tag (!!str ${X}) is kept.
		if n.Style&yaml.TaggedStyle == 0 && (n.Tag == "" || n.Tag == "!!str") {
			n.Tag = expandedTag(n.Value)
		}
	}
	for _, c := range n.Content {
		if err := expandEnv(c, seen); err != nil {
			return err
		}
	}
	return nil
}

// expandRefs replaces each ${NAME} and ${NAME:-default} in v, the default
// holding references of its own if need be. Only those
// forms: os.Expand also took $NAME and $1 (mangling a password with a $ in
// it) and silently dropped a "${" without its "}", leaving the variable's
// name as the value.
func expandRefs(v string) (string, error) {
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			break
		}
		b.WriteString(v[:i])
		end := closingBrace(v[i+2:])
		if end < 0 {
			return "", fmt.Errorf("%q: ${ without its closing }", v[i:])
		}
		ref := v[i+2 : i+2+end]
		v = v[i+2+end+1:]
		name, def, hasDef := strings.Cut(ref, ":-")
		if name == "" || strings.Contains(name, "${") {
			return "", fmt.Errorf("${%s} names no environment variable", ref)
		}
		if val, ok := os.LookupEnv(name); ok {
			b.WriteString(val)
		} else if hasDef {
			// A default is a value of its own: ${A:-${B}} is B's
			// value, as in a shell, not the text "${B}".
			d, err := expandRefs(def)
			if err != nil {
				return "", err
			}
			b.WriteString(d)
		} else {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		// What to do about it: systemd units and containers start weir
		// without the login shell's variables.
		return "", fmt.Errorf("environment variable %s is not set (set it in weir's environment, e.g. a systemd EnvironmentFile, or give a default: ${%s:-value})",
			strings.Join(missing, ", "), missing[0])
	}
	return b.String(), nil
}

// closingBrace is the index in s of the } that closes a reference
// whose ${ is just before s, past those of references nested in it; -1
// if there is none.
func closingBrace(s string) int {
	depth := 1
	for j := 0; j < len(s); j++ {
		switch {
		case strings.HasPrefix(s[j:], "${"):
			depth++
			j++
		case s[j] == '}':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// expandedTag is the tag YAML gives v written as a plain scalar, if that
// is a number or a boolean; else !!str (a null, "" or "~", stays a string,
// as does anything that is not one plain scalar).
func expandedTag(v string) string {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(v), &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return "!!str"
	}
	if s := doc.Content[0]; s.Kind == yaml.ScalarNode && s.Style == 0 && s.Value == v {
		switch s.Tag {
		case "!!int", "!!float", "!!bool":
			return s.Tag
		}
	}
	return "!!str"
}

// validate checks what single fields cannot check alone.
func (c *Config) validate(root *yaml.Node) error {
	var errs []string
	add := func(path, format string, args ...any) {
		line := lineOf(root, path)
		msg := fmt.Sprintf(format, args...)
		if line > 0 {
			errs = append(errs, fmt.Sprintf("line %d: %s: %s", line, path, msg))
		} else {
			errs = append(errs, fmt.Sprintf("%s: %s", path, msg))
		}
	}
	if c.DataDir == "" {
		add("data_dir", "must not be empty")
	}
	// Set to nothing (an environment variable that is empty, most
	// likely): "off" is how to turn a listener off.
	if c.HTTP.Listen == "" {
		add("http.listen", `is empty; write "off" to turn the HTTP listener off`)
	}
	if c.Broker.KafkaListen == "" {
		add("broker.kafka_listen", `is empty; write "off" to turn the Kafka listener off`)
	}
	if c.Broker.DefaultPartitions < 1 || c.Broker.DefaultPartitions > 10000 {
		add("broker.default_partitions", "must be between 1 and 10000, not %d", c.Broker.DefaultPartitions)
	}
	if c.Broker.Flush.Policy == "interval" && c.Broker.Flush.Interval <= 0 {
		add("broker.flush.interval", "must be positive with the interval policy")
	}
	if c.Broker.Segment.Bytes < broker.MinSegmentBytes || c.Broker.Segment.Bytes > broker.MaxSegmentBytes {
		add("broker.segment.bytes", "must be between 64KiB and 2GiB")
	}
	// Any negative retention.time but -1 is more likely a slip ("-5d")
	// than keep for ever.
	checkRetention := func(path string, r Retention, sg Segment) {
		if r.Time < 0 && !RetainForever(r.Time.Std()) {
			add(path+".retention.time", "must be positive, or -1 to keep records for ever (0: the default)")
		}
		if r.Bytes < 0 && r.Bytes != -1 {
			add(path+".retention.bytes", "must be positive, or -1 for no size bound (0: the default)")
		}
		if sg.Age < 0 {
			add(path+".segment.age", "must not be negative (0: the default)")
		}
	}
	checkRetention("broker", c.Broker.Retention, c.Broker.Segment)
	for _, name := range slices.Sorted(maps.Keys(c.Broker.Topics)) {
		t := c.Broker.Topics[name]
		checkRetention("broker.topics."+name, t.Retention, t.Segment)
	}
	if c.Broker.OffsetsRetention < 0 && c.Broker.OffsetsRetention != -1 {
		add("broker.offsets_retention", "must be positive, or -1 to keep offsets for ever")
	}
	if c.Broker.MaxConnections < 0 {
		add("broker.max_connections", "must not be negative")
	}
	if c.Broker.MaxPartitions < 0 {
		add("broker.max_partitions", "must not be negative")
	}
	if c.Broker.MaxConnectionsPerIP < 0 {
		add("broker.max_connections_per_ip", "must not be negative")
	}
	validatePerIPOverrides(add, "broker.max_connections_per_ip_overrides", c.Broker.MaxConnectionsPerIPOverrides)
	if c.Broker.MaxMessageBytes < 1024 || c.Broker.MaxMessageBytes > 1<<30 {
		// A batch's length is 32 bits in Kafka's format, and Kafka
		// clients (franz-go) cap batches at 1GiB.
		add("broker.max_message_bytes", "must be between 1KiB and 1GiB")
	}
	if c.Broker.RequestTimeout < 0 {
		add("broker.request_timeout", "must not be negative")
	}
	if b := c.Broker.MaxBufferedBytes; b != 0 && b < c.Broker.MaxMessageBytes+1<<20 {
		add("broker.max_buffered_bytes", "must be at least max_message_bytes plus 1MiB, so that one request of the largest size fits")
	}
	for name, t := range c.Broker.Topics {
		if !validTopic(name) {
			add("broker.topics."+name, "invalid topic name (letters, digits, '.', '_', '-'; at most 249)")
		}
		if t.Partitions < 0 || t.Partitions > 10000 {
			add("broker.topics."+name+".partitions", "must be between 1 and 10000")
		}
		if t.Segment.Bytes != 0 && (t.Segment.Bytes < broker.MinSegmentBytes || t.Segment.Bytes > broker.MaxSegmentBytes) {
			add("broker.topics."+name+".segment.bytes", "must be between 64KiB and 2GiB")
		}
	}
	c.Broker.validateListenerSecurity(add)
	if k := c.Broker.Kafka; len(k.Brokers) == 0 {
		// Without brokers weir runs on its embedded log: a tls or sasl
		// block left without them would be ignored, and weir would not
		// be where (or as secured as) its operator thinks.
		if k.TLS != nil || k.SASL != nil {
			add("broker.kafka.brokers", "is required with broker.kafka.tls and sasl; without it weir runs on its embedded log and ignores them")
		}
	} else {
		for i, b := range k.Brokers {
			if why := brokerError(b); why != "" {
				add(fmt.Sprintf("broker.kafka.brokers[%d]", i), "%s", why)
			}
		}
		if k.SASL != nil {
			switch k.SASL.Mechanism {
			case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
			default:
				add("broker.kafka.sasl.mechanism", "must be %s, not %q", saslMechanisms, k.SASL.Mechanism)
			}
			if k.SASL.Username == "" {
				add("broker.kafka.sasl.username", "is required with sasl")
			}
			// franz-go refuses to authenticate without one: every
			// connection would fail, retried for as long as weir runs.
			if k.SASL.Password == "" {
				add("broker.kafka.sasl.password", "is required with sasl")
			}
		}
		if k.TLS != nil && (k.TLS.CertFile == "") != (k.TLS.KeyFile == "") {
			add("broker.kafka.tls", "cert_file and key_file go together")
		}
		if k.ReplicationFactor < -1 {
			add("broker.kafka.replication_factor", "must be positive or -1 (the cluster's default)")
		}
	}
	c.Syslog.validate(add)
	c.Enrich.validate(add)
	c.validateCluster(add)
	c.validateListeners(add)
	sinkNames, filePaths := map[string]bool{}, map[string]string{}
	for i, s := range c.Sinks {
		at := fmt.Sprintf("sinks[%d]", i)
		if s.Name != "" && sinkNames[s.Name] {
			add(at, "two sinks are named %q; each needs its own name (it names the consumer group sink-<name>)", s.Name)
		}
		sinkNames[s.Name] = true
		if loop := c.kafkaSinkLoop(s); loop != "" {
			add(at, "%s", loop)
		}
		if s.Type == "file" && s.Path != "" {
			for _, p := range s.FilePaths() {
				if other, ok := filePaths[p]; ok && other != s.Name {
					add(at, "file sinks %q and %q both write %s; their rotations would clobber each other", other, s.Name, p)
				}
				filePaths[p] = s.Name
			}
		}
	}
	c.defaultStaleness(add)
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		add("log.level", "must be debug, info, warn or error, not %q", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		add("log.format", "must be text or json, not %q", c.Log.Format)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

func validTopic(name string) bool {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// lineOf finds the line of a dotted key path in the document, 0 if absent;
// that of the nearest key written if only some of the path is.
func lineOf(root *yaml.Node, path string) int {
	line, _ := findLine(root, path)
	return line
}

// findLine is lineOf, and whether the whole path is written.
func findLine(root *yaml.Node, path string) (int, bool) {
	return yamlerr.LineOf(root, splitPath(path))
}

// validatePerIPOverrides checks a max_connections_per_ip_overrides map at
// path: IP addresses, each once, to at least one connection.
func validatePerIPOverrides(add func(path, format string, args ...any), path string, m map[string]int) {
	seen := map[netip.Addr]string{}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		kpath := path + "." + key
		ip, err := netip.ParseAddr(key)
		if err != nil || ip.Zone() != "" {
			// Kafka takes host names too, resolved once at start;
			// weir does not guess what a name will resolve to.
			add(kpath, `must be an IP address, such as "10.0.0.5"`)
			continue
		}
		if prev, ok := seen[ip.Unmap()]; ok {
			add(kpath, "the same address as %s", prev)
		}
		seen[ip.Unmap()] = key
		if m[key] < 1 {
			add(kpath, "must be at least 1")
		}
	}
}

// PerIPOverrides returns a validated max_connections_per_ip_overrides map
// by address, IPv4-mapped addresses as IPv4; nil for none.
func PerIPOverrides(m map[string]int) map[netip.Addr]int {
	if len(m) == 0 {
		return nil
	}
	out := make(map[netip.Addr]int, len(m))
	for k, v := range m {
		if ip, err := netip.ParseAddr(k); err == nil {
			out[ip.Unmap()] = v
		}
	}
	return out
}

// splitPath splits "broker.topics.raw.syslog.partitions" knowing that topic
// names contain dots: the part after "topics." up to the last known field;
// and "broker.max_connections_per_ip_overrides.10.0.0.5" knowing that
// addresses do.
func splitPath(path string) []string {
	if rest, ok := strings.CutPrefix(path, "broker.topics."); ok {
		for _, field := range []string{".partitions", ".retention", ".segment"} {
			if i := strings.Index(rest, field); i >= 0 {
				return append([]string{"broker", "topics", rest[:i]}, strings.Split(rest[i+1:], ".")...)
			}
		}
		return []string{"broker", "topics", rest}
	}
	// Addresses contain dots (and IPv6 ones colons) too.
	const overrides = ".max_connections_per_ip_overrides."
	if i := strings.Index(path, overrides); i >= 0 {
		return append(strings.Split(path[:i], "."), overrides[1:len(overrides)-1], path[i+len(overrides):])
	}
	return strings.Split(path, ".")
}

// Duration is a time.Duration written as "100ms", "30s", "7d" or "168h".
type Duration time.Duration

// UnmarshalYAML parses a duration; a "d" suffix means days.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if err := oneValue(n, "duration (like 30s, 12h, 7d)"); err != nil {
		return err
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return yamlerr.NewValueError(n, "%v", err)
	}
	*d = Duration(v)
	return nil
}

// oneValue refuses a list or a map where one value (what) goes: read as
// "", `listen: [a:1]` was the default address.
func oneValue(n *yaml.Node, what string) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return nil
	case yaml.SequenceNode:
		return yamlerr.NewValueError(n, "want one %s, not a list", what)
	case yaml.MappingNode:
		return yamlerr.NewValueError(n, "want one %s, not a map", what)
	}
	return yamlerr.NewValueError(n, "want one %s", what)
}

// ParseDuration parses "500ms", "30s", "12h", "7d" and "-1" (forever).
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "-1" {
		return -1, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if v, err := strconv.ParseFloat(days, 64); err == nil {
			// Past about 292 years (and NaN, Inf) a conversion to
			// int64 wraps to its most negative value.
			ns := v * float64(24*time.Hour)
			if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
				return 0, fmt.Errorf("%q is out of range (at most 106751d)", s)
			}
			return time.Duration(ns), nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		// Only a value that parses is suggested: not "infs" for inf,
		// nor "1e3s" (no exponents in a duration).
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			if _, derr := time.ParseDuration(s + "s"); derr == nil {
				// Every unit, not a guess: "7" is 7d for a retention,
				// "30" is 30s for an interval.
				return 0, fmt.Errorf("%q is not a duration: a number needs a unit: %q, %q, %q or %q", s, s+"s", s+"m", s+"h", s+"d")
			}
		}
		return 0, fmt.Errorf("%q is not a duration (like 500ms, 30s, 12h, 7d)", s)
	}
	return v, nil
}

// Std returns the time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// ByteSize is a size written as 1048576, "512KiB", "256MiB", "1GiB" or "1GB".
type ByteSize int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
}

// UnmarshalYAML parses a size with an optional unit.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if err := oneValue(n, "size (like 512KiB, 1GiB)"); err != nil {
		return err
	}
	v, err := ParseByteSize(n.Value)
	if err != nil {
		return yamlerr.NewValueError(n, "%v", err)
	}
	*b = ByteSize(v)
	return nil
}

// sizeString writes b in the largest binary unit that holds it whole
// ("64MiB", "1536KiB"), else in bytes ("1000"), as a config may write it.
func sizeString(b ByteSize) string {
	for _, u := range []struct {
		suffix string
		mult   ByteSize
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && b%u.mult == 0 {
			return strconv.FormatInt(int64(b/u.mult), 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// ParseByteSize parses "256MiB", "1GB", "4096" and "-1" (unbounded).
func ParseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	num, unit := s, false
	for _, u := range sizeUnits {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult, unit = strings.TrimSpace(v), u.mult, true
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	// Only a bare -1 means unbounded: "-1GiB" is a typo, not "for ever".
	if err != nil || (f < 0 && (f != -1 || unit)) {
		for _, u := range sizeUnits {
			// 10mb, 10 mib, 10kB: the units are case-sensitive. Only
			// a size that parses is suggested (not -5MB, infMB).
			if i := len(s) - len(u.suffix); i > 0 && s[i:] != u.suffix && strings.EqualFold(s[i:], u.suffix) {
				if fix := strings.TrimSpace(s[:i]) + u.suffix; validSize(fix) {
					return 0, fmt.Errorf("%q is not a size: units are written %s (did you mean %q?)", s, u.suffix, fix)
				}
			}
		}
		return 0, fmt.Errorf("%q is not a size (like 4096, 512KiB, 256MiB, 1GiB, or -1)", s)
	}
	if f == -1 {
		return -1, nil
	}
	// NaN, Inf and sizes past 2^63 would wrap to a negative int64.
	if n := f * float64(mult); math.IsNaN(n) || n >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is out of range (at most 8EiB)", s)
	}
	return int64(f * float64(mult)), nil
}

// validSize reports whether ParseByteSize takes s.
func validSize(s string) bool {
	_, err := ParseByteSize(s)
	return err == nil
}

// FlushPolicy is "interval" or "always".
type FlushPolicy string

// UnmarshalYAML accepts the two policies.
func (p *FlushPolicy) UnmarshalYAML(n *yaml.Node) error {
	switch n.Value {
	case "interval", "always":
		*p = FlushPolicy(n.Value)
		return nil
	}
	return yamlerr.NewValueError(n, "must be interval or always, not %q", n.Value)
}

// Codec is a compression codec by its Kafka name (compression.type), or
// "none".
type Codec string

// Codecs are the codecs a Codec may name.
var Codecs = []string{"none", "snappy", "lz4", "zstd", "gzip"}

// UnmarshalYAML accepts the codecs.
func (c *Codec) UnmarshalYAML(n *yaml.Node) error {
	if !slices.Contains(Codecs, n.Value) {
		return yamlerr.NewValueError(n, "must be one of %s, not %q", strings.Join(Codecs, ", "), n.Value)
	}
	*c = Codec(n.Value)
	return nil
}

// Address is a host:port, or "off".
type Address string

// UnmarshalYAML checks the host:port form.
func (a *Address) UnmarshalYAML(n *yaml.Node) error {
	if err := oneValue(n, `host:port (or "off")`); err != nil {
		return err
	}
	v, err := ParseAddress(n.Value)
	if err != nil {
		return yamlerr.NewValueError(n, "%v", err)
	}
	*a = v
	return nil
}

// ParseAddress checks the host:port form of s ("off" and "" pass), for a
// flag that sets an address as the config file does.
func ParseAddress(s string) (Address, error) {
	if s == "off" || s == "" {
		return Address(s), nil
	}
	if _, port, err := net.SplitHostPort(s); err != nil {
		if hint := bracketsHint(s); hint != "" {
			return "", fmt.Errorf("%q is not host:port%s", s, hint)
		}
		return "", fmt.Errorf("%q is not host:port: %v", s, err)
	} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("%q has an invalid port", s)
	}
	return Address(s), nil
}

// bracketsHint says how to write hp, not host:port, if it is an IPv6
// address and a port without the brackets host:port needs around the
// address ("::1:8080": "[::1]:8080"); else "".
func bracketsHint(hp string) string {
	i := strings.LastIndexByte(hp, ':')
	if i < 0 || strings.ContainsAny(hp, "[]") {
		return ""
	}
	ip, err := netip.ParseAddr(hp[:i])
	if p, perr := strconv.Atoi(hp[i+1:]); err != nil || !ip.Is6() || perr != nil || p < 0 || p > 65535 {
		return ""
	}
	return fmt.Sprintf(": an IPv6 address goes in brackets, as %q", "["+hp[:i]+"]:"+hp[i+1:])
}

// KafkaSinkLoops describes the kafka sinks that would mirror topics into
// themselves on weir's own broker (see kafkaSinkLoop); the config check
// refuses them, and `weir run` checks again once its flags (--kafka-listen)
// have changed the broker.
func (c *Config) KafkaSinkLoops() []string {
	var out []string
	for _, s := range c.Sinks {
		if loop := c.kafkaSinkLoop(s); loop != "" {
			out = append(out, loop)
		}
	}
	return out
}

// kafkaSinkLoop is why s, a kafka sink without topic_prefix writing to
// weir's own broker, would read every record it writes and mirror it again
// for ever; "" for any other sink.
func (c *Config) kafkaSinkLoop(s Sink) string {
	if s.Type != "kafka" || s.TopicPrefix != "" || len(s.Topics) == 0 {
		return ""
	}
	addr, ok := c.ownBroker(s.Brokers)
	if !ok {
		return ""
	}
	return fmt.Sprintf("sink %q writes topic %s back to weir's own broker (%s), where it reads it: every record would be mirrored again, for ever; set topic_prefix, or point brokers at another cluster",
		s.Name, s.Topics[0], addr)
}

// ownBroker reports whether one of brokers (a kafka sink's) is weir's own
// broker: one of broker.kafka's, or else the embedded log's Kafka
// listener. Ports compare as numbers ("09092" is 9092). A listener on a
// specific address is reached by that address, or by localhost when it is
// a loopback one; a listener on the unspecified address also by any
// loopback address and by this host's interface addresses.
func (c *Config) ownBroker(brokers []string) (string, bool) {
	for _, b := range brokers {
		bh, bp := splitBroker(b)
		if len(c.Broker.Kafka.Brokers) > 0 {
			for _, o := range c.Broker.Kafka.Brokers {
				if oh, op := splitBroker(o); oh == bh && op == bp {
					return b, true
				}
			}
			continue
		}
		if !c.Broker.KafkaListen.Enabled() {
			continue
		}
		lh, lp := splitBroker(string(c.Broker.KafkaListen))
		if lp == bp && listenerReachedAs(lh, bh) {
			return b, true
		}
	}
	return "", false
}

// splitBroker is a broker address's host, lower case without a trailing
// dot, and its port as a number, both as the kafka sink's client
// (franz-go) dials them: without a port, or as a bare IPv6 literal, it is
// Kafka's 9092; "+9092" and "09092" are 9092.
func splitBroker(hp string) (string, string) {
	hp = strings.TrimSpace(hp)
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		h, p = hp, "9092"
		if inner, ok := strings.CutPrefix(hp, "["); ok && strings.HasSuffix(inner, "]") {
			h = strings.TrimSuffix(inner, "]")
		}
	}
	if n, err := strconv.ParseInt(p, 10, 32); err == nil {
		p = strconv.FormatInt(n, 10)
	}
	return strings.ToLower(strings.TrimSuffix(h, ".")), p
}

// brokerError says what is wrong with a broker address that the Kafka
// client (franz-go) refuses, or would dial where nothing can answer: weir
// run failed at start, or never connected, after weir check said ok. ""
// if nothing. As franz-go, a host without a port, a bracketed IPv6
// address and a bare IPv6 literal are at Kafka's 9092.
func brokerError(b string) string {
	switch {
	case b == "":
		return "is empty"
	case strings.Contains(b, ","):
		// As WEIR_BROKERS and --brokers write several, e.g. from
		// "${KAFKA_BROKERS}": the client would look the whole up as
		// one host name.
		return fmt.Sprintf("%q is one broker per item: list each as its own item", b)
	}
	if strings.ContainsFunc(b, unicode.IsSpace) {
		return fmt.Sprintf("%q has white space", b)
	}
	h, p, err := net.SplitHostPort(b)
	if err != nil {
		inner, bracketed := strings.CutPrefix(b, "[")
		inner, closed := strings.CutSuffix(inner, "]")
		switch {
		case bracketed && closed && inner != "" && !strings.ContainsAny(inner, "[]"),
			!bracketed && b != "" && !strings.ContainsAny(b, ":[]"):
			return ""
		case !bracketed && !strings.ContainsAny(b, "[]"):
			// A bare IPv6 literal; a bracket in its zone ("0::%]")
			// would be dialled as "[0::%]]:9092", which splits no more.
			if _, err := netip.ParseAddr(b); err == nil {
				return ""
			}
		}
		return fmt.Sprintf("%q is not host:port", b)
	}
	if h == "" {
		return fmt.Sprintf("%q names no host", b)
	}
	if n, err := strconv.ParseInt(p, 10, 32); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("%q has an invalid port", b)
	}
	return ""
}

// listenerReachedAs reports whether a client dialling host reaches a
// listener bound to listen (both as splitBroker gives them).
func listenerReachedAs(listen, host string) bool {
	if listen == host {
		return true
	}
	lip, hip := net.ParseIP(listen), net.ParseIP(host)
	// A dial to the unspecified address is one to loopback, of its family.
	if hip != nil && hip.IsUnspecified() {
		if hip = net.IPv6loopback; net.ParseIP(host).To4() != nil {
			hip = net.IPv4(127, 0, 0, 1)
		}
		host = hip.String()
	}
	if lip != nil && hip != nil && lip.Equal(hip) {
		return true
	}
	// Go listens on 0.0.0.0 as on "::" and "": both families.
	if listen == "" || lip != nil && lip.IsUnspecified() {
		if host == "localhost" || hip != nil && hip.IsLoopback() {
			return true
		}
		return hip != nil && isInterfaceAddress(hip)
	}
	// localhost is 127.0.0.1 or ::1, whichever the client's resolver picks.
	if host == "localhost" {
		return lip != nil && (lip.Equal(net.IPv4(127, 0, 0, 1)) || lip.Equal(net.IPv6loopback))
	}
	if listen == "localhost" {
		return hip != nil && (hip.Equal(net.IPv4(127, 0, 0, 1)) || hip.Equal(net.IPv6loopback))
	}
	return false
}

// isInterfaceAddress reports whether ip is one of this host's addresses.
func isInterfaceAddress(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Enabled reports whether the address is set and not "off".
func (a Address) Enabled() bool { return a != "" && a != "off" }

// withFile turns "line N: msg" lines into "FILE:N: msg", the form editors
// and CI annotate.
func withFile(path string, err error) error {
	return &Error{File: path, Msg: yamlerr.WithFile(path, err.Error())}
}

// Error is a config error; Msg holds one "FILE:LINE: reason" per line.
type Error struct {
	File string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
