package gnmi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/proto"

	"github.com/weirnet/weir/collectors/gnmi/gpath"
	"github.com/weirnet/weir/telemetry"
)

// Flatten turns one notification into metrics, one per container path:
//
//   - Measurement: the container's path without keys, elements joined with
//     "_", "-" turned into "_" and YANG module prefixes ("openconfig-
//     interfaces:") dropped: /interfaces/interface[name=Ethernet1]/state/
//     counters/in-octets is measurement interfaces_interface_state_counters,
//     field in-octets.
//   - Tags: the path keys (name=Ethernet1); a key name already taken by an
//     earlier element is prefixed with its element name (protocol_name).
//     Tag "path" holds the container's full path with keys, and with
//     "origin:" in front when the notification has an origin.
//   - Fields: leaf names as the target sent them, with gNMI types kept (see
//     Value). JSON and JSON_IETF values are expanded into leaves, named by
//     their path relative to the update's path joined with "/"
//     (state/counters/in-octets); a list inside JSON is expanded with each
//     entry named by its key (neighbor[neighbor-address=10.0.0.1]/peer-as),
//     else its position; a list at its own path (/interfaces/interface)
//     gives each keyed entry its own record, its key in the path, and so
//     does a keyed list in a container's or a list entry's value, or in
//     containers below it (/interfaces answered with {"interface":[...]};
//     the subinterfaces of each of those entries, with the interface's key
//     and their own), so the records are the same whichever level was
//     subscribed to; a list with no key weir can tell stays fields.
//   - Deletes: one metric per deleted path, measurement from the whole
//     path, its keys as tags, and the single field deleted=true.
//   - A path whose elements name nothing (the root "/", empty elements)
//     has measurement "root".
//
// Integer fields under a "counters" element are listed in Counters, and in
// Counters64 too (gNMI counters are 64 bits wide). Time is the
// notification's timestamp (see notificationTime), else receivedAt.
func Flatten(device string, n *gpb.Notification, receivedAt time.Time) []telemetry.Metric {
	out, _ := flatten(device, n, receivedAt)
	return out
}

// noValue is what flatten skipped: updates with no value it can read (none
// at all, a TypedValue kind newer than weir's gNMI, or JSON that carries
// no leaf: {}, null, objects of those), and the first one's path, for the
// log.
type noValue struct {
	n     int
	first *gpb.Update
}

func (nv *noValue) add(u *gpb.Update) {
	if nv.n == 0 {
		nv.first = u
	}
	nv.n++
}

