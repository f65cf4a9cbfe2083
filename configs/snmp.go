package configs

import (
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/internal/yamlerr"
)

// SNMP configures the SNMP poller and trap receiver (collectors/snmp,
// collectors/trap).
//
// What the user writes (snmp.defaults, snmp.targets[]) is decoded into
// SNMPTargetSpec, whose fields are optional; Targets holds the resolved
// targets, each field taken from the target, else snmp.defaults, else the
// built-in default (DefaultSNMPTarget), so the collectors never see a
// half-filled target.
type SNMP struct {
	// Defaults as written, for documentation and `weir check`.
	Defaults SNMPTargetSpec `yaml:"defaults"`
	// Targets resolved against Defaults and the built-in defaults.
	Targets []SNMPTarget `yaml:"-"`
	Traps   SNMPTraps    `yaml:"traps"`
	// ProfilesDir holds user profiles (*.yaml) that override or add to the
	// built-in ones by name.
	ProfilesDir string `yaml:"profiles_dir"`
	// MaxConcurrency bounds the polls in flight across all targets.
	MaxConcurrency int `yaml:"max_concurrency"`
	// Topic receives the poll records; default raw.snmp.
	Topic string `yaml:"topic"`
	// Profiles are the built-in profiles and profiles_dir's as they were
	// when the file was read (nil if it has no snmp section: see
	// LoadSNMPProfiles), so a reload reads them again with the file.
	Profiles *profile.Set `yaml:"-"`
}

// LoadSNMPProfiles returns the profiles read with the file, or reads them
// (the built-in ones and profiles_dir's) for a config that has none.
func (s *SNMP) LoadSNMPProfiles() (*profile.Set, error) {
	if s.Profiles != nil {
		return s.Profiles, nil
	}
	return profile.Load(BuiltinSNMPProfiles(), s.ProfilesDir)
}

// SNMPTargetSpec is one target (or snmp.defaults) as written; nil and zero
// fields are inherited.
type SNMPTargetSpec struct {
	Name           string            `yaml:"name"`
	Address        string            `yaml:"address"`
	Version        string            `yaml:"version"`
	Community      string            `yaml:"community"`
	V3             *SNMPv3           `yaml:"v3"`
	Interval       *Duration         `yaml:"interval"`
	Timeout        *Duration         `yaml:"timeout"`
	Retries        *int              `yaml:"retries"`
	MaxRepetitions *int              `yaml:"max_repetitions"`
	Profiles       *SNMPProfiles     `yaml:"profiles"`
	Tags           map[string]string `yaml:"tags"`
	// UnconnectedUDP takes answers from any address, matched by request
	// ID: multi-homed agents answer from another address than the one
	// polled. The name is snmp_exporter's.
	UnconnectedUDP *bool `yaml:"use_unconnected_udp_socket"`
}

// SNMPv3 is a USM user, for polling and for receiving v3 traps.
type SNMPv3 struct {
	User string `yaml:"user"`
	// SecurityLevel is noAuthNoPriv, authNoPriv or authPriv; default
	// authPriv when a priv password is set, authNoPriv when only an auth
	// password is, else noAuthNoPriv.
	SecurityLevel string `yaml:"security_level"`
	// AuthProtocol is MD5, SHA, SHA224, SHA256, SHA384 or SHA512.
	AuthProtocol string `yaml:"auth_protocol"`
	AuthPassword string `yaml:"auth_password"`
	// PrivProtocol is DES, AES (AES-128), AES192, AES256 (Blumenthal key
	// extension) or AES192C, AES256C (Reeder, "Cisco" key extension).
	PrivProtocol string `yaml:"priv_protocol"`
	PrivPassword string `yaml:"priv_password"`
	ContextName  string `yaml:"context_name"`
	// EngineID is only used for trap users: the authoritative engine ID
	// (hex) of the sender. Empty accepts any engine.
	EngineID string `yaml:"engine_id"`
	// LevelGiven: security_level was written in the config, not taken
	// from the passwords. A trap user's given level is the least its
	// traps need; one taken from the passwords asks for authentication
	// only, as Net-SNMP's snmptrapd does by default.
	LevelGiven bool `yaml:"-"`
}

