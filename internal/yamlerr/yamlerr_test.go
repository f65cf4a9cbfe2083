package yamlerr

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestTabViolatingIndentation: yaml.v3 numbers "found a tab character
// that violates indentation" at the line where the plain scalar before the
// tab starts, a line without a tab: weir check pointed at it, and the hint
// about tabs, which looks at the line named, was not given.
func TestTabViolatingIndentation(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"log:\n  level: info\n\tformat: text\n", "line 3: found a tab character that violates indentation (a tab on that line: YAML indents with spaces only)"},
		{"devices:\n  - name: a\n    site: b\n  - name: c\n\t  site: d\n", "line 5: found a tab character that violates indentation (a tab on that line"},
		{"a: one\n  two\n\t  three\n", "line 3: found a tab character that violates indentation (a tab on that line"},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.file), &n)
		if err == nil {
			t.Fatalf("%q: no error", tc.file)
		}
		if got := Clean(err, []byte(tc.file), nil).Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.file, got, tc.want)
		}
	}
}

func TestAliasCycle(t *testing.T) {
	for in, want := range map[string]string{
		"a: &a {<<: *a}\n":            "line 1: alias *a refers to a node that holds it",
		"l: &s\n  - {<<: *s, x: 1}\n": "line 2: alias *s refers to a node that holds it",
		"a: &a {x: 1}\nb: {<<: *a}\n": "",
		"a: &a [1]\nb: [*a, *a]\n":    "",
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(in), &n); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		err := AliasCycle(&n)
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// TestMisindentedLine: yaml.v3 names the line where the list or mapping
// starts, not the line whose indentation slipped: a user looked for the
// mistake at "- name: r1" while it was two lines down.
func TestMisindentedLine(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"snmp:\n  targets:\n    - name: r1\n      address: 127.0.0.1:1161\n     community: public\n",
			"line 5: did not find expected '-' indicator: check this line's indentation against the list starting on line 3"},
		{"snmp:\n  targets:\n    - name: r1\n      address: 127.0.0.1:1161\n    community: public\n",
			"line 5: did not find expected '-' indicator: check this line's indentation against the list starting on line 3"},
		{"log:\n  level: info\n format: text\n",
			"line 3: did not find expected key: check this line's indentation against the mapping starting on line 1"},
		// A {...} over two lines before the slip: a prefix cut inside
		// it fails too, with another error.
		{"devices:\n  - {name: a,\n     site: b}\n  - name: c\n    address: 10.0.0.1\n   site: x\n",
			"line 6: did not find expected '-' indicator: check this line's indentation"},
		// The slip on the line yaml.v3 names: left as it is.
		{"a:\n  - x\n b: 1\n", "line 3: did not find expected key"},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.file), &n)
		if err == nil {
			t.Fatalf("%q: no error", tc.file)
		}
		if got := Clean(err, []byte(tc.file), nil).Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.file, got, tc.want)
		}
	}
}

// TestMappingValuesHint: a key indented one space deeper than the one
// above it, or a value with ": " in it, is "mapping values are not allowed
// in this context", which says neither; weir check now says which.
func TestMappingValuesHint(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"snmp:\n  targets:\n    - name: r1\n      address: 127.0.0.1\n       community: x\n",
			"line 5: mapping values are not allowed in this context (indented deeper than line 4, this line is read as more of that line's value: indent its key as the keys beside it)"},
		{"devices:\n- name: edge1\n  address: 192.0.2.3\n\n   site: ams1\n",
			"line 5: mapping values are not allowed in this context (indented deeper than line 3,"},
		{"sinks:\n  - name: w\n    url: http://x: y\n",
			`line 3: mapping values are not allowed in this context (a value with ": " in it needs quotes: key: "a: b")`},
		{"x: 1\na: b: c\n", `line 2: mapping values are not allowed in this context (a value with ": " in it needs quotes`},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.file), &n)
		if err == nil {
			t.Fatalf("%q: no error", tc.file)
		}
		if got := Clean(err, []byte(tc.file), nil).Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.file, got, tc.want)
		}
	}
}
