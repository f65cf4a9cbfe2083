package profile_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	. "github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/configs"
)

func TestBuiltinProfilesLoad(t *testing.T) {
	s, err := Load(configs.BuiltinSNMPProfiles(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"arista-cpu-memory", "bgp4-mib", "cisco-cpu-memory", "entity-sensor", "host-resources", "icmp", "if-mib", "ip", "juniper-cpu-memory", "system"}
	if got := strings.Join(s.Names(), ","); got != strings.Join(want, ",") {
		t.Fatalf("names %s", got)
	}
	ifmib, _ := s.Get("if-mib")
	if len(ifmib.Tables) != 1 || len(ifmib.Tables[0].Joins) != 1 || ifmib.Tables[0].Index[0].Name != "ifIndex" {
		t.Fatalf("if-mib: %+v", ifmib)
	}
	cols := map[string]string{}
	for _, c := range append(ifmib.Tables[0].Columns, ifmib.Tables[0].Joins[0].Columns...) {
		cols[c.Name] = c.Type
	}
	for name, typ := range map[string]string{"ifName": "label", "ifDescr": "label", "ifAlias": "label", "ifHighSpeed": "gauge",
		"ifOperStatus": "gauge", "ifAdminStatus": "gauge", "ifHCInOctets": "counter", "ifHCOutOctets": "counter"} {
		if cols[name] != typ {
			t.Errorf("if-mib %s: type %q, want %q", name, cols[name], typ)
		}
	}
	sys, _ := s.Get("system")
	if sys.Measurement != "snmp_system" || len(sys.Scalars) < 4 {
		t.Fatalf("system: %+v", sys)
	}
}

func TestResolveAuto(t *testing.T) {
	s, err := Load(configs.BuiltinSNMPProfiles(), "")
	if err != nil {
		t.Fatal(err)
	}
	names := func(ps []*Profile) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return strings.Join(out, ",")
	}
	for oid, want := range map[string]string{
		"1.3.6.1.4.1.9.1.1208":     "cisco-cpu-memory,if-mib,system",
		".1.3.6.1.4.1.2636.1.1.1":  "if-mib,juniper-cpu-memory,system",
		"1.3.6.1.4.1.30065.1.3011": "arista-cpu-memory,if-mib,system",
		"1.3.6.1.4.1.8072.3.2.10":  "host-resources,if-mib,system",
		"1.3.6.1.4.1.90":           "if-mib,system", // 1.3.6.1.4.1.9 is a prefix of the string, not of the OID
	} {
		ps, err := s.Resolve(nil, true, oid)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(ps); got != want {
			t.Errorf("%s: %s, want %s", oid, got, want)
		}
	}
	ps, err := s.Resolve([]string{"bgp4-mib"}, true, "1.3.6.1.4.1.9.1")
	if err != nil || names(ps) != "bgp4-mib,cisco-cpu-memory,if-mib,system" {
		t.Errorf("auto plus named: %s %v", names(ps), err)
	}
	if _, err := s.Resolve([]string{"nope"}, false, ""); err == nil || !strings.Contains(err.Error(), "unknown profile nope") {
		t.Errorf("unknown profile: %v", err)
	}
}

func TestUserProfilesOverrideAndAdd(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("system.yaml", "scalars:\n  - {name: sysName, oid: .1.3.6.1.2.1.1.5.0, type: label}\n")
	write("mine.yaml", "name: my-ups\nmeasurement: ups\nscalars:\n  - {name: upsBatteryStatus, oid: 1.3.6.1.2.1.33.1.2.1.0, type: gauge}\n")
	s, err := Load(configs.BuiltinSNMPProfiles(), dir)
	if err != nil {
		t.Fatal(err)
	}
	sys, _ := s.Get("system")
	if len(sys.Scalars) != 1 || sys.Scalars[0].OID != "1.3.6.1.2.1.1.5.0" || !strings.HasPrefix(sys.File, dir) {
		t.Errorf("override: %+v", sys)
	}
	if p, ok := s.Get("my-ups"); !ok || p.Measurement != "ups" {
		t.Errorf("added: %+v", p)
	}
	if _, err := Load(nil, filepath.Join(dir, "missing")); err == nil {
		t.Error("missing profiles_dir accepted")
	}
}