// EngineIDHex is an engine_id as weir compares engine IDs: hex, lower
// case, without 0x.
func EngineIDHex(id string) string { return strings.TrimPrefix(strings.ToLower(id), "0x") }

// SNMPProfiles is a list of profile names or "auto" (chosen by sysObjectID).
type SNMPProfiles struct {
	Auto  bool
	Names []string
}

// UnmarshalYAML accepts `auto`, a single name, or a list of names.
func (p *SNMPProfiles) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == "auto" {
			*p = SNMPProfiles{Auto: true}
			return nil
		}
		if n.Value == "" {
			return fmt.Errorf("line %d: profiles: must be a list of profile names or auto", n.Line)
		}
		*p = SNMPProfiles{Names: []string{n.Value}}
		return nil
	case yaml.SequenceNode:
		var names []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Value == "" {
				return fmt.Errorf("line %d: profiles: entries must be profile names", c.Line)
			}
			if c.Value == "auto" {
				// "auto" in a list adds the sysObjectID match to the
				// named profiles.
				p.Auto = true
				continue
			}
			names = append(names, c.Value)
		}
		p.Names = names
		return nil
	}
	return fmt.Errorf("line %d: profiles: must be a list of profile names or auto", n.Line)
}

// SNMPTarget is a resolved target: every field set.
type SNMPTarget struct {
	Name string
	// Host and Port come from address; port 161 if not given.
	Host           string
	Port           uint16
	Version        string // "1", "2c" or "3"
	Community      string
	V3             SNMPv3
	Interval       time.Duration
	Timeout        time.Duration
	Retries        int
	MaxRepetitions int
	Profiles       SNMPProfiles
	Tags           map[string]string
	// UnconnectedUDP: answers are taken from any address (snmp_exporter's
	// use_unconnected_udp_socket), not only from Host:Port.
	UnconnectedUDP bool
	// Line is where the target is defined, for errors found later (an
	// unknown profile name).
	Line int
}

// SNMPTraps configures the trap receiver.
type SNMPTraps struct {
	// Listen is the UDP address; default 127.0.0.1:5162, "off" disables.
	Listen Address `yaml:"listen"`
	// Communities accepted from v1/v2c senders; empty accepts any.
	Communities []string `yaml:"communities"`
	// Users accepted from v3 senders.
	Users []SNMPv3 `yaml:"users"`
	// Topic receives the traps; default raw.traps.
	Topic string `yaml:"topic"`
	// EngineID is the receiver's own SNMP engine ID, for v3 informs (hex);
	// default one made at the first start and kept in data_dir.
	EngineID string `yaml:"engine_id"`
}

// defaultSNMPTarget holds the built-in defaults under snmp.defaults; it is
// never modified (DefaultSNMPTarget copies it).
var defaultSNMPTarget = SNMPTarget{
	Port:           161,
	Version:        "2c",
	Community:      "public",
	Interval:       60 * time.Second,
	Timeout:        5 * time.Second,
	Retries:        1,
	MaxRepetitions: 25,
	Profiles:       SNMPProfiles{Names: []string{"system", "if-mib"}},
}

// DefaultSNMPTarget returns the built-in target defaults.
func DefaultSNMPTarget() SNMPTarget {
	t := defaultSNMPTarget
	t.Profiles.Names = append([]string(nil), t.Profiles.Names...)
	return t
}

// Built-in values of the snmp section.
const (
	DefaultSNMPMaxConcurrency = 64
	DefaultTrapListen         = "127.0.0.1:5162"
	// MinSNMPTimeout is the least snmp timeout (defaults or target) weir
	// takes. Net-SNMP waits 1s by default and snmp_exporter 5s, but an
	// agent on a LAN answers in a few milliseconds, so a fast poll of a
	// near agent may rightly want less than a second; below 100ms,
	// though, a busy agent (a walk of a large table, a CPU-bound control
	// plane) misses it on every poll and is reported down, and the value
	// is most likely a unit slip (5ms for 5s, a bare 1ns).
	MinSNMPTimeout = 100 * time.Millisecond
)

// snmpRaw is the section as decoded, before resolution.
type snmpRaw struct {
	Defaults       SNMPTargetSpec   `yaml:"defaults"`
	Targets        []SNMPTargetSpec `yaml:"targets"`
	Traps          SNMPTraps        `yaml:"traps"`
	ProfilesDir    string           `yaml:"profiles_dir"`
	MaxConcurrency int              `yaml:"max_concurrency"`
	Topic          string           `yaml:"topic"`
}

