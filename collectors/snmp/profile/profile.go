// Package profile loads SNMP profiles: YAML files naming the scalars and
// tables to poll by numeric OID, with metric names, types, index tags and
// joins between tables. It is the config model only; the poller
// (collectors/snmp) turns profiles into requests and records, the way
// snmp_exporter keeps its generator's model apart from its scraper.
//
// The built-in profiles live in configs/snmp/profiles and are embedded in
// the binary; files in a user directory override a built-in profile of the
// same name or add new ones.
package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/weirnet/weir/internal/yamlerr"
)

// Metric types.
const (
	// TypeCounter is a monotonically increasing value (Counter32,
	// Counter64); it becomes an unsigned field listed in Metric.Counters.
	TypeCounter = "counter"
	// TypeGauge is a number that goes up and down (Gauge32, Integer,
	// TimeTicks).
	TypeGauge = "gauge"
	// TypeLabel is a string that identifies a row; it becomes a tag.
	TypeLabel = "label"
	// TypeString is a string field.
	TypeString = "string"
)

// Index component types: how a row's OID suffix decodes into a tag.
const (
	IndexInt = "int" // one sub-identifier
	// IndexIPv4 is four sub-identifiers (IpAddress index).
	IndexIPv4 = "ipv4"
	// IndexString is a length-prefixed OCTET STRING.
	IndexString = "string"
	// IndexImpliedString is an IMPLIED OCTET STRING: the rest of the OID.
	IndexImpliedString = "implied_string"
	// IndexOID is the rest of the suffix as a dotted OID.
	IndexOID = "oid"
)

// Profile is one file: scalars read with GET, tables walked.
type Profile struct {
	// Name defaults to the file name without .yaml.
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// SysObjectIDs are the sysObjectID prefixes for which `profiles:
	// auto` picks this profile; "1.3.6.1" matches every agent.
	SysObjectIDs []string `yaml:"sys_object_ids"`
	// Measurement names the record of the scalars; default snmp_<name>.
	Measurement string   `yaml:"measurement"`
	Scalars     []Metric `yaml:"scalars"`
	Tables      []Table  `yaml:"tables"`

	// File is where the profile came from ("builtin:if-mib.yaml" or a
	// path), for errors and logs.
	File string `yaml:"-"`
}

// TagAgent is the tag the poller gives every record of a target: the host
// polled. A label or index of that name would take its place.
const TagAgent = "agent"

// Metric is one scalar or table column.
type Metric struct {
	Name string `yaml:"name"`
	// OID is numeric, without a leading dot: the scalar instance
	// (ending in .0) or the table column.
	OID  string `yaml:"oid"`
	Type string `yaml:"type"`
	// Format "mac" or "hex" renders OCTET STRING values as
	// colon-separated or plain hex; the default shows printable strings
	// as text and others as hex.
	Format string `yaml:"format"`
	// Enum maps integer values to names for label and string metrics
	// (ifOperStatus 1 -> up).
	Enum map[int64]string `yaml:"enum"`

	Line int `yaml:"-"`
}

// Table is one measurement: columns walked and merged by their index,
// plus joins that add columns of other tables.
type Table struct {
	Measurement string `yaml:"measurement"`
	// Index decodes the row's OID suffix into tags. Without it the tag
	// "index" holds the suffix as is.
	Index   []Index  `yaml:"index"`
	Columns []Metric `yaml:"columns"`
	Joins   []Join   `yaml:"joins"`

	Line int `yaml:"-"`
}

// Index is one component of a table's index.
type Index struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
}

// Join adds columns of another table to each row.
type Join struct {
	// On names a column of this table whose value is the other table's
	// index (cpmCPUTotalPhysicalIndex -> entPhysicalTable). Empty means
	// the other table has the same index (ifTable and ifXTable).
	On      string   `yaml:"on"`
	Columns []Metric `yaml:"columns"`

	Line int `yaml:"-"`
}

// UnmarshalYAML records the line for later errors.
func (m *Metric) UnmarshalYAML(n *yaml.Node) error {
	type plain Metric
	if err := n.Decode((*plain)(m)); err != nil {
		return err
	}
	m.Line = n.Line
	return nil
}

