package configs

import (
	"strings"
	"testing"
)

// FuzzExpandRefs: a reference with a default expands to the variable's
// value, or else to its default expanded as a value of its own (a
// default may hold references, ${A:-${B}}, as in a shell), with the text
// around it kept.
func FuzzExpandRefs(f *testing.F) {
	f.Setenv("WEIR_FZ_SET", "set")
	for _, s := range [][3]string{{"", "", ""}, {"a", "d", "b"}, {"", "${WEIR_FZ_SET}", ""}, {"x", "${WEIR_FZ_UNSET:-y}", "z"},
		{"", "p${WEIR_FZ_SET}q", ""}, {"", "${WEIR_FZ_UNSET:-${WEIR_FZ_SET}}", ""}} {
		f.Add(s[0], s[1], s[2], false)
		f.Add(s[0], s[1], s[2], true)
	}
	f.Fuzz(func(t *testing.T, a, def, b string, set bool) {
		if strings.ContainsAny(a+b, "${}") {
			return
		}
		want, err := expandRefs(def)
		if err != nil || strings.Count(def, "}") != strings.Count(def, "${") {
			return // not a value of its own, or a } that ends the reference
		}
		name := "WEIR_FZ_UNSET"
		if set {
			name, want = "WEIR_FZ_SET", "set"
		}
		v := a + "${" + name + ":-" + def + "}" + b
		got, err := expandRefs(v)
		if err != nil || got != a+want+b {
			t.Fatalf("%q = %q, %v; want %q", v, got, err, a+want+b)
		}
	})
}