// UnmarshalYAML decodes, checks keys, applies defaults and validates the
// section. config.go's strict decoder does not reach into a custom
// unmarshaler, so unknown keys are checked here; they are reported in the
// "field X not found in type T" form so that the top-level loader turns
// them into its usual "unknown key in T" message.
func (s *SNMP) UnmarshalYAML(n *yaml.Node) error {
	var errs []string
	checkKeys(n, reflect.TypeOf(snmpRaw{}), "snmp", &errs)
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	var raw snmpRaw
	if err := n.Decode(&raw); err != nil {
		return err
	}
	out, errs := resolveSNMP(n, raw)
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	*s = out
	return nil
}

func resolveSNMP(n *yaml.Node, raw snmpRaw) (SNMP, []string) {
	var errs []string
	add := func(line int, path, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("line %d: %s: %s", line, path, fmt.Sprintf(format, args...)))
	}
	out := SNMP{
		Defaults:       raw.Defaults,
		Traps:          raw.Traps,
		ProfilesDir:    raw.ProfilesDir,
		MaxConcurrency: raw.MaxConcurrency,
		Topic:          raw.Topic,
	}
	if out.MaxConcurrency == 0 {
		out.MaxConcurrency = DefaultSNMPMaxConcurrency
	} else if out.MaxConcurrency < 0 || out.MaxConcurrency > 100000 {
		add(keyLine(n, "max_concurrency"), "snmp.max_concurrency", "must be between 1 and 100000, not %d", out.MaxConcurrency)
	}
	if out.Topic != "" && !validTopic(out.Topic) {
		add(keyLine(n, "topic"), "snmp.topic", "invalid topic name %q", out.Topic)
	}
	if out.Traps.Listen == "" {
		out.Traps.Listen = DefaultTrapListen
	}
	if out.Traps.Topic != "" && !validTopic(out.Traps.Topic) {
		add(keyLine(child(n, "traps"), "topic"), "snmp.traps.topic", "invalid topic name %q", out.Traps.Topic)
	}
	if out.Traps.EngineID != "" {
		if b, err := hex.DecodeString(EngineIDHex(out.Traps.EngineID)); err != nil || len(b) < 5 || len(b) > 32 {
			add(keyLine(child(n, "traps"), "engine_id"), "snmp.traps.engine_id", "must be 5 to 32 bytes in hex (like 0x80001f8880aabbccdd), not %q", out.Traps.EngineID)
		}
	}
	usersNode := child(child(n, "traps"), "users")
	// One user name may have several entries, one per sender's engine ID
	// (a trap's keys are localized to its sender); the same pair twice
	// would leave one silently unused.
	seenUsers := map[[2]string]bool{}
	for i, u := range out.Traps.Users {
		un := item(usersNode, i)
		path := fmt.Sprintf("snmp.traps.users[%d]", i)
		if u.User == "" {
			add(nodeLine(un), path+".user", "must be set")
		}
		if k := [2]string{u.User, EngineIDHex(u.EngineID)}; u.User != "" && seenUsers[k] {
			add(nodeLine(un), path, "user %q is listed twice for the same engine_id; one entry would never be used", u.User)
		} else {
			seenUsers[k] = true
		}
		u.LevelGiven = u.SecurityLevel != ""
		lvl, err := validateV3(&u)
		if err != nil {
			add(nodeLine(un), path, "%v", err)
		}
		u.SecurityLevel = lvl
		out.Traps.Users[i] = u
	}

	defNode := child(n, "defaults")
	if raw.Defaults.Name != "" || raw.Defaults.Address != "" {
		add(nodeLine(defNode), "snmp.defaults", "name and address belong to targets, not defaults")
	}
	// The built-in defaults overlaid with snmp.defaults.
	base := DefaultSNMPTarget()
	if errs2 := applySpec(&base, raw.Defaults, defNode, "snmp.defaults", false); len(errs2) > 0 {
		errs = append(errs, errs2...)
	}

	targetsNode := child(n, "targets")
	seen := map[string]int{}
	for i, spec := range raw.Targets {
		tn := item(targetsNode, i)
		path := fmt.Sprintf("snmp.targets[%d]", i)
		if spec.Name != "" {
			path = fmt.Sprintf("snmp.targets[%s]", spec.Name)
		}
		t := base
		t.Line = nodeLine(tn)
		// Each target owns its slices and maps.
		t.Profiles.Names = append([]string(nil), base.Profiles.Names...)
		errs = append(errs, applySpec(&t, spec, tn, path, true)...)
		if spec.Name == "" {
			add(nodeLine(tn), path+".name", "must be set")
		} else if prev, dup := seen[spec.Name]; dup {
			add(keyLine(tn, "name"), path+".name", "duplicate target name (also on line %d)", prev)
		} else {
			seen[spec.Name] = nodeLine(tn)
		}
		if spec.Address == "" {
			add(nodeLine(tn), path+".address", "must be set")
		}
		if t.Interval > 0 && t.Timeout*time.Duration(t.Retries+1) > t.Interval {
			add(nodeLine(tn), path, "timeout %v x (retries %d + 1) exceeds the interval %v: a dead agent would overrun every poll", t.Timeout, t.Retries, t.Interval)
		}
		out.Targets = append(out.Targets, t)
	}

	// Profile names are checked here, with the target's line, so that
	// `weir check` catches a misspelt profile; the built-in profiles and
	// those of profiles_dir (relative to the working directory) count.
	set, err := profile.Load(BuiltinSNMPProfiles(), raw.ProfilesDir)
	if err != nil {
		for _, l := range strings.Split(err.Error(), "\n") {
			add(keyLine(n, "profiles_dir"), "snmp.profiles_dir", "%s", l)
		}
		return out, errs
	}
	out.Profiles = set
	if err := set.Check(out.Defaults.profileNames()); err != nil {
		add(keyLine(defNode, "profiles"), "snmp.defaults.profiles", "%v", err)
	}
	for i, t := range out.Targets {
		if err := set.Check(t.Profiles.Names); err != nil && raw.Targets[i].Profiles != nil {
			add(keyLine(item(targetsNode, i), "profiles"), fmt.Sprintf("snmp.targets[%s].profiles", t.Name), "%v", err)
		}
	}
	return out, errs
}

