package enrich

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/weirnet/weir/internal/wholefile"
	"github.com/weirnet/weir/internal/yamlerr"
	"github.com/weirnet/weir/telemetry"
	"go.yaml.in/yaml/v3"
)

// Device is one inventory entry: a device by name and address, or a range
// of devices by CIDR, with the attributes every enriched record carries.
type Device struct {
	Name     string `yaml:"name"`
	Address  string `yaml:"address"`
	CIDR     string `yaml:"cidr"`
	Site     string `yaml:"site"`
	Region   string `yaml:"region"`
	Role     string `yaml:"role"`
	Vendor   string `yaml:"vendor"`
	Platform string `yaml:"platform"`
	Tags     Tags   `yaml:"tags"`
	// Relay marks a syslog or trap relay's address (or a range of
	// relays): it names the lines it sends of its own (no hostname),
	// never one that names another host, which is that host's, or an
	// unknown device's, not the relay's.
	Relay bool `yaml:"relay"`

	prefix   netip.Prefix
	tags     map[string]string // all attributes as tags, built once
	tagsJSON []byte            // tags as the `,"tags":{...}` of a record
	// eventTagsJSON is tags as an event writes them (HTML escaped).
	eventTagsJSON []byte
	tagList       []telemetry.Tag // tags sorted by key
}

// inventoryFile is the YAML file: `devices:` and a list.
type inventoryFile struct {
	Devices []Device `yaml:"devices"`
}

// empty reports whether the index has no entry.
func (idx *inventoryIndex) empty() bool {
	return len(idx.byName) == 0 && len(idx.byAddr) == 0 && len(idx.ranges.v4) == 0 && len(idx.ranges.v6) == 0
}

type inventoryIndex struct {
	byName map[string]*Device
	// byFold holds the names in lower case (hostnames are
	// case-insensitive); byLabel the first label of the dotted ones
	// (core1 for core1.fra.example.net) that no other entry shares, for
	// a device that sends its name without the domain.
	byFold  map[string]*Device
	byLabel map[string]*Device
	byAddr  map[netip.Addr]*Device
	ranges  prefixTable // CIDR entries
	// file is the version of the file read (nil: none), which the watch
	// compares the file with.
	file os.FileInfo
	// warnings name the entries another one hides (the same name,
	// address or CIDR twice), logged when the file is loaded.
	warnings []string
	// devices and cidrs count the entries in use: devices by name or
	// address, ranges (see Size).
	devices, cidrs int
	// relays says an entry is a relay's (see LookupTarget).
	relays bool
	// data is the file's text, for the detector to keep across restarts
	// (see EventRules.KeepRenames).
	data []byte
}

// Inventory matches records to devices by hostname (or sysName), exact
// address, then longest CIDR. It is reloaded when its file changes or on
// Reload (SIGHUP), without stopping the workers that use it.
type Inventory struct {
	idx atomic.Pointer[inventoryIndex]
	// path is the file the inventory is read from and the watch
	// follows: the config's, loaded or not ("": none).
	path   atomic.Pointer[string]
	logger *slog.Logger
	// reloading serialises reloads (SIGHUP's and the watch's), from
	// reading the file to storing it, so the last stored is the last
	// read, and to telling the observer (see observedSince).
	reloading sync.Mutex
	// afterRead, if set, is called by each reload between reading the
	// file and storing it (tests).
	afterRead func()
	// beforeCheck, if set, is called by the watch before each check of
	// the file (tests).
	beforeCheck func()
	// observe is told the outcome of each reload the watch reports and
	// of each Reload (nil: none).
	observe func(error)
	// failing says the last outcome reported was a failure: the watch
	// reports the loaded version put back (see Watch) as a success.
	failing atomic.Bool
	// sighups counts the reloads Reload and ReloadPath (SIGHUP's) made,
	// each counted once told: the watch tells the outcome of a check
	// only if none was made since it began, whose outcome is newer.
	sighups atomic.Uint64
	// sighupSaw is what the last of those found of its file (held with
	// reloading), for the watch not to report it again.
	sighupSaw sighupOutcome
}

// sighupOutcome is what a SIGHUP's reload found of path: unreadable, or
// failed, the version of the file that did not load (nil: none).
type sighupOutcome struct {
	path       string
	unreadable bool
	failed     os.FileInfo
}

// Observe has f told the outcome of each reload (nil: the file loaded):
// of each Reload (SIGHUP), and of each the watch reports, once per
// version of the file that does not load and once while it cannot be
// read. Call it before Watch starts. f is called with reloads held off
// (it must not reload).
func (inv *Inventory) Observe(f func(error)) { inv.observe = f }

// observed tells the observer, if any, of a reload's outcome.
func (inv *Inventory) observed(err error) {
	inv.failing.Store(err != nil)
	if inv.observe != nil {
		inv.observe(err)
	}
}