// UnmarshalYAML records the line for later errors.
func (t *Table) UnmarshalYAML(n *yaml.Node) error {
	type plain Table
	if err := n.Decode((*plain)(t)); err != nil {
		return err
	}
	t.Line = n.Line
	return nil
}

// UnmarshalYAML records the line for later errors.
func (j *Join) UnmarshalYAML(n *yaml.Node) error {
	type plain Join
	if err := n.Decode((*plain)(j)); err != nil {
		return err
	}
	j.Line = n.Line
	return nil
}

// Set is the profiles known to a poller, by name.
type Set struct {
	byName map[string]*Profile
}

// Load reads every *.yaml of builtin (may be nil) and then of userDir (may
// be ""); a user profile replaces the built-in one of the same name. All
// mistakes are reported together, each as FILE:LINE: reason.
func Load(builtin fs.FS, userDir string) (*Set, error) {
	s := &Set{byName: map[string]*Profile{}}
	var errs []string
	if builtin != nil {
		errs = append(errs, s.loadFS(builtin, "builtin:")...)
	}
	if userDir != "" {
		if st, err := os.Stat(userDir); err != nil {
			errs = append(errs, fmt.Sprintf("profiles_dir: %v", err))
		} else if !st.IsDir() {
			errs = append(errs, fmt.Sprintf("profiles_dir: %s is not a directory", userDir))
		} else {
			// Loaded second, so a user file replaces the built-in
			// profile of the same name.
			errs = append(errs, s.loadFS(os.DirFS(userDir), userDir+string(os.PathSeparator))...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return s, nil
}

func (s *Set) loadFS(fsys fs.FS, prefix string) []string {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return []string{err.Error()}
	}
	more, _ := fs.Glob(fsys, "*.yml")
	names = append(names, more...)
	sort.Strings(names)
	var errs []string
	local := map[string]string{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s%s: %v", prefix, name, err))
			continue
		}
		file := prefix + name
		p, err := Parse(file, data)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if other, dup := local[p.Name]; dup {
			errs = append(errs, fmt.Sprintf("%s: profile %q is also defined in %s", file, p.Name, other))
			continue
		}
		local[p.Name] = file
		s.byName[p.Name] = p
	}
	return errs
}

// Parse parses and validates one profile file; file names it in errors.
func Parse(file string, data []byte) (*Profile, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		// Worded as the config's and the inventory's: yaml.v3 numbers
		// a parser error's line from 0 ("line 2" for a mapping left
		// open on line 3), which yamlerr.Clean corrects, with its
		// hints (a tab, a ${...} in braces, an indentation slip).
		msg := yamlerr.Clean(err, data, &root).Error()
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if num, m, ok := strings.Cut(rest, ": "); ok {
				return nil, fmt.Errorf("%s:%s: %s", file, num, m)
			}
		}
		return nil, fmt.Errorf("%s: %s", file, msg)
	}
	if err := yamlerr.AliasCycle(&root); err != nil {
		return nil, fmt.Errorf("%s:%s", file, strings.TrimPrefix(err.Error(), "line "))
	}
	var errs []string
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		checkKeys(root.Content[0], reflect.TypeOf(Profile{}), "profile", &errs)
	}
	if len(errs) == 0 {
		var p Profile
		dec := yaml.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&p); err != nil {
			var te *yaml.TypeError
			if errors.As(err, &te) {
				errs = append(errs, te.Errors...)
			} else {
				errs = append(errs, strings.TrimPrefix(err.Error(), "yaml: "))
			}
		} else {
			p.File = file
			if p.Name == "" {
				p.Name = strings.TrimSuffix(strings.TrimSuffix(path.Base(file), ".yaml"), ".yml")
			}
			errs = append(errs, p.validate()...)
			// The decoder read the first document alone: the metrics
			// of a second (two files joined) would be lost.
			if err := yamlerr.NextDocument(dec, "a profile is one document"); err != nil {
				errs = append(errs, err.Error())
			}
			if len(errs) == 0 {
				return &p, nil
			}
		}
	}
	for i, e := range errs {
		// "line 3: msg" -> "FILE:3: msg", the form editors jump to.
		if rest, ok := strings.CutPrefix(e, "line "); ok {
			if num, msg, ok := strings.Cut(rest, ": "); ok {
				errs[i] = file + ":" + num + ": " + msg
				continue
			}
		}
		errs[i] = file + ": " + e
	}
	return nil, errors.New(strings.Join(errs, "\n"))
}

