package gpath

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Elem
		out  string
	}{
		{"/", nil, "/"},
		{"", nil, "/"},
		{"/a/b/", []Elem{{Name: "a"}, {Name: "b"}}, "/a/b"},
		{"interfaces/interface[name=Ethernet1/1]/state", []Elem{{Name: "interfaces"}, {Name: "interface", Keys: map[string]string{"name": "Ethernet1/1"}}, {Name: "state"}}, "/interfaces/interface[name=Ethernet1/1]/state"},
		{"/p[b=2][a=x\\]y]", []Elem{{Name: "p", Keys: map[string]string{"a": "x]y", "b": "2"}}}, "/p[a=x\\]y][b=2]"},
		{"/oc-if:interfaces/*", []Elem{{Name: "oc-if:interfaces"}, {Name: "*"}}, "/oc-if:interfaces/*"},
	} {
		got, err := Parse(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
			continue
		}
		if s := String(got); s != c.out {
			t.Errorf("String(Parse(%q)) = %q, want %q", c.in, s, c.out)
		}
		again, err := Parse(String(got))
		if err != nil || !reflect.DeepEqual(again, got) && len(got) > 0 {
			t.Errorf("round trip of %q: %v %v", c.in, again, err)
		}
	}
	for _, bad := range []string{"/a//b", "/a[k]", "/a[k=v", "/a[=v]", "/a[k=1][k=2]", "/a]b", "/a[k=v]x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// FuzzParse: any string parses or is refused without a panic, and what
// parses is written back as a path that parses to the same elements.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/", "", "/a/b/", "interfaces/interface[name=Ethernet1/1]/state", "/p[b=2][a=x\\]y]",
		"/oc-if:interfaces/*", "/a//b", "/a[k]", "/a[k=v", "/a[k=v]x", `/a[k=\\]`, `/a[k=\]`, "/a[k=[]]", "/a[k=/]/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s)
		if err != nil {
			if got != nil {
				t.Fatalf("Parse(%q) refused (%v) with elements %v", s, err, got)
			}
			return
		}
		out := String(got)
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) = %v, written %q, which does not parse: %v", s, got, out, err)
		}
		if len(got) > 0 && !reflect.DeepEqual(again, got) {
			t.Fatalf("Parse(%q) = %#v, written %q, read back %#v", s, got, out, again)
		}
	})
}