// flatten is Flatten, saying which updates gave nothing.
func flatten(device string, n *gpb.Notification, receivedAt time.Time) ([]telemetry.Metric, noValue) {
	var skipped noValue
	if n == nil {
		return nil, skipped
	}
	ts := receivedAt
	if n.GetTimestamp() > 0 {
		ts = notificationTime(n.GetTimestamp())
	}
	prefix := elems(n.GetPrefix())
	origin := n.GetPrefix().GetOrigin()
	var out []telemetry.Metric
	index := map[string]int{}
	metricFor := func(container []gpath.Elem, org string) *telemetry.Metric {
		p := pathKey(container, org)
		if i, ok := index[p]; ok {
			return &out[i]
		}
		tags := keyTags(container)
		tags["path"] = p
		out = append(out, telemetry.Metric{
			V:           telemetry.Version,
			Measurement: measurement(container),
			Device:      device,
			Tags:        tags,
			Fields:      map[string]any{},
			Time:        ts,
			ReceivedAt:  receivedAt,
			Source:      Source,
		})
		index[p] = len(out) - 1
		return &out[len(out)-1]
	}
	// Deletes first, as gNMI applies a notification's (section 2.1): an
	// entry replaced in one notification is deleted, then given its new
	// values, not the other way round.
	for _, d := range n.GetDelete() {
		full := join(prefix, elems(d))
		p := gpath.String(full)
		org := origin
		if org == "" {
			org = d.GetOrigin()
		}
		if org != "" {
			p = org + ":" + p
		}
		tags := keyTags(full)
		tags["path"] = p
		out = append(out, telemetry.Metric{
			V:           telemetry.Version,
			Measurement: measurement(full),
			Device:      device,
			Tags:        tags,
			Fields:      map[string]any{"deleted": true},
			Time:        ts,
			ReceivedAt:  receivedAt,
			Source:      Source,
		})
	}
	prefixMetric := -1 // the metric of leaves right under the prefix
	for _, u := range n.GetUpdate() {
		// The common case, a leaf right under the prefix: no path work.
		if pe := u.GetPath().GetElem(); len(pe) == 1 && len(pe[0].GetKey()) == 0 && u.GetPath().GetOrigin() == "" {
			if fv, ok := Value(u.GetVal()); ok {
				if prefixMetric < 0 {
					metricFor(prefix, origin)
					prefixMetric = index[pathKey(prefix, origin)]
				}
				setField(&out[prefixMetric], leafName(pe[0].GetName()), fv, hasCounters(prefix) || stripModule(pe[0].GetName()) == "counters")
				continue
			}
		}
		full := join(prefix, elems(u.GetPath()))
		org := origin
		if org == "" {
			org = u.GetPath().GetOrigin()
		}
		v := u.GetVal()
		if v == nil {
			// gNMI 0.4 carried the value in the deprecated Value field.
			if old := u.GetValue(); old != nil {
				v = &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: old.GetValue()}}
			}
		}
		if blob, ok := jsonBlob(v); ok {
			if jsonTooDeep(blob) {
				// Naming each leaf by its path below the update costs
				// the square of the depth: 54 KB nested 9,000 deep
				// took 85 MB and 60 ms, and a 64 MiB notification of
				// them a minute of a core. No YANG model nests so
				// deep: dropped, counted and logged as no_value.
				skipped.add(u)
				continue
			}
			var doc any
			if err := decodeJSON(blob, &doc); err != nil {
				// Not JSON after all: keep it as a string.
				container, leaf := split(full)
				m := metricFor(container, org)
				m.Fields[leaf] = string(blob)
				continue
			}
			// JSON that carries no leaf ({}, null, {"a":null}) gives
			// nothing: counted with the updates of no value, and its
			// empty record dropped below.
			if obj, isObj := doc.(map[string]any); isObj {
				set := 0
				if !hasList(obj) {
					// A container or list entry of leaves and
					// containers alone.
					set = expand(metricFor(full, org), "", obj, hasCounters(full), false)
				} else {
					// A container or a list entry: its keyed lists
					// are records of their own.
					set = expandObject(metricFor(full, org), full, org, obj, hasCounters(full), metricFor)
				}
				if set == 0 {
					skipped.add(u)
				}
				continue
			}
			if list, isList := doc.([]any); isList && len(list) > 0 && allObjects(list) && len(full) > 0 && len(full[len(full)-1].Keys) == 0 {
				if expandList(full, org, list, listKey(list), metricFor) == 0 {
					skipped.add(u)
				}
				continue
			}
			if doc == nil {
				skipped.add(u)
				continue
			}
			container, leaf := split(full)
			m := metricFor(container, org)
			setField(m, leaf, jsonLeafValue(doc, hasCounters(full)), hasCounters(full))
			continue
		}
		fv, ok := Value(v)
		if !ok {
			skipped.add(u)
			continue
		}
		container, leaf := split(full)
		setField(metricFor(container, org), leaf, fv, hasCounters(full))
	}
	// A container whose every update had no usable value has no fields.
	kept := out[:0]
	for _, m := range out {
		if len(m.Fields) > 0 {
			sort.Strings(m.Counters)
			// gNMI counters are 64 bits wide (OpenConfig's are all
			// counter64, sent as uint64): a counter going back is
			// reset, never a 32-bit wrap. The two lists are only read.
			m.Counters64 = m.Counters
			kept = append(kept, m)
		}
	}
	return kept, skipped
}

// notificationTime reads a notification's timestamp. gNMI's are
// nanoseconds since the epoch, but some targets send seconds,
// milliseconds or microseconds (gnmic#169); read as nanoseconds those
// are instants of January 1970, which the sinks refuse and from which
// rates come out 10^3 to 10^9 times too high. No nanosecond stamp of a
// live device is below 1e17 (March 1973), so a smaller one is read in
// the unit its magnitude says: below 1e11 seconds, below 1e14
// milliseconds, else microseconds (each good until the year 5138).
func notificationTime(ts int64) time.Time {
	switch {
	case ts < 1e11:
		return time.Unix(ts, 0).UTC()
	case ts < 1e14:
		return time.UnixMilli(ts).UTC()
	case ts < 1e17:
		return time.UnixMicro(ts).UTC()
	}
	return time.Unix(0, ts).UTC()
}

