// Package gpath parses and prints gNMI path strings such as
// /interfaces/interface[name=Ethernet1]/state/counters, without depending
// on the gNMI protos, so the config loader can validate paths cheaply.
package gpath

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Elem is one path element: a name and its keys.
type Elem struct {
	Name string
	Keys map[string]string
}

// Parse splits a path string into elements. A leading "/" is optional;
// "/" and "" are the root (no elements). Keys are written [k=v]; a value
// may hold "/" and "]" escaped as "\]"; "\\" is a backslash.
func Parse(s string) ([]Elem, error) {
	orig := strings.TrimSpace(s)
	s = strings.TrimPrefix(orig, "/")
	var out []Elem
	i := 0
	for i < len(s) {
		var e Elem
		// name up to '/' or '['
		start := i
		for i < len(s) && s[i] != '/' && s[i] != '[' {
			if s[i] == ']' || s[i] == '=' {
				return nil, fmt.Errorf("path %q: unexpected %q", orig, s[i])
			}
			i++
		}
		e.Name = s[start:i]
		if e.Name == "" {
			return nil, fmt.Errorf("path %q: empty element after %q", orig, "/"+s[:start])
		}
		for i < len(s) && s[i] == '[' {
			i++
			ks := i
			for i < len(s) && s[i] != '=' && s[i] != ']' {
				i++
			}
			if i >= len(s) || s[i] != '=' {
				return nil, fmt.Errorf("path %q: key without '=' in element %q", orig, e.Name)
			}
			k := strings.TrimSpace(s[ks:i])
			if k == "" {
				return nil, fmt.Errorf("path %q: empty key name in element %q", orig, e.Name)
			}
			i++
			var v strings.Builder
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' && i+1 < len(s) {
					v.WriteByte(s[i+1])
					i += 2
					continue
				}
				if c == ']' {
					closed = true
					i++
					break
				}
				v.WriteByte(c)
				i++
			}
			if !closed {
				return nil, fmt.Errorf("path %q: unterminated key %q in element %q", orig, k, e.Name)
			}
			if e.Keys == nil {
				e.Keys = map[string]string{}
			}
			if _, dup := e.Keys[k]; dup {
				return nil, fmt.Errorf("path %q: duplicate key %q in element %q", orig, k, e.Name)
			}
			e.Keys[k] = v.String()
		}
		if i < len(s) {
			if s[i] != '/' {
				return nil, fmt.Errorf("path %q: unexpected %q", orig, s[i])
			}
			i++ // a trailing slash ends the loop
		}
		out = append(out, e)
	}
	return out, nil
}

// String prints elements in the form Parse reads, keys sorted.
func String(elems []Elem) string {
	if len(elems) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, e := range elems {
		b.WriteByte('/')
		b.WriteString(e.Name)
		if len(e.Keys) == 0 {
			continue
		}
		keys := make([]string, 0, len(e.Keys))
		for k := range e.Keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteByte('[')
			b.WriteString(k)
			b.WriteByte('=')
			v := e.Keys[k]
			v = strings.ReplaceAll(v, `\`, `\\`)
			v = strings.ReplaceAll(v, `]`, `\]`)
			b.WriteString(v)
			b.WriteByte(']')
		}
	}
	if last := elems[len(elems)-1]; len(last.Keys) == 0 && strings.TrimRightFunc(last.Name, unicode.IsSpace) != last.Name {
		// Parse trims the path's white space: a trailing slash keeps
		// the last name's.
		b.WriteByte('/')
	}
	return b.String()
}
