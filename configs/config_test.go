package configs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultsWithEmptyFile(t *testing.T) {
	cfg, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "./weir-data" || cfg.Broker.KafkaListen != "127.0.0.1:9092" || cfg.HTTP.Listen != "127.0.0.1:8080" {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestShippedConfigLoads(t *testing.T) {
	if _, err := Load("weir.yaml"); err != nil {
		t.Fatal(err)
	}
}

func TestParseValues(t *testing.T) {
	t.Setenv("WEIR_TEST_DIR", "/var/lib/weir")
	cfg, err := Parse([]byte(`
data_dir: ${WEIR_TEST_DIR}
broker:
  kafka_listen: "0.0.0.0:19092"
  flush: {policy: always}
  retention: {time: 3d, bytes: 512MiB}
  segment: {bytes: 64MiB}
  topics:
    raw.syslog: {partitions: 12, retention: {time: 12h}}
enrich: {warmup: 0s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "/var/lib/weir" {
		t.Errorf("env: %q", cfg.DataDir)
	}
	if cfg.Broker.Retention.Time.Std() != 72*time.Hour || cfg.Broker.Retention.Bytes != 512<<20 {
		t.Errorf("retention: %+v", cfg.Broker.Retention)
	}
	if cfg.Broker.Flush.Policy != "always" || cfg.Broker.Flush.Interval.Std() != 100*time.Millisecond {
		t.Errorf("flush: %+v", cfg.Broker.Flush)
	}
	if tc := cfg.Broker.Topics["raw.syslog"]; tc.Partitions != 12 || tc.Retention.Time.Std() != 12*time.Hour {
		t.Errorf("topic: %+v", tc)
	}
	if w := cfg.Enrich.Warmup; w == nil || *w != 0 {
		t.Errorf("enrich.warmup: %v, want set to 0 (off)", w)
	}
}

func TestErrorsNameFileLineAndReason(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"data_dir: x\nbrokr: {}\n", "cfg.yaml:2: field brokr: unknown key in the top level"},
		{"broker:\n  flush:\n    polcy: always\n", "cfg.yaml:3: field polcy: unknown key in broker.flush"},
		{"broker:\n  flush: {policy: sometimes}\n", "cfg.yaml:2: broker.flush.policy: must be interval or always, not \"sometimes\""},
		{"broker:\n  compression: brotli\n", "cfg.yaml:2: broker.compression: must be one of none, snappy, lz4, zstd, gzip, not \"brotli\""},
		{"broker:\n  retention:\n    bytes: lots\n", `cfg.yaml:3: broker.retention.bytes: "lots" is not a size`},
		{"broker:\n  retention:\n    time: soon\n", `cfg.yaml:3: broker.retention.time: "soon" is not a duration`},
		{"broker:\n  default_partitions: 0\n", "cfg.yaml:2: broker.default_partitions: must be between 1 and 10000"},
		{"broker:\n  max_connections: -1\n", "cfg.yaml:2: broker.max_connections: must not be negative"},
		{"broker:\n  max_partitions: -1\n", "cfg.yaml:2: broker.max_partitions: must not be negative"},
		{"broker:\n  max_connections_per_ip: -1\n", "cfg.yaml:2: broker.max_connections_per_ip: must not be negative"},
		{"broker:\n  max_connections_per_ip_overrides:\n    host.example: 5\n", `cfg.yaml:3: broker.max_connections_per_ip_overrides.host.example: must be an IP address, such as "10.0.0.5"`},
		{"broker:\n  max_connections_per_ip_overrides:\n    10.0.0.5: 0\n", "cfg.yaml:3: broker.max_connections_per_ip_overrides.10.0.0.5: must be at least 1"},
		{"broker:\n  max_connections_per_ip_overrides:\n    10.0.0.5: 1\n    \"::ffff:10.0.0.5\": 2\n", "broker.max_connections_per_ip_overrides.::ffff:10.0.0.5: the same address as 10.0.0.5"},
		{"broker:\n  offsets_retention: -2h\n", "cfg.yaml:2: broker.offsets_retention: must be positive, or -1"},
		{"http:\n  listen: \"\"\n", `cfg.yaml:2: http.listen: is empty; write "off"`},
		// An empty list ran the default listeners: what was meant is none.
		{"syslog:\n  listeners: []\n", "cfg.yaml:2: syslog.listeners: is empty; list listeners, or write syslog.enabled: false to run none"},
		// Every message was cut to 64 bytes (64KiB meant), every
		// octet-counted frame dropped.
		{"syslog:\n  listeners:\n    - {protocol: tcp, address: \"127.0.0.1:1\", max_message_size: 64}\n", "cfg.yaml:3: syslog.listeners[0].max_message_size: must be between 480 bytes (what RFC 5424 requires receivers to accept) and 1MiB, not 64"},
		// Every message was refused by the broker at run time, dropped.
		{"syslog:\n  topic: \"raw syslog\"\n", `cfg.yaml:2: syslog.topic: invalid topic name "raw syslog"`},
		{"broker:\n  max_message_bytes: 4GiB\n", "cfg.yaml:2: broker.max_message_bytes: must be between 1KiB and 1GiB"},
		{"sinks:\n  - {type: prometheus, name: p, listen: \"0.0.0.0:8080\", topics: [x]}\n", "cfg.yaml:2: sinks[0].listen: http.listen and sinks[0].listen both listen on tcp port 8080"},
		// Go listens on localhost's 127.0.0.1: the run failed with
		// "address already in use" after the check passed.
		{"http: {listen: \"127.0.0.1:9273\"}\nsinks:\n  - {type: prometheus, name: p, listen: \"localhost:9273\", topics: [x]}\n", "cfg.yaml:3: sinks[0].listen: http.listen and sinks[0].listen both listen on tcp port 9273"},
		{"syslog:\n  listeners:\n    - {protocol: tcp, address: \"127.0.0.1:5514\"}\n    - {protocol: tls, address: \":5514\", cert_file: a, key_file: b}\n", "syslog.listeners[0] and syslog.listeners[1] both listen on tcp port 5514"},
		{"snmp:\n  traps: {listen: \"127.0.0.1:5514\"}\nsyslog:\n  listeners:\n    - {protocol: udp, address: \"0.0.0.0:5514\"}\n", "syslog.listeners[0] and snmp.traps.listen both listen on udp port 5514"},
		{"snmp:\n  traps: {listen: \"127.0.0.1:5514\"}\n", "syslog (default listener) and snmp.traps.listen both listen on udp port 5514"},
		{"syslog:\n  listeners:\n    - {protocol: tcp, address: \"127.0.0.1:1\", read_buffer: 8MiB}\n", "syslog.listeners[0]: readers and read_buffer apply to udp listeners only"},
		{"syslog:\n  listeners:\n    - {protocol: tcp, address: \"127.0.0.1:1\", client_ca_file: ca.pem}\n", "syslog.listeners[0]: cert_file, key_file and client_ca_file apply to tls listeners only"},
		{"syslog:\n  listeners:\n    - {protocol: udp, address: \"127.0.0.1:1\", max_connections: 10}\n", "syslog.listeners[0]: max_connections, max_connections_per_ip(_overrides) and idle_timeout apply to tcp and tls listeners only"},
		{"syslog:\n  listeners:\n    - {protocol: udp, address: \"127.0.0.1:1\", max_connections_per_ip: 10}\n", "syslog.listeners[0]: max_connections, max_connections_per_ip(_overrides) and idle_timeout apply to tcp and tls listeners only"},
		{"syslog:\n  listeners:\n    - protocol: tcp\n      address: \"127.0.0.1:1\"\n      max_connections_per_ip: -2\n", "cfg.yaml:5: syslog.listeners[0].max_connections_per_ip: must not be negative"},
		{"syslog:\n  listeners:\n    - protocol: tcp\n      address: \"127.0.0.1:1\"\n      max_connections_per_ip_overrides:\n        relay.example: 5\n", `cfg.yaml:6: syslog.listeners[0].max_connections_per_ip_overrides.relay.example: must be an IP address, such as "10.0.0.5"`},
		{"broker:\n  topics:\n    events: {segment: {age: -1h}}\n", "cfg.yaml:3: broker.topics.events.segment.age: must not be negative"},
		// broker.kafka settings that cannot work, or that would be
		// ignored.
		{"broker:\n  kafka:\n    brokers: [\"k:9093\"]\n    sasl: {mechanism: SCRAM-SHA-512, password: x}\n", "cfg.yaml:4: broker.kafka.sasl.username: is required"},
		// franz-go refuses to authenticate with an empty password:
		// weir run retried the connection for ever.
		{"broker:\n  kafka:\n    brokers: [\"k:9093\"]\n    sasl: {mechanism: SCRAM-SHA-512, username: weir}\n", "cfg.yaml:4: broker.kafka.sasl.password: is required"},
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"k:9093\"], topics: [events], sasl: {mechanism: PLAIN, username: weir}}\n", `cfg.yaml:2: sink "k": sasl: password is required with mechanism PLAIN`},
		{"broker:\n  kafka:\n    brokers: [\"k:9093\"]\n    tls: {cert_file: c.pem}\n", "cfg.yaml:4: broker.kafka.tls: cert_file and key_file go together"},
		{"broker:\n  kafka:\n    tls: {ca_file: ca.pem}\n    sasl: {mechanism: PLAIN, username: u, password: p}\n", "cfg.yaml:2: broker.kafka.brokers: is required with broker.kafka.tls and sasl"},
		{"broker:\n  kafka_listen: nowhere\n", `cfg.yaml:2: broker.kafka_listen: "nowhere" is not host:port`},
		// Addresses the client can never dial: weir run retried them
		// for ever. One item of several joined by commas is how
		// WEIR_BROKERS and --brokers write them, not the file.
		{"broker:\n  kafka:\n    brokers: [\"k1:9092,k2:9092\"]\n", `cfg.yaml:3: broker.kafka.brokers[0]: "k1:9092,k2:9092" is one broker per item: list each as its own item`},
		{"broker:\n  kafka:\n    brokers: [\"k1:9092\", \"127.0.0.1:99999\"]\n", `cfg.yaml:3: broker.kafka.brokers[1]: "127.0.0.1:99999" has an invalid port`},
		{"broker:\n  kafka:\n    brokers: [\"k1:kafka\"]\n", `cfg.yaml:3: broker.kafka.brokers[0]: "k1:kafka" has an invalid port`},
		{"broker:\n  kafka:\n    brokers: [\"k1 :9092\"]\n", `cfg.yaml:3: broker.kafka.brokers[0]: "k1 :9092" has white space`},
		{"broker:\n  kafka:\n    brokers: [\"\"]\n", `cfg.yaml:3: broker.kafka.brokers[0]: is empty`},
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"k1:9092,k2:9092\"], topics: [events]}\n", `cfg.yaml:2: sink "k": brokers: "k1:9092,k2:9092" is one broker per item`},
		{"data_dir: ${WEIR_SURELY_UNSET_VAR}\n", "cfg.yaml:1: environment variable WEIR_SURELY_UNSET_VAR is not set (set it in weir's environment, e.g. a systemd EnvironmentFile, or give a default: ${WEIR_SURELY_UNSET_VAR:-value})"},
		{"broker:\n  default_partitions: many\n", "cfg.yaml:2: broker.default_partitions: cannot unmarshal !!str `many`"},
		{"snmp:\n  targets:\n    - {name: a, address: 10.0.0.1, retries: six}\n", "cfg.yaml:3: snmp.targets[0].retries: cannot unmarshal !!str `six`"},
		{"sinks:\n  - {type: file, name: f, path: /tmp/x, topics: events}\n", "cfg.yaml:2: sinks[0].topics: cannot unmarshal !!str `events` into []string"},
		{"broker:\n  retention: {time: -5d}\n", "cfg.yaml:2: broker.retention.time: must be positive, or -1"},
		{"broker:\n  retention: {time: [7d]}\n", "cfg.yaml:2: broker.retention.time: want one duration (like 30s, 12h, 7d), not a list"},
		{"broker:\n  retention: {bytes: {a: 1}}\n", "cfg.yaml:2: broker.retention.bytes: want one size (like 512KiB, 1GiB), not a map"},
		{"broker:\n\tflush: always\n", "cfg.yaml:2: found character that cannot start any token (a tab on that line: YAML indents with spaces only)"},
		// yaml.v3 numbers this one at the line where the value before
		// the tab starts, which has no tab.
		{"log:\n  level: info\n\tformat: text\n", "cfg.yaml:3: found a tab character that violates indentation (a tab on that line: YAML indents with spaces only)"},
		{"broker:\n  topics:\n    bad/name: {partitions: 1}\n", "cfg.yaml:3: broker.topics.bad/name: invalid topic name"},
		{"broker: [\n", "cfg.yaml"},
		// yaml.v3 numbers a parser error's line from 0: the flow
		// mapping on line 4 was reported on line 3, a blank one, and
		// one on line 1 with no line at all.
		{"data_dir: x\n\n\nbroker: {flush: {policy: always}\n", "cfg.yaml:4: did not find expected ',' or '}'"},
		{"broker: {flush: {policy: always}\n", "cfg.yaml:1: did not find expected ',' or '}'"},
		{"a: 1\nb: [1, 2\nc: 3\n", "cfg.yaml:2: did not find expected ',' or ']'"},
		// A ${...} in a flow mapping must be quoted: its braces end the
		// mapping.
		{"snmp:\n  targets: [{name: a, address: ${WEIR_SURELY_UNSET_VAR}}]\n", "cfg.yaml:2: did not find expected ',' or '}' (quote a ${...} inside {...} or [...]"},
		{"enrich:\n  warmup: -5m\n", "cfg.yaml:2: enrich.warmup: must not be negative"},
		{"enrich:\n  dedup_window: -5s\n", "cfg.yaml:2: enrich.dedup_window: must not be negative"},
		{"enrich:\n  flap: {window: -1m}\n", "cfg.yaml:2: enrich.flap.window: must not be negative"},
		{"enrich:\n  flap:\n    threshold: -7\n", "cfg.yaml:3: enrich.flap.threshold: must be at least 1, or -1"},
		// A type's own UnmarshalYAML does not know its key: the
		// loader finds it by the value quoted.
		{"sinks:\n  - {type: prometheus, name: prom, listen: \"127.0.0.1:99999\", topics: [enriched.metrics]}\n", `cfg.yaml:2: sinks[0].listen: "127.0.0.1:99999" has an invalid port`},
		{"http: {listen: [a]}\n", `cfg.yaml:1: http.listen: want one host:port (or "off"), not a list`},
		// Found by the value's position, not its text: a map inside
		// the map where one value goes, and a value equal to another
		// once trimmed.
		{"broker:\n  retention: {bytes: {a: {b: 1}}}\n", "cfg.yaml:2: broker.retention.bytes: want one size (like 512KiB, 1GiB), not a map"},
		{"broker:\n  retention: {time: \" 7x\", bytes: 7x}\n", `cfg.yaml:2: broker.retention.time: "7x" is not a duration`},
		{"syslog:\n  listeners:\n    - {protocol: udp, address: \"127.0.0.1:514\"}\n    - {protocol: sctp, address: \"127.0.0.1:514\"}\n", "cfg.yaml:4: syslog.listeners[1].protocol: must be udp, tcp or tls"},
	} {
		path := filepath.Join(t.TempDir(), "cfg.yaml")
		os.WriteFile(path, []byte(tc.yaml), 0o644)
		_, err := Load(path)
		if err == nil {
			t.Errorf("%q: no error", tc.yaml)
			continue
		}
		got := strings.ReplaceAll(err.Error(), path, "cfg.yaml")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q:\n got %s\nwant %s", tc.yaml, got, tc.want)
		}
	}
}

func TestEnvDefault(t *testing.T) {
	cfg, err := Parse([]byte("data_dir: ${WEIR_SURELY_UNSET_VAR:-/tmp/w}\n"))
	if err != nil || cfg.DataDir != "/tmp/w" {
		t.Fatalf("%v %q", err, cfg.DataDir)
	}
}

// TestEnvInAnyValue: ${ENV} works in any value, as the README and
// configs/weir.yaml say: in integers and booleans too (written plain, or
// quoted, as a flow mapping needs), not only in strings, durations and
// sizes; and a string that looks like a number or a boolean stays the
// string it was.
func TestEnvInAnyValue(t *testing.T) {
	t.Setenv("WEIR_T_WORKERS", "3")
	t.Setenv("WEIR_T_AUTO", "false")
	t.Setenv("WEIR_T_RETRIES", "2")
	t.Setenv("WEIR_T_PASS", "12345678")
	t.Setenv("WEIR_T_COMMUNITY", "true")
	for _, data := range []string{
		"enrich:\n  workers: ${WEIR_T_WORKERS}\nbroker:\n  auto_create_topics: ${WEIR_T_AUTO}\n" +
			"snmp:\n  defaults:\n    retries: ${WEIR_T_RETRIES}\n    community: ${WEIR_T_COMMUNITY}\n" +
			"  targets:\n    - name: a\n      address: 192.0.2.1\n      version: 3\n" +
			"      v3: {user: u, auth_password: \"${WEIR_T_PASS}\"}\n      tags:\n        rack: ${WEIR_T_WORKERS:-9}\n",
		"enrich: {workers: \"${WEIR_T_WORKERS}\"}\nbroker: {auto_create_topics: \"${WEIR_T_AUTO}\"}\n" +
			"snmp:\n  defaults: {retries: \"${WEIR_T_RETRIES}\", community: \"${WEIR_T_COMMUNITY}\"}\n" +
			"  targets: [{name: a, address: 192.0.2.1, version: 3, v3: {user: u, auth_password: \"${WEIR_T_PASS}\"}, tags: {rack: \"${WEIR_T_WORKERS:-9}\"}}]\n",
	} {
		cfg, err := Parse([]byte(data))
		if err != nil {
			t.Errorf("%s: %v", data, err)
			continue
		}
		if cfg.Enrich.Workers != 3 || cfg.Broker.AutoCreateTopics == nil || *cfg.Broker.AutoCreateTopics {
			t.Errorf("%s: workers %d, auto_create_topics %v", data, cfg.Enrich.Workers, cfg.Broker.AutoCreateTopics)
		}
		if len(cfg.SNMP.Targets) != 1 {
			t.Fatalf("%s: targets %+v", data, cfg.SNMP.Targets)
		}
		tg := cfg.SNMP.Targets[0]
		if tg.Retries != 2 || tg.Community != "true" || tg.V3.AuthPassword != "12345678" || tg.Tags["rack"] != "3" {
			t.Errorf("%s: target %+v", data, tg)
		}
	}
}

// TestUnknownKeyBesideEnvValue: a ${ENV} value where a duration, size,
// address or flush policy goes does not parse before it is expanded, and
// the first pass's strict decode stopped there: every unknown key of the
// file was then taken without a word (broker.flush.polcy: always left
// the interval policy on). So is one beside a value that is wrong: the
// unknown key is reported as well.
func TestUnknownKeyBesideEnvValue(t *testing.T) {
	t.Setenv("WEIR_T_HTTP", "127.0.0.1:8080")
	for _, tc := range []struct{ yaml, want string }{
		{"http:\n  listen: \"${WEIR_T_HTTP}\"\nbroker:\n  flush:\n    polcy: always\n", "line 5: field polcy: unknown key in broker.flush"},
		{"broker:\n  retention: {time: \"${WEIR_T_RET:-7d}\"}\n  flush: {polcy: always}\n", "line 3: field polcy: unknown key in broker.flush"},
		{"log: {levl: debug}\nbroker: {kafka_listen: \"${WEIR_T_KAFKA:-127.0.0.1:9092}\"}\n", "line 1: field levl: unknown key in log (did you mean level?)"},
		{"brokr: {}\nhttp: {listen: \"${WEIR_T_HTTP}\"}\n", "line 1: field brokr: unknown key in the top level"},
		{"http: {listen: \"${WEIR_T_HTTP}\"}\nsinks:\n  - {type: file, name: a, path: /tmp/x, topics: [events], pth: x}\n", "line 3: field pth: unknown key in sink"},
		{"http: {listen: \"1\"}\nlog: {levl: debug}\n", "line 2: field levl: unknown key in log"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// TestUnknownKeyNamesItsSection: the section of an unknown key is named
// by its keys, not by the Go type that holds it ("httpconfig").
func TestUnknownKeyNamesItsSection(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"http: {lsten: x}\n", "line 1: field lsten: unknown key in http (did you mean listen?)"},
		{"log: {levl: x}\n", "line 1: field levl: unknown key in log (did you mean level?)"},
		{"enrich:\n  flap: {treshold: 3}\n", "line 2: field treshold: unknown key in enrich.flap (did you mean threshold?)"},
		{"sinks:\n  - {type: file, name: a, path: /tmp/x, topics: [events], retry: {intial: 1s}}\n", "line 2: field intial: unknown key in a sink's retry (did you mean initial?)"},
		{"syslog:\n  listeners:\n    - {protocol: udp, adress: x}\n", "line 3: field adress: unknown key in a syslog listener (did you mean address?)"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "1KiB": 1024, "256MiB": 256 << 20, "1GiB": 1 << 30, "1GB": 1e9, "-1": -1, "1.5MiB": 3 << 19} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("%s: %d %v", in, got, err)
		}
	}
}

// TestSizeAndDurationOutOfRange: a size or a number of days too large for
// 64 bits, or NaN/Inf, is an error saying so; it used to wrap to the most
// negative int64, which the checks then reported as "must be positive" for
// a positive value ("retention: {time: 200000d}"), or, where no check looks,
// became a negative bound.
func TestSizeAndDurationOutOfRange(t *testing.T) {
	for _, in := range []string{"1e19", "NaN", "Inf", "+Inf", "-Inf", "nanGiB", "1e30GiB", "0x1p70", "9000PB"} {
		if v, err := ParseByteSize(in); err == nil {
			t.Errorf("size %q: %d, want an error", in, v)
		}
	}
	for _, in := range []string{"200000d", "1e300d", "NaNd", "infd", "-Infd", "-200000d"} {
		if v, err := ParseDuration(in); err == nil {
			t.Errorf("duration %q: %v, want an error", in, v)
		}
	}
	// The largest that fit still parse.
	if v, err := ParseDuration("106751d"); err != nil || v <= 0 {
		t.Errorf("106751d: %v %v", v, err)
	}
	// -1 means unbounded only when written bare; "-1GiB" used to read as
	// -1 too, turning a typo into keep-for-ever.
	for _, in := range []string{"-1GiB", "-1B", "-1 KiB", "-1.0MB"} {
		if v, err := ParseByteSize(in); err == nil {
			t.Errorf("size %q: %d, want an error", in, v)
		}
	}
	if v, err := ParseByteSize("8EB"); err == nil {
		t.Errorf("8EB: %v, want an error", v)
	}
	if _, err := Parse([]byte("broker:\n  retention:\n    time: 200000d\n")); err == nil || !strings.Contains(err.Error(), "200000d") {
		t.Errorf("retention 200000d: %v, want an error naming the value", err)
	}
}

// FuzzSizeAndDuration: what ParseByteSize and ParseDuration accept keeps
// the sign it was written with (no wrap past 64 bits), and a duration
// without a "d" is what time.ParseDuration makes of it.
func FuzzSizeAndDuration(f *testing.F) {
	for _, s := range []string{"4096", "1.5MiB", "-1", "7d", "0.5d", "-1d", "30s", "1e19", "NaN", "200000d", " 12 GiB "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		neg := strings.HasPrefix(strings.TrimSpace(s), "-")
		if v, err := ParseByteSize(s); err == nil && (v < -1 || v < 0 && !neg || v == -1 && strings.ContainsAny(s, "KMGTB")) {
			t.Fatalf("size %q = %d", s, v)
		}
		v, err := ParseDuration(s)
		if err != nil {
			return
		}
		if v < 0 && !neg || v > 0 && neg {
			t.Fatalf("duration %q = %v", s, v)
		}
		if std, err := time.ParseDuration(strings.TrimSpace(s)); err == nil && std != v && strings.TrimSpace(s) != "-1" {
			t.Fatalf("duration %q = %v, time.ParseDuration %v", s, v, std)
		}
	})
}

// TestLoadRefusesAFileOfNoSettings: an empty file, or one of comments, is
// refused (a SIGHUP reading one written half way stopped every target);
// a file with any setting, even an empty section, loads.
func TestLoadRefusesAFileOfNoSettings(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		data string
		ok   bool
	}{{"", false}, {"\n  \n", false}, {"# weir\n", false}, {"---\n", false}, {"snmp: {}\n", true}, {"data_dir: /var/lib/weir\n", true}} {
		file := filepath.Join(dir, "weir.yaml")
		os.WriteFile(file, []byte(tc.data), 0o644)
		_, err := Load(file)
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "has no settings") {
			t.Errorf("%q: %v", tc.data, err)
		}
	}
}

// TestSectionOfCommentsIsEmptySection: a section whose keys are all
// commented out is the section with its defaults, as "snmp: {}" is: the
// trap receiver runs with an snmp section, whatever it lists.
func TestSectionOfCommentsIsEmptySection(t *testing.T) {
	empty, err := Parse([]byte("snmp: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	commented, err := Parse([]byte("snmp:\n  # targets:\n  #   - {name: edge1, address: 192.0.2.1}\nsyslog:\ndata_dir:\nsinks:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if commented.SNMP.Traps.Listen != DefaultTrapListen || !reflect.DeepEqual(commented.SNMP, empty.SNMP) {
		t.Fatalf("snmp: with comments only gives %+v, want %+v", commented.SNMP, empty.SNMP)
	}
}

// TestListenersThatDoNotClash: one port on udp and tcp, two hosts on one
// port, and port 0 are no clash.
func TestListenersThatDoNotClash(t *testing.T) {
	for _, y := range []string{
		"syslog:\n  listeners:\n    - {protocol: udp, address: \"127.0.0.1:5514\"}\n    - {protocol: tcp, address: \"127.0.0.1:5514\"}\n",
		"http:\n  listen: 127.0.0.1:9100\nsinks:\n  - {type: prometheus, name: p, listen: \"192.0.2.1:9100\", topics: [x]}\n",
		"http:\n  listen: 127.0.0.1:0\nbroker:\n  kafka_listen: 127.0.0.1:0\n",
		"http:\n  listen: 127.0.0.1:00\nbroker:\n  kafka_listen: 127.0.0.1:00\n",      // port 0 however written
		"broker:\n  kafka_listen: 127.0.0.1:8080\n  kafka: {brokers: [\"k:9092\"]}\n", // no listener on a cluster
	} {
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("%q: %v", y, err)
		}
	}
}

// TestExplicitNullIsNoSection: "snmp: null" or "snmp: ~" (what a template
// renders for a section left out) is no section, as before: only one whose
// keys are all commented out, "snmp:" and nothing, is the empty section.
func TestExplicitNullIsNoSection(t *testing.T) {
	for _, text := range []string{"snmp: null\n", "snmp: ~\n"} {
		cfg, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.SNMP.Traps.Listen != "" {
			t.Errorf("%q starts a trap receiver on %s", text, cfg.SNMP.Traps.Listen)
		}
	}
}

// TestEnvReferenceMalformed: a reference without its closing brace is a
// mistake to report, not text to drop: os.Expand ate the "${" and left
// the variable's name as the value (a password "KAFKA_PASSWORD"), and
// expanded a bare $1 or $name beside a ${...} that it does not document.
func TestEnvReferenceMalformed(t *testing.T) {
	t.Setenv("WEIR_T_USER", "weir")
	for _, tc := range []struct{ yaml, want string }{
		{"data_dir: /tmp/x\nbroker:\n  kafka:\n    brokers: [k:9092]\n    sasl: {mechanism: PLAIN, username: u, password: \"${WEIR_T_PASSWORD\"}\n", "line 5: \"${WEIR_T_PASSWORD\": ${ without its closing }"},
		{"data_dir: \"${}\"\n", "line 1: ${} names no environment variable"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
	// A $ that starts no ${...} is the value's own.
	cfg, err := Parse([]byte("snmp:\n  defaults: {community: \"${WEIR_T_USER}$1x$\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.SNMP.Defaults.Community; got != "weir$1x$" {
		t.Errorf("community %q, want %q", got, "weir$1x$")
	}
}

// TestSecondDocumentRefused: a file of two YAML documents (two files
// concatenated, each starting with ---) had the second one ignored
// without a word, its targets and sinks never run. A leading --- and a
// trailing one are a single document.
func TestSecondDocumentRefused(t *testing.T) {
	_, err := Parse([]byte("data_dir: /tmp/a\n---\nsnmp:\n  targets:\n    - {name: a, address: 192.0.2.1}\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2: ") || !strings.Contains(err.Error(), "second YAML document") {
		t.Errorf("two documents: got %v, want the line of the second --- and why", err)
	}
	for _, data := range []string{"---\ndata_dir: /tmp/a\n", "data_dir: /tmp/a\n---\n", "data_dir: /tmp/a\n...\n", "---\ndata_dir: /tmp/a\n---\n# nothing\n"} {
		if cfg, err := Parse([]byte(data)); err != nil || cfg.DataDir != "/tmp/a" {
			t.Errorf("%q: %v", data, err)
		}
	}
}

// TestLine: the lines of the keys weir run and weir check report after
// Parse; a default (not written) has none.
func TestLine(t *testing.T) {
	c, err := Parse([]byte("data_dir: /x\nhttp:\n  listen: 127.0.0.1:29090\nsinks:\n  - {type: prometheus, name: p, topics: [metrics], listen: 127.0.0.1:29091}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{"data_dir": 1, "http.listen": 3, "sinks[0].listen": 5, "broker.kafka_listen": 0, "sinks[1].listen": 0} {
		if got := c.Line(key); got != want {
			t.Errorf("Line(%q) = %d, want %d", key, got, want)
		}
	}
	if Defaults().Line("data_dir") != 0 {
		t.Error("a default has a line")
	}
}

// TestListWrittenAsMapping: a list written as a mapping (one target, its
// dash forgotten) is refused naming the key, wherever it is: flow style on
// a section's first line left yaml.v3's type error without a key.
func TestListWrittenAsMapping(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"snmp:\n  targets: {name: a}\n", "line 2: snmp.targets: a list is expected, not a mapping"},
		{"snmp:\n  targets:\n    name: a\n", "line 3: snmp.targets: a list is expected, not a mapping"},
		{"sinks: {type: file}\n", "line 1: sinks: a list is expected, not a mapping"},
		{"gnmi:\n  targets:\n    - name: a\n      subscriptions: {path: /a}\n", "line 4: gnmi.targets[0].subscriptions: a list is expected, not a mapping"},
		{"syslog:\n  listeners: {protocol: udp, address: \"127.0.0.1:0\"}\n", "line 2: syslog.listeners: a list is expected, not a mapping"},
		{"http: [a]\n", "line 1: http: a mapping is expected, not a list"},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v\nwant %s", c.yaml, err, c.want)
		}
	}
	// A list that may be one name stays so.
	if _, err := Parse([]byte("snmp:\n  targets:\n    - {name: a, address: \"127.0.0.1:161\", community: public, profiles: if-mib}\n")); err != nil {
		t.Error(err)
	}
}