// LoadInventory reads the file at path; an empty path gives an empty
// inventory (every device unknown).
func LoadInventory(path string, logger *slog.Logger) (*Inventory, error) {
	inv := &Inventory{logger: logger}
	inv.idx.Store(&inventoryIndex{})
	inv.path.Store(&path)
	if path == "" {
		return inv, nil
	}
	if err := inv.ReloadPath(path); err != nil {
		return nil, err
	}
	return inv, nil
}

// ParseInventory builds an inventory from YAML bytes (tests, tools).
func ParseInventory(data []byte) (*Inventory, error) {
	idx, err := parseInventory(data, "inventory")
	if err != nil {
		return nil, err
	}
	inv := &Inventory{logger: slog.New(slog.DiscardHandler)}
	inv.idx.Store(idx)
	inv.path.Store(new(string))
	return inv, nil
}

// Path is the file the inventory is read from ("": none): the last
// ReloadPath's, even if it did not load.
func (inv *Inventory) Path() string { return *inv.path.Load() }

// Reload reads the file in use again; on error the previous inventory stays.
func (inv *Inventory) Reload() error { return inv.sighup(nil) }

// ReloadPath reads the inventory from path, which the watch follows from
// then on (a SIGHUP after the config's enrich.inventory changed); an
// empty path empties the inventory. On error the previous inventory stays
// until the watch loads the new file (once it is there, or fixed).
func (inv *Inventory) ReloadPath(path string) error { return inv.sighup(&path) }

// sighup is Reload (path nil: the file in use) and ReloadPath: the
// outcome is told before reloads go on, and counted (see observedSince).
func (inv *Inventory) sighup(path *string) error {
	inv.reloading.Lock()
	defer inv.reloading.Unlock()
	if path != nil {
		inv.path.Store(path)
	}
	st, err := inv.read(inv.Path())
	inv.observed(err)
	saw := sighupOutcome{path: inv.Path()}
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pathErr):
		saw.unreadable = true
	case err != nil:
		saw.failed = st
	}
	inv.sighupSaw = saw
	inv.sighups.Add(1)
	return err
}

// lastSighup is what the last SIGHUP's reload found.
func (inv *Inventory) lastSighup() sighupOutcome {
	inv.reloading.Lock()
	defer inv.reloading.Unlock()
	return inv.sighupSaw
}

// errPathChanged: the watch read a file that is no longer the
// inventory's (ReloadPath moved it meanwhile).
var errPathChanged = errors.New("inventory file changed")

// reloadWatched reads path again if it is still the inventory's file, as
// Reload does but untold to the observer (see observedSince).
func (inv *Inventory) reloadWatched(path string) error {
	inv.reloading.Lock()
	defer inv.reloading.Unlock()
	if inv.Path() != path {
		return errPathChanged
	}
	_, err := inv.read(path)
	return err
}

// observedSince tells the observer the outcome of a check the watch
// began when sighups was n, unless SIGHUP reloaded since: its outcome,
// told, is newer. The watch's success with the old file, told after
// SIGHUP's failure with the new one (ReloadPath), said the inventory
// loaded, and had the reloads take the part SIGHUP refused as taken.
// told is false then: the watch does not log a failure SIGHUP told (its
// next check takes what SIGHUP found as reported).
func (inv *Inventory) observedSince(n uint64, err error) (told bool) {
	inv.reloading.Lock()
	defer inv.reloading.Unlock()
	if inv.sighups.Load() != n {
		return false
	}
	inv.observed(err)
	return true
}

// read reads the inventory from path and stores it; the caller holds
// reloading, so that the last stored is the last read. st is the version
// of the file read (nil when none was).
func (inv *Inventory) read(path string) (st os.FileInfo, err error) {
	if path == "" {
		inv.idx.Store(&inventoryIndex{})
		return nil, nil
	}
	st, err = os.Stat(path)
	if err != nil {
		if wd, wdErr := os.Getwd(); errors.Is(err, fs.ErrNotExist) && !filepath.IsAbs(path) && wdErr == nil {
			// Not the config file's directory, which a user may expect.
			return nil, fmt.Errorf("%w (relative to the directory weir runs in, %s)", err, wd)
		}
		return nil, err
	}
	if err := checkFile(path, st); err != nil {
		return st, err
	}
	data, err := wholefile.Read(path, wholefile.MaxBytes)
	if err != nil {
		return nil, err
	}
	if prev := inv.idx.Load(); len(bytes.TrimSpace(data)) == 0 && !prev.empty() {
		// Most likely caught mid-save (an editor truncates, then
		// writes): every device would be unknown until the next check.
		return st, fmt.Errorf("%s is empty (being written?); to empty the inventory, write a comment or \"devices: []\"", path)
	}
	idx, err := parseInventory(data, path)
	if err != nil {
		return st, err
	}
	idx.file = st
	if inv.afterRead != nil {
		inv.afterRead()
	}
	inv.idx.Store(idx)
	for _, w := range idx.warnings {
		inv.logger.Warn("inventory: "+w, slog.String("file", path))
	}
	return st, nil
}

