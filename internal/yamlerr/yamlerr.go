// Package yamlerr words yaml.v3's errors for the reader of the file: the
// line a syntax error is on (yaml.v3 numbers a parser error's from 0), the
// key a type error or a NewValueError is about, and hints for tabs and ${...}
// in braces; and the merge-key helpers of the loaders' own key checks. The
// config, inventory and SNMP profile loaders share it.
package yamlerr

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Clean words a YAML error for the file's reader: a type error
// names the key ("line 5: snmp.targets[0].retries: cannot unmarshal !!str
// `six` into int"; in a flow mapping the line alone does not say which),
// and a syntax error on a line with a tab says YAML indents with spaces.
func Clean(err error, data []byte, root *yaml.Node) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, e := range te.Errors {
			if msg, ok := withValuePath(e, root); ok {
				msgs[i] = msg
			} else {
				msgs[i] = withKeyPath(e, root)
			}
		}
		return errors.New(strings.Join(msgs, "\n"))
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if _, scanErr := fmt.Sscanf(msg, "line %d:", &line); scanErr != nil {
		line = 0
	}
	problem := msg
	if line > 0 {
		problem = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line))
	}
	if parserProblems[problem] {
		// yaml.v3 numbers a parser error's line from 0 (the line where
		// the mapping or list it was in starts, else where it found
		// the problem), and leaves out line 0: read with a line
		// before it, the file gives that line counted from 1.
		line = 0
		var n yaml.Node
		if err2 := yaml.Unmarshal(append([]byte("\n"), data...), &n); err2 != nil {
			fmt.Sscanf(strings.TrimPrefix(err2.Error(), "yaml: "), "line %d:", &line)
		}
		msg = problem
		if line > 0 {
			msg = fmt.Sprintf("line %d: %s", line, problem)
		}
	}
	lines := bytes.Split(data, []byte("\n"))
	if what := blockProblems[problem]; what != "" && line > 0 {
		if at := misindented(lines, line, problem); at > line {
			// yaml.v3 names the line where the list or mapping starts;
			// the slip is further down, where the file stops parsing.
			msg = fmt.Sprintf("line %d: %s: check this line's indentation against the %s starting on line %d",
				at, problem, what, line)
			line = at
		}
	}
	if problem == tabProblem && line > 0 && line <= len(lines) && !bytes.ContainsRune(lines[line-1], '\t') {
		// yaml.v3 numbers it at the line where the plain scalar
		// before the tab starts: the tab is in the indentation of a
		// line after it.
		for l := line + 1; l <= len(lines); l++ {
			indent := lines[l-1][:len(lines[l-1])-len(bytes.TrimLeft(lines[l-1], " \t"))]
			if bytes.ContainsRune(indent, '\t') {
				line = l
				msg = fmt.Sprintf("line %d: %s", line, problem)
				break
			}
		}
	}
	if line > 0 && line <= len(lines) {
		switch {
		case bytes.ContainsRune(lines[line-1], '\t'):
			msg += " (a tab on that line: YAML indents with spaces only)"
		case strings.HasPrefix(problem, "did not find expected ',' or") && bytes.Contains(lines[line-1], []byte("${")):
			// The braces of a plain ${...} end the flow mapping.
			msg += ` (quote a ${...} inside {...} or [...]: "${NAME}")`
		case problem == mappingValuesProblem:
			msg += mappingValuesHint(lines, line)
		}
	}
	return errors.New(msg)
}

// blockProblems are the parser errors of a list or mapping whose
// indentation went wrong (see misindented), with what their line starts.
var blockProblems = map[string]string{
	"did not find expected '-' indicator": "list",
	"did not find expected key":           "mapping",
}

// misindented is the first line (from 1) after from, where a list or
// mapping starts, at which the file stops parsing with problem: the line
// whose indentation slipped ("     community:" one space short of the keys
// above it), which yaml.v3's error leaves out. The lines before it parse
// and the lines up to it do not, so a binary search over the file's
// prefixes finds it in a few parses of a large inventory. 0 when none is
// found, or the prefix fails otherwise (cut inside a quoted string or a
// {...} written over several lines).
func misindented(lines [][]byte, from int, problem string) int {
	fails := func(n int) error {
		var v yaml.Node
		return yaml.Unmarshal(bytes.Join(lines[:n], []byte("\n")), &v)
	}
	lo, hi := from, len(lines) // prefix lo parses (or is from's), hi fails
	if fails(hi) == nil {
		return 0
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fails(mid) != nil {
			hi = mid
		} else {
			lo = mid
		}
	}
	if err := fails(hi); err == nil || !strings.HasSuffix(err.Error(), ": "+problem) {
		return 0
	}
	return hi
}