func TestProfileMistakesNameFileAndLine(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"scalars:\n  - {name: a, oid: 1.3.6.x, type: gauge}\n", `bad.yaml:2: scalar a: "1.3.6.x" is not a numeric OID`},
		{"scalars:\n  - {name: a, oid: ifInOctets, type: gauge}\n", `bad.yaml:2: scalar a: "ifInOctets" is not a numeric OID`},
		{"scalars:\n  - {name: a, oid: 1.3.6.1, type: rate}\n", `bad.yaml:2: scalar a: unknown type "rate"`},
		{"scalars:\n  - {name: a, oid: 1.3.6.1}\n", `bad.yaml:2: scalar a: type must be set`},
		{"scalars:\n  - {name: a, oid: 1.3.6.1, typ: gauge}\n", `bad.yaml:2: unknown key "typ" in metric`},
		{"tabels: []\n", `bad.yaml:1: unknown key "tabels" in profile`},
		{"tables:\n  - measurement: t\n    index: [{name: i, type: float}]\n    columns: [{name: a, oid: 1.3.6.1.1, type: gauge}]\n", `bad.yaml:2: table t: index i: unknown type "float"`},
		{"tables:\n  - measurement: t\n    columns: [{name: a, oid: 1.3.6.1.1, type: gauge}]\n    joins:\n      - on: b\n        columns: [{name: c, oid: 1.3.6.1.2, type: label}]\n", `bad.yaml:5: table t: join on b: no such column`},
		{"tables:\n  - measurement: t\n    columns:\n      - {name: a, oid: 1.3.6.1.1, type: gauge}\n      - {name: a, oid: 1.3.6.1.2, type: gauge}\n", `bad.yaml:5: table t: duplicate column a`},
		{"name: x\n", `bad.yaml:1: profile has neither scalars nor tables`},
		{"scalars:\n  - {name: agent, oid: 1.3.6.1.0, type: label}\n", `bad.yaml:2: scalar agent: the tag agent is the host polled`},
		{"tables:\n  - measurement: t\n    index: [{name: agent, type: ipv4}]\n    columns: [{name: a, oid: 1.3.6.1.1, type: gauge}]\n", `bad.yaml:2: table t: index agent: the tag agent is the host polled`},
		{"scalars: [\n", `bad.yaml:2: did not find expected node content`},
		// A syntax error on its line, counted from 1 (yaml.v3 says
		// "line 2", from 0), in the FILE:LINE form editors jump to.
		{"name: mine\nscalars:\n  - {name: x, oid: 1.3.6.1.2.1.1.5.0, type: label\n", `bad.yaml:3: did not find expected ',' or '}'`},
		{"name: mine\nscalars:\n  - name: x\n     oid: 1.3.6.1.2.1.1.5.0\n", `bad.yaml:4: `},
		{"sys_object_ids: [cisco]\nscalars:\n  - {name: a, oid: 1.3.6.1, type: gauge}\n", `sys_object_ids[0]: "cisco" is not a numeric OID`},
		{"scalars:\n  - {name: a, oid: 1.3.6.1.4294967296.0, type: gauge}\n", `bad.yaml:2: scalar a: "1.3.6.1.4294967296.0": sub-identifier 4294967296 is above 4294967295, the most an OID's number can be`},
	} {
		_, err := Parse("bad.yaml", []byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.body, err, tc.want)
		}
	}
	// Load names the file too.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("scalars:\n  - {name: a, oid: x, type: gauge}\n"), 0o644)
	if _, err := Load(nil, dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "broken.yaml")+":2:") {
		t.Errorf("Load error: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("scalars:\n  - {name: a, oid: 1.3.6.1, type: gauge}\n"))
	f.Add([]byte("tables:\n  - measurement: t\n    index: [{name: i, type: int}]\n    columns: [{name: a, oid: 1.3.6.1.1, type: gauge}]\n    joins: [{on: a, columns: [{name: b, oid: 1.3.6.1.2, type: label}]}]\n"))
	// No panic; a refusal names the file and gives no profile; what is
	// accepted holds only what validate lets through (OIDs as agents
	// name them, a known type, names set) and is accepted again the same.
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data)
		if err != nil {
			if p != nil || !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("refused (%v) with profile %v", err, p)
			}
			return
		}
		if p.Name == "" || len(p.Scalars)+len(p.Tables) == 0 || len(p.Scalars) > 0 && p.Measurement == "" {
			t.Fatalf("accepted %+v", p)
		}
		check := func(m Metric) {
			if norm, err := NormalizeOID(m.OID); err != nil || norm != m.OID || m.Name == "" {
				t.Fatalf("accepted metric %+v (OID normalizes to %q, %v)", m, norm, err)
			}
			switch m.Type {
			case TypeCounter, TypeGauge, TypeLabel, TypeString:
			default:
				t.Fatalf("accepted metric %+v", m)
			}
		}
		for _, m := range p.Scalars {
			check(m)
		}
		for _, tb := range p.Tables {
			for _, m := range tb.Columns {
				check(m)
			}
			for _, j := range tb.Joins {
				for _, m := range j.Columns {
					check(m)
				}
			}
		}
		for _, oid := range p.SysObjectIDs {
			if norm, err := NormalizeOID(oid); err != nil || norm != oid {
				t.Fatalf("accepted sys_object_id %q", oid)
			}
		}
		again, err := Parse("fuzz.yaml", data)
		if err != nil || !reflect.DeepEqual(p, again) {
			t.Fatalf("accepted once as %+v, then %+v (%v)", p, again, err)
		}
	})
}