func pathKey(es []gpath.Elem, origin string) string {
	p := gpath.String(es)
	if origin != "" {
		p = origin + ":" + p
	}
	return p
}

func leafName(s string) string {
	if s = stripModule(s); s == "" {
		return "value"
	}
	return s
}

// Value converts a scalar TypedValue to a field value: int64 for int,
// uint64 for uint, float64 for float, double and decimal64, bool, string
// for string and ascii, base64 (standard, padded) for bytes and
// proto_bytes, and for a leaf-list a JSON array string of its elements
// converted the same way (["a","b"], [1,2]). Any is kept as base64 of its
// serialized form. JSON values are not handled here (Flatten expands them);
// ok is false for nil and JSON.
func Value(v *gpb.TypedValue) (any, bool) {
	switch x := v.GetValue().(type) {
	case *gpb.TypedValue_IntVal:
		return x.IntVal, true
	case *gpb.TypedValue_UintVal:
		return x.UintVal, true
	case *gpb.TypedValue_FloatVal:
		return finite(float32Value(x.FloatVal)), true
	case *gpb.TypedValue_DoubleVal:
		return finite(x.DoubleVal), true
	case *gpb.TypedValue_DecimalVal:
		return finite(decimal(x.DecimalVal)), true
	case *gpb.TypedValue_BoolVal:
		return x.BoolVal, true
	case *gpb.TypedValue_StringVal:
		return x.StringVal, true
	case *gpb.TypedValue_AsciiVal:
		return x.AsciiVal, true
	case *gpb.TypedValue_BytesVal:
		return base64.StdEncoding.EncodeToString(x.BytesVal), true
	case *gpb.TypedValue_ProtoBytes:
		return base64.StdEncoding.EncodeToString(x.ProtoBytes), true
	case *gpb.TypedValue_AnyVal:
		b, err := proto.Marshal(x.AnyVal)
		if err != nil {
			return nil, false
		}
		return base64.StdEncoding.EncodeToString(b), true
	case *gpb.TypedValue_LeaflistVal:
		elems := x.LeaflistVal.GetElement()
		vals := make([]any, 0, len(elems))
		for _, e := range elems {
			if blob, ok := jsonBlob(e); ok {
				var doc any
				if decodeJSON(blob, &doc) == nil {
					vals = append(vals, jsonValue(doc))
					continue
				}
				vals = append(vals, string(blob))
				continue
			}
			if ev, ok := Value(e); ok {
				vals = append(vals, ev)
			}
		}
		b, err := json.Marshal(vals)
		if err != nil {
			return nil, false
		}
		return string(b), true
	}
	return nil, false
}

// float32Value is f as the shortest decimal that reads back as it, the
// number the target meant (36.6), not its binary expansion widened to 64
// bits (36.599998474121094).
func float32Value(f float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64) // NaN and ±Inf too
	return v
}

// finite keeps NaN and infinities out of the JSON record (encoding/json
// refuses them): they become strings.
func finite(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return f
}

func decimal(d *gpb.Decimal64) float64 {
	f := float64(d.GetDigits())
	p := d.GetPrecision()
	if p > 0 {
		f /= math.Pow10(int(min(p, 400)))
	}
	return f
}

func jsonBlob(v *gpb.TypedValue) ([]byte, bool) {
	switch x := v.GetValue().(type) {
	case *gpb.TypedValue_JsonVal:
		return x.JsonVal, true
	case *gpb.TypedValue_JsonIetfVal:
		return x.JsonIetfVal, true
	}
	return nil, false
}

// maxJSONDepth bounds the nesting of a JSON value flatten expands. The
// deepest OpenConfig data, read from the root, nests about 25 levels (a
// container and a list's array each count one).
const maxJSONDepth = 128

