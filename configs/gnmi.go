package configs

import (
	"fmt"
	"maps"
	"net"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/weirnet/weir/collectors/gnmi/gpath"
	"github.com/weirnet/weir/internal/tlsconf"
	"github.com/weirnet/weir/internal/yamlerr"
)

// GNMI configures the gNMI collector (collectors/gnmi): dial-in Subscribe
// to each target, one stream per target.
//
// Subscriptions are written inline in a target (a list of objects) or by
// name, from gnmi.subscriptions; Targets holds them resolved, so the
// collector never sees a name.
type GNMI struct {
	// Topic receives the records; default raw.gnmi.
	Topic string `yaml:"topic"`
	// QueueSize bounds each target's queue of notifications waiting to be
	// published; past it notifications are dropped and counted. Default
	// 10000.
	QueueSize int `yaml:"queue_size"`
	// QueueBytes bounds the same queue, with the batch being published,
	// by the memory its notifications hold (decoded, estimated), so a
	// target sending large notifications cannot hold queue_size of them;
	// default 64MiB. An empty queue always takes one, however large.
	QueueBytes ByteSize `yaml:"queue_bytes"`
	// QueueMemory bounds the memory all targets' queues hold together,
	// counted as queue_bytes counts it; default 512MiB, at least
	// queue_bytes. When it is full, new notifications are dropped, first
	// from targets holding more than their share (see collectors/gnmi).
	QueueMemory ByteSize `yaml:"queue_memory"`
	// RetryMin and RetryMax bound the reconnect backoff (exponential,
	// with jitter); defaults 1s and 60s. It goes back to RetryMin after
	// a session the target served for RetryMax.
	RetryMin Duration `yaml:"retry_min"`
	RetryMax Duration `yaml:"retry_max"`
	// Targets, resolved.
	Targets []GNMITarget `yaml:"targets"`
	// Subscriptions shared by name.
	Subscriptions map[string]GNMISubscription `yaml:"subscriptions"`
}

// GNMITarget is one gNMI server weir dials.
type GNMITarget struct {
	Name    string `yaml:"name"`
	Address string `yaml:"address"`
	// Insecure dials plaintext (no TLS); otherwise TLS, with TLS's
	// settings when given and the system roots otherwise.
	Insecure bool     `yaml:"insecure"`
	TLS      *GNMITLS `yaml:"tls"`
	// Username and Password go as gRPC metadata on every RPC.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// Encoding is json, json_ietf or proto (in any case: JSON_IETF is
	// read as json_ietf); default json.
	Encoding string `yaml:"encoding"`
	// Timeout bounds dialing, Capabilities and the first response to
	// Subscribe, and is the least stall bound; default 10s.
	Timeout Duration `yaml:"timeout"`
	// PrefixTarget is the target field of the request's prefix: the
	// device a server that fronts several (a gNMI gateway, openconfig's
	// reference server, gnmic as a proxy) is to answer for. gnmic's
	// --target.
	PrefixTarget string `yaml:"prefix_target"`
	// Subscriptions, resolved: inline objects and names of
	// gnmi.subscriptions.
	Subscriptions []GNMISubscription `yaml:"-"`
	// Line is where the target is written, for messages.
	Line int `yaml:"-"`
}