// checkFile refuses a file weir reads whole, and again at each change
// (the inventory, the syslog rules), that st, its os.Stat, says is not a
// regular file, or is past wholefile.MaxBytes. Checked before the file is
// opened: a device such as /dev/zero is read without end, growing memory
// without bound, and a named pipe's open waits for a writer, either
// holding the reload (and every later SIGHUP) for good. A directory is
// left to fail as it reads, as a file weir may not read does.
func checkFile(path string, st os.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsRegular():
		return wholefile.TooLarge(path, st.Size(), wholefile.MaxBytes)
	case m.IsDir():
		return nil
	}
	return fmt.Errorf("%s is not a regular file (%s): weir reads it again at each change and SIGHUP", path, wholefile.Kind(m))
}

// Size is what the inventory holds: the devices listed by name or
// address, and the CIDR ranges (an entry another replaced not counted).
func (inv *Inventory) Size() (devices, ranges int) {
	idx := inv.idx.Load()
	return idx.devices, idx.cidrs
}

// Warnings are what the inventory's file lists twice (a name, an address
// or a CIDR), each saying which entry is used; weir check prints them.
func (inv *Inventory) Warnings() []string { return inv.idx.Load().warnings }

// Tags are an entry's free tags, key to value.
type Tags map[string]string

// UnmarshalYAML refuses a tag key YAML reads as null (~, null, or none
// before the colon), which yaml.v3 would drop with its tag, silently.
func (t *Tags) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Tag == "!!null" {
				key := k.Value
				if key == "" {
					key = "(none)"
				}
				return &yaml.TypeError{Errors: []string{fmt.Sprintf(
					"line %d: tag key %s is YAML's null, not a name: quote it ('%s') if that is the tag's name", k.Line, key, k.Value)}}
			}
		}
	}
	var m map[string]string
	if err := n.Decode(&m); err != nil {
		return err
	}
	*t = m
	return nil
}

// reservedTags are tag keys weir's records carry of their own, which an
// inventory tag may not take: the sinks take a device tag for the device
// (two devices tagged device: switch would be one series), and the
// interface view, targets and unknown devices are named by the others.
var reservedTags = map[string]bool{"device": true, "interface": true, "target": true, "unknown": true}

// reservedTag is the one of reservedTags that tag key k is in any case
// and with separators around it ("" for none): the Prometheus sink
// snake_cases a key into its label name (Device, DEVICE, device_ and
// _device are all device), so each would take the place of weir's own.
func reservedTag(k string) string {
	notAlnum := func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') }
	if own := strings.ToLower(strings.TrimFunc(k, notAlnum)); reservedTags[own] {
		return own
	}
	return ""
}