func (s SNMPTargetSpec) profileNames() []string {
	if s.Profiles == nil {
		return nil
	}
	return s.Profiles.Names
}

// applySpec overlays the set fields of spec on t.
func applySpec(t *SNMPTarget, spec SNMPTargetSpec, n *yaml.Node, path string, isTarget bool) []string {
	var errs []string
	add := func(key, format string, args ...any) {
		// A dotted key (tags.agent) is looked up a level at a time.
		at, k := n, key
		for {
			parent, rest, ok := strings.Cut(k, ".")
			c := child(at, parent)
			if !ok || c == nil {
				break
			}
			at, k = c, rest
		}
		line := keyLine(at, k)
		if line == 0 {
			line = nodeLine(n)
		}
		errs = append(errs, fmt.Sprintf("line %d: %s.%s: %s", line, path, key, fmt.Sprintf(format, args...)))
	}
	if isTarget {
		t.Name = spec.Name
		if spec.Address != "" {
			host, port, err := splitSNMPAddress(spec.Address)
			if err != nil {
				add("address", "%v", err)
			}
			t.Host, t.Port = host, port
		}
	}
	if spec.Version != "" {
		switch spec.Version {
		case "1", "2c", "3":
			t.Version = spec.Version
		case "2":
			t.Version = "2c"
		default:
			add("version", "must be 1, 2c or 3, not %q", spec.Version)
		}
	}
	if spec.Community != "" {
		t.Community = spec.Community
		if len(spec.Community) > maxCommunity {
			// gosnmp writes its length in one byte: every request
			// was malformed, and the agent reported down.
			add("community", "is %d bytes; at most %d", len(spec.Community), maxCommunity)
		}
	}
	if spec.V3 != nil {
		// A target may give only the v3 fields that differ from
		// snmp.defaults.v3 (a per-device user, say).
		t.V3 = mergeV3(t.V3, *spec.V3)
	}
	if spec.Interval != nil {
		if *spec.Interval <= 0 {
			add("interval", "must be positive")
		}
		t.Interval = spec.Interval.Std()
	}
	if spec.Timeout != nil {
		if *spec.Timeout < Duration(MinSNMPTimeout) {
			add("timeout", "must be at least %v, not %v (it is how long each request waits for the agent's answer: below it a healthy agent times out and is reported down)",
				MinSNMPTimeout, spec.Timeout.Std())
		}
		t.Timeout = spec.Timeout.Std()
	}
	if spec.Retries != nil {
		if *spec.Retries < 0 || *spec.Retries > 10 {
			add("retries", "must be between 0 and 10, not %d", *spec.Retries)
		}
		t.Retries = *spec.Retries
	}
	if spec.MaxRepetitions != nil {
		if *spec.MaxRepetitions < 1 || *spec.MaxRepetitions > 1000 {
			add("max_repetitions", "must be between 1 and 1000, not %d", *spec.MaxRepetitions)
		}
		t.MaxRepetitions = *spec.MaxRepetitions
	}
	if spec.Profiles != nil {
		t.Profiles = SNMPProfiles{Auto: spec.Profiles.Auto, Names: append([]string(nil), spec.Profiles.Names...)}
	}
	if spec.UnconnectedUDP != nil {
		t.UnconnectedUDP = *spec.UnconnectedUDP
	}
	if _, ok := spec.Tags["agent"]; ok {
		// The poller's own tag (collectors/snmp/profile.TagAgent) would
		// replace it without a word.
		add("tags.agent", "weir sets agent to the host polled, which enrichment finds the device by: name the tag otherwise")
	}
	if len(spec.Tags) > 0 || t.Tags != nil {
		tags := make(map[string]string, len(t.Tags)+len(spec.Tags))
		for k, v := range t.Tags {
			tags[k] = v
		}
		for k, v := range spec.Tags {
			tags[k] = v
		}
		t.Tags = tags
	}
	if isTarget && spec.V3 != nil && t.Version != "3" {
		// The target's own v3 block, on a target polled with a
		// community: the credentials would go unused, and the agent
		// asked with the community time out.
		add("v3", "set, but the version is %s: add version: 3 (or remove v3)", t.Version)
	}
	if isTarget && t.Version == "3" {
		lvl, err := validateV3(&t.V3)
		if err != nil {
			add("v3", "%v", err)
		}
		t.V3.SecurityLevel = lvl
		if t.V3.User == "" {
			add("v3", "user must be set for version 3")
		}
		if t.V3.EngineID != "" {
			// Accepted and ignored, it let one think the poller used
			// it: a polled agent's engine ID is discovered.
			add("v3", "engine_id is for trap users (snmp.traps.users); a polled agent's engine ID is discovered, remove it")
		}
	}
	return errs
}

