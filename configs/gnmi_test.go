package configs

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGNMIIssueExample(t *testing.T) {
	t.Setenv("GNMI_PASSWORD", "s3cret")
	cfg, err := Parse([]byte(`
gnmi:
  targets:
    - name: spine1
      address: "192.0.2.10:57400"
      tls: {ca_file: ca.pem, server_name: spine1}
      username: telemetry
      password: "${GNMI_PASSWORD}"
      subscriptions: [counters, bgp]
    - {name: lab, address: "127.0.0.1:50051", insecure: true, subscriptions: [counters]}
    - name: inline
      address: "[2001:db8::1]:6030"
      encoding: proto
      tls: {ca_file: ca.pem, cert_file: c.pem, key_file: c.key, skip_verify: true}
      subscriptions:
        - {path: "/interfaces/interface[name=Ethernet1/1]/state/counters", origin: openconfig, sample_interval: 5s, heartbeat_interval: 1m, suppress_redundant: true}
        - {path: /system/state, mode: stream, stream_mode: on_change, updates_only: true}
    - name: poller
      address: "192.0.2.11:57400"
      prefix_target: leaf7
      subscriptions: [{path: /interfaces, mode: poll, poll_interval: 30s}]
  subscriptions:
    counters: {path: /interfaces/interface/state/counters, mode: stream, stream_mode: sample, sample_interval: 10s}
    bgp: {path: /network-instances/network-instance/protocols/protocol/bgp/neighbors/neighbor/state/session-state, mode: stream, stream_mode: on_change}
`))
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.GNMI
	if len(g.Targets) != 4 || g.QueueSize != DefaultGNMIQueueSize || g.QueueMemory != 512<<20 || g.RetryMin.Std() != time.Second || g.RetryMax.Std() != time.Minute {
		t.Fatalf("gnmi: %+v", g)
	}
	s := g.Targets[0]
	if s.Name != "spine1" || s.Password != "s3cret" || s.Username != "telemetry" || s.TLS == nil || s.TLS.CAFile != "ca.pem" ||
		s.TLS.ServerName != "spine1" || s.Insecure || s.Encoding != "json" || s.Timeout.Std() != DefaultGNMITimeout || s.Line != 4 {
		t.Errorf("spine1: %+v", s)
	}
	if len(s.Subscriptions) != 2 || s.Subscriptions[0].Name != "counters" || s.Subscriptions[0].StreamMode != "sample" ||
		s.Subscriptions[0].SampleInterval.Std() != 10*time.Second || s.Subscriptions[1].StreamMode != "on_change" || s.Subscriptions[1].Mode != "stream" {
		t.Errorf("spine1 subscriptions: %+v", s.Subscriptions)
	}
	if l := g.Targets[1]; !l.Insecure || len(l.Subscriptions) != 1 || l.Subscriptions[0].Path != "/interfaces/interface/state/counters" {
		t.Errorf("lab: %+v", l)
	}
	if p := g.Targets[3]; p.PrefixTarget != "leaf7" || g.Targets[0].PrefixTarget != "" {
		t.Errorf("prefix_target: %q and %q", p.PrefixTarget, g.Targets[0].PrefixTarget)
	}
	in := g.Targets[2]
	if in.Encoding != "proto" || !in.TLS.Client().InsecureSkipVerify || in.TLS.CertFile != "c.pem" || len(in.Subscriptions) != 2 {
		t.Fatalf("inline: %+v", in)
	}
	if a := in.Subscriptions[0]; a.Mode != "stream" || a.StreamMode != "sample" || a.Origin != "openconfig" || !a.SuppressRedundant ||
		a.HeartbeatInterval.Std() != time.Minute || a.Name != "" {
		t.Errorf("inline[0]: %+v", a)
	}
	if b := in.Subscriptions[1]; !b.UpdatesOnly || b.StreamMode != "on_change" {
		t.Errorf("inline[1]: %+v", b)
	}
	if p := g.Targets[3].Subscriptions[0]; p.Mode != "poll" || p.PollInterval.Std() != 30*time.Second || p.StreamMode != "" {
		t.Errorf("poller: %+v", p)
	}
}