func parseInventory(data []byte, name string) (*inventoryIndex, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f inventoryFile
	firstErr := withoutExtensionKeys(dec.Decode(&f), "enrich.inventoryFile")
	if err := firstErr; err != nil && !errors.Is(err, io.EOF) && len(bytes.TrimSpace(data)) > 0 { // EOF: comments only
		// One error a line, each naming the file: the config's errors
		// may print beside them.
		return nil, errors.New(yamlerr.WithFile(name, inventoryYAMLError(err, data).Error()))
	}
	// The decoder reads the first document alone: the devices of a
	// second (two files joined, each starting with ---) would be lost.
	if firstErr == nil {
		if err := yamlerr.NextDocument(dec, "an inventory is one document"); err != nil {
			return nil, errors.New(yamlerr.WithFile(name, err.Error()))
		}
	}
	// at is where an error about device i's key is: "FILE:LINE:", the
	// line of the key (or of the entry, key ""), as the YAML errors say.
	at := func(i int, key string) string {
		if line := inventoryLine(data, i, key); line > 0 {
			return fmt.Sprintf("%s:%d:", name, line)
		}
		return name + ":"
	}
	idx := &inventoryIndex{byName: map[string]*Device{}, byFold: map[string]*Device{}, byLabel: map[string]*Device{},
		byAddr: map[netip.Addr]*Device{}, data: data}
	// Where each name, address and CIDR was first listed, to warn of
	// entries listed twice.
	firstName, firstAddr, firstPrefix := map[string]int{}, map[netip.Addr]int{}, map[netip.Prefix]int{}
	twice := func(i int, d *Device, what string, first, used int) {
		idx.warnings = append(idx.warnings, fmt.Sprintf("device %d (%s): %s also at device %d; device %d is used",
			i+1, entryName(d), what, first+1, used+1))
	}
	// An entry whose name a later one has is replaced whole: its address
	// finds nothing (or one device would have two sets of tags), and
	// hides no other entry's.
	lastNamed := map[string]int{}
	for i := range f.Devices {
		if d := &f.Devices[i]; d.named() {
			lastNamed[d.Name] = i
		}
	}
	for i := range f.Devices {
		d := &f.Devices[i]
		d.tags = map[string]string{}
		for k, v := range d.Tags {
			if k == "" || strings.ContainsFunc(k, unicode.IsControl) {
				// No label: InfluxDB's line protocol has no such key, and
				// would refuse every metric of the device.
				return nil, fmt.Errorf("%s device %d (%s): tag key %q is empty or has a control character; give the label a name",
					at(i, "tags"), i+1, entryName(d), k)
			}
			if own := reservedTag(k); own != "" {
				as := ""
				if own != k {
					as = " (the Prometheus sink's label " + own + ")"
				}
				return nil, fmt.Errorf("%s device %d (%s): tag %q%s is weir's own (records name the device, the interface and the polled target with it); give the label another name",
					at(i, "tags"), i+1, entryName(d), k, as)
			}
			d.tags[k] = v
		}
		for _, a := range [...]struct{ k, v string }{{"site", d.Site}, {"region", d.Region}, {"role", d.Role}, {"vendor", d.Vendor}, {"platform", d.Platform}} {
			if a.v == "" {
				continue
			}
			if tv, ok := d.tags[a.k]; ok && tv != a.v {
				// The records would not carry what the file seems to say.
				idx.warnings = append(idx.warnings, fmt.Sprintf("device %d (%s): tags has %s %q, and the entry's %s is %q: %q is used",
					i+1, entryName(d), a.k, tv, a.k, a.v, a.v))
			}
			d.tags[a.k] = a.v
		}
		if w := vendorNearMiss(d.Vendor); w != "" {
			idx.warnings = append(idx.warnings, fmt.Sprintf("device %d (%s): %s", i+1, entryName(d), w))
		}
		d.tagsJSON = telemetry.AppendStringMapField(nil, "tags", d.tags)
		d.eventTagsJSON = telemetry.AppendMarshalTagsField(nil, d.tags)
		for k, v := range d.tags {
			d.tagList = append(d.tagList, telemetry.Tag{Key: k, Value: v})
		}
		slices.SortFunc(d.tagList, func(a, b telemetry.Tag) int { return strings.Compare(a.Key, b.Key) })
		switch {
		case d.CIDR != "" && d.Address != "":
			// One would be ignored: a range is matched by the addresses
			// in it, a device by its own.
			return nil, fmt.Errorf("%s device %d (%s): address and cidr exclude each other (a device has an address, a range of devices a cidr)",
				at(i, "cidr"), i+1, entryName(d))
		case d.CIDR == "" && d.Address == "" && !d.named():
			return nil, fmt.Errorf("%s device %d: name, address or cidr must be set (the entry matches nothing)", at(i, ""), i+1)
		case d.Name != strings.TrimSpace(d.Name):
			// No record carries a host name with spaces around it.
			return nil, fmt.Errorf("%s device %d: name %q has white space at its start or end (it would match no record)", at(i, "name"), i+1, d.Name)
		case d.Relay && d.CIDR == "" && d.Address == "":
			return nil, fmt.Errorf("%s device %d (%s): relay needs the relay's address (or a cidr of relays): it is matched by the address lines come from", at(i, "relay"), i+1, entryName(d))
		case d.CIDR != "":
			p, err := netip.ParsePrefix(d.CIDR)
			if err != nil {
				return nil, fmt.Errorf("%s device %d (%s): %s", at(i, "cidr"), i+1, entryName(d), cidrError(d.CIDR, err))
			}
			wide := p.Addr().Is4In6() && p.Bits() < 96 // warned of below
			switch {
			case p.Addr().Is4In6() && p.Bits() >= 96:
				// An IPv4 range in its mapped form: senders are looked
				// up unmapped, so it is the IPv4 range.
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			case p.Addr().Is4In6():
				// Wider than all of IPv4 mapped: an IPv6 range, which
				// no (unmapped) IPv4 sender is in.
				idx.warnings = append(idx.warnings, fmt.Sprintf("device %d (%s): cidr %q is written IPv4-mapped but is wider than ::ffff:0:0/96, all of IPv4: it is an IPv6 range, and matches no IPv4 sender (write an IPv4 range, or ::ffff:0:0/96 for all of IPv4)",
					i+1, entryName(d), d.CIDR))
			}
			if p.Masked() != p && !wide {
				// As it is used: an IPv4-mapped range unmapped.
				idx.warnings = append(idx.warnings, fmt.Sprintf("device %d (%s): cidr %q has host bits set: taken as %s",
					i+1, entryName(d), d.CIDR, p.Masked()))
			}
			d.prefix = p.Masked()
			if j, ok := firstPrefix[d.prefix]; ok {
				twice(i, d, "cidr "+d.prefix.String(), j, i) // the last range is kept, as the last address
			} else {
				firstPrefix[d.prefix] = i
			}
			idx.ranges.add(d)
		case d.Address != "":
			a, err := netip.ParseAddr(d.Address)
			if err != nil {
				return nil, fmt.Errorf("%s device %d (%s): %s", at(i, "address"), i+1, entryName(d), addressError(d.Address, err))
			}
			a = a.Unmap() // senders are looked up unmapped
			if d.named() && lastNamed[d.Name] != i {
				break // replaced by name
			}
			if j, ok := firstAddr[a]; ok {
				twice(i, d, "address "+a.String(), j, i) // the last address is kept
			} else {
				firstAddr[a] = i
			}
			idx.byAddr[a] = d
		}
		if d.named() {
			if j, ok := firstName[d.Name]; ok {
				twice(i, d, "name "+strconv.Quote(d.Name), j, i) // the last name is kept
			} else {
				firstName[d.Name] = i
			}
			idx.byName[d.Name] = d
		}
	}
	inUse := map[*Device]bool{}
	for _, d := range idx.byName {
		inUse[d] = true
	}
	for _, d := range idx.byAddr {
		inUse[d] = true
	}
	idx.devices, idx.cidrs = len(inUse), len(firstPrefix)
	idx.relays = slices.ContainsFunc(f.Devices, func(d Device) bool { return d.Relay })
	// In file order, so of names that differ only in case the first is
	// found, reload after reload. A first label two entries share is no
	// one's.
	ambiguous := map[string]bool{}
	foldAt := map[string]int{} // the entry each folded name finds
	for i := range f.Devices {
		d := &f.Devices[i]
		if !d.named() || idx.byName[d.Name] != d {
			continue // no name, a range, or a name given twice
		}
		lower := foldName(d.Name)
		if j, taken := foldAt[lower]; taken {
			// Most likely one device listed twice: which entry its
			// records get would follow the case it sends.
			idx.warnings = append(idx.warnings, fmt.Sprintf("device %d (%s): name %q is device %d's (%q) in another case: a hostname in any other case finds device %d, only %q itself device %d",
				i+1, entryName(d), d.Name, j+1, f.Devices[j].Name, j+1, d.Name, i+1))
			continue
		}
		foldAt[lower] = i
		idx.byFold[lower] = d
		label, ok := shortName(lower)
		if !ok || ambiguous[label] {
			continue
		}
		if _, taken := idx.byLabel[label]; taken {
			delete(idx.byLabel, label)
			ambiguous[label] = true
			continue
		}
		idx.byLabel[label] = d
	}
	return idx, nil
}

