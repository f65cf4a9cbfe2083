package configs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSNMPIssueExample(t *testing.T) {
	t.Setenv("SNMP_AUTH", "authpass123")
	t.Setenv("SNMP_PRIV", "privpass123")
	cfg, err := Parse([]byte(`
snmp:
  defaults: {version: 2c, community: public, interval: 60s, timeout: 5s, retries: 1, profiles: [system, if-mib], tags: {env: prod}}
  targets:
    - {name: edge1, address: "192.0.2.1", tags: {site: ams1}}
    - {name: core1, address: "192.0.2.2:1161", profiles: auto, interval: 30s}
    - name: core2
      address: "192.0.2.3"
      version: 3
      max_repetitions: 50
      v3: {user: weir, security_level: authPriv, auth_protocol: SHA256, auth_password: "${SNMP_AUTH}", priv_protocol: AES, priv_password: "${SNMP_PRIV}", context_name: vrf1}
  traps: {listen: "0.0.0.0:162", communities: [public]}
  max_concurrency: 10
`))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.SNMP
	if len(s.Targets) != 3 || s.MaxConcurrency != 10 || s.Traps.Listen != "0.0.0.0:162" {
		t.Fatalf("snmp: %+v", s)
	}
	e := s.Targets[0]
	if e.Host != "192.0.2.1" || e.Port != 161 || e.Version != "2c" || e.Community != "public" ||
		e.Interval != time.Minute || e.Timeout != 5*time.Second || e.Retries != 1 || e.MaxRepetitions != 25 ||
		strings.Join(e.Profiles.Names, ",") != "system,if-mib" || e.Profiles.Auto ||
		e.Tags["site"] != "ams1" || e.Tags["env"] != "prod" {
		t.Errorf("edge1: %+v", e)
	}
	c1 := s.Targets[1]
	if c1.Port != 1161 || !c1.Profiles.Auto || len(c1.Profiles.Names) != 0 || c1.Interval != 30*time.Second || c1.Tags["site"] != "" {
		t.Errorf("core1: %+v", c1)
	}
	c2 := s.Targets[2]
	if c2.Version != "3" || c2.V3.User != "weir" || c2.V3.AuthPassword != "authpass123" || c2.V3.PrivPassword != "privpass123" ||
		c2.V3.AuthProtocol != "SHA256" || c2.V3.PrivProtocol != "AES" || c2.V3.SecurityLevel != "authPriv" ||
		c2.V3.ContextName != "vrf1" || c2.MaxRepetitions != 50 {
		t.Errorf("core2: %+v", c2)
	}
}