// jsonTooDeep reports whether the JSON text b nests objects and arrays
// deeper than maxJSONDepth, by a scan of its brackets outside strings.
func jsonTooDeep(b []byte) bool {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > maxJSONDepth {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

func decodeJSON(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errTrailing
	}
	return nil
}

type jsonErr string

func (e jsonErr) Error() string { return string(e) }

const errTrailing = jsonErr("trailing data after JSON value")

// jsonValue converts a decoded JSON scalar or array: numbers become int64,
// else uint64, else float64; strings stay strings (JSON_IETF's quoted
// 64-bit integers stay strings outside counters, see jsonLeafValue);
// arrays become a JSON array string.
func jsonValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		return number(x)
	case string, bool:
		return x
	case nil:
		return nil
	case []any:
		if len(x) == 1 && x[0] == nil {
			// RFC 7951 section 6.9: [null] is the value of a leaf of
			// type empty, there or not: it is there.
			return true
		}
	}
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return nil
	}
	return string(b)
}

func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		return number(x)
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalize(x[k])
		}
	}
	return v
}

func number(n json.Number) any {
	s := string(n)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return finite(f)
	}
	return s
}

// expand adds the leaves of a JSON object to m, named by their path
// relative to the update, and says how many it set (0: v carries nothing,
// as {} or null). counters: v is under a counters container; positional:
// under a list entry named by its position, whose leaves are never marked
// counters.
func expand(m *telemetry.Metric, rel string, v any, counters, positional bool) int {
	set := 0
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := stripModule(k)
			set += expand(m, joinRel(rel, name), x[k], counters || name == "counters", positional)
		}
	case []any:
		if len(x) > 0 && allObjects(x) {
			// A YANG list: each entry named by its key, as a path names
			// it (subinterface[index=100]), so one field is one entry
			// from sample to sample. Without a key weir can tell (no
			// schema), by position; a position may be another entry in
			// the next sample (one added in front), so its counters are
			// not marked for rates: a rate between two entries' counters
			// would be false.
			key := listKey(x)
			for i, e := range x {
				if key != "" {
					v, _ := findMember(e.(map[string]any), key)
					set += expand(m, rel+"["+key+"="+keyEscaper.Replace(keyValue(v))+"]", e, counters, positional)
				} else {
					set += expand(m, joinRel(rel, strconv.Itoa(i)), e, counters, true)
				}
			}
			return set
		}
		if rel == "" {
			rel = "value"
		}
		if setField(m, rel, jsonValue(x), counters && !positional) {
			set++
		}
	case nil:
		// JSON null carries nothing.
	default:
		if rel == "" {
			rel = "value"
		}
		if setField(m, rel, jsonLeafValue(x, counters), counters && !positional) {
			set++
		}
	}
	return set
}

// keyedList is a YANG list with a key weir can tell (listKey) that
// expandContainer found in a container's JSON value, at its path.
type keyedList struct {
	path []gpath.Elem
	key  string
	list []any
}

// expandContainer is expand for the JSON object obj at a container's or a
// list entry's path (at: the update's path and rel's elements), but for
// the keyed lists in it, or in containers below it, which
// it appends to lists for expandList to give each entry its own record, as
// the list's own path would (/interfaces answered with {"interface":[...]}
// is /interfaces/interface[name=Ethernet1] and so on). Lists with no key
// weir can tell stay its fields (expand).
func expandContainer(m *telemetry.Metric, at []gpath.Elem, rel string, obj map[string]any, counters bool, lists []keyedList) (int, []keyedList) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	set := 0
	for _, k := range keys {
		name := stripModule(k)
		c := counters || name == "counters"
		switch x := obj[k].(type) {
		case map[string]any:
			var n int
			n, lists = expandContainer(m, append(at[:len(at):len(at)], gpath.Elem{Name: name}), joinRel(rel, name), x, c, lists)
			set += n
			continue
		case []any:
			if len(x) > 0 && allObjects(x) {
				if key := listKey(x); key != "" {
					lists = append(lists, keyedList{path: append(at[:len(at):len(at)], gpath.Elem{Name: name}), key: key, list: x})
					continue
				}
			}
		}
		set += expand(m, joinRel(rel, name), obj[k], c, false)
	}
	return set, lists
}

// hasList reports whether obj, or a container below it, has a list of
// objects as a member: a YANG list expandContainer may make records of.
// No allocation: most containers have none.
func hasList(obj map[string]any) bool {
	for _, v := range obj {
		switch x := v.(type) {
		case map[string]any:
			if hasList(x) {
				return true
			}
		case []any:
			if len(x) > 0 && allObjects(x) {
				return true
			}
		}
	}
	return false
}