// inventoryLine is the line of key in the i-th entry of data's devices, or
// of the entry for key "" or a key it does not have; 0 if there is none.
// Only errors ask, so the file is parsed again.
func inventoryLine(data []byte, i int, key string) int {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return 0
	}
	keys := []string{"devices[" + strconv.Itoa(i) + "]"}
	if key != "" {
		keys = append(keys, key)
	}
	line, _ := yamlerr.LineOf(&root, keys)
	return line
}

// addressError says what is wrong with an address that does not parse,
// and what to write: a range goes under cidr, an IPv6 address without the
// brackets a host:port needs.
func addressError(s string, err error) string {
	if p, perr := netip.ParsePrefix(s); perr == nil {
		if p.IsSingleIP() {
			return fmt.Sprintf("address %q: an address has no prefix length (address: %s)", s, p.Addr())
		}
		return fmt.Sprintf("address %q is a range: a range of devices goes under cidr (cidr: %s)", s, p.Masked())
	}
	if inner, ok := strings.CutPrefix(s, "["); ok {
		if a, aerr := netip.ParseAddr(strings.TrimSuffix(inner, "]")); aerr == nil {
			return fmt.Sprintf("address %q: an IPv6 address goes without brackets here (address: %s)", s, a)
		}
	}
	return fmt.Sprintf("address %q is not an IP address (%s)", s, parseReason(err))
}

// cidrError says what is wrong with a cidr that does not parse.
func cidrError(s string, err error) string {
	if a, aerr := netip.ParseAddr(s); aerr == nil {
		return fmt.Sprintf("cidr %q is not a network: a network has a prefix length (cidr: %s/%d, or address: %s for one device)", s, a, a.BitLen(), a)
	}
	return fmt.Sprintf("cidr %q is not a network (%s)", s, parseReason(err))
}

// parseReason is a netip parse error without its 'ParseAddr("...")'
// prefixes, which repeat the value.
func parseReason(err error) string {
	msg := err.Error()
	for {
		i := strings.Index(msg, "): ")
		if i < 0 || !strings.Contains(msg[:i], "Parse") {
			return msg
		}
		msg = msg[i+3:]
	}
}

// withoutExtensionKeys leaves out of a decode error the strict decoder's
// refusals of top-level "x-" keys (yamlerr.IsExtensionKey) of the file
// decoded into the type named top: nil if they were all it had.
func withoutExtensionKeys(err error, top string) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	kept := te.Errors[:0]
	for _, e := range te.Errors {
		if !yamlerr.UnknownExtensionKey(e, top) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	te.Errors = kept
	return err
}

// deviceKeys are a device entry's keys, as the file writes them.
var deviceKeys = []string{"name", "address", "cidr", "site", "region", "role", "vendor", "platform", "tags", "relay"}

// keysOf is what an unknown key's message says of the mapping it is in
// (unknownKeysWorded): where it is, the keys it takes (for did you mean),
// and what it has, after then when a key is near.
type keysOf struct {
	where string
	keys  []string
	then  string
	has   string
}