// maxCommunity is the longest community gosnmp can send (v1.47.0
// encodes its length in one byte, as BER's short form).
const maxCommunity = 127

func mergeV3(base, over SNMPv3) SNMPv3 {
	pick := func(a, b string) string {
		if b != "" {
			return b
		}
		return a
	}
	return SNMPv3{
		User:          pick(base.User, over.User),
		SecurityLevel: pick(base.SecurityLevel, over.SecurityLevel),
		AuthProtocol:  pick(base.AuthProtocol, over.AuthProtocol),
		AuthPassword:  pick(base.AuthPassword, over.AuthPassword),
		PrivProtocol:  pick(base.PrivProtocol, over.PrivProtocol),
		PrivPassword:  pick(base.PrivPassword, over.PrivPassword),
		ContextName:   pick(base.ContextName, over.ContextName),
		EngineID:      pick(base.EngineID, over.EngineID),
	}
}

// SNMP v3 protocol names accepted in the config, upper-cased.
var (
	snmpAuthProtocols = []string{"MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512"}
	snmpPrivProtocols = []string{"DES", "AES", "AES192", "AES256", "AES192C", "AES256C"}
)

// validateV3 normalises protocol names and checks that the security level
// has what it needs; it returns the effective security level.
func validateV3(v *SNMPv3) (string, error) {
	var problems []string
	v.AuthProtocol = normProto(v.AuthProtocol)
	v.PrivProtocol = normProto(v.PrivProtocol)
	if v.AuthProtocol != "" && !contains(snmpAuthProtocols, v.AuthProtocol) {
		problems = append(problems, fmt.Sprintf("auth_protocol must be one of %s, not %q", strings.Join(snmpAuthProtocols, ", "), v.AuthProtocol))
	}
	if v.PrivProtocol != "" && !contains(snmpPrivProtocols, v.PrivProtocol) {
		problems = append(problems, fmt.Sprintf("priv_protocol must be one of %s, not %q", strings.Join(snmpPrivProtocols, ", "), v.PrivProtocol))
	}
	lvl := v.SecurityLevel
	switch strings.ToLower(lvl) {
	case "":
		switch {
		case v.PrivPassword != "":
			lvl = "authPriv"
		case v.AuthPassword != "":
			lvl = "authNoPriv"
		default:
			lvl = "noAuthNoPriv"
		}
	case "noauthnopriv":
		lvl = "noAuthNoPriv"
	case "authnopriv":
		lvl = "authNoPriv"
	case "authpriv":
		lvl = "authPriv"
	default:
		problems = append(problems, fmt.Sprintf("security_level must be noAuthNoPriv, authNoPriv or authPriv, not %q", lvl))
	}
	if lvl == "authNoPriv" || lvl == "authPriv" {
		if v.AuthPassword == "" {
			problems = append(problems, "auth_password must be set for "+lvl)
		} else if len(v.AuthPassword) < 8 {
			// RFC 3414 section 11.2: shorter passwords are refused by
			// Net-SNMP and most agents.
			problems = append(problems, "auth_password must be at least 8 characters")
		}
		if v.AuthProtocol == "" {
			v.AuthProtocol = "SHA"
		}
	}
	if lvl == "authPriv" {
		if v.PrivPassword == "" {
			problems = append(problems, "priv_password must be set for authPriv")
		} else if len(v.PrivPassword) < 8 {
			problems = append(problems, "priv_password must be at least 8 characters")
		}
		if v.PrivProtocol == "" {
			v.PrivProtocol = "AES"
		}
	}
	if v.EngineID != "" {
		id := EngineIDHex(v.EngineID)
		if b, err := hex.DecodeString(id); err != nil || len(b) < 5 || len(b) > 32 {
			// RFC 3411: an engine ID is 5 to 32 octets.
			problems = append(problems, fmt.Sprintf("engine_id must be 5 to 32 bytes in hex (like 0x80001f8880aabbccdd), not %q", v.EngineID))
		} else {
			v.EngineID = id
		}
	}
	if len(problems) > 0 {
		return lvl, errors.New(strings.Join(problems, "; "))
	}
	return lvl, nil
}