// expandList adds a JSON list found at the list's own path (/interfaces/
// interface, no keys): RFC 7951 encodes it as an array of its entries.
// Each entry keyed by key (listKey) gets the record its path with the key
// names (/interfaces/interface[name=Ethernet1]), as if the target had
// sent it there; without a key weir can tell (key ""), the entries go by
// position under the list's name, as inside an object. It says how many
// leaves it set.
func expandList(full []gpath.Elem, org string, list []any, key string, metricFor func([]gpath.Elem, string) *telemetry.Metric) int {
	if key == "" {
		container, leaf := split(full)
		return expand(metricFor(container, org), leaf, list, hasCounters(full), false)
	}
	last := full[len(full)-1]
	entry := append(full[:len(full)-1:len(full)-1], gpath.Elem{Name: last.Name})
	counters := hasCounters(full)
	set := 0
	for _, e := range list {
		v, _ := findMember(e.(map[string]any), key)
		entry[len(entry)-1].Keys = map[string]string{key: keyValue(v)}
		set += expandObject(metricFor(entry, org), entry, org, e.(map[string]any), counters, metricFor)
	}
	return set
}

// expandObject sets the leaves of the JSON object obj at path at (a
// container or a list entry) in m, but for the keyed lists in it, or in
// containers below it, whose entries get records of their own (expandList,
// and so on down: a subinterface inside an interface entry is the record
// of its own path, /interfaces/interface[name=X]/subinterfaces/
// subinterface[index=0], whichever level was subscribed to). It says how
// many leaves it set.
func expandObject(m *telemetry.Metric, at []gpath.Elem, org string, obj map[string]any, counters bool, metricFor func([]gpath.Elem, string) *telemetry.Metric) int {
	if !hasList(obj) {
		return expand(m, "", obj, counters, false)
	}
	// The lists once m's leaves are set: metricFor may move the record.
	set, lists := expandContainer(m, at, "", obj, counters, nil)
	for _, l := range lists {
		set += expandList(l.path, org, l.list, l.key, metricFor)
	}
	return set
}

// jsonLeafValue is jsonValue, but for a leaf under a counters container a
// string of decimal digits is the number: JSON_IETF (RFC 7951) quotes every
// 64-bit integer, and OpenConfig's counters are all counter64, so a target
// that follows the RFC sends {"in-octets": "1234"}. Elsewhere weir cannot
// tell such a string from text without the schema, and keeps it.
func jsonLeafValue(v any, counters bool) any {
	// Up to 20 digits: as the number unquoted gives (int64, else uint64,
	// else a float), never a string.
	if s, ok := v.(string); ok && counters && len(s) > 0 && len(s) <= 20 && strings.Trim(s, "0123456789") == "" {
		return number(json.Number(s))
	}
	return jsonValue(v)
}

// listKeys are the leaves that key the lists of OpenConfig and the
// common vendor models, most likely first.
var listKeys = []string{"name", "index", "id", "identifier", "neighbor-address", "address", "peer-address", "prefix", "port-id", "interface-id"}

// listKey is the member that keys the list entries es: the first of
// listKeys that every entry has as a scalar, with no two the same; "" if
// none does.
func listKey(es []any) string {
	for _, k := range listKeys {
		seen := make(map[string]bool, len(es))
		ok := true
		for _, e := range es {
			v, has := findMember(e.(map[string]any), k)
			if !has {
				ok = false
				break
			}
			s := keyValue(v)
			if s == "" || seen[s] {
				ok = false
				break
			}
			seen[s] = true
		}
		if ok {
			return k
		}
	}
	return ""
}

// findMember is m's member named k, with or without a module prefix
// (JSON_IETF's "openconfig-interfaces:name"), if it is a scalar.
func findMember(m map[string]any, k string) (any, bool) {
	for mk, v := range m {
		if stripModule(mk) != k {
			continue
		}
		switch v.(type) {
		case map[string]any, []any, nil:
			return nil, false
		}
		return v, true
	}
	return nil, false
}

// keyValue is a list key's value as a path writes it, unescaped.
func keyValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return string(x)
	}
	return ""
}

