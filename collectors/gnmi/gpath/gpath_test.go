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
