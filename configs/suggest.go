package configs

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/weirnet/weir/internal/yamlerr"
)

// An unknown key's error says what to write instead: a key of the same
// section spelt nearly the same (adress: address), or else the sections
// that do have the key (community under snmp: snmp.defaults or a target).

// yamlKeys are the keys of struct type t, by their yaml names, with their
// types.
func yamlKeys(t reflect.Type) map[string]reflect.Type {
	keys := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		keys[name] = f.Type
	}
	return keys
}

// rawSection is the type a section that decodes itself is written as.
var rawSection = map[reflect.Type]reflect.Type{
	reflect.TypeOf(SNMP{}): reflect.TypeOf(snmpRaw{}),
	reflect.TypeOf(GNMI{}): reflect.TypeOf(gnmiRaw{}),
}

// keyTypes are, for every struct type reachable from Config, its name as
// yaml.v3's errors give it ("configs.Broker"), and keyHomes, for every key,
// the sections (as "snmp.targets[]") it is a key of.
var keyTypes, keyHomes = func() (map[string]reflect.Type, map[string][]string) {
	types := map[string]reflect.Type{}
	homes := map[string][]string{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for {
			if raw, ok := rawSection[t]; ok {
				t = raw
			}
			switch t.Kind() {
			case reflect.Pointer:
				t = t.Elem()
				continue
			case reflect.Slice:
				t, path = t.Elem(), path+"[]"
				continue
			case reflect.Map:
				t, path = t.Elem(), path+".<name>"
				continue
			}
			break
		}
		if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeOf(Config{}).PkgPath() {
			return
		}
		if _, seen := types["configs."+t.Name()]; seen && t.Name() != "" {
			// A type met again (TLS in broker.kafka and in a sink)
			// adds its path to its keys' homes, not its fields' again.
			for k := range yamlKeys(t) {
				homes[k] = append(homes[k], path)
			}
			return
		}
		types["configs."+t.Name()] = t
		for k, ft := range yamlKeys(t) {
			if path == "" {
				homes[k] = append(homes[k], "the top level")
			} else {
				homes[k] = append(homes[k], path)
			}
			walk(ft, joinKey(path, k))
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	for _, h := range homes {
		slices.Sort(h)
	}
	return types, homes
}()

// keyHint is what to write instead of key, unknown in a section with
// the keys known: " (did you mean address?)", " (community is a key of
// snmp.defaults, snmp.targets[])", or "".
func keyHint(key string, known map[string]reflect.Type) string {
	best := yamlerr.ClosestKey(key, slices.Collect(maps.Keys(known)))
	if best == "" {
		best = sameMeaning(key, known)
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	if homes := keyHomes[key]; len(homes) > 0 {
		if len(homes) > 3 {
			homes = append(homes[:3:3], "...")
		}
		return fmt.Sprintf(" (%s is a key of %s)", key, strings.Join(homes, ", "))
	}
	return ""
}

// sameMeaning is the key of known that means what key does, under the
// other name weir gives it elsewhere: a listening address is "listen" in
// http, snmp.traps and sinks but "address" in a syslog listener, so
// either is written where the other belongs. "" when there is none.
func sameMeaning(key string, known map[string]reflect.Type) string {
	for _, names := range [][]string{{"address", "listen", "addr", "listen_address", "bind"}} {
		if !slices.Contains(names, foldKeyName(key)) {
			continue
		}
		for _, n := range names {
			if _, ok := known[n]; ok {
				return n
			}
		}
	}
	return ""
}

// foldKeyName is key in lower case with - for _, as weir's keys are
// written (listen-address: listen_address).
func foldKeyName(key string) string {
	return strings.ReplaceAll(strings.ToLower(key), "-", "_")
}