// GNMITLS configures TLS to a target.
type GNMITLS struct {
	CAFile     string `yaml:"ca_file"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify, as every other tls section names it; SkipVerify
	// is its first name here, still read.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
	SkipVerify         bool `yaml:"skip_verify"`
}

// Client is t as tlsconf reads it.
func (t GNMITLS) Client() tlsconf.Client {
	return tlsconf.Client{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, ServerName: t.ServerName, InsecureSkipVerify: t.Unverified()}
}

// Unverified reports whether the target's certificate is not checked.
func (t GNMITLS) Unverified() bool { return t.InsecureSkipVerify || t.SkipVerify }

// GNMISubscription is one path subscribed to.
type GNMISubscription struct {
	// Name is the key in gnmi.subscriptions ("" for inline ones).
	Name string `yaml:"-"`
	// Path, e.g. /interfaces/interface[name=Ethernet1]/state/counters.
	Path string `yaml:"path"`
	// Origin of the path (e.g. openconfig); Prefix is a path the target
	// prepends (the request's prefix, so all of a target's subscriptions
	// with the same prefix share it).
	Origin string `yaml:"origin"`
	Prefix string `yaml:"prefix"`
	// PrefixOrigin is the origin written into the prefix
	// ("openconfig:/interfaces"), split off it.
	PrefixOrigin string `yaml:"-"`
	// Mode is stream (default), once or poll.
	Mode string `yaml:"mode"`
	// StreamMode is sample, on_change or target_defined (default) for
	// mode stream.
	StreamMode        string   `yaml:"stream_mode"`
	SampleInterval    Duration `yaml:"sample_interval"`
	HeartbeatInterval Duration `yaml:"heartbeat_interval"`
	SuppressRedundant bool     `yaml:"suppress_redundant"`
	UpdatesOnly       bool     `yaml:"updates_only"`
	// PollInterval is how often mode poll polls; default 10s.
	PollInterval Duration `yaml:"poll_interval"`
}

// Built-in values of the gnmi section.
const (
	DefaultGNMIQueueSize   = 10000
	DefaultGNMIQueueBytes  = 64 << 20
	DefaultGNMIQueueMemory = 512 << 20
	DefaultGNMIRetryMin    = time.Second
	DefaultGNMIRetryMax    = 60 * time.Second
	DefaultGNMITimeout     = 10 * time.Second
	// MinGNMITimeout is the least gnmi.targets[].timeout weir takes.
	MinGNMITimeout          = time.Second
	DefaultGNMIPollInterval = 10 * time.Second
	DefaultGNMIEncoding     = "json"
)

// checkQueueMemory defaults queue_memory and checks it holds at least one
// full queue: below queue_bytes, no target could fill its own.
func checkQueueMemory(n *yaml.Node, out *GNMI, defaultBytes bool, add func(line int, path, format string, args ...any)) {
	if out.QueueMemory == 0 {
		out.QueueMemory = DefaultGNMIQueueMemory
	}
	if out.QueueMemory >= out.QueueBytes {
		return
	}
	bytes := sizeString(out.QueueBytes)
	if defaultBytes {
		bytes += ", the default"
	}
	add(keyLine(n, "queue_memory"), "gnmi.queue_memory", "must be at least queue_bytes (%s), not %s: one target's queue could not fill; lower queue_bytes too", bytes, sizeString(out.QueueMemory))
}

// gnmiRaw is the section as written.
type gnmiRaw struct {
	Topic         string                      `yaml:"topic"`
	QueueSize     int                         `yaml:"queue_size"`
	QueueBytes    ByteSize                    `yaml:"queue_bytes"`
	QueueMemory   ByteSize                    `yaml:"queue_memory"`
	RetryMin      Duration                    `yaml:"retry_min"`
	RetryMax      Duration                    `yaml:"retry_max"`
	Targets       []gnmiTargetRaw             `yaml:"targets"`
	Subscriptions map[string]GNMISubscription `yaml:"subscriptions"`
}

type gnmiTargetRaw struct {
	Name          string       `yaml:"name"`
	Address       string       `yaml:"address"`
	Insecure      bool         `yaml:"insecure"`
	TLS           *GNMITLS     `yaml:"tls"`
	Username      string       `yaml:"username"`
	Password      string       `yaml:"password"`
	Encoding      string       `yaml:"encoding"`
	Timeout       Duration     `yaml:"timeout"`
	PrefixTarget  string       `yaml:"prefix_target"`
	Subscriptions []gnmiSubRef `yaml:"subscriptions"`
}

// gnmiSubRef is one item of a target's subscriptions: a name or an inline
// subscription.
type gnmiSubRef struct {
	name string
	sub  *GNMISubscription
	line int
}

func (r *gnmiSubRef) UnmarshalYAML(n *yaml.Node) error {
	r.line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		r.name = n.Value
		return nil
	case yaml.MappingNode:
		// Its keys were checked with the section's (GNMI.UnmarshalYAML),
		// where its place is known.
		var s GNMISubscription
		if err := n.Decode(&s); err != nil {
			return err
		}
		r.sub = &s
		return nil
	}
	return fmt.Errorf("line %d: a subscription is a name or an object with a path", n.Line)
}

// UnmarshalYAML decodes, checks keys, resolves subscriptions, applies
// defaults and validates the section (config.go's strict decoder does not
// reach into a custom unmarshaler, so keys are checked here).
func (g *GNMI) UnmarshalYAML(n *yaml.Node) error {
	var errs []string
	checkKeys(n, reflect.TypeOf(gnmiRaw{}), "gnmi", &errs)
	// checkKeys stops at a custom unmarshaler: the inline subscriptions'
	// keys are checked here, each named by its place.
	if targets := child(n, "targets"); targets != nil && targets.Kind == yaml.SequenceNode {
		for i, tn := range targets.Content {
			if subs := child(tn, "subscriptions"); subs != nil && subs.Kind == yaml.SequenceNode {
				for j, sn := range subs.Content {
					if sn.Kind == yaml.SequenceNode {
						continue // gnmiSubRef's error says what goes there
					}
					checkKeys(sn, reflect.TypeOf(GNMISubscription{}), fmt.Sprintf("gnmi.targets[%d].subscriptions[%d]", i, j), &errs)
				}
			}
		}
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	var raw gnmiRaw
	if err := n.Decode(&raw); err != nil {
		return err
	}
	out, errs := resolveGNMI(n, raw)
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	*g = out
	return nil
}

func resolveGNMI(n *yaml.Node, raw gnmiRaw) (GNMI, []string) {
	var errs []string
	add := func(line int, path, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("line %d: %s: %s", line, path, fmt.Sprintf(format, args...)))
	}
	out := GNMI{
		Topic:         raw.Topic,
		QueueSize:     raw.QueueSize,
		QueueBytes:    raw.QueueBytes,
		QueueMemory:   raw.QueueMemory,
		RetryMin:      raw.RetryMin,
		RetryMax:      raw.RetryMax,
		Subscriptions: map[string]GNMISubscription{},
	}
	if out.Topic != "" && !validTopic(out.Topic) {
		add(keyLine(n, "topic"), "gnmi.topic", "invalid topic name %q", out.Topic)
	}
	if out.QueueSize == 0 {
		out.QueueSize = DefaultGNMIQueueSize
	} else if out.QueueSize < 1 || out.QueueSize > 10_000_000 {
		add(keyLine(n, "queue_size"), "gnmi.queue_size", "must be between 1 and 10000000, not %d", out.QueueSize)
	}
	if out.QueueBytes == 0 {
		out.QueueBytes = DefaultGNMIQueueBytes
	} else if out.QueueBytes < 64<<10 {
		add(keyLine(n, "queue_bytes"), "gnmi.queue_bytes", "must be at least 64KiB, not %d bytes", out.QueueBytes)
	}
	checkQueueMemory(n, &out, raw.QueueBytes == 0, add)
	if out.RetryMin == 0 {
		out.RetryMin = Duration(DefaultGNMIRetryMin)
	}
	if out.RetryMax == 0 {
		out.RetryMax = Duration(DefaultGNMIRetryMax)
	}
	if out.RetryMin < 0 {
		add(keyLine(n, "retry_min"), "gnmi.retry_min", "must be positive")
	}
	if out.RetryMax < out.RetryMin {
		add(keyLine(n, "retry_max"), "gnmi.retry_max", "must be at least retry_min (%v)", out.RetryMin.Std())
	}

	subsNode := child(n, "subscriptions")
	names := make([]string, 0, len(raw.Subscriptions))
	for name := range raw.Subscriptions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := raw.Subscriptions[name]
		s.Name = name
		sn := child(subsNode, name)
		for _, e := range checkGNMISubscription(&s) {
			add(keyLine(sn, e.key), "gnmi.subscriptions."+name+"."+e.key, "%s", e.msg)
		}
		out.Subscriptions[name] = s
	}

	targetsNode := child(n, "targets")
	seen := map[string]int{}
	for i, rt := range raw.Targets {
		tn := item(targetsNode, i)
		path := fmt.Sprintf("gnmi.targets[%d]", i)
		if rt.Name != "" {
			path = fmt.Sprintf("gnmi.targets[%s]", rt.Name)
		}
		t := GNMITarget{
			Name: rt.Name, Address: rt.Address, Insecure: rt.Insecure, TLS: rt.TLS,
			Username: rt.Username, Password: rt.Password, Encoding: rt.Encoding,
			Timeout: rt.Timeout, PrefixTarget: rt.PrefixTarget, Line: nodeLine(tn),
		}
		if t.Name == "" {
			add(nodeLine(tn), path+".name", "must be set")
		} else if prev, dup := seen[t.Name]; dup {
			add(keyLine(tn, "name"), path+".name", "duplicate target name (also on line %d)", prev)
		} else {
			seen[t.Name] = nodeLine(tn)
		}
		if t.Address == "" {
			add(nodeLine(tn), path+".address", "must be set (host:port)")
		} else if strings.ContainsFunc(t.Address, unicode.IsSpace) {
			add(keyLine(tn, "address"), path+".address", "%q has white space", t.Address)
		} else if _, port, err := net.SplitHostPort(t.Address); err != nil {
			add(keyLine(tn, "address"), path+".address", "%q is not host:port%s", t.Address, bracketsHint(t.Address))
		} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			add(keyLine(tn, "address"), path+".address", "%q has an invalid port", t.Address)
		}
		if t.Insecure && t.TLS != nil {
			add(keyLine(tn, "insecure"), path+".insecure", "insecure (plaintext) and tls exclude each other")
		}
		if t.TLS != nil && (t.TLS.CertFile == "") != (t.TLS.KeyFile == "") {
			add(keyLine(tn, "tls"), path+".tls", "cert_file and key_file go together")
		}
		if t.Password != "" && t.Username == "" {
			add(keyLine(tn, "password"), path+".password", "needs a username")
		}
		// In any case: gnmic and vendor docs write JSON_IETF.
		switch enc := strings.ToLower(t.Encoding); enc {
		case "":
			t.Encoding = DefaultGNMIEncoding
		case "json", "json_ietf", "proto":
			t.Encoding = enc
		default:
			add(keyLine(tn, "encoding"), path+".encoding", "must be json, json_ietf or proto, not %q%s", t.Encoding, valueHint(t.Encoding, "json", "json_ietf", "proto"))
		}
		if t.Timeout == 0 {
			t.Timeout = Duration(DefaultGNMITimeout)
		} else if t.Timeout < Duration(MinGNMITimeout) {
			// Below it a dial, a TLS handshake or an answer over a real
			// network fails every time, and the target is retried for
			// ever with an error that says only "deadline exceeded".
			add(keyLine(tn, "timeout"), path+".timeout", "must be at least %v, not %v (it bounds the dial, the TLS handshake, Capabilities and the first response, and is the least stall bound)",
				MinGNMITimeout, t.Timeout.Std())
		}
		refsNode := child(tn, "subscriptions")
		if len(rt.Subscriptions) == 0 {
			add(nodeLine(tn), path+".subscriptions", "at least one subscription is needed")
		}
		mode := ""
		for j, ref := range rt.Subscriptions {
			spath := fmt.Sprintf("%s.subscriptions[%d]", path, j)
			var s GNMISubscription
			if ref.sub != nil {
				s = *ref.sub
				for _, e := range checkGNMISubscription(&s) {
					add(keyLine(item(refsNode, j), e.key), spath+"."+e.key, "%s", e.msg)
				}
			} else {
				named, ok := out.Subscriptions[ref.name]
				if !ok {
					add(ref.line, spath, "no subscription %q in gnmi.subscriptions%s", ref.name, namesHint(ref.name, slices.Sorted(maps.Keys(out.Subscriptions))))
					continue
				}
				s = named
			}
			// One Subscribe stream per target carries one mode.
			if mode == "" {
				mode = s.Mode
			} else if s.Mode != mode {
				add(ref.line, spath, "mode %s differs from the target's other subscriptions (%s): a target has one stream, with one mode", s.Mode, mode)
			}
			if len(t.Subscriptions) > 0 && (s.Prefix != t.Subscriptions[0].Prefix || s.PrefixOrigin != t.Subscriptions[0].PrefixOrigin) {
				add(ref.line, spath, "prefix %q differs from the target's first subscription (%q): one stream has one prefix", s.Prefix, t.Subscriptions[0].Prefix)
			}
			if len(t.Subscriptions) > 0 && s.Mode == "poll" && s.PollInterval != t.Subscriptions[0].PollInterval {
				add(ref.line, spath, "poll_interval differs from the target's other subscriptions: one stream polls at one interval")
			}
			t.Subscriptions = append(t.Subscriptions, s)
		}
		out.Targets = append(out.Targets, t)
	}
	return out, errs
}

type keyErr struct{ key, msg string }

// valueHint is " (did you mean X?)" for the one of known that v looks
// misspelt from (jsonietf: json_ietf, pol: poll), or "".
func valueHint(v string, known ...string) string {
	if best := yamlerr.ClosestKey(v, known); best != "" {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return ""
}

// emptyKeys refuses a key of a path without a value ([name=]): it names
// no entry a target has, and the subscription would stream nothing.
func emptyKeys(key string, es []gpath.Elem, add func(key, format string, args ...any)) {
	for _, e := range es {
		for _, k := range slices.Sorted(maps.Keys(e.Keys)) {
			if e.Keys[k] == "" {
				add(key, "key %s of element %s has no value (give one, or * for every entry)", k, e.Name)
			}
		}
	}
}

// namesHint is valueHint for a name of defined, or, when none is close,
// " (it has a, b, ...)", or " (it defines none)".
func namesHint(name string, defined []string) string {
	if h := valueHint(name, defined...); h != "" {
		return h
	}
	if len(defined) == 0 {
		return " (it defines none)"
	}
	if len(defined) > 8 {
		defined = append(defined[:8:8], "...")
	}
	return fmt.Sprintf(" (it has %s)", strings.Join(defined, ", "))
}

// splitOrigin splits "origin:/path" into its origin and "/path"; ok is
// false for a path without one (a key value containing ":/" is not).
func splitOrigin(path string) (origin, rest string, ok bool) {
	o, r, found := strings.Cut(path, ":/")
	if !found || o == "" || strings.ContainsAny(o, "/[]=* ") {
		return "", path, false
	}
	return o, "/" + r, true
}

// checkGNMISubscription defaults and validates one subscription.
func checkGNMISubscription(s *GNMISubscription) []keyErr {
	var errs []keyErr
	add := func(key, format string, args ...any) {
		errs = append(errs, keyErr{key, fmt.Sprintf(format, args...)})
	}
	// gnmic and most gNMI documents write the origin into the path,
	// "openconfig:/interfaces/...": split it off, rather than send an
	// element named "openconfig:" that matches nothing.
	if o, rest, ok := splitOrigin(s.Path); ok {
		if s.Origin != "" && s.Origin != o {
			add("path", "origin %q in the path differs from origin %q", o, s.Origin)
		}
		s.Origin, s.Path = o, rest
	}
	if o, rest, ok := splitOrigin(s.Prefix); ok {
		s.PrefixOrigin, s.Prefix = o, rest
	}
	if s.Path == "" {
		add("path", "must be set")
	} else if es, err := gpath.Parse(s.Path); err != nil {
		add("path", "%v", err)
	} else {
		emptyKeys("path", es, add)
	}
	if s.Prefix != "" {
		if es, err := gpath.Parse(s.Prefix); err != nil {
			add("prefix", "%v", err)
		} else {
			emptyKeys("prefix", es, add)
		}
	}
	// In any case, as encoding: gnmic and vendor docs write ON_CHANGE.
	mode, streamMode := s.Mode, s.StreamMode // as written, for errors
	s.Mode, s.StreamMode = strings.ToLower(s.Mode), strings.ToLower(s.StreamMode)
	switch s.Mode {
	case "":
		s.Mode = "stream"
	case "stream", "once", "poll":
	default:
		add("mode", "must be stream, once or poll, not %q%s", mode, valueHint(mode, "stream", "once", "poll"))
	}
	// A misspelt mode is refused above, and may well be stream: the
	// stream settings are refused for once and poll only.
	notStream := s.Mode == "once" || s.Mode == "poll"
	switch s.StreamMode {
	case "":
		if s.Mode == "stream" {
			s.StreamMode = "target_defined"
			if s.SampleInterval > 0 {
				s.StreamMode = "sample"
			}
		}
	case "sample", "on_change", "target_defined":
		if notStream {
			add("stream_mode", "only applies to mode stream (mode is %s)", s.Mode)
		}
	default:
		add("stream_mode", "must be sample, on_change or target_defined, not %q%s", streamMode, valueHint(streamMode, "sample", "on_change", "target_defined"))
	}
	if s.SampleInterval < 0 {
		add("sample_interval", "must be positive")
	}
	if s.HeartbeatInterval < 0 {
		add("heartbeat_interval", "must be positive")
	}
	// SAMPLE and heartbeats are STREAM's: a ONCE or POLL target ignores
	// them, and whoever set them expects a stream.
	if s.Mode == "poll" && s.SampleInterval > 0 {
		add("sample_interval", "only applies to mode stream (mode is poll; poll_interval sets how often it is polled)")
	} else if notStream && s.SampleInterval > 0 {
		add("sample_interval", "only applies to mode stream (mode is %s)", s.Mode)
	}
	if notStream && s.HeartbeatInterval > 0 {
		add("heartbeat_interval", "only applies to mode stream (mode is %s)", s.Mode)
	}
	if s.StreamMode == "on_change" && s.SampleInterval > 0 {
		add("sample_interval", "does not apply to stream_mode on_change")
	}
	if s.Mode == "poll" {
		if s.PollInterval == 0 {
			s.PollInterval = Duration(DefaultGNMIPollInterval)
		} else if s.PollInterval < 0 {
			add("poll_interval", "must be positive")
		}
	} else if s.PollInterval != 0 {
		add("poll_interval", "only applies to mode poll (mode is %s)", s.Mode)
	}
	return errs
}

// GNMIWarnings are settings of the gnmi section that are valid but likely
// not what was meant: updates_only on some of a target's subscriptions
// only (it is the whole stream's: gNMI's SubscriptionList has one).
func (c *Config) GNMIWarnings() []string {
	var out []string
	for _, t := range c.GNMI.Targets {
		n := 0
		for _, s := range t.Subscriptions {
			if s.UpdatesOnly {
				n++
			}
		}
		if n > 0 && n < len(t.Subscriptions) {
			out = append(out, fmt.Sprintf("gnmi target %q: updates_only is set on %d of its %d subscriptions, but applies to the target's whole stream: the others get no initial state either (set it on all of them, or none)",
				t.Name, n, len(t.Subscriptions)))
		}
		if c.EnrichEnabled() {
			out = append(out, c.quietStateWarnings(t)...)
		}
	}
	return out
}

// eventLeaves are the OpenConfig leaves enrichment raises events from
// (interface oper-status, BGP session-state), as path elements without
// keys.
var eventLeaves = [...][]string{
	{"interfaces", "interface", "state", "oper-status"},
	{"network-instances", "network-instance", "protocols", "protocol", "bgp", "neighbors", "neighbor", "state", "session-state"},
}

// quietStateWarnings warn of t's stream subscriptions to an event leaf
// that send an unchanged value no more than once (on_change, the default
// target_defined, sample with suppress_redundant) and no heartbeat within
// the warm-up's window. A restart finds such a value before the window by
// reading back the partition, up to a week or 4 million records (enrich's
// maxReachBack, logwindow.MaxRecords): a link calm for longer is a first
// state when it changes after a restart, and raises no event, and a busy
// partition holds 4 million records in hours.
func (c *Config) quietStateWarnings(t GNMITarget) []string {
	window := 10 * time.Minute // enrich.DefaultWarmup
	if w := c.Enrich.Warmup; w != nil && *w > 0 {
		window = time.Duration(*w)
	}
	var out []string
	for _, s := range t.Subscriptions {
		mode := s.StreamMode
		if mode == "" {
			mode = "target_defined"
		}
		quiet := mode == "on_change" || mode == "target_defined" || mode == "sample" && s.SuppressRedundant
		if s.Mode != "" && s.Mode != "stream" || !quiet || s.HeartbeatInterval > 0 && time.Duration(s.HeartbeatInterval) <= window {
			continue
		}
		elems := append(pathElems(s.Prefix), pathElems(s.Path)...)
		for _, leaf := range eventLeaves {
			if !pathCovers(elems, leaf) {
				continue
			}
			name := s.Name
			if name == "" {
				name = s.Path
			}
			how := "no heartbeat_interval"
			if s.HeartbeatInterval > 0 {
				how = "a heartbeat_interval over the warm-up's " + window.String()
			}
			out = append(out, fmt.Sprintf("gnmi target %q: subscription %q sends %s only when it changes (stream_mode %s, %s): a restart of weir finds its last value before the warm-up's %s by reading back up to a week or 4 million records of its raw.gnmi partition, and after a calm longer than that its first change after a restart raises no event; give it a heartbeat_interval of at most %s (the shipped config's is 60s)",
				t.Name, name, leaf[len(leaf)-1], mode, how, window, window))
			break
		}
	}
	return out
}

// pathElems are a gNMI path's element names, without keys or module
// prefixes: /openconfig-interfaces:interfaces/interface[name=x]/state is
// interfaces, interface, state.
func pathElems(path string) []string {
	var out []string
	depth, start := 0, -1
	flush := func(end int) {
		if start >= 0 && end > start {
			e := path[start:end]
			if i := strings.IndexByte(e, '['); i >= 0 {
				e = e[:i]
			}
			if i := strings.LastIndexByte(e, ':'); i >= 0 {
				e = e[i+1:]
			}
			if e != "" {
				out = append(out, e)
			}
		}
		start = -1
	}
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '/':
			if depth == 0 {
				flush(i)
				continue
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(path))
	return out
}

// pathCovers reports whether a subscription to path elems gets leaf: one
// is a prefix of the other ("*" matches any element, "..." any rest).
func pathCovers(elems, leaf []string) bool {
	for i := 0; i < len(elems) && i < len(leaf); i++ {
		switch elems[i] {
		case "...":
			return true
		case "*", leaf[i]:
		default:
			return false
		}
	}
	return true
}

// Settings is t less the line it is written on: what tells whether a
// target changed at a reload.
func (t GNMITarget) Settings() GNMITarget {
	t.Line = 0
	return t
}