func (p *Profile) validate() []string {
	var errs []string
	add := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("line %d: %s", line, fmt.Sprintf(format, args...)))
	}
	for i, oid := range p.SysObjectIDs {
		norm, err := NormalizeOID(oid)
		if err != nil {
			add(1, "sys_object_ids[%d]: %v", i, err)
		}
		p.SysObjectIDs[i] = norm
	}
	if len(p.Scalars) == 0 && len(p.Tables) == 0 {
		add(1, "profile has neither scalars nor tables")
	}
	checkMetric := func(where string, m *Metric) {
		if m.Name == "" {
			add(m.Line, "%s: name must be set", where)
		}
		oid, err := NormalizeOID(m.OID)
		if err != nil {
			add(m.Line, "%s %s: %v", where, m.Name, err)
		}
		m.OID = oid
		switch m.Type {
		case TypeCounter, TypeGauge, TypeLabel, TypeString:
		case "":
			add(m.Line, "%s %s: type must be set (counter, gauge, label or string)", where, m.Name)
		default:
			add(m.Line, "%s %s: unknown type %q (counter, gauge, label or string)", where, m.Name, m.Type)
		}
		if m.Type == TypeLabel && m.Name == TagAgent {
			add(m.Line, "%s %s: the tag %s is the host polled, which enrichment finds the device by: name the label otherwise", where, m.Name, TagAgent)
		}
		switch m.Format {
		case "", "mac", "hex", "text":
		default:
			add(m.Line, "%s %s: unknown format %q (mac, hex or text)", where, m.Name, m.Format)
		}
	}
	seen := map[string]bool{}
	for i := range p.Scalars {
		m := &p.Scalars[i]
		checkMetric("scalar", m)
		if seen[m.Name] {
			add(m.Line, "scalar %s: duplicate name", m.Name)
		}
		seen[m.Name] = true
	}
	for ti := range p.Tables {
		t := &p.Tables[ti]
		if t.Measurement == "" {
			add(t.Line, "tables[%d]: measurement must be set", ti)
		}
		if len(t.Columns) == 0 {
			add(t.Line, "table %s: no columns", t.Measurement)
		}
		for _, ix := range t.Index {
			switch ix.Type {
			case IndexInt, IndexIPv4, IndexString, IndexImpliedString, IndexOID:
			default:
				add(t.Line, "table %s: index %s: unknown type %q (int, ipv4, string, implied_string or oid)", t.Measurement, ix.Name, ix.Type)
			}
			if ix.Name == "" {
				add(t.Line, "table %s: index name must be set", t.Measurement)
			}
			if ix.Name == TagAgent {
				add(t.Line, "table %s: index %s: the tag %s is the host polled, which enrichment finds the device by: name the index otherwise", t.Measurement, ix.Name, TagAgent)
			}
		}
		names := map[string]bool{}
		for ci := range t.Columns {
			c := &t.Columns[ci]
			checkMetric("table "+t.Measurement+" column", c)
			if names[c.Name] {
				add(c.Line, "table %s: duplicate column %s", t.Measurement, c.Name)
			}
			names[c.Name] = true
		}
		for ji := range t.Joins {
			j := &t.Joins[ji]
			if j.On != "" && !names[j.On] {
				add(j.Line, "table %s: join on %s: no such column in the table", t.Measurement, j.On)
			}
			if len(j.Columns) == 0 {
				add(j.Line, "table %s: join with no columns", t.Measurement)
			}
			for ci := range j.Columns {
				c := &j.Columns[ci]
				checkMetric("table "+t.Measurement+" join column", c)
				if names[c.Name] {
					add(c.Line, "table %s: duplicate column %s", t.Measurement, c.Name)
				}
				names[c.Name] = true
			}
		}
	}
	if p.Measurement == "" && len(p.Scalars) > 0 {
		p.Measurement = "snmp_" + strings.NewReplacer("-", "_", ".", "_").Replace(p.Name)
	}
	return errs
}