// unknownKeysWorded is te's errors with a strict decode's "field K not
// found in type T", for the types of byType, worded for the file's writer:
// "field K: unknown key WHERE (did you mean N? THEN HAS)".
func unknownKeysWorded(te *yaml.TypeError, byType map[string]keysOf) []string {
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		if field, typ, ok := strings.Cut(e, " not found in type "); ok {
			if k, ok := byType[typ]; ok {
				key := field[strings.LastIndex(field, "field ")+len("field "):]
				e = field + ": unknown key " + k.where + " (" + didYouMean(key, k.keys, k.then) + k.has + ")"
			}
		}
		msgs[i] = e
	}
	return msgs
}

// didYouMean is "did you mean K? " followed by then (the start of the
// rest of the message) when key is a misspelling of K among known, and ""
// otherwise.
func didYouMean(key string, known []string, then string) string {
	if k := yamlerr.ClosestKey(key, known); k != "" {
		return "did you mean " + k + "? " + then
	}
	return ""
}

// inventoryTypes word yaml.v3's Go type names for the file's writer.
var inventoryTypes = strings.NewReplacer(
	" into []enrich.Device", " into a list of devices",
	" into enrich.Device", " into a device (a mapping: {name: ..., site: ...})",
	" into enrich.inventoryFile", " into the file's mapping (devices: and a list)",
	" into map[string]string", " into a mapping of tags (key: value)",
)

// inventoryYAMLError words a YAML error of the inventory as the config's
// are: an unknown key as such, with what the file takes, and a value of
// the wrong kind with its key path, never Go's type names.
func inventoryYAMLError(err error, data []byte) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return yamlerr.Clean(err, data, nil)
	}
	// "line 2: field sit not found in type enrich.Device"
	msgs := unknownKeysWorded(te, map[string]keysOf{
		"enrich.Device":        {"in a device", deviceKeys, "a device has ", strings.Join(deviceKeys, ", ")},
		"enrich.inventoryFile": {"at the top level", []string{"devices"}, "", "an inventory has devices: and a list"},
	})
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return errors.New(inventoryTypes.Replace(strings.Join(msgs, "\n")))
	}
	return errors.New(inventoryTypes.Replace(yamlerr.Clean(&yaml.TypeError{Errors: msgs}, data, &root).Error()))
}

// named reports whether d is an entry of one device: it has a name and is
// not a CIDR range (whose name labels the range); false for nil. Only a
// named entry renames the records it matches.
func (d *Device) named() bool { return d != nil && d.Name != "" && d.CIDR == "" }

// lookupNamed finds the named entry (see named) listed as name, or nil.
func (inv *Inventory) lookupNamed(name string) *Device {
	if d := inv.Lookup(name, ""); d.named() {
		return d
	}
	return nil
}

// Lookup finds the device a record comes from: by name (the hostname or
// sysName the record carries), else by address, else by the longest CIDR
// holding the address ("ip" or "ip:port"). A name that is an IP address
// (a device logging with "logging origin-id ip", or a relay filling in
// the sender) is the device's own address: its entry comes before the
// sender's, which may be a relay's, and its range before the sender's
// range. nil when unknown.
func (inv *Inventory) Lookup(name, addr string) *Device {
	idx := inv.idx.Load()
	if d, ok := idx.byName[name]; ok && name != "" {
		return d // found by name: the address need not be parsed
	}
	// An IPv4 address starts with a digit, an IPv6 one has a colon: most
	// names are no address, and are not parsed.
	if maybeAddr(name) {
		if own, err := netip.ParseAddr(name); err == nil {
			own = own.Unmap()
			if d, ok := idx.byAddr[own]; ok {
				return d
			}
			sender := idx.sender(senderAddr(addr))
			if d := idx.exact(sender); d != nil {
				return d
			}
			if d := idx.ranges.lookup(own); d != nil {
				return d
			}
			return idx.inRange(sender)
		}
	}
	return inv.LookupAddr(name, senderAddr(addr))
}

// LookupTarget is Lookup for a polled target named name at agent ("ip" or
// "ip:port"): weir polled the agent itself, so a relay's entry (see
// Device.Relay) finds its address as any entry does. A relay names only
// its own syslog lines and traps; its own polls are its own too.
func (inv *Inventory) LookupTarget(name, agent string) *Device {
	if d := inv.Lookup(name, agent); d != nil {
		return d
	}
	idx := inv.idx.Load()
	if !idx.relays || agent == "" {
		return nil // as Lookup found it
	}
	a := senderAddr(agent)
	if d := idx.exact(a); d != nil {
		return d
	}
	return idx.inRange(a)
}

// sender is a, the address a record that names a host came from, to
// look up as the device's; the zero Addr when the entry that finds a is a
// relay's: the relay sent it, another device wrote it.
func (idx *inventoryIndex) sender(a netip.Addr) netip.Addr {
	d := idx.exact(a)
	if d == nil {
		d = idx.inRange(a)
	}
	if d != nil && d.Relay {
		return netip.Addr{}
	}
	return a
}