// mappingValuesProblem is the scanner error for a "key: value" where
// YAML takes no key: a line indented deeper than the "key: value" above
// it (read as more of that value), or a plain value with ": " in it.
const mappingValuesProblem = "mapping values are not allowed in this context"

// mappingValuesHint says which of the two mappingValuesProblem's line
// (from 1) most likely is, "" when it is neither.
func mappingValuesHint(lines [][]byte, line int) string {
	indent := func(l []byte) int { return len(l) - len(bytes.TrimLeft(l, " -")) } // a key's column, after a list's "- "
	at := lines[line-1]
	for prev := line - 1; prev >= 1; prev-- {
		p := bytes.TrimSpace(lines[prev-1])
		if len(p) == 0 || p[0] == '#' {
			continue
		}
		if indent(lines[prev-1]) < indent(at) && !bytes.HasSuffix(p, []byte(":")) && bytes.Contains(p, []byte(": ")) {
			return fmt.Sprintf(" (indented deeper than line %d, this line is read as more of that line's value: indent its key as the keys beside it)", prev)
		}
		break
	}
	rest := bytes.TrimLeft(bytes.TrimSpace(at), "- ")
	if _, value, ok := bytes.Cut(rest, []byte(": ")); ok && (bytes.Contains(value, []byte(": ")) || bytes.HasSuffix(value, []byte(":"))) {
		return ` (a value with ": " in it needs quotes: key: "a: b")`
	}
	return ""
}

// tabProblem is the scanner error for a tab in the indentation of a plain
// scalar's next line.
const tabProblem = "found a tab character that violates indentation"

// parserProblems are the syntax errors yaml.v3's parser (not its
// scanner) reports, whose line it numbers from 0.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// typeErrorRE is how yaml.v3 words a value of the wrong type.
var typeErrorRE = regexp.MustCompile(`^line (\d+): cannot unmarshal !!(\w+)(?: ` + "`(.*)`" + `)? into `)

// withKeyPath puts the key path of the value a yaml.v3 type error is about
// after its line, where root has one value of that kind at that line.
func withKeyPath(msg string, root *yaml.Node) string {
	m := typeErrorRE.FindStringSubmatch(msg)
	if m == nil || root == nil {
		return msg
	}
	line, _ := strconv.Atoi(m[1])
	return insertPath(msg, "line "+m[1]+": ", pathsAt(root, line, func(n *yaml.Node) bool {
		return "!!"+m[2] == n.Tag && (m[3] == "" || n.Value == m[3] || strings.HasPrefix(n.Value, strings.TrimSuffix(m[3], "...")))
	}))
}

// NewValueError is the error of a type's own UnmarshalYAML about its node
// n, which does not know the key it is under: Clean finds the key by the
// node's position and words it "line N: key.path: Msg". It is a
// *yaml.TypeError, so that yaml.v3 goes on decoding and every bad value of
// a file is reported at once: any other error stops the decoding at the
// first. It must be returned as it is, not wrapped, for the same reason.
func NewValueError(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("%s%d:%d: %s", valueErrorMark, n.Line, n.Column, fmt.Sprintf(format, args...))}}
}

// valueErrorMark starts NewValueError's text in a TypeError, before the
// node's line and column, which Clean turns into "line N: key.path:".
const valueErrorMark = "value at "

// withValuePath words a NewValueError text "value at L:C: msg" as "line L:
// path: msg", with the key path of the value at that line and column when
// root has one there; other texts are returned as they are.
func withValuePath(msg string, root *yaml.Node) (string, bool) {
	rest, ok := strings.CutPrefix(msg, valueErrorMark)
	if !ok {
		return msg, false
	}
	var line, column int
	if _, err := fmt.Sscanf(rest, "%d:%d:", &line, &column); err != nil {
		return msg, false
	}
	text := rest[strings.Index(rest, ": ")+2:]
	prefix := fmt.Sprintf("line %d: ", line)
	if root == nil {
		return prefix + text, true
	}
	return insertPath(prefix+text, prefix, pathsAt(root, line, func(n *yaml.Node) bool {
		return n.Column == column
	})), true
}

// insertPath puts the one path found after the message's line prefix.
func insertPath(msg, prefix string, found []string) string {
	if len(found) != 1 {
		return msg
	}
	return prefix + found[0] + ": " + strings.TrimPrefix(msg, prefix)
}