func normProto(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	s = strings.ReplaceAll(s, "-", "")
	switch s {
	case "SHA1":
		return "SHA"
	case "AES128":
		return "AES"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// splitSNMPAddress parses host, host:port, [v6]:port or a bare IPv6
// address, a link-local one with its zone (fe80::1%eth0) too.
func splitSNMPAddress(addr string) (string, uint16, error) {
	if strings.ContainsFunc(addr, unicode.IsSpace) {
		// Passed as a host name, it failed only at the first poll's
		// DNS look-up ("no such host"), long after weir check said ok.
		return "", 0, fmt.Errorf("%q has white space", addr)
	}
	bare := addr
	if inner, ok := strings.CutPrefix(addr, "["); ok && strings.HasSuffix(inner, "]") {
		bare = strings.TrimSuffix(inner, "]")
	}
	if ip, err := netip.ParseAddr(bare); err == nil {
		if ip.Zone() != "" {
			return ip.String(), 161, nil
		}
		return net.IP(ip.AsSlice()).String(), 161, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") {
			return addr, 161, nil
		}
		return "", 0, fmt.Errorf("%q is not host or host:port", addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return "", 0, fmt.Errorf("%q has an invalid port", addr)
	}
	if host == "" {
		return "", 0, fmt.Errorf("%q has no host", addr)
	}
	return host, uint16(p), nil
}

// checkKeys reports mapping keys that have no yaml field in t, recursing
// into structs, pointers to structs, and slices and maps of them (the
// named gnmi.subscriptions). It also reports a mapping where t is a list
// and a list where t is a mapping (shapeErrors), with the key: yaml.v3's
// type error has only the line, which may hold two mappings.
func checkKeys(n *yaml.Node, t reflect.Type, path string, errs *[]string) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if unmarshals(t) {
			return // it takes what it takes (a name for a list of one)
		}
		switch {
		case t.Kind() == reflect.Slice && n.Kind == yaml.MappingNode:
			*errs = append(*errs, fmt.Sprintf("line %d: %s: a list is expected, not a mapping", n.Line, path))
			return
		case t.Kind() == reflect.Map && n.Kind == yaml.SequenceNode:
			*errs = append(*errs, fmt.Sprintf("line %d: %s: a mapping is expected, not a list", n.Line, path))
			return
		}
		if t.Kind() == reflect.Map {
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					checkKeys(n.Content[i+1], t.Elem(), joinKey(path, n.Content[i].Value), errs)
				}
			}
			return
		}
		if t.Kind() == reflect.Slice {
			if n.Kind == yaml.SequenceNode {
				for i, c := range n.Content {
					checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
				}
			}
			return
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || unmarshals(t) {
		return
	}
	if n.Kind == yaml.SequenceNode {
		*errs = append(*errs, fmt.Sprintf("line %d: %s: a mapping is expected, not a list", n.Line, path))
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	fields := yamlKeys(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if yamlerr.IsMergeKey(k) {
			for _, m := range yamlerr.MergedMappings(n.Content[i+1]) {
				checkKeys(m, t, path, errs)
			}
			continue
		}
		ft, ok := fields[k.Value]
		if !ok {
			// This wording is what config.go's unknownKeys rewrites.
			*errs = append(*errs, fmt.Sprintf("line %d: field %s not found in type %s%s", k.Line, k.Value, path, keyHint(k.Value, yamlKeys(t))))
			continue
		}
		checkKeys(n.Content[i+1], ft, joinKey(path, k.Value), errs)
	}
}

// shapeErrors are checkKeys' errs of a list written as a mapping or a
// mapping as a list, not its unknown keys.
func shapeErrors(errs []string) []string {
	var out []string
	for _, e := range errs {
		if strings.HasSuffix(e, ": a list is expected, not a mapping") || strings.HasSuffix(e, ": a mapping is expected, not a list") {
			out = append(out, e)
		}
	}
	return out
}

// unmarshals reports whether t decodes itself (yaml.Unmarshaler).
func unmarshals(t reflect.Type) bool {
	u := reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	return t.Implements(u) || reflect.PointerTo(t).Implements(u)
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// child returns the value node of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// keyLine returns the line of key in mapping n, else n's line.
func keyLine(n *yaml.Node, key string) int {
	if n == nil || n.Kind != yaml.MappingNode {
		return nodeLine(n)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return n.Line
}

func item(n *yaml.Node, i int) *yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
		return nil
	}
	return n.Content[i]
}

func nodeLine(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

//go:embed snmp/profiles/*.yaml
var builtinSNMPProfiles embed.FS

// BuiltinSNMPProfiles returns the profiles shipped in configs/snmp/profiles,
// embedded in the binary so weir needs no files beside it.
func BuiltinSNMPProfiles() fs.FS {
	sub, err := fs.Sub(builtinSNMPProfiles, "snmp/profiles")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// AddressWarnings are the SNMP targets whose address is an IPv6 address
// written without brackets that ends in an SNMP port (2001:db8::1:161):
// it is a valid address of its own, polled at port 161, where
// [2001:db8::1]:161 was likely meant.
func (c *Config) AddressWarnings() []string {
	var out []string
	for _, t := range c.SNMP.Targets {
		ip, err := netip.ParseAddr(t.Host)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			continue
		}
		for _, port := range []string{"161", "1161", "10161"} {
			if prefix, ok := strings.CutSuffix(t.Host, ":"+port); ok && prefix != "" && !strings.HasSuffix(prefix, ":") {
				if _, err := netip.ParseAddr(prefix); err == nil {
					out = append(out, fmt.Sprintf("snmp target %q: address %s is polled as one IPv6 address at port %d; if %s is the port, write [%s]:%s",
						t.Name, t.Host, t.Port, port, prefix, port))
				}
			}
		}
	}
	return out
}

// Settings is t less the line it is written on: what tells whether a
// target changed at a reload.
func (t SNMPTarget) Settings() SNMPTarget {
	t.Line = 0
	return t
}