// NormalizeOID checks a numeric OID and returns it as agents name it in
// their answers, which the poller matches as text: no leading dot, no
// leading zeros in an arc ("1.3.06" is 1.3.6). The first two arcs are
// what BER can encode (X.690: 0-2, then below 40 under 0 and 1); gosnmp
// refuses others at every poll.
func NormalizeOID(oid string) (string, error) {
	s := strings.TrimPrefix(strings.TrimSpace(oid), ".")
	if s == "" {
		return "", errors.New("oid must be set")
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return s, fmt.Errorf("%q is not a numeric OID (like 1.3.6.1.2.1.1.3.0)", oid)
	}
	b := make([]byte, 0, len(s))
	var first uint64
	for i, part := range parts {
		n, err := strconv.ParseUint(part, 10, 32)
		if errors.Is(err, strconv.ErrRange) {
			// Digits, but past 32 bits (RFC 2578 section 3.5): "use
			// numbers" would not tell what is wrong.
			return s, fmt.Errorf("%q: sub-identifier %s is above %d, the most an OID's number can be", oid, part, uint32(math.MaxUint32))
		}
		if err != nil {
			return s, fmt.Errorf("%q is not a numeric OID (like 1.3.6.1.2.1.1.3.0); use numbers, MIB names are not resolved", oid)
		}
		if i == 0 {
			first = n
		}
		if i == 0 && n > 2 || i == 1 && first < 2 && n >= 40 {
			return s, fmt.Errorf("%q is not an OID: it starts 0, 1 or 2, and under 0 or 1 the second number is below 40", oid)
		}
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendUint(b, n, 10)
	}
	return string(b), nil
}

// Get returns the profile of that name.
func (s *Set) Get(name string) (*Profile, bool) {
	p, ok := s.byName[name]
	return p, ok
}

// Names lists the profile names, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Check reports the names that are not profiles.
func (s *Set) Check(names []string) error {
	var missing []string
	for _, n := range names {
		if _, ok := s.byName[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("unknown profile %s (known: %s)", strings.Join(missing, ", "), strings.Join(s.Names(), ", "))
	}
	return nil
}

// Resolve returns the named profiles plus, when auto is set, every profile
// whose sys_object_ids has a prefix of sysObjectID (on whole
// sub-identifiers), in name order and without duplicates.
func (s *Set) Resolve(names []string, auto bool, sysObjectID string) ([]*Profile, error) {
	if err := s.Check(names); err != nil {
		return nil, err
	}
	chosen := map[string]bool{}
	for _, n := range names {
		chosen[n] = true
	}
	if auto {
		oid := strings.TrimPrefix(sysObjectID, ".")
		for name, p := range s.byName {
			for _, prefix := range p.SysObjectIDs {
				if oid == prefix || strings.HasPrefix(oid, prefix+".") {
					chosen[name] = true
				}
			}
		}
	}
	var out []*Profile
	for _, n := range s.Names() {
		if chosen[n] {
			out = append(out, s.byName[n])
		}
	}
	return out, nil
}

// checkKeys reports mapping keys that have no yaml field in t; those of a
// mapping merged in (<<: *anchor) count as the mapping's own.
func checkKeys(n *yaml.Node, t reflect.Type, where string, errs *[]string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice {
		if n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				checkKeys(c, t.Elem(), where, errs)
			}
		}
		return
	}
	if t.Kind() != reflect.Struct || n.Kind != yaml.MappingNode {
		return
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		fields[name] = f.Type
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if yamlerr.IsMergeKey(k) {
			for _, m := range yamlerr.MergedMappings(n.Content[i+1]) {
				checkKeys(m, t, where, errs)
			}
			continue
		}
		ft, ok := fields[k.Value]
		if !ok {
			// Once, though an anchored mapping is met at each merge.
			if e := fmt.Sprintf("line %d: unknown key %q in %s", k.Line, k.Value, strings.ToLower(t.Name())); !slices.Contains(*errs, e) {
				*errs = append(*errs, e)
			}
			continue
		}
		checkKeys(n.Content[i+1], ft, k.Value, errs)
	}
}
