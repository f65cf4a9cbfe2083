package configs

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func TestSinksParse(t *testing.T) {
	cfg, err := Parse([]byte(`
sinks:
  - {type: prometheus, name: prom, listen: "127.0.0.1:9273", topics: [enriched.metrics], staleness: 2m}
  - type: influxdb
    name: influx
    url: http://127.0.0.1:8086
    org: net
    bucket: telemetry
    token: secret
    topics: [enriched.metrics]
    batch_size: 1000
    flush_interval: 500ms
    retry: {initial: 50ms, max: 10s}
    filter: {measurements: [if*], tags: {site: ams1}}
  - {type: file, name: archive, path: /tmp/events.jsonl, topics: [events, enriched.syslog], max_size: 10MiB, keep: 3}
  - {type: webhook, name: alerts, url: "http://127.0.0.1:9093/api/v2/alerts", format: alertmanager, topics: [events], start: latest, concurrency: 1}
  - {type: webhook, name: chat, url: "http://127.0.0.1:9094/hook", topics: [events], concurrency: 8}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sinks) != 5 {
		t.Fatalf("sinks: %+v", cfg.Sinks)
	}
	in := cfg.Sinks[1]
	if in.InfluxVersion() != 2 || in.BatchSize != 1000 || in.FlushInterval.Std() != 500*time.Millisecond ||
		in.Retry.Max.Std() != 10*time.Second || in.Filter.Tags["site"] != "ams1" || in.Filter.Measurements[0] != "if*" {
		t.Fatalf("influx: %+v", in)
	}
	if cfg.Sinks[2].MaxSize != 10<<20 || cfg.Sinks[2].Keep == nil || *cfg.Sinks[2].Keep != 3 || cfg.Sinks[2].StartsAtEnd() {
		t.Fatalf("file: %+v", cfg.Sinks[2])
	}
	if !cfg.Sinks[3].StartsAtEnd() {
		t.Fatalf("webhook with start: latest: %+v", cfg.Sinks[3])
	}
	if cfg.Sinks[4].Concurrency != 8 {
		t.Fatalf("webhook with concurrency: 8: %+v", cfg.Sinks[4])
	}
}

func TestSinksErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"sinks:\n  - {type: nope, name: a, topics: [x]}\n", "line 2: sink \"a\": type: must be one of"},
		{"sinks:\n  - type: file\n    name: a\n    topics: [x]\n", "line 2: sink \"a\": path: is required"},
		{"sinks:\n  - type: file\n    name: a\n    path: /tmp/x\n    topics: [x]\n    urll: http://x\n", "line 6: field urll: unknown key in sink"},
		{"sinks:\n  - type: file\n    name: a\n    path: /tmp/x\n    topics: [x]\n    filter: {tagz: {}}\n", "line 6: field tagz: unknown key in a sink's filter"},
		{"sinks:\n  - type: file\n    name: a\n    path: /tmp/x\n    topics: [x]\n    url: http://x\n", "line 6: sink \"a\": url: does not apply to type file"},
		{"sinks:\n  - type: influxdb\n    name: a\n    url: ftp://x\n    database: d\n    topics: [x]\n", "line 4: sink \"a\": url: must be an http"},
		{"sinks:\n  - type: prometheus\n    name: p\n    topics: []\n    listen: 127.0.0.1:1\n", "line 4: sink \"p\": topics: at least one"},
		{"sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: http://x\n    template: '{{.Foo'\n", "line 6: sink \"w\": template:"},
		// A field the data does not have fails on every record: every event would be dead-lettered.
		{"sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: http://x\n    template: '{{json .Event.Typ}}'\n", "line 6: sink \"w\": template: body:1:13: executing \"body\" at <.Event.Typ>: can't evaluate field Typ"},
		{"sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: http://x\n    template: '{{if .Event}}{{.Record.Keys}}{{end}}'\n", "can't evaluate field Keys"},
		// Zero values skip these branches; a record that takes them fails.
		{"sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: http://x\n    template: '{{if .Event.Type}}{{.Event.Typ}}{{end}}'\n", "line 6: sink \"w\": template: body:1:26: executing \"body\" at <.Event.Typ>: can't evaluate field Typ in type telemetry.Event"},
		{"sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: http://x\n    template: '{{range $i, $h := .Record.Headers}}{{$h.Kye}}{{end}}'\n", "can't evaluate field Kye in type configs.WebhookTemplateHeader"},
		{"sinks:\n  - {type: webhook, name: w, url: \"http://x\", topics: [events], timeout: -5s}\n", `line 2: sink "w": timeout: must not be negative`},
		// The client refuses these, and weir run could not start.
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"k1:9092\", \"k2:abc\"], topics: [events]}\n", `line 2: sink "k": brokers: "k2:abc" has an invalid port`},
		{"broker:\n  kafka: {brokers: [\"k1:\"]}\n", `broker.kafka.brokers[0]: "k1:" has an invalid port`},
		{"sinks:\n  - type: file\n    name: a\n    path: /tmp/x\n    topics: [x]\n    tls: {ca_file: /ca.pem}\n", "line 6: sink \"a\": tls: does not apply to type file"},
		{"sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: http://x\n    tls: {ca_file: /ca.pem}\n", "sink \"w\": tls: applies to https:// URLs only"},
		{"sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: https://x\n    tls: {enabled: true}\n", "sink \"w\": tls: enabled applies to type kafka only"},
		{"sinks:\n  - type: prometheus_remote_write\n    name: r\n    topics: [x]\n    url: https://x\n    tls: {cert_file: /c.pem}\n", "sink \"r\": tls: cert_file and key_file go together"},
		{"sinks:\n  - {type: file, name: a, path: /tmp/x, topics: [x]}\n  - {type: file, name: a, path: /tmp/y, topics: [y]}\n", "line 3: sinks[1]: two sinks are named \"a\""},
		{"sinks:\n  - {type: webhook, name: w, url: \"http://x\", topics: [events], gzip: true}\n", "sink \"w\": gzip: does not apply to type webhook (only influxdb)"},
		{"sinks:\n  - {type: file, name: a, path: /tmp/x, topics: [x]}\n  - {type: file, name: b, path: /tmp/./x, topics: [y]}\n", "line 3: sinks[1]: file sinks \"a\" and \"b\" both write /tmp/x"},
		{"sinks:\n  - {type: file, name: a, path: /tmp/all.jsonl, per_topic: true, topics: [events]}\n  - {type: file, name: b, path: /tmp/all.events.jsonl, topics: [y]}\n", "line 3: sinks[1]: file sinks \"a\" and \"b\" both write /tmp/all.events.jsonl"},
		// Credentials the kafka sink would not use: it would connect
		// without SASL.
		{"sinks:\n  - type: kafka\n    name: k\n    brokers: [k:9093]\n    topics: [events]\n    sasl: {username: weir, password: x}\n", "line 6: sink \"k\": sasl: mechanism is required"},
		{"sinks:\n  - type: kafka\n    name: k\n    brokers: [k:9093]\n    topics: [events]\n    sasl: {mechanism: SCRAM-SHA-512}\n", "line 6: sink \"k\": sasl: username is required with mechanism SCRAM-SHA-512"},
		{"sinks:\n  - type: webhook\n    name: w\n    url: http://x\n    topics: [events]\n    sasl: {mechanism: PLAIN, username: a, password: b}\n", "line 6: sink \"w\": sasl: does not apply to type webhook (only kafka)"},
		{"sinks:\n  - {type: file, name: f, path: /tmp/x, topics: [events], brokers: [\"k:9092\"]}\n", "sink \"f\": brokers: does not apply to type file (only kafka)"},
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"k:9092\"], topics: [events], topic_prefix: m., max_batch_bytes: 128MiB}\n", "sink \"k\": max_batch_bytes: must be between 1KiB and 64MiB, not 134217728"},
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"k:9092\"], topics: [events], topic_prefix: m., max_batch_bytes: 100}\n", "sink \"k\": max_batch_bytes: must be between 1KiB and 64MiB"},
		{"sinks:\n  - {type: file, name: f, path: /tmp/x, topics: [events], max_batch_bytes: 4MiB}\n", "sink \"f\": max_batch_bytes: does not apply to type file (only kafka)"},
		{"sinks:\n  - {type: webhook, name: w, url: \"http://x\", topics: [events], start: newest}\n", "sink \"w\": start: must be earliest or latest, not \"newest\""},
		{"sinks:\n  - {type: webhook, name: w, url: \"http://x\", topics: [events], concurrency: 65}\n", `line 2: sink "w": concurrency: must be between 1 and 64, not 65`},
		{"sinks:\n  - {type: webhook, name: w, url: \"http://x\", topics: [events], concurrency: -1}\n", `sink "w": concurrency: must be between 1 and 64, not -1`},
		{"sinks:\n  - {type: webhook, name: w, url: \"http://x\", topics: [events], format: alertmanager, concurrency: 4}\n", `sink "w": concurrency: applies to format json only`},
		{"sinks:\n  - {type: file, name: f, path: /tmp/x, topics: [events], concurrency: 4}\n", `sink "f": concurrency: does not apply to type file (only webhook)`},
		{"sinks:\n  - type: file\n    name: a\n    path: /tmp/x\n    topics: [x]\n    filter: {event_types: [\"[abc\"]}\n", "sink \"a\": filter: event_types pattern \"[abc\": syntax error in pattern"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// TestWebhookTemplateFields: templates on the fields the sink gives pass,
// whichever record they are written for.
func TestWebhookTemplateFields(t *testing.T) {
	for _, tmpl := range []string{
		`{{json .Event.Type}} {{.Event.Tags.site}} {{index .Event.Tags "site"}}`,
		`{{.Log.Message}} {{.Metric.Measurement}} {{.Schema}}`,
		`{{.Record.Topic}} {{.Record.Key}} {{json .Record.Value}} {{range .Record.Headers}}{{.Key}}={{.Value}}{{end}}`,
		`{{index .Record.Headers 0}}`, // fails on a record without headers, not on every record
	} {
		y := "sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: http://x\n    template: '" + tmpl + "'\n"
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("%s: %v", tmpl, err)
		}
	}
}

// A webhook template may call the functions the sink gives it (json, as
// sinks/webhook/README.md shows); the check must not refuse them.
func TestWebhookTemplateFuncs(t *testing.T) {
	cfg, err := Parse([]byte(`
sinks:
  - type: webhook
    name: chat
    url: https://chat.example.net/hooks/abc
    topics: [events]
    template: '{"text": {{json (printf "%s %s on %s" .Event.Type .Event.Object .Event.Device)}}}'
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sinks[0].Template == "" {
		t.Fatalf("sink: %+v", cfg.Sinks[0])
	}
	out, err := WebhookTemplateFuncs()["json"].(func(any) (string, error))(`say "hi"`)
	if err != nil || out != `"say \"hi\""` {
		t.Fatalf("json: %q, %v", out, err)
	}
	if _, err := Parse([]byte("sinks:\n  - type: webhook\n    name: w\n    topics: [events]\n    url: http://x\n    template: '{{nojson .}}'\n")); err == nil ||
		!strings.Contains(err.Error(), `function "nojson" not defined`) {
		t.Fatalf("unknown function: %v", err)
	}
}

// TestPerTopicFileSinksOnOnePath: two per_topic file sinks of one path and
// other topics write other files: no clash.
func TestPerTopicFileSinksOnOnePath(t *testing.T) {
	if _, err := Parse([]byte("sinks:\n  - {type: file, name: a, path: /tmp/all.jsonl, per_topic: true, topics: [events]}\n" +
		"  - {type: file, name: b, path: /tmp/all.jsonl, per_topic: true, topics: [enriched.syslog]}\n")); err != nil {
		t.Fatal(err)
	}
}

// TestKafkaSinkIntoItsOwnTopics: a kafka sink without topic_prefix whose
// brokers are weir's own (the embedded log's listener, or broker.kafka's
// cluster) writes each record back into the topic it reads it from, then
// reads it again: a loop that mirrors every record for ever (one event
// became 10 within 12 s on `weir run`, every other sink of the topic
// getting each copy). The config check refuses it; a prefix, or another
// cluster, is fine.
func TestKafkaSinkIntoItsOwnTopics(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:9092\"], topics: [events]}\n", `line 2: sinks[0]: sink "k" writes topic events back to weir's own broker`},
		{"broker: {kafka_listen: \"0.0.0.0:19092\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"localhost:19092\"], topics: [events]}\n", `sink "k" writes topic events back to weir's own broker`},
		{"broker: {kafka: {brokers: [\"kafka1:9092\", \"kafka2:9092\"]}}\nsinks:\n  - {type: kafka, name: k, brokers: [\"KAFKA2:9092\"], topics: [events]}\n", `sink "k" writes topic events back to weir's own broker`},
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:9092\"], topics: [events], topic_prefix: \"\"}\n", `sink "k" writes topic events back`},
		// The port as a client parses it, and localhost for a loopback listener.
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:09092\"], topics: [events]}\n", `sink "k" writes topic events back`},
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:+9092\"], topics: [events]}\n", `sink "k" writes topic events back`},
		{"sinks:\n  - {type: kafka, name: k, brokers: [\"localhost:9092\"], topics: [events]}\n", `sink "k" writes topic events back`},
		{"broker: {kafka_listen: \"[::]:9092\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"[::1]:9092\"], topics: [events]}\n", `sink "k" writes topic events back`},
		{"broker: {kafka_listen: \":9092\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:9092\"], topics: [events]}\n", `sink "k" writes topic events back`},
		{"broker: {kafka_listen: \"[::1]:9092\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"[0:0:0:0:0:0:0:1]:9092\"], topics: [events]}\n", `sink "k" writes topic events back`},
	} {
		if _, err := Parse([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
	for _, ok := range []string{
		"sinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:9092\"], topics: [events], topic_prefix: \"m.\"}\n",
		"sinks:\n  - {type: kafka, name: k, brokers: [\"kafka1:9092\"], topics: [events]}\n",
		"broker: {kafka_listen: \"127.0.0.1:19092\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:9092\"], topics: [events]}\n",
		"broker: {kafka_listen: \"off\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:9092\"], topics: [events]}\n",
		"broker: {kafka: {brokers: [\"kafka1:9092\"]}}\nsinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.1:9092\"], topics: [events]}\n",
		// Another loopback address does not reach a listener on 127.0.0.1
		// (a second weir, or a Kafka, can listen there).
		"sinks:\n  - {type: kafka, name: k, brokers: [\"127.0.0.2:9092\"], topics: [events]}\n",
		"broker: {kafka_listen: \"127.0.0.2:9092\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"localhost:9092\"], topics: [events]}\n",
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestKafkaSinkIntoListenerOnAllAddresses: a listener on 0.0.0.0 is weir's
// own broker by any of this host's addresses, not only by loopback ones.
func TestKafkaSinkIntoListenerOnAllAddresses(t *testing.T) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	var own string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			own = n.IP.String()
			break
		}
	}
	if own == "" {
		t.Skip("no non-loopback IPv4 address on this host")
	}
	yml := "broker: {kafka_listen: \"0.0.0.0:19092\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"" + own + ":19092\"], topics: [events]}\n"
	if _, err := Parse([]byte(yml)); err == nil || !strings.Contains(err.Error(), `sink "k" writes topic events back`) {
		t.Errorf("%s: got %v", own, err)
	}
}

// TestSinkURLErrorsHideSecrets: a url the check refuses is not echoed
// whole: its user info, path and query hold the secrets (a chat hook's
// token path, ?api_key=), and the error goes to weir check's output and,
// after a SIGHUP, to the log. It still says what is wrong.
func TestSinkURLErrorsHideSecrets(t *testing.T) {
	for _, tc := range []struct{ url, tls, want string }{
		{"hooks.slack.com/services/T/B/s3cret", "", `url: must be an http:// or https:// URL, not one without a scheme`},
		{"ftp://u:s3cret@h/s3cret?k=s3cret", "", `url: must be an http:// or https:// URL, not ftp://`},
		{"http://u:s3cret@h:port/s3cret?k=s3cret", "", `url: does not parse: invalid port`},
		{"http:///s3cret?k=s3cret", "", `url: has no host`},
		{"http://u:s3/cret@h/x", "", `url: does not parse: invalid port`}, // an unencoded / in the password
		{"http://u:s3cret@h/s3cret?k=s3cret", "{ca_file: /ca.pem}", `tls: applies to https:// URLs only, not http://`},
	} {
		y := fmt.Sprintf("sinks:\n  - {type: webhook, name: w, url: %q, topics: [events]", tc.url)
		if tc.tls != "" {
			y += ", tls: " + tc.tls
		}
		_, err := Parse([]byte(y + "}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: got %v, want %q and no secret", tc.url, err, tc.want)
		}
	}
}

// TestKafkaListenOnIPv4WildcardIsReachedByIPv6: Go listens on 0.0.0.0 as
// on "::", both families (the listener run makes takes a dial to [::1]):
// a kafka sink at [::1] on that port writes into weir's own broker.
func TestKafkaListenOnIPv4WildcardIsReachedByIPv6(t *testing.T) {
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c, err := net.Dial("tcp", net.JoinHostPort("::1", port))
	if err != nil {
		t.Skipf("a listener on 0.0.0.0 is not reached at [::1] here: %v", err)
	}
	c.Close()
	y := "broker: {kafka_listen: \"0.0.0.0:" + port + "\"}\nsinks:\n  - {type: kafka, name: k, brokers: [\"[::1]:" + port + "\"], topics: [events]}\n"
	if _, err := Parse([]byte(y)); err == nil || !strings.Contains(err.Error(), `sink "k" writes topic events back`) {
		t.Fatalf("%q: %v, want the loop refused", y, err)
	}
}