// maybeAddr says whether name may be an IP address, worth parsing: an IPv4
// address starts with a digit, an IPv6 one has a colon. Most host names
// are neither, and parsing one allocates its error.
func maybeAddr(name string) bool {
	return name != "" && (isDigit(name[0]) || strings.IndexByte(name, ':') >= 0)
}

// LookupAddr is Lookup with the address parsed (the zero Addr for none).
func (inv *Inventory) LookupAddr(name string, a netip.Addr) *Device {
	idx := inv.idx.Load()
	if name != "" {
		if d, ok := idx.byName[name]; ok {
			return d
		}
		if d := idx.lookupFold(name); d != nil {
			return d
		}
	}
	d := idx.exact(a)
	if d == nil {
		d = idx.inRange(a)
	}
	if d != nil && d.Relay && name != "" {
		return nil // a relay sent it, another device wrote it (see sender)
	}
	return d
}

// exact is the entry listing address a, or nil (also for no address).
func (idx *inventoryIndex) exact(a netip.Addr) *Device {
	if !a.IsValid() {
		return nil
	}
	return idx.byAddr[a.Unmap()]
}

// inRange is the entry of the longest CIDR holding a, or nil.
func (idx *inventoryIndex) inRange(a netip.Addr) *Device {
	if !a.IsValid() {
		return nil
	}
	return idx.ranges.lookup(a.Unmap())
}

// lookupFold finds name ignoring case; then an FQDN by its first label
// among the entries named without a domain, or a name without a domain
// among the first labels of the entries with one. Never an FQDN for
// another FQDN: core1.ams.example.net is not core1.fra.example.net.
func (idx *inventoryIndex) lookupFold(name string) *Device {
	if len(idx.byFold) == 0 {
		return nil
	}
	// Folded on the stack: a hostname the inventory does not list (or
	// lists as sent) costs no allocation, per syslog line in the
	// collector and the worker alike.
	var buf [128]byte
	lower := appendFold(buf[:0], name)
	if d, ok := idx.byFold[string(lower)]; ok {
		return d
	}
	if label, ok := shortName(lower); ok {
		if d, ok := idx.byFold[string(label)]; ok && !dotted(d.Name) {
			return d
		}
		return nil
	}
	if bytes.IndexByte(lower, '.') < 0 {
		return idx.byLabel[string(lower)]
	}
	return nil
}

// appendFold appends foldName(name) to dst, without a string of its own
// when name is ASCII.
func appendFold(dst []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return append(dst, foldName(name)...)
		}
	}
	start := len(dst)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	if len(dst)-start > 1 && dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// dotted says whether foldName(name) has a dot: name has a domain.
func dotted(name string) bool {
	if len(name) > 1 {
		name = strings.TrimSuffix(name, ".")
	}
	return strings.IndexByte(name, '.') >= 0
}

// foldName is a host name as the folded index keys it: in lower case (no
// copy when it is already), without the root dot of an absolute name
// (edge1.example.net. is edge1.example.net).
func foldName(name string) string {
	lower := strings.ToLower(name)
	if len(lower) > 1 {
		lower = strings.TrimSuffix(lower, ".")
	}
	return lower
}

// shortName is the first label of a dotted host name; not for addresses
// (10.0.0.1 has no short name). Bytes for the folded name a lookup builds
// on the stack, a string for the index's.
func shortName[T string | []byte](name T) (T, bool) {
	var none T
	dot := -1
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case ':':
			return none, false
		case '.':
			if dot < 0 {
				dot = i
			}
		}
	}
	if dot <= 0 {
		return none, false
	}
	short := name[:dot]
	for i := 0; i < len(short); i++ {
		if short[i] < '0' || short[i] > '9' {
			return short, true
		}
	}
	return none, false // all digits: an IPv4 address, not a host
}

// senderAddr returns the address of a record's source_addr, "ip:port" or
// "ip", or the zero Addr. Each form is parsed as what it looks like, once:
// a failed parse allocates its error, and an SNMP row's agent, looked up
// for every row, is a bare address or a host name.
func senderAddr(s string) netip.Addr {
	var a netip.Addr
	colon := strings.IndexByte(s, ':')
	switch {
	case s == "":
	case s[0] == '[' || colon >= 0 && colon == strings.LastIndexByte(s, ':') && isDigit(s[0]):
		ap, _ := netip.ParseAddrPort(s) // [v6]:port, or v4:port
		a = ap.Addr()
	case colon >= 0 || isDigit(s[0]):
		a, _ = netip.ParseAddr(s) // v6, or v4
	}
	return a.Unmap()
}

// TagsOf returns the device's tags (shared; do not modify).
func (d *Device) TagsOf() map[string]string { return d.tags }

// TagList returns the device's tags sorted by key (shared; do not modify).
func (d *Device) TagList() []telemetry.Tag { return d.tagList }