func TestSNMPBuiltInDefaults(t *testing.T) {
	cfg, err := Parse([]byte("snmp:\n  targets:\n    - {name: a, address: \"[2001:db8::1]:16100\"}\n    - {name: b, address: \"2001:db8::2\"}\n" +
		"    - {name: c, address: \"fe80::1%eth0\"}\n    - {name: d, address: \"[fe80::2%eth1]:16101\"}\n    - {name: e, address: \"[fe80::3%eth2]\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.SNMP
	if s.MaxConcurrency != DefaultSNMPMaxConcurrency || s.Traps.Listen != DefaultTrapListen {
		t.Errorf("section defaults: %+v", s)
	}
	if a := s.Targets[0]; a.Host != "2001:db8::1" || a.Port != 16100 || a.Version != "2c" || a.Community != "public" {
		t.Errorf("a: %+v", a)
	}
	if b := s.Targets[1]; b.Host != "2001:db8::2" || b.Port != 161 {
		t.Errorf("b: %+v", b)
	}
	// Link-local addresses with their zone, as ip(8) prints them.
	if c := s.Targets[2]; c.Host != "fe80::1%eth0" || c.Port != 161 {
		t.Errorf("c: %+v", c)
	}
	if d := s.Targets[3]; d.Host != "fe80::2%eth1" || d.Port != 16101 {
		t.Errorf("d: %+v", d)
	}
	if e := s.Targets[4]; e.Host != "fe80::3%eth2" || e.Port != 161 {
		t.Errorf("e: %+v", e)
	}
	// No snmp section: nothing polls and no trap listener starts.
	cfg, err = Parse([]byte("data_dir: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.SNMP.Targets) != 0 || cfg.SNMP.Traps.Listen.Enabled() {
		t.Errorf("no section: %+v", cfg.SNMP)
	}
}

func TestSNMPV3DefaultsMerge(t *testing.T) {
	cfg, err := Parse([]byte(`
snmp:
  defaults:
    version: 3
    v3: {auth_protocol: sha512, auth_password: secret-auth, priv_protocol: aes256c, priv_password: secret-priv}
  targets:
    - {name: r1, address: 10.0.0.1, v3: {user: alice}}
    - {name: r2, address: 10.0.0.2, version: 2c, community: c2}
  traps:
    users:
      - {user: trapper, auth_protocol: MD5, auth_password: trapauth1}
`))
	if err != nil {
		t.Fatal(err)
	}
	r1 := cfg.SNMP.Targets[0]
	if r1.V3.User != "alice" || r1.V3.AuthProtocol != "SHA512" || r1.V3.PrivProtocol != "AES256C" || r1.V3.SecurityLevel != "authPriv" {
		t.Errorf("r1: %+v", r1.V3)
	}
	if r2 := cfg.SNMP.Targets[1]; r2.Version != "2c" || r2.Community != "c2" {
		t.Errorf("r2: %+v", r2)
	}
	if u := cfg.SNMP.Traps.Users[0]; u.SecurityLevel != "authNoPriv" || u.AuthProtocol != "MD5" {
		t.Errorf("trap user: %+v", u)
	}
}

// TestSNMPUnconnectedUDP: use_unconnected_udp_socket (snmp_exporter's
// name) is off by default, inherited from snmp.defaults, and a target may
// turn it off again.
func TestSNMPUnconnectedUDP(t *testing.T) {
	cfg, err := Parse([]byte(`
snmp:
  defaults: {use_unconnected_udp_socket: true}
  targets:
    - {name: r1, address: 10.0.0.1}
    - {name: r2, address: 10.0.0.2, use_unconnected_udp_socket: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.SNMP.Targets[0].UnconnectedUDP || cfg.SNMP.Targets[1].UnconnectedUDP {
		t.Errorf("r1 %v (want true, inherited), r2 %v (want false)", cfg.SNMP.Targets[0].UnconnectedUDP, cfg.SNMP.Targets[1].UnconnectedUDP)
	}
	if DefaultSNMPTarget().UnconnectedUDP {
		t.Error("on by default")
	}
}

func TestSNMPErrorsNameFileLineAndField(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"snmp:\n  targets:\n    - name: a\n      adress: x\n", "cfg.yaml:4: field adress: unknown key in snmp.targets[0]"},
		{"snmp:\n  defaults:\n    v3: {usr: x}\n", "cfg.yaml:3: field usr: unknown key in snmp.defaults.v3"},
		{"snmp:\n  traps: {lissen: x}\n", "cfg.yaml:2: field lissen: unknown key in snmp.traps"},
		{"snmp:\n  targets:\n    - {name: a, address: x, version: 4}\n", "cfg.yaml:3: snmp.targets[a].version: must be 1, 2c or 3"},
		{"snmp:\n  targets:\n    - {name: a, address: \"x:99999\"}\n", "cfg.yaml:3: snmp.targets[a].address: \"x:99999\" has an invalid port"},
		{"snmp:\n  targets:\n    - {address: x}\n", "cfg.yaml:3: snmp.targets[0].name: must be set"},
		{"snmp:\n  targets:\n    - {name: a, address: \" 10.0.0.1\"}\n", "cfg.yaml:3: snmp.targets[a].address: \" 10.0.0.1\" has white space"},
		{"snmp:\n  targets:\n    - {name: a, address: \"10.0.0.1 :161\"}\n", "cfg.yaml:3: snmp.targets[a].address: \"10.0.0.1 :161\" has white space"},
		{"snmp:\n  targets:\n    - {name: a}\n", "cfg.yaml:3: snmp.targets[a].address: must be set"},
		{"snmp:\n  targets:\n    - {name: a, address: x}\n    - {name: a, address: y}\n", "cfg.yaml:4: snmp.targets[a].name: duplicate target name (also on line 3)"},
		{"snmp:\n  defaults:\n    interval: 10s\n    timeout: 6s\n  targets:\n    - {name: a, address: x}\n", "cfg.yaml:6: snmp.targets[a]: timeout 6s x (retries 1 + 1) exceeds the interval 10s"},
		{"snmp:\n  defaults:\n    retries: 20\n", "cfg.yaml:3: snmp.defaults.retries: must be between 0 and 10"},
		// A timeout below the floor was taken, and every healthy agent
		// reported down: in snmp.defaults and on a target.
		{"snmp:\n  defaults:\n    timeout: 5ms\n", "cfg.yaml:3: snmp.defaults.timeout: must be at least 100ms, not 5ms"},
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      timeout: 1ns\n", "cfg.yaml:5: snmp.targets[a].timeout: must be at least 100ms, not 1ns"},
		{"snmp:\n  targets:\n    - {name: a, address: x, timeout: 99ms}\n", "cfg.yaml:3: snmp.targets[a].timeout: must be at least 100ms, not 99ms"},
		{"snmp:\n  targets:\n    - {name: a, address: x, timeout: -1}\n", "cfg.yaml:3: snmp.targets[a].timeout: must be at least 100ms"},
		{"snmp:\n  defaults:\n    timeout: 0s\n", "cfg.yaml:3: snmp.defaults.timeout: must be at least 100ms, not 0s"},
		{"snmp:\n  defaults:\n    interval: soon\n", "cfg.yaml:3: snmp.defaults.interval: \"soon\" is not a duration"},
		{"snmp:\n  defaults:\n    max_repetitions: 0\n", "cfg.yaml:3: snmp.defaults.max_repetitions: must be between 1 and 1000"},
		{"snmp:\n  targets:\n    - {name: a, address: x, tags: {agent: core}}\n", "cfg.yaml:3: snmp.targets[a].tags.agent: weir sets agent to the host polled"},
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      tags:\n        site: ams\n        agent: core\n", "cfg.yaml:7: snmp.targets[a].tags.agent: weir sets agent"},
		{"snmp:\n  defaults:\n    tags:\n      agent: core\n", "cfg.yaml:4: snmp.defaults.tags.agent: weir sets agent"},
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      version: 3\n      v3: {user: u, auth_protocol: SHA999, auth_password: 12345678}\n",
			"cfg.yaml:6: snmp.targets[a].v3: auth_protocol must be one of MD5, SHA, SHA224, SHA256, SHA384, SHA512, not \"SHA999\""},
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      version: 3\n      v3: {user: u, security_level: authPriv, auth_password: 12345678}\n",
			"snmp.targets[a].v3: priv_password must be set for authPriv"},
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      version: 3\n      v3: {user: u, auth_password: short}\n",
			"auth_password must be at least 8 characters"},
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      version: 3\n      v3: {user: u, priv_protocol: RC4, priv_password: 12345678, auth_password: 12345678}\n",
			"priv_protocol must be one of DES, AES, AES192, AES256, AES192C, AES256C, not \"RC4\""},
		{"snmp:\n  targets:\n    - {name: a, address: x, version: 3}\n", "cfg.yaml:3: snmp.targets[a].v3: user must be set for version 3"},
		// v3 credentials on a target left at version 2c polled it with
		// the community "public", and weir check said ok.
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      v3: {user: u, auth_password: 12345678}\n",
			"cfg.yaml:5: snmp.targets[a].v3: set, but the version is 2c: add version: 3 (or remove v3)"},
		// engine_id in a polled target's v3 was accepted and ignored.
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      version: 3\n      v3: {user: u, auth_password: 12345678, engine_id: 80001f888056ee4b7d36b4d567}\n",
			"cfg.yaml:6: snmp.targets[a].v3: engine_id is for trap users (snmp.traps.users)"},
		{"snmp:\n  targets:\n    - {name: a, address: x, profiles: {x: 1}}\n", "cfg.yaml:3: profiles: must be a list of profile names or auto"},
		{"snmp:\n  targets:\n    - name: a\n      address: x\n      profiles: [system, if-mibb]\n", "cfg.yaml:5: snmp.targets[a].profiles: unknown profile if-mibb (known: arista-cpu-memory,"},
		{"snmp:\n  defaults:\n    profiles: [nope]\n", "cfg.yaml:3: snmp.defaults.profiles: unknown profile nope"},
		{"snmp:\n  profiles_dir: /nonexistent/weir\n", "cfg.yaml:2: snmp.profiles_dir: profiles_dir: stat /nonexistent/weir: no such file or directory"},
		{"snmp:\n  max_concurrency: -1\n", "cfg.yaml:2: snmp.max_concurrency: must be between 1 and 100000"},
		{"snmp:\n  traps: {topic: \"bad topic\"}\n", "cfg.yaml:2: snmp.traps.topic: invalid topic name"},
		{"snmp:\n  traps:\n    users:\n      - {auth_password: 12345678}\n", "cfg.yaml:4: snmp.traps.users[0].user: must be set"},
		{"snmp:\n  traps:\n    users:\n      - {user: u, engine_id: xyz}\n", "cfg.yaml:4: snmp.traps.users[0]: engine_id must be 5 to 32 bytes in hex"},
		{"snmp:\n  traps:\n    engine_id: 0x8000\n", "cfg.yaml:3: snmp.traps.engine_id: must be 5 to 32 bytes in hex"},
		{"snmp:\n  traps:\n    users:\n      - {user: u, auth_protocol: SHA, auth_password: 12345678}\n      - {user: u, auth_protocol: SHA, auth_password: 87654321}\n", "cfg.yaml:5: snmp.traps.users[1]: user \"u\" is listed twice for the same engine_id"},
		{"snmp:\n  traps:\n    users:\n      - {user: u, engine_id: 0x8000000903000102030405, auth_password: 12345678}\n      - {user: u, engine_id: 8000000903000102030405, auth_password: 87654321}\n", "cfg.yaml:5: snmp.traps.users[1]: user \"u\" is listed twice for the same engine_id"},
		{"snmp:\n  targets:\n    - {name: a, address: x, community: \"${WEIR_NO_SUCH_VAR}\"}\n", "cfg.yaml:3: environment variable WEIR_NO_SUCH_VAR is not set"},
		// gosnmp encodes a community's length in one byte: a longer one
		// made every request malformed, and the agent was reported down.
		{"snmp:\n  targets:\n    - {name: a, address: x, community: " + strings.Repeat("c", 128) + "}\n", "cfg.yaml:3: snmp.targets[a].community: is 128 bytes; at most 127"},
		{"snmp:\n  defaults:\n    community: " + strings.Repeat("c", 200) + "\n", "cfg.yaml:3: snmp.defaults.community: is 200 bytes; at most 127"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "cfg.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil {
			t.Errorf("%q: no error, want %q", tc.yaml, tc.want)
			continue
		}
		got := strings.ReplaceAll(err.Error(), path, "cfg.yaml")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.yaml, got, tc.want)
		}
	}
}

// TestSNMPTimeoutFloor: the floor itself is taken, in snmp.defaults and
// on a target.
func TestSNMPTimeoutFloor(t *testing.T) {
	c, err := Parse([]byte("snmp:\n  defaults: {timeout: 100ms}\n  targets:\n    - {name: a, address: x}\n    - {name: b, address: y, timeout: 100ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range c.SNMP.Targets {
		if tg.Timeout != MinSNMPTimeout {
			t.Errorf("%s: timeout %v, want %v", tg.Name, tg.Timeout, MinSNMPTimeout)
		}
	}
}

func FuzzSNMPSection(f *testing.F) {
	f.Add("snmp:\n  targets:\n    - {name: a, address: x, profiles: auto}\n")
	f.Add("snmp:\n  defaults: {version: 3, v3: {user: u}}\n  targets: [{name: a, address: \"[::1]:1\"}]\n")
	// The example config, every section of it, so mutations reach the
	// other sections' parsing and checks too.
	if b, err := os.ReadFile("weir.yaml"); err == nil {
		f.Add(string(b))
	}
	f.Add("broker:\n  retention: {time: 7d, bytes: 1GiB}\n  topics:\n    raw.syslog: {partitions: 3, retention: {time: -1}}\n")
	f.Add("gnmi:\n  targets: [{name: a, address: \"x:6030\", subscriptions: [{path: /interfaces, mode: sample, sample_interval: 10s}]}]\n")
	f.Add("sinks:\n  - {type: file, path: /tmp/x, max_size: 100MiB}\n  - {type: webhook, url: \"http://x\", template: \"{{.Type}}\"}\n")
	f.Fuzz(func(t *testing.T, s string) {
		checkParse(t, []byte(s))
	})
}

// TestTrapUserPerEngine: one user name may be listed once per sender's
// engine ID, as each sender localizes the keys to its own.
func TestTrapUserPerEngine(t *testing.T) {
	cfg, err := Parse([]byte("snmp:\n  traps:\n    users:\n" +
		"      - {user: u, engine_id: 8000000903000102030405, auth_protocol: SHA, auth_password: 12345678}\n" +
		"      - {user: u, engine_id: 8000000903000102030406, auth_protocol: SHA, auth_password: 87654321}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cfg.SNMP.Traps.Users); n != 2 {
		t.Fatalf("%d users", n)
	}
	if u := cfg.SNMP.Traps.Users[0]; u.SecurityLevel != "authNoPriv" || u.LevelGiven {
		t.Errorf("a level from the passwords: %+v", u)
	}
}

// TestSNMPAddressWarnings: an IPv6 address written without brackets that
// ends in an SNMP port is warned of: it is an address of its own, polled at
// port 161; bracketed, or ending otherwise, it is not.
func TestSNMPAddressWarnings(t *testing.T) {
	cfg, err := Parse([]byte("snmp:\n  targets:\n    - {name: a, address: \"2001:db8::1:161\"}\n    - {name: b, address: \"[2001:db8::1]:161\"}\n    - {name: c, address: \"2001:db8::1\"}\n    - {name: d, address: \"192.0.2.1:161\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`snmp target "a": address 2001:db8::1:161 is polled as one IPv6 address at port 161; if 161 is the port, write [2001:db8::1]:161`}
	if got := cfg.AddressWarnings(); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}
