package configs

import (
	"strings"
	"testing"
)

// TestUnknownKeySaysWhatToWrite: an unknown key's error names the key
// meant, spelt nearly the same in its section, or else the sections the
// key belongs in: a user misspells a key, or writes it one level off.
func TestUnknownKeySaysWhatToWrite(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"top level", "enrch: {workers: 2}\n", "line 1: field enrch: unknown key in the top level (did you mean enrich?)"},
		{"inventory file given as the config", "devices:\n  - {name: r1, address: 10.0.0.1}\n", "line 1: field devices: unknown key in the top level (an inventory file? weir reads it from enrich.inventory in its config: check that config)"},
		{"top level, dashes", "data-dir: /tmp/x\n", "line 1: field data-dir: unknown key in the top level (did you mean data_dir?)"},
		{"snmp target", "snmp:\n  targets:\n    - name: edge1\n      adress: 192.0.2.1\n", "line 4: field adress: unknown key in snmp.targets[0] (did you mean address?)"},
		{"snmp v3", "snmp:\n  defaults:\n    v3: {user: u, auth_protcol: SHA}\n", "line 3: field auth_protcol: unknown key in snmp.defaults.v3 (did you mean auth_protocol?)"},
		{"gnmi target", "gnmi:\n  targets:\n    - {name: s, address: \"h:1\", subscription: [c]}\n", "line 3: field subscription: unknown key in gnmi.targets[0] (did you mean subscriptions?)"},
		{"gnmi inline subscription, letters swapped", "gnmi:\n  targets:\n    - name: s\n      address: \"h:1\"\n      subscriptions: [{paht: /a}]\n", "line 5: field paht: unknown key in gnmi.targets[0].subscriptions[0] (did you mean path?)"},
		{"sink", "sinks:\n  - {type: file, name: a, path: /tmp/x, topic: [events]}\n", "line 2: field topic: unknown key in sink (did you mean topics?)"},
		{"syslog listener", "syslog:\n  listeners:\n    - {protcol: udp, address: \"127.0.0.1:5514\"}\n", "line 3: field protcol: unknown key in a syslog listener (did you mean protocol?)"},
		{"broker, case", "broker: {Kafka_Listen: off}\n", "line 1: field Kafka_Listen: unknown key in broker (did you mean kafka_listen?)"},
		{"wrong section: snmp", "snmp:\n  community: private\n", "line 2: field community: unknown key in snmp (community is a key of snmp.defaults, snmp.targets[])"},
		{"wrong section: log", "log:\n  kafka_listen: 127.0.0.1:9092\n", "line 2: field kafka_listen: unknown key in log (kafka_listen is a key of broker)"},
		{"wrong section: top level", "interval: 30s\n", "line 1: field interval: unknown key in the top level (interval is a key of"},
		// weir names a listening address "listen" in some sections and
		// "address" in others: either one, written where the other is the
		// key, is the other.
		{"syslog listener, listen for address", "syslog:\n  listeners:\n    - {protocol: udp, listen: \"127.0.0.1:5514\"}\n", "line 3: field listen: unknown key in a syslog listener (did you mean address?)"},
		{"traps, address for listen", "snmp:\n  traps: {address: \"127.0.0.1:5162\"}\n", "line 2: field address: unknown key in snmp.traps (did you mean listen?)"},
		{"nothing like it", "snmp:\n  targets:\n    - {name: a, address: 192.0.2.1, colour: blue}\n", "line 3: field colour: unknown key in snmp.targets[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestIPv6WithoutBrackets: an IPv6 address and a port written as
// 2001:db8::1:57400 are refused with how to write them.
func TestIPv6WithoutBrackets(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"listener", "http: {listen: \"::1:8080\"}\n", `line 1: http.listen: "::1:8080" is not host:port: an IPv6 address goes in brackets, as "[::1]:8080"`},
		{"gnmi target", "gnmi:\n  targets:\n    - {name: s, address: \"2001:db8::1:57400\", insecure: true, subscriptions: [{path: /a}]}\n",
			`line 3: gnmi.targets[s].address: "2001:db8::1:57400" is not host:port: an IPv6 address goes in brackets, as "[2001:db8::1]:57400"`},
		{"no port", "http: {listen: \"::1\"}\n", `line 1: http.listen: "::1" is not host:port: address ::1: too many colons in address`},
		{"not an address", "http: {listen: \"a:b:c\"}\n", `line 1: http.listen: "a:b:c" is not host:port: address a:b:c: too many colons in address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestDurationAndSizeUnits: a duration without its unit and a size with
// its unit in the wrong case say what to write.
func TestDurationAndSizeUnits(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"duration without unit", "snmp:\n  defaults: {interval: 30}\n", `line 2: snmp.defaults.interval: "30" is not a duration: a number needs a unit: "30s", "30m", "30h" or "30d"`},
		{"duration in words", "snmp:\n  defaults: {interval: 1 minute}\n", `line 2: snmp.defaults.interval: "1 minute" is not a duration (like 500ms, 30s, 12h, 7d)`},
		{"size in lower case", "broker: {max_message_bytes: 10mb}\n", `line 1: broker.max_message_bytes: "10mb" is not a size: units are written MB (did you mean "10MB"?)`},
		{"size in lower case, binary", "broker: {max_message_bytes: 10 mib}\n", `line 1: broker.max_message_bytes: "10 mib" is not a size: units are written MiB (did you mean "10MiB"?)`},
		{"size in words", "broker: {max_message_bytes: ten}\n", `line 1: broker.max_message_bytes: "ten" is not a size (like 4096, 512KiB, 256MiB, 1GiB, or -1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %q", err, tc.want)
			}
		})
	}
	for in, want := range map[string]int64{"10 MB": 10e6, "10MiB": 10 << 20, "10M": 10 << 20} {
		if got, err := ParseByteSize(in); err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// TestUnitHintsSuggestOnlyWhatParses: the "did you mean" of a duration
// or size is a value the same setting takes: not "infs" for inf, "1e3s"
// (time.ParseDuration has no exponents) or "-5MB" (a size is not
// negative), which would be refused in turn.
func TestUnitHintsSuggestOnlyWhatParses(t *testing.T) {
	for _, s := range []string{"inf", "NaN", "1e3", "-5", "30", "1.5"} {
		_, err := ParseDuration(s)
		if err == nil {
			t.Fatalf("ParseDuration(%q): no error", s)
		}
		if _, hints, ok := strings.Cut(err.Error(), "needs a unit: "); ok {
			for _, hint := range strings.Split(strings.NewReplacer(" or ", ", ").Replace(hints), ", ") {
				hint = strings.Trim(hint, `"`)
				if _, herr := ParseDuration(hint); herr != nil {
					t.Errorf("ParseDuration(%q): %v: suggests %q, which is refused: %v", s, err, hint, herr)
				}
			}
		}
	}
	for _, s := range []string{"10mb", "-5mb", "infmb", "nanmb", "1e30gb", "10kB", "10 mib"} {
		_, err := ParseByteSize(s)
		if err == nil {
			t.Fatalf("ParseByteSize(%q): no error", s)
		}
		if _, hint, ok := strings.Cut(err.Error(), `did you mean "`); ok {
			hint, _, _ = strings.Cut(hint, `"`)
			if _, herr := ParseByteSize(hint); herr != nil {
				t.Errorf("ParseByteSize(%q): %v: suggests %q, which is refused: %v", s, err, hint, herr)
			}
		}
	}
	// The cases the hints are for still get them.
	for s, want := range map[string]string{"30": `"30s", "30m", "30h" or "30d"`, "1.5": `"1.5s", "1.5m", "1.5h" or "1.5d"`} {
		if _, err := ParseDuration(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDuration(%q): %v, want it to say %s", s, err, want)
		}
	}
	for s, want := range map[string]string{"10mb": `"10MB"`, "10 mib": `"10MiB"`, "10kB": `"10KB"`} {
		if _, err := ParseByteSize(s); err == nil || !strings.Contains(err.Error(), "did you mean "+want) {
			t.Errorf("ParseByteSize(%q): %v, want it to suggest %s", s, err, want)
		}
	}
}