// TestMergeKeys: YAML merge keys (<<: *anchor) share settings between
// metrics, as in the config's targets; their keys are checked as the
// mapping's own.
func TestMergeKeys(t *testing.T) {
	body := "scalars:\n" +
		"  - &counter {name: a, oid: 1.3.6.1.1.0, type: counter, format: hex}\n" +
		"  - {<<: *counter, name: b, oid: 1.3.6.1.2.0}\n" +
		"  - <<: [*counter]\n    name: c\n    oid: 1.3.6.1.3.0\n"
	p, err := Parse("merge.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Scalars) != 3 || p.Scalars[1].Type != "counter" || p.Scalars[2].Format != "hex" || p.Scalars[2].Name != "c" {
		t.Errorf("scalars %+v", p.Scalars)
	}
	// A merge of the list the mapping is in would be walked for ever.
	_, err = Parse("merge.yaml", []byte("scalars: &s\n  - {<<: *s, name: a, oid: 1.3.6.1.1.0, type: gauge}\n"))
	if err == nil || err.Error() != "merge.yaml:2: alias *s refers to a node that holds it" {
		t.Errorf("merge cycle: %v", err)
	}
	// A misspelt key in the merged mapping is still found.
	_, err = Parse("merge.yaml", []byte("scalars:\n  - &m {name: a, oid: 1.3.6.1.1.0, typ: counter}\n  - {<<: *m, name: b}\n"))
	if err == nil || err.Error() != `merge.yaml:2: unknown key "typ" in metric` {
		t.Errorf("misspelt merged key: %v", err)
	}
}

// TestSecondDocumentRefused: a profile of two YAML documents (two files
// joined, each starting with ---) is refused, as the config and the
// inventory are: the decoder reads the first, and the second's metrics
// were never polled.
func TestSecondDocumentRefused(t *testing.T) {
	body := "scalars:\n  - {name: a, oid: 1.3.6.1.1.0, type: gauge}\n---\nscalars:\n  - {name: b, oid: 1.3.6.1.2.0, type: gauge}\n"
	if _, err := Parse("two.yaml", []byte(body)); err == nil || !strings.Contains(err.Error(), "two.yaml:3: a second YAML document starts here") {
		t.Fatalf("two documents: %v", err)
	}
	if _, err := Parse("one.yaml", []byte("scalars:\n  - {name: a, oid: 1.3.6.1.1.0, type: gauge}\n---\n")); err != nil {
		t.Fatalf("a --- that ends the file: %v", err)
	}
}