// keyEscaper escapes a key value in a path element, as gNMI's path
// strings do.
var keyEscaper = strings.NewReplacer(`\`, `\\`, `]`, `\]`)

func allObjects(xs []any) bool {
	for _, x := range xs {
		if _, ok := x.(map[string]any); !ok {
			return false
		}
	}
	return true
}

func joinRel(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

// setField sets field name of m to v, a counter when counter says it may
// be one; false for a nil v, which sets nothing.
func setField(m *telemetry.Metric, name string, v any, counter bool) bool {
	if v == nil {
		return false
	}
	isCounter := false
	if counter && !notCounter(name) {
		switch v.(type) {
		case int64, uint64:
			isCounter = true
		}
	}
	if _, dup := m.Fields[name]; dup {
		// Sent again in one notification: the last value wins, and is
		// a counter or not as it is (rare: a search is fine).
		i := slices.Index(m.Counters, name)
		if i >= 0 && !isCounter {
			m.Counters = slices.Delete(m.Counters, i, i+1)
		}
		isCounter = isCounter && i < 0
	}
	if isCounter {
		m.Counters = append(m.Counters, name)
	}
	m.Fields[name] = v
	return true
}

// notCounter: a leaf under a counters container that is not a counter:
// OpenConfig's last-clear, when the counters were last cleared (ns since
// the epoch), whose rate would mean nothing.
func notCounter(name string) bool {
	return name == "last-clear" || strings.HasSuffix(name, "/last-clear")
}

func hasCounters(es []gpath.Elem) bool {
	for _, e := range es {
		if stripModule(e.Name) == "counters" {
			return true
		}
	}
	return false
}

// elems reads a gNMI path's elements, or its deprecated string elements.
func elems(p *gpb.Path) []gpath.Elem {
	if p == nil {
		return nil
	}
	if pe := p.GetElem(); len(pe) > 0 {
		out := make([]gpath.Elem, 0, len(pe))
		for _, e := range pe {
			out = append(out, gpath.Elem{Name: e.GetName(), Keys: e.GetKey()})
		}
		return out
	}
	if old := p.GetElement(); len(old) > 0 {
		if es, err := gpath.Parse(strings.Join(old, "/")); err == nil {
			return es
		}
		out := make([]gpath.Elem, 0, len(old))
		for _, s := range old {
			out = append(out, gpath.Elem{Name: s})
		}
		return out
	}
	return nil
}

func join(a, b []gpath.Elem) []gpath.Elem {
	if len(a) == 0 {
		return b
	}
	out := make([]gpath.Elem, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// split separates a leaf path into its container and the leaf's name.
func split(full []gpath.Elem) ([]gpath.Elem, string) {
	if len(full) == 0 {
		return nil, "value"
	}
	last := full[len(full)-1]
	if len(last.Keys) > 0 {
		// A keyed element is a list entry, not a leaf: keep it in the
		// container so its keys become tags.
		return full, "value"
	}
	name := stripModule(last.Name)
	if name == "" {
		name = "value"
	}
	return full[:len(full)-1], name
}

func measurement(es []gpath.Elem) string {
	var b strings.Builder
	for _, e := range es {
		name := stripModule(e.Name)
		if name == "" {
			continue // an empty element names nothing
		}
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteString(strings.ReplaceAll(name, "-", "_"))
	}
	if b.Len() == 0 {
		return "root"
	}
	return b.String()
}

// keyTags turns path keys into tags; a key name used twice (name in
// network-instance and protocol) is prefixed by its element's name the
// second time; "path" is reserved.
func keyTags(es []gpath.Elem) map[string]string {
	tags := make(map[string]string, 4)
	for _, e := range es {
		if len(e.Keys) == 0 {
			continue
		}
		keys := make([]string, 0, len(e.Keys))
		for k := range e.Keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			name := stripModule(k)
			if _, taken := tags[name]; taken || name == "path" {
				name = strings.ReplaceAll(stripModule(e.Name), "-", "_") + "_" + name
			}
			tags[name] = e.Keys[k]
		}
	}
	return tags
}

// stripModule drops a YANG module prefix: "openconfig-interfaces:state" is
// "state".
func stripModule(s string) string {
	if i := strings.LastIndexByte(s, ':'); i >= 0 && i+1 < len(s) {
		return s[i+1:]
	}
	return s
}