// Watch reloads the inventory when its file has changed and then stayed
// the same for one interval (checked every interval), until ctx ends. It
// follows the file ReloadPath gives; with none it checks nothing.
func (inv *Inventory) Watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	// The version of the file that did not load, so it is reported once,
	// not at every check.
	var failed os.FileInfo
	// The version seen at the last check: a file is read once it has not
	// changed for a whole interval, so one an editor or a script is still
	// writing is not loaded half written (which can parse, shorter).
	var seen os.FileInfo
	// A file that cannot be read (removed, or of a mode weir may not
	// read) is reported once, until it can be again, and tried at every
	// check: a chmod changes no version.
	var unreadable bool
	// The file all that is of: another (ReloadPath) starts afresh.
	var watched string
	// SIGHUP's reloads when the check began (see observedSince), and
	// at the check before.
	var sighups, sighupsBefore uint64
	report := func(err error) {
		if !unreadable && inv.observedSince(sighups, err) {
			inv.logger.Error("inventory file unreadable; keeping the previous inventory", slog.Any("error", err))
		}
		unreadable = true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Before anything else is read: what a SIGHUP since did is seen.
		sighups = inv.sighups.Load()
		if inv.beforeCheck != nil {
			inv.beforeCheck()
		}
		path := inv.Path()
		if path != watched {
			watched, failed, seen, unreadable = path, nil, nil, false
		}
		if sighups != sighupsBefore {
			// What a SIGHUP found of this file is reported: by it.
			sighupsBefore = sighups
			if saw := inv.lastSighup(); saw.path == path {
				unreadable = saw.unreadable
				if saw.failed != nil {
					failed, seen = saw.failed, saw.failed
				}
			}
		}
		if path == "" {
			continue
		}
		st, err := os.Stat(path)
		if err != nil {
			report(err)
			continue
		}
		loaded := sameVersion(st, inv.idx.Load().file)
		if loaded || sameVersion(st, failed) {
			// The loaded version put back after a failure (an editor's
			// backup renamed over a broken save, a file moved away and
			// back) is the file in use again: reported, or /metrics
			// would say the last reload failed until the next edit.
			back := loaded && inv.failing.Load()
			switch {
			case unreadable:
				inv.logger.Info("inventory file readable again", slog.String("file", path))
				unreadable = false
			case back:
				inv.logger.Info("inventory file is the loaded version again; the inventory in use is the file's", slog.String("file", path))
			}
			if back {
				failed = nil // should the broken one come back, it is read and reported again
				inv.observedSince(sighups, nil)
			}
			continue
		}
		if !sameVersion(st, seen) {
			seen = st
			continue
		}
		err = inv.reloadWatched(path)
		if errors.Is(err, errPathChanged) {
			continue
		}
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) { // not read: removed since, or not readable
			report(err)
			continue
		}
		if unreadable {
			inv.logger.Info("inventory file readable again", slog.String("file", path))
			unreadable = false
		}
		if err != nil {
			failed = st
			if inv.observedSince(sighups, err) {
				inv.logger.Error("inventory reload failed; keeping the previous one", slog.Any("error", yamlerr.Brief(err)))
			}
			continue
		}
		devices, ranges := inv.Size()
		inv.logger.Info("inventory reloaded", slog.String("file", path), slog.Int("devices", devices), slog.Int("ranges", ranges))
		inv.observedSince(sighups, nil)
	}
}

// sameVersion says whether a and b (nil: none) are one version of the
// file: the same file (a symlink switched to another, or a file renamed
// over it, is another, whatever its time: NixOS gives every file of its
// store the time 1, cp -p and rsync -t keep the source's), of the same
// modification time and size. A file written in place within its
// time's resolution, to the same size, is only read by Reload.
func sameVersion(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// entryName is how a warning names an inventory entry.
func entryName(d *Device) string {
	switch {
	case d.Name != "":
		return d.Name
	case d.CIDR != "":
		return d.CIDR
	}
	return d.Address
}

// vendorNearMiss is a warning for a vendor that names Juniper or Huawei in
// a spelling weir does not take as theirs (juniper_junos, Huawei-VRP):
// such a device's ospfNbrStateChange traps name a neighbor by router ID,
// not by the address its lines give, so a line and its trap are two
// events (see neighborsByAddress). Any other vendor is a free label, and
// no warning.
func vendorNearMiss(vendor string) string {
	if vendor == "" || neighborsByAddress(vendor) {
		return ""
	}
	v := strings.ToLower(vendor)
	for _, s := range [...]struct{ word, os, takes string }{
		{"junos", "Junos", "junos or juniper"}, {"juniper", "Junos", "junos or juniper"},
		{"huawei", "Huawei VRP", "huawei_vrp or huawei"}, {"vrp", "Huawei VRP", "huawei_vrp or huawei"},
	} {
		if strings.Contains(v, s.word) {
			return fmt.Sprintf("vendor %q is not a spelling weir reads as %s (it takes %s, in any case): its OSPF traps name a neighbor by router ID, where its lines give the address, so one change is two events",
				vendor, s.os, s.takes)
		}
	}
	return ""
}