// pathsAt returns the key paths of the values at line that match.
func pathsAt(root *yaml.Node, line int, match func(*yaml.Node) bool) []string {
	var found []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n.Line == line && path != "" && match(n) {
			found = append(found, path)
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 1; i < len(n.Content); i += 2 {
				walk(n.Content[i], strings.TrimPrefix(path+"."+n.Content[i-1].Value, "."))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(root, "")
	return found
}

// AliasCycle refuses an alias to a node that holds it (`&a {<<: *a}`, or
// a merge of the list the mapping is in): walking the tree through
// aliases, as key checks do to reach merged mappings, would not end.
func AliasCycle(root *yaml.Node) error {
	open := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Kind == yaml.AliasNode {
			if open[n.Alias] {
				return fmt.Errorf("line %d: alias *%s refers to a node that holds it", n.Line, n.Value)
			}
			return nil // its target is walked where it is written
		}
		open[n] = true
		defer delete(open, n)
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}

// IsMergeKey reports whether k is YAML's merge key (<<: *anchor), which the
// decoder resolves into the mapping it is in: key checks that walk the
// nodes take the merged mappings' keys as the mapping's own.
func IsMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// IsExtensionKey reports whether a top-level key is the file writer's own:
// keys that begin with "x-", as docker-compose files have, hold anchors
// that belong to no section (x-lab: &lab {...}) and notes; the loaders
// read no further.
func IsExtensionKey(key string) bool {
	return strings.HasPrefix(key, "x-")
}

// UnknownExtensionKey reports whether e, one of a yaml.v3 TypeError's
// errors, is the strict decoder's refusal of an extension key in the Go
// type top ("line 1: field x-lab not found in type configs.Config"): not
// a mistake, to leave out.
func UnknownExtensionKey(e, top string) bool {
	field, typ, ok := strings.Cut(e, " not found in type ")
	if !ok || typ != top {
		return false
	}
	_, key, ok := strings.Cut(field, ": field ")
	return ok && IsExtensionKey(key)
}

// MergedMappings returns the mappings a merge key's value brings in: one
// mapping or alias of one, or a sequence of them.
func MergedMappings(v *yaml.Node) []*yaml.Node {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		return []*yaml.Node{v}
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, c := range v.Content {
			out = append(out, MergedMappings(c)...)
		}
		return out
	}
	return nil
}

// NextDocument refuses a document after the one dec has read (two files
// joined, each starting with ---): a decoder reads one document a call,
// and the second's settings would be dropped without a word. A --- or ...
// that ends the file with nothing after it is no document. what names the
// file's kind in the error ("weir reads one document a file").
func NextDocument(dec *yaml.Decoder, what string) error {
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s (in a second YAML document, after ---; %s)", strings.TrimPrefix(err.Error(), "yaml: "), what)
		}
		if len(n.Content) > 0 && n.Content[0].Tag != "!!null" {
			return fmt.Errorf("line %d: a second YAML document starts here (---); %s: join them, or remove the ---", n.Line, what)
		}
	}
}

// WithFile turns msg's "line N: reason" lines into "FILE:N: reason", the
// form editors and CI annotate, and prefixes its other lines "FILE: ".
func WithFile(path, msg string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "line "); ok {
			if num, reason, ok := strings.Cut(rest, ": "); ok {
				if _, err := strconv.Atoi(num); err == nil {
					lines[i] = path + ":" + num + ": " + reason
					continue
				}
			}
		}
		lines[i] = path + ": " + l
	}
	return strings.Join(lines, "\n")
}

// LineOf is the line of the key path keys in the document root (a key
// "listeners[2]" is the third element of the listeners sequence, its line
// the element's), and whether the whole path is written; the line of the
// nearest part written if only some of it is, 0 if none.
func LineOf(root *yaml.Node, keys []string) (int, bool) {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, key := range keys {
		idx := -1
		if open := strings.IndexByte(key, '['); open > 0 && strings.HasSuffix(key, "]") {
			if i, err := strconv.Atoi(key[open+1 : len(key)-1]); err == nil {
				key, idx = key[:open], i
			}
		}
		if n.Kind != yaml.MappingNode {
			return line, false
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line = n.Content[i].Line
				n = n.Content[i+1]
				found = true
				break
			}
		}
		if !found {
			return line, false
		}
		if idx >= 0 {
			if n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				return line, false
			}
			n = n.Content[idx]
			line = n.Line
		}
	}
	return line, true
}