func TestGNMIDefaults(t *testing.T) {
	cfg, err := Parse([]byte("gnmi:\n  targets:\n    - {name: a, address: \"h:1\", insecure: true, subscriptions: [{path: /a}, {path: /b, mode: stream}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.GNMI.Targets[0].Subscriptions[0]
	if s.Mode != "stream" || s.StreamMode != "target_defined" {
		t.Errorf("defaults: %+v", s)
	}
	empty, err := Parse([]byte("data_dir: /tmp/x\n"))
	if err != nil || len(empty.GNMI.Targets) != 0 {
		t.Errorf("no gnmi section: %v %+v", err, empty.GNMI)
	}
}

func TestGNMIErrors(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown key", "gnmi:\n  targets:\n    - {name: a, address: \"h:1\", insecure: true, subscriptions: [x]}\n  sbscriptions: {}\n", "line 4: field sbscriptions: unknown key in gnmi"},
		{"unknown key in target", "gnmi:\n  targets:\n    - name: a\n      adress: \"h:1\"\n", "line 4: field adress: unknown key"},
		{"unknown key in inline", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      subscriptions:\n        - {path: /a, sample_intrval: 1s}\n", "line 6: field sample_intrval: unknown key in gnmi.targets[0].subscriptions[0]"},
		// Reported with the target's own unknown keys, not alone under a
		// type name ("in gnmisubscription").
		{"unknown keys in a target and its inline subscription", "gnmi:\n  targets:\n    - name: a\n      adress: \"h:1\"\n      subscriptions:\n        - c\n        - {paht: /a}\n", "line 4: field adress: unknown key in gnmi.targets[0] (did you mean address?)\nline 7: field paht: unknown key in gnmi.targets[0].subscriptions[1] (did you mean path?)"},
		{"unknown key in a named subscription", "gnmi:\n  subscriptions:\n    c: {path: /a, mode: poll, pol_interval: 30s}\n  targets:\n    - {name: a, address: \"h:1\", insecure: true, subscriptions: [c]}\n", "line 3: field pol_interval: unknown key in gnmi.subscriptions.c"},
		{"unknown key in tls", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      tls: {ca: x}\n      subscriptions: [{path: /a}]\n", "line 5: field ca: unknown key"},
		{"missing name", "gnmi:\n  targets:\n    - {address: \"h:1\", subscriptions: [{path: /a}]}\n", "line 3: gnmi.targets[0].name: must be set"},
		{"duplicate", "gnmi:\n  targets:\n    - {name: a, address: \"h:1\", subscriptions: [{path: /a}]}\n    - {name: a, address: \"h:2\", subscriptions: [{path: /a}]}\n", "line 4: gnmi.targets[a].name: duplicate target name (also on line 3)"},
		{"bad address", "gnmi:\n  targets:\n    - name: a\n      address: nohostport\n      subscriptions: [{path: /a}]\n", "line 4: gnmi.targets[a].address: \"nohostport\" is not host:port"},
		{"address with a space", "gnmi:\n  targets:\n    - name: a\n      address: \"spine1 :57400\"\n      subscriptions: [{path: /a}]\n", "line 4: gnmi.targets[a].address: \"spine1 :57400\" has white space"},
		{"missing address", "gnmi:\n  targets:\n    - {name: a, subscriptions: [{path: /a}]}\n", "line 3: gnmi.targets[a].address: must be set"},
		{"unknown name", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      subscriptions:\n        - countrs\n", "line 6: gnmi.targets[a].subscriptions[0]: no subscription \"countrs\" in gnmi.subscriptions"},
		{"no subscriptions", "gnmi:\n  targets:\n    - {name: a, address: \"h:1\"}\n", "line 3: gnmi.targets[a].subscriptions: at least one subscription is needed"},
		{"bad mode", "gnmi:\n  subscriptions:\n    c:\n      path: /a\n      mode: streaming\n", "line 5: gnmi.subscriptions.c.mode: must be stream, once or poll, not \"streaming\""},
		{"bad stream mode", "gnmi:\n  subscriptions:\n    c: {path: /a, stream_mode: onchange}\n", "gnmi.subscriptions.c.stream_mode: must be sample, on_change or target_defined"},
		{"stream mode with once", "gnmi:\n  subscriptions:\n    c: {path: /a, mode: once, stream_mode: sample}\n", "stream_mode: only applies to mode stream (mode is once)"},
		{"bad path", "gnmi:\n  subscriptions:\n    c:\n      path: \"/a[name=x\"\n", "line 4: gnmi.subscriptions.c.path: path \"/a[name=x\": unterminated key"},
		{"empty key value", "gnmi:\n  subscriptions:\n    c:\n      path: \"/interfaces/interface[name=]/state\"\n", "line 4: gnmi.subscriptions.c.path: key name of element interface has no value (give one, or * for every entry)"},
		{"missing path", "gnmi:\n  subscriptions:\n    c: {mode: once}\n", "gnmi.subscriptions.c.path: must be set"},
		{"bad encoding", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      encoding: xml\n      subscriptions: [{path: /a}]\n", "line 5: gnmi.targets[a].encoding: must be json, json_ietf or proto, not \"xml\""},
		{"insecure and tls", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      insecure: true\n      tls: {ca_file: x}\n      subscriptions: [{path: /a}]\n", "line 5: gnmi.targets[a].insecure: insecure (plaintext) and tls exclude each other"},
		{"cert without key", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      tls: {cert_file: x}\n      subscriptions: [{path: /a}]\n", "line 5: gnmi.targets[a].tls: cert_file and key_file go together"},
		{"mixed modes", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      subscriptions:\n        - {path: /a}\n        - {path: /b, mode: once}\n", "line 7: gnmi.targets[a].subscriptions[1]: mode once differs"},
		{"unknown name, a close one defined", "gnmi:\n  subscriptions:\n    counters: {path: /a}\n    oper: {path: /b}\n  targets:\n    - {name: a, address: \"h:1\", subscriptions: [countres]}\n", "line 6: gnmi.targets[a].subscriptions[0]: no subscription \"countres\" in gnmi.subscriptions (did you mean counters?)"},
		{"unknown name, none close", "gnmi:\n  subscriptions:\n    counters: {path: /a}\n    oper: {path: /b}\n  targets:\n    - {name: a, address: \"h:1\", subscriptions: [bgp]}\n", "no subscription \"bgp\" in gnmi.subscriptions (it has counters, oper)"},
		{"misspelt encoding", "gnmi:\n  targets:\n    - {name: a, address: \"h:1\", encoding: jsonietf, subscriptions: [{path: /a}]}\n", "encoding: must be json, json_ietf or proto, not \"jsonietf\" (did you mean json_ietf?)"},
		{"misspelt mode", "gnmi:\n  subscriptions:\n    c: {path: /a, mode: pol}\n", "mode: must be stream, once or poll, not \"pol\" (did you mean poll?)"},
		{"misspelt stream mode", "gnmi:\n  subscriptions:\n    c: {path: /a, stream_mode: onchange}\n", "stream_mode: must be sample, on_change or target_defined, not \"onchange\" (did you mean on_change?)"},
		{"sample interval on poll", "gnmi:\n  subscriptions:\n    c: {path: /a, mode: poll, sample_interval: 10s}\n", "gnmi.subscriptions.c.sample_interval: only applies to mode stream (mode is poll; poll_interval sets how often it is polled)"},
		{"heartbeat on once", "gnmi:\n  subscriptions:\n    c: {path: /a, mode: once, heartbeat_interval: 10s}\n", "gnmi.subscriptions.c.heartbeat_interval: only applies to mode stream (mode is once)"},
		{"poll interval on stream", "gnmi:\n  subscriptions:\n    c: {path: /a, poll_interval: 1s}\n", "poll_interval: only applies to mode poll"},
		{"bad duration", "gnmi:\n  subscriptions:\n    c: {path: /a, sample_interval: often}\n", "line 3: gnmi.subscriptions.c.sample_interval: \"often\" is not a duration"},
		{"timeout too short", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      timeout: 1ms\n      subscriptions: [{path: /a}]\n", "line 5: gnmi.targets[a].timeout: must be at least 1s, not 1ms (it bounds the dial, the TLS handshake, Capabilities and the first response, and is the least stall bound)"},
		{"negative timeout", "gnmi:\n  targets:\n    - {name: a, address: \"h:1\", timeout: -5s, subscriptions: [{path: /a}]}\n", "line 3: gnmi.targets[a].timeout: must be at least 1s, not -5s"},
		{"bad queue", "gnmi:\n  queue_size: -1\n", "line 2: gnmi.queue_size: must be between 1"},
		{"queue memory below queue bytes", "gnmi:\n  queue_bytes: 64MiB\n  queue_memory: 32MiB\n", "line 3: gnmi.queue_memory: must be at least queue_bytes (64MiB), not 32MiB: one target's queue could not fill; lower queue_bytes too"},
		{"queue memory below the default queue bytes", "gnmi:\n  queue_memory: 16MiB\n", "line 2: gnmi.queue_memory: must be at least queue_bytes (64MiB, the default), not 16MiB"},
		{"queue memory not a size", "gnmi:\n  queue_memory: lots\n", "line 2: gnmi.queue_memory:"},
		{"bad topic", "gnmi:\n  topic: \"a b\"\n", "line 2: gnmi.topic: invalid topic name"},
		{"missing env", "gnmi:\n  targets:\n    - {name: a, address: \"h:1\", username: u, password: \"${GNMI_TEST_UNSET_PW}\", subscriptions: [{path: /a}]}\n", "line 3: environment variable GNMI_TEST_UNSET_PW is not set"},
		{"subscription not a name", "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      subscriptions: [[x]]\n", "line 5: a subscription is a name or an object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

// TestGNMITimeoutBound: a timeout of 1s, the least, is taken.
func TestGNMITimeoutBound(t *testing.T) {
	c, err := Parse([]byte("gnmi:\n  targets:\n    - {name: a, address: \"h:1\", timeout: 1s, subscriptions: [{path: /a}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.GNMI.Targets[0].Timeout.Std(); got != time.Second {
		t.Errorf("timeout %v", got)
	}
}

// TestGNMIPathWithOrigin: "origin:/path", as gnmic writes it, is the path
// with its origin, not an element named "origin:".
func TestGNMIPathWithOrigin(t *testing.T) {
	const head = "gnmi:\n  targets:\n    - name: s1\n      address: 127.0.0.1:57400\n      insecure: true\n      subscriptions:\n"
	c, err := Parse([]byte(head + "        - {path: \"openconfig:/interfaces/interface[name=Ethernet1:/x]/state/counters\", sample_interval: 10s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.GNMI.Targets[0].Subscriptions[0]; s.Origin != "openconfig" || s.Path != "/interfaces/interface[name=Ethernet1:/x]/state/counters" {
		t.Errorf("origin %q, path %q", s.Origin, s.Path)
	}
	// A key value with ":/" in it is not an origin.
	c, err = Parse([]byte(head + "        - {path: \"/interfaces/interface[name=a:/b]/state\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.GNMI.Targets[0].Subscriptions[0]; s.Origin != "" || s.Path != "/interfaces/interface[name=a:/b]/state" {
		t.Errorf("origin %q, path %q", s.Origin, s.Path)
	}
	_, err = Parse([]byte(head + "        - {path: \"openconfig:/interfaces\", origin: rfc7951}\n"))
	if err == nil || !strings.Contains(err.Error(), "differs from origin") {
		t.Errorf("two origins: %v", err)
	}
}

// TestGNMIInsecureSkipVerify: a gNMI target's tls takes
// insecure_skip_verify, as every other tls section names it (it took only
// skip_verify, and refused the other as an unknown key).
func TestGNMIInsecureSkipVerify(t *testing.T) {
	cfg, err := Parse([]byte("gnmi:\n  targets:\n    - {name: a, address: \"h:1\", tls: {insecure_skip_verify: true}, subscriptions: [{path: /a}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.GNMI.Targets[0].TLS.Client().InsecureSkipVerify {
		t.Error("insecure_skip_verify not applied")
	}
}

// TestGNMIEncodingCase: encoding in upper case, as gnmic and vendor docs
// write it (JSON_IETF), is the same encoding; an unknown one is refused.
func TestGNMIEncodingCase(t *testing.T) {
	const head = "gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      subscriptions: [{path: /a}]\n      encoding: "
	for in, want := range map[string]string{"JSON_IETF": "json_ietf", "PROTO": "proto", "JSON": "json", "Json_Ietf": "json_ietf"} {
		c, err := Parse([]byte(head + in + "\n"))
		if err != nil {
			t.Errorf("encoding %s: %v", in, err)
			continue
		}
		if got := c.GNMI.Targets[0].Encoding; got != want {
			t.Errorf("encoding %s read as %q, want %q", in, got, want)
		}
	}
	if _, err := Parse([]byte(head + "XML\n")); err == nil || !strings.Contains(err.Error(), `line 6: gnmi.targets[a].encoding: must be json, json_ietf or proto, not "XML"`) {
		t.Errorf("XML: %v", err)
	}
}

// TestGNMIModeCase: mode and stream_mode in upper case (STREAM, ON_CHANGE,
// as gnmic and vendor docs write them) are the same modes.
func TestGNMIModeCase(t *testing.T) {
	c, err := Parse([]byte("gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      subscriptions: [{path: /a, mode: STREAM, stream_mode: ON_CHANGE}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.GNMI.Targets[0].Subscriptions[0]; s.Mode != "stream" || s.StreamMode != "on_change" {
		t.Errorf("mode %q, stream_mode %q; want stream, on_change", s.Mode, s.StreamMode)
	}
	if _, err := Parse([]byte("gnmi:\n  targets:\n    - name: a\n      address: \"h:1\"\n      subscriptions: [{path: /a, mode: Sometimes}]\n")); err == nil || !strings.Contains(err.Error(), `not "Sometimes"`) {
		t.Errorf("an unknown mode: %v", err)
	}
}

// TestGNMIMisspeltModeAlone: a misspelt mode is the one error of a
// subscription that sets sample_interval and heartbeat_interval, not also
// "only applies to mode stream (mode is strem)": the mode meant may well
// be stream.
func TestGNMIMisspeltModeAlone(t *testing.T) {
	_, err := Parse([]byte("gnmi:\n  subscriptions:\n    c: {path: /a, mode: strem, stream_mode: sample, sample_interval: 10s, heartbeat_interval: 1m}\n"))
	if err == nil || !strings.Contains(err.Error(), `not "strem" (did you mean stream?)`) {
		t.Fatalf("got %v, want the misspelt mode", err)
	}
	if strings.Contains(err.Error(), "only applies to mode stream") {
		t.Errorf("a misspelt mode also refuses the stream settings:\n%v", err)
	}
}

// TestGNMIWarnings: updates_only applies to a target's whole stream (one
// SubscriptionList); set on some of its subscriptions only, the others
// lose their initial state too, which their writer did not ask for.
func TestGNMIWarnings(t *testing.T) {
	cfg, err := Parse([]byte(`gnmi:
  targets:
    - name: mixed
      address: "192.0.2.1:57400"
      insecure: true
      subscriptions:
        - {path: /interfaces, stream_mode: sample, sample_interval: 10s}
        - {path: /network-instances, stream_mode: on_change, updates_only: true, heartbeat_interval: 60s}
    - name: all
      address: "192.0.2.2:57400"
      insecure: true
      subscriptions:
        - {path: /interfaces, stream_mode: on_change, updates_only: true, heartbeat_interval: 60s}
        - {path: /system, stream_mode: on_change, updates_only: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`gnmi target "mixed": updates_only is set on 1 of its 2 subscriptions, but applies to the target's whole stream: the others get no initial state either (set it on all of them, or none)`}
	if got := cfg.GNMIWarnings(); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

// TestGNMIQuietStateWarnings: a stream subscription that gets interface
// oper-status or BGP session-state and sends an unchanged value only
// once (on_change, target_defined, sample with suppress_redundant), with
// no heartbeat within the warm-up's window, is warned of: a restart finds
// its last value up to a week or 4 million records of its partition back,
// and a change after a longer calm raises no event (said so: before, the
// warning read as if finding it raised none). Subscriptions that send it
// again, or get neither leaf, are not.
func TestGNMIQuietStateWarnings(t *testing.T) {
	for _, tc := range []struct {
		sub, warmup string
		want        string // the leaf warned of; "" none
	}{
		{sub: "{path: /interfaces/interface/state/oper-status, stream_mode: on_change}", want: "oper-status"},
		{sub: `{path: "/interfaces/interface[name=Ethernet1]/state", stream_mode: on_change}`, want: "oper-status"},
		{sub: "{path: /openconfig-interfaces:interfaces, stream_mode: on_change}", want: "oper-status"},
		{sub: "{path: /, stream_mode: on_change}", want: "oper-status"},
		{sub: "{path: /interfaces/interface/state/oper-status}", want: "oper-status"}, // target_defined
		{sub: "{path: /interfaces/*/state, stream_mode: on_change}", want: "oper-status"},
		{sub: "{path: /interfaces/interface/state, stream_mode: sample, sample_interval: 10s, suppress_redundant: true}", want: "oper-status"},
		{sub: `{path: state/session-state, prefix: "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/neighbors/neighbor", stream_mode: on_change}`, want: "session-state"},
		{sub: "{path: /interfaces/interface/state/oper-status, stream_mode: on_change, heartbeat_interval: 15m}", want: "oper-status"},
		{sub: "{path: /interfaces/interface/state/oper-status, stream_mode: on_change, heartbeat_interval: 15m}", warmup: "20m"},
		{sub: "{path: /interfaces/interface/state/oper-status, stream_mode: on_change, heartbeat_interval: 60s}"},
		{sub: "{path: /interfaces/interface/state/oper-status, stream_mode: sample, sample_interval: 10s}"},
		{sub: "{path: /interfaces/interface/state/counters, stream_mode: on_change}"},
		{sub: "{path: /interfaces/interface/state/oper-status, mode: poll}"},
		{sub: "{path: /system/state, stream_mode: on_change}"},
		{sub: "{path: /network-instances/network-instance/protocols/protocol/bgp/global, stream_mode: on_change}"},
	} {
		yaml := "gnmi:\n  targets:\n    - name: r1\n      address: \"192.0.2.1:57400\"\n      insecure: true\n      subscriptions:\n        - " + tc.sub + "\n"
		if tc.warmup != "" {
			yaml += "enrich:\n  warmup: " + tc.warmup + "\n"
		}
		cfg, err := Parse([]byte(yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.sub, err)
		}
		got := cfg.GNMIWarnings()
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: warnings %q, want none", tc.sub, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], "sends "+tc.want+" only when it changes") || !strings.Contains(got[0], "up to a week or 4 million records of its raw.gnmi partition, and after a calm longer than that its first change after a restart raises no event") || !strings.Contains(got[0], "heartbeat_interval")):
			t.Errorf("%s: warnings %q, want one about %s", tc.sub, got, tc.want)
		}
	}
	// No warning where enrichment is off: no events are raised.
	cfg, err := Parse([]byte("gnmi:\n  targets:\n    - name: r1\n      address: \"192.0.2.1:57400\"\n      insecure: true\n      subscriptions:\n        - {path: /interfaces, stream_mode: on_change}\nenrich:\n  enabled: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.GNMIWarnings(); len(got) > 0 {
		t.Errorf("enrichment off: warnings %q", got)
	}
}
