package enrich

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/syncbuf"
)

func TestInventoryLookupOrder(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: edge1, address: 10.0.0.1, site: ams1}
  - {name: other, address: 10.0.0.2, site: fra1}
  - {cidr: 10.0.0.0/16, site: wide}
  - {cidr: 10.0.9.0/24, site: narrow}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, addr, site string }{
		{"edge1", "10.0.0.2", "ams1"},     // the name first
		{"unknown", "10.0.0.2", "fra1"},   // then the address
		{"", "::ffff:10.0.0.2", "fra1"},   // IPv4-mapped
		{"unknown", "10.0.9.7", "narrow"}, // then the longest prefix
		{"unknown", "10.0.200.1", "wide"},
		{"unknown", "192.0.2.1", ""},
		{"unknown", "not an address", ""},
	} {
		d := inv.Lookup(tc.name, tc.addr)
		got := ""
		if d != nil {
			got = d.TagsOf()["site"]
		}
		if got != tc.site {
			t.Errorf("Lookup(%q, %q): site %q, want %q", tc.name, tc.addr, got, tc.site)
		}
	}
}

func siteOf(inv *Inventory, name string) string {
	if d := inv.Lookup(name, ""); d != nil {
		return d.TagsOf()["site"]
	}
	return ""
}

// TestInventoryWatch: a changed file is reloaded; a file that no longer
// parses keeps the previous inventory (and is reported once); Reload
// (what SIGHUP calls) reads even a file whose time and size did not
// change.
func TestInventoryWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	write := func(site string, keepTime bool) {
		t.Helper()
		st, _ := os.Stat(path)
		if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: "+site+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if keepTime {
			os.Chtimes(path, st.ModTime(), st.ModTime())
		} else {
			later := time.Now().Add(time.Duration(len(site)) * time.Second)
			os.Chtimes(path, later, later)
		}
	}
	write("ams1", false)
	var logs syncbuf.Buffer
	inv, err := LoadInventory(path, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	waitSite := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); siteOf(inv, "edge1") != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("site %q, want %q", siteOf(inv, "edge1"), want)
			}
		}
	}
	// waitLog waits for what to be logged (the watch logs just after it
	// stores, or after it finds it cannot).
	waitLog := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), what); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%q not logged:\n%s", what, logs.String())
			}
		}
	}
	write("fra1", false)
	waitSite("fra1")

	os.WriteFile(path, []byte("devices: [unterminated\n"), 0o644)
	waitLog("inventory reload failed")
	time.Sleep(100 * time.Millisecond) // checks of the same broken version
	if got := siteOf(inv, "edge1"); got != "fra1" {
		t.Fatalf("after a broken file: site %q, want the previous fra1", got)
	}
	if n := strings.Count(logs.String(), "inventory reload failed"); n != 1 {
		t.Fatalf("a broken file was reported %d times, want once:\n%s", n, logs.String())
	}

	write("lon1x", false)
	waitSite("lon1x")
	write("par1x", true) // in place, the same time and size: only Reload (SIGHUP) tells
	time.Sleep(100 * time.Millisecond)
	if got := siteOf(inv, "edge1"); got != "lon1x" {
		t.Fatalf("reloaded without a change of time or size: %q", got)
	}
	if err := inv.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := siteOf(inv, "edge1"); got != "par1x" {
		t.Fatalf("after Reload: %q", got)
	}

	// Removed: the inventory stays, and the removal is reported once;
	// back, it is read again.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitLog("inventory file unreadable")
	time.Sleep(100 * time.Millisecond) // checks of the file still gone
	if got := siteOf(inv, "edge1"); got != "par1x" {
		t.Fatalf("after the file was removed: site %q, want the previous par1x", got)
	}
	if n := strings.Count(logs.String(), "inventory file unreadable"); n != 1 {
		t.Fatalf("a removed file was reported %d times, want once:\n%s", n, logs.String())
	}
	write("ber1xyz", false)
	waitSite("ber1xyz")
	waitLog("inventory file readable again") // said just after the inventory is in use
}

// Hostnames match ignoring case and with or without their domain; a short
// name two entries share matches neither, and addresses are not names.
func TestInventoryNameForms(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: edge1, site: ams1}
  - {name: core1.fra.example.net, site: fra1}
  - {name: sw1.a.example.net, site: a}
  - {name: sw1.b.example.net, site: b}
  - {name: edge1.lab.example.net, site: lab}
  - {name: "10", site: ten}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, site string }{
		{"edge1", "ams1"},
		{"EDGE1", "ams1"},
		{"Edge1.ams.example.net", "ams1"}, // the FQDN of a short entry
		{"edge1.lab.example.net", "lab"},  // exact wins over the short form
		{"EDGE1.LAB.example.net", "lab"},  // case folded, still the full name
		{"core1", "fra1"},                 // the short name of an FQDN entry
		{"CORE1.fra.example.net", "fra1"}, //
		{"core1.other.example.net", ""},   // another domain: another device
		{"sw1", ""},                       // two entries share sw1
		{"sw1.b.example.net", "b"},        //
		{"SW1.B.EXAMPLE.NET", "b"},        //
		{"10.0.0.1", ""},                  // an address, not host "10"
		{"unknown.example.net", ""},       //
		{"", ""},                          //
		{".edge1", ""},                    // no first label
	} {
		if got := siteOf(inv, tc.name); got != tc.site {
			t.Errorf("Lookup(%q): site %q, want %q", tc.name, got, tc.site)
		}
	}
}

// TestInventoryWatchWaitsForWholeFile: a file still being written (here a
// line before each check, so that it changes between any two) is not
// loaded part way, when the part parses but lacks devices; it is loaded
// once it stops changing. (The writer used to sleep 20 ms a line against
// checks every 200 ms: a writer held up that long on a loaded host made
// the test fail, not the watch.)
func TestInventoryWatchWaitsForWholeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	var old strings.Builder
	old.WriteString("devices:\n")
	for i := range 15 {
		fmt.Fprintf(&old, "  - {name: d%d, site: old}\n", i)
	}
	if err := os.WriteFile(path, []byte(old.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := LoadInventory(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// The file, emptied and written a device a check.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("devices:\n"); err != nil {
		t.Fatal(err)
	}
	written, lost := 0, ""
	inv.beforeCheck = func() { // on the watch's goroutine
		if lost == "" && siteOf(inv, "d14") == "" {
			lost = fmt.Sprintf("d14 unknown with %d of 15 devices written", written)
		}
		if written < 15 {
			fmt.Fprintf(f, "  - {name: d%d, site: new}\n", written)
			written++
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(30 * time.Second); siteOf(inv, "d14") != "new"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("d14 site %q after the file was written, want new", siteOf(inv, "d14"))
		}
	}
	cancel()
	<-done // lost is the watch's until it stops
	if lost != "" {
		t.Fatal(lost)
	}
}

// TestInventoryOtherDomainIsAnotherDevice: an FQDN finds a short entry and
// a short name an FQDN entry, but an FQDN in another domain is another
// device (core1 of a site the inventory does not list), not the listed
// one: else it took that router's tags and, since records take the
// inventory's name, published under its name.
func TestInventoryOtherDomainIsAnotherDevice(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: core1.fra.example.net, site: fra1}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, site string }{
		{"core1", "fra1"},                 // the short name: as documented
		{"CORE1.FRA.example.net", "fra1"}, // case: as documented
		{"core1.ams.example.net", ""},     // another site's core1
	} {
		if got := siteOf(inv, tc.name); got != tc.site {
			t.Errorf("Lookup(%q): site %q, want %q", tc.name, got, tc.site)
		}
	}
	if d := inv.Lookup("core1.ams.example.net", ""); d != nil {
		t.Errorf("core1.ams.example.net is enriched as %s", d.Name)
	}
}

// Names that differ only in case: the first in the file is found for any
// other spelling, whatever the map order.
func TestInventoryCaseTwinsFirstWins(t *testing.T) {
	for range 20 {
		inv, err := ParseInventory([]byte("devices:\n  - {name: Edge1, site: first}\n  - {name: edge1, site: second}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := siteOf(inv, "EDGE1"); got != "first" {
			t.Fatalf("EDGE1: site %q, want first", got)
		}
		if got := siteOf(inv, "edge1"); got != "second" {
			t.Fatalf("edge1 (exact): site %q, want second", got)
		}
	}
}

// TestInventoryWarnsOfCaseTwins: two entries whose names differ only in
// case (edge1 and EDGE1, one device listed twice as a hostname matches
// ignoring case) were loaded without a word, and a device's records got
// one entry's name and tags or the other's by the case it sent. weir
// check and the log at load warn of it, naming the entry each spelling
// finds.
func TestInventoryWarnsOfCaseTwins(t *testing.T) {
	inv, err := ParseInventory([]byte("devices:\n  - {name: Edge1, site: first}\n  - {name: core1, site: c}\n  - {name: edge1, site: second}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`device 3 (edge1): name "edge1" is device 1's ("Edge1") in another case: a hostname in any other case finds device 1, only "edge1" itself device 3`}
	if got := inv.Warnings(); !slices.Equal(got, want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
}

// TestInventoryWarnsOfATagItsAttributeHides: a free tag of the key of a
// named attribute (tags: {site: x} beside site: y) was dropped for the
// attribute without a word, so the records carried a site the file seems
// to say they do not. It is warned of, naming the value used.
func TestInventoryWarnsOfATagItsAttributeHides(t *testing.T) {
	inv, err := ParseInventory([]byte("devices:\n  - {name: edge1, site: y, tags: {site: x, tier: \"1\"}}\n  - {name: edge2, tags: {role: edge}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := siteOf(inv, "edge1"); got != "y" {
		t.Fatalf("site %q, want the attribute's y", got)
	}
	want := []string{`device 1 (edge1): tags has site "x", and the entry's site is "y": "y" is used`}
	if got := inv.Warnings(); !slices.Equal(got, want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
}

// TestInventoryReloadLogSaysWhatLoaded: "inventory reloaded" named the
// file alone, so an operator who saved an edit could not tell from the
// log whether the entries he added were in (an entry replaced by a later
// one of the same name, a file cut short by a tool). The line gives the
// devices and ranges loaded, as Size does.
func TestInventoryReloadLogSaysWhatLoaded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	inv, logs := loggedInventory(t, path)
	if d, r := inv.Size(); d != 1 || r != 0 {
		t.Fatalf("Size %d devices, %d ranges, want 1, 0", d, r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	// Four devices (edge1 twice is one; an entry of an address alone is
	// one) and two ranges (one listed twice).
	later := time.Now().Add(time.Minute)
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, address: 192.0.2.1}\n  - {name: edge2}\n  - {name: edge1, address: 192.0.2.3}\n"+
		"  - {address: 192.0.2.9}\n  - {name: core1.fra.example.net}\n  - {name: lab, cidr: 10.0.0.0/8}\n  - {name: lab2, cidr: 10.0.0.0/8}\n  - {name: dc, cidr: 2001:db8::/32}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, later, later)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "inventory reloaded"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no reload:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "devices=4 ranges=2") {
		t.Fatalf("the reload's line does not say what loaded:\n%s", logs.String())
	}
	if d, r := inv.Size(); d != 4 || r != 2 {
		t.Fatalf("Size %d devices, %d ranges, want 4, 2", d, r)
	}
}

// FuzzInventoryNames: lookups never panic; every named entry finds
// itself; a dotted name found by another spelling is the same name, case
// and a trailing dot aside: never an FQDN for another FQDN.
func FuzzInventoryNames(f *testing.F) {
	f.Add("edge1", "core1.fra.example.net", "EDGE1.ams.example.net")
	f.Add("a.b", "A.B.", "a.c")
	f.Add("10", "x.y", "10.0.0.1")
	f.Add(".", "..", "a..b")
	f.Fuzz(func(t *testing.T, n1, n2, query string) {
		var y strings.Builder
		y.WriteString("devices:\n")
		for _, n := range []string{n1, n2} {
			fmt.Fprintf(&y, "  - {name: %q, site: s}\n", n)
		}
		inv, err := ParseInventory([]byte(y.String()))
		if err != nil {
			t.Skip() // not a YAML string
		}
		for n := range inv.idx.Load().byName { // the names as YAML read them
			if d := inv.Lookup(n, ""); d == nil || d.Name != n {
				t.Fatalf("%q does not find itself: %v", n, d)
			}
		}
		d := inv.Lookup(query, "")
		if d == nil || d.Name == query {
			return
		}
		q, got := foldName(query), foldName(d.Name)
		if strings.Contains(q, ".") && strings.Contains(got, ".") && q != got {
			t.Fatalf("%q found %q: another FQDN", query, d.Name)
		}
	})
}

// TestInventoryTrailingDot: a fully qualified name written with its root
// dot (edge1.example.net., as DNS tools and some devices print it) is the
// same host as without it, in a record and in the inventory.
func TestInventoryTrailingDot(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: core1.fra.example.net, site: fra1}
  - {name: edge2.example.net., site: ams2}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, site string }{
		{"CORE1.fra.example.net", "fra1"},  // documented: case ignored
		{"core1.fra.example.net.", "fra1"}, // the same name, absolute
		{"CORE1.FRA.EXAMPLE.NET.", "fra1"}, //
		{"edge2.example.net", "ams2"},      // the entry is written absolute
		{"edge2", "ams2"},                  // already found by its first label
		{"core1.ams.example.net.", ""},     // another domain stays another device
	} {
		if got := siteOf(inv, tc.name); got != tc.site {
			t.Errorf("Lookup(%q): site %q, want %q", tc.name, got, tc.site)
		}
	}
}

// TestInventoryWarnsOfHiddenEntries: a name, address or CIDR listed twice
// is named with the entry that is used, and the lookups use that entry.
func TestInventoryWarnsOfHiddenEntries(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: edge1, address: 192.0.2.1, site: old}
  - {name: edge2, address: 192.0.2.2}
  - {name: edge1, address: 192.0.2.3, site: new}
  - {name: edge3, address: 192.0.2.2}
  - {cidr: 10.0.0.0/8, site: first}
  - {name: lab, cidr: 10.1.2.3/8, site: second}
  - {cidr: 10.1.0.0/16}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`device 3 (edge1): name "edge1" also at device 1; device 3 is used`,
		"device 4 (edge3): address 192.0.2.2 also at device 2; device 4 is used",
		`device 6 (lab): cidr "10.1.2.3/8" has host bits set: taken as 10.0.0.0/8`,
		"device 6 (lab): cidr 10.0.0.0/8 also at device 5; device 6 is used",
	}
	if got := inv.Warnings(); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []struct{ name, addr, want string }{
		{"edge1", "", "new"},
		{"", "192.0.2.2", "edge3"},
		{"", "10.9.9.9", "second"}, // the last, as for names and addresses
		{"", "192.0.2.3", "new"},
	} {
		d := inv.Lookup(c.name, c.addr)
		if d == nil || (d.Site != c.want && d.Name != c.want) {
			t.Errorf("Lookup(%q, %q) = %+v, want %s", c.name, c.addr, d, c.want)
		}
	}
	// The entry replaced by name is replaced whole: its address does not
	// find it, or edge1 would be "old" by address and "new" by name.
	if d := inv.Lookup("", "192.0.2.1"); d != nil {
		t.Errorf("the replaced edge1's address found %+v", d)
	}
	if inv, _ := ParseInventory([]byte(testInventory)); len(inv.Warnings()) != 0 {
		t.Errorf("the test inventory has warnings: %v", inv.Warnings())
	}
}

// TestInventoryLogsHiddenEntries: loading a file that lists an address
// twice logs it, with the file.
func TestInventoryLogsHiddenEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	os.WriteFile(path, []byte("devices:\n  - {name: a, address: 192.0.2.1}\n  - {name: b, address: 192.0.2.1}\n"), 0o644)
	var logs syncbuf.Buffer
	if _, err := LoadInventory(path, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `level=WARN msg="inventory: device 2 (b): address 192.0.2.1 also at device 1; device 2 is used" file=`+path) {
		t.Fatalf("logs: %s", logs.String())
	}
}

// TestInventoryOfCommentsOnlyIsEmpty: a file whose entries are all
// commented out is an empty inventory, as an empty file is; before, it was
// refused with a bare "EOF" at start, in weir check and on every reload.
func TestInventoryOfCommentsOnlyIsEmpty(t *testing.T) {
	for _, data := range []string{"", "\n  \n", "\t\n", "# devices:\n#   - {name: edge1, address: 192.0.2.1}\n", "---\n# nothing yet\n"} {
		path := filepath.Join(t.TempDir(), "inventory.yaml")
		os.WriteFile(path, []byte(data), 0o644)
		inv, err := LoadInventory(path, nil)
		if err != nil {
			t.Errorf("%q: %v", data, err)
			continue
		}
		if d := inv.Lookup("edge1", "192.0.2.1"); d != nil {
			t.Errorf("%q: found %+v", data, d)
		}
	}
}

// TestAddressOfAReplacedEntryHidesNoOther: an entry replaced by name
// takes its address with it, and does not take that address from the
// entry in use that lists it too; the warnings say what is used.
func TestAddressOfAReplacedEntryHidesNoOther(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: edge1, address: 192.0.2.1, site: a}
  - {name: edge2, address: 192.0.2.1, site: b}
  - {name: edge2, address: 192.0.2.2, site: c}
`))
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Lookup("", "192.0.2.1"); d == nil || d.Name != "edge1" {
		t.Errorf("Lookup by 192.0.2.1 = %+v, want edge1 (the one entry in use that lists it)", d)
	}
	want := []string{`device 3 (edge2): name "edge2" also at device 2; device 3 is used`}
	if got := inv.Warnings(); !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

// TestInventoryMappedAddresses: an address or a CIDR written in its
// IPv4-mapped IPv6 form (::ffff:192.0.2.7, as a dual-stack listener, ss
// or rsyslog's fromhost-ip print an IPv4 sender) is the IPv4 address or
// range: senders are looked up unmapped, so the mapped entry matched
// nothing and its devices were unknown.
func TestInventoryMappedAddresses(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {name: edge7, address: "::ffff:192.0.2.7", site: ams7}
  - {cidr: "::ffff:10.20.0.0/112", site: mapped-range}
  - {cidr: "::ffff:0:0/96", site: all-v4}
  - {cidr: "2001:db8::/32", site: v6}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, addr, site string }{
		{"", "192.0.2.7:514", "ams7"},
		{"", "[::ffff:192.0.2.7]:514", "ams7"},
		{"192.0.2.7", "198.51.100.1:514", "ams7"}, // a hostname that is the address
		{"", "10.20.3.4:514", "mapped-range"},
		{"", "[::ffff:10.20.3.4]:514", "mapped-range"},
		{"", "172.16.0.1:514", "all-v4"},
		{"", "[2001:db8::5]:514", "v6"},
	} {
		d := inv.Lookup(tc.name, tc.addr)
		got := ""
		if d != nil {
			got = d.TagsOf()["site"]
		}
		if got != tc.site {
			t.Errorf("Lookup(%q, %q): site %q, want %q", tc.name, tc.addr, got, tc.site)
		}
	}
}

// TestInventorySyntaxErrorLine: a syntax error names the line it is on,
// as the config's do. yaml.v3 numbers a parser error's line from 0: an
// entry whose } is missing, on line 4, was reported at line 3, the entry
// before it, which is fine, and one on line 2 at line 1.
func TestInventorySyntaxErrorLine(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"devices:\n  - {name: a, site: b}\n  - {name: c, site: d}\n  - {name: e, site: f\n  - {name: g, site: h}\n", ":4: "},
		{"devices:\n  - {name: edge1, address: 192.0.2.1, site: ams1\n", ":2: "},
	} {
		_, err := ParseInventory([]byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.file, err, tc.want)
		}
	}
}

// TestInventoryMappedRangeWiderThanIPv4: a cidr written IPv4-mapped with
// fewer than 96 bits (::ffff:0:0/95) is an IPv6 range holding every
// IPv4-mapped address, but senders are looked up unmapped: it matched no
// IPv4 sender, and nothing said so, while the README says a range written
// mapped is the IPv4 one. weir check warns of it.
func TestInventoryMappedRangeWiderThanIPv4(t *testing.T) {
	inv, err := ParseInventory([]byte(`devices:
  - {cidr: "::ffff:0:0/95", site: all-v4}
  - {cidr: "::ffff:10.0.0.0/104", site: ten}
  - {cidr: "::/0", site: v6}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`device 1 (::ffff:0:0/95): cidr "::ffff:0:0/95" is written IPv4-mapped but is wider than ::ffff:0:0/96, all of IPv4: it is an IPv6 range, and matches no IPv4 sender (write an IPv4 range, or ::ffff:0:0/96 for all of IPv4)`}
	if got := inv.Warnings(); !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestInventoryErrorsNameKeysNotGoTypes: a typo in the inventory said
// "field device not found in type enrich.inventoryFile", and a value of
// the wrong kind "cannot unmarshal !!map into []enrich.Device": Go's type
// names, which the file's writer has never seen. They are worded as the
// config's are: the key, where it is, and what the file takes.
func TestInventoryErrorsNameKeysNotGoTypes(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"device:\n  - {name: x}\n", ":1: field device: unknown key at the top level (did you mean devices? an inventory has devices: and a list)"},
		{"hosts:\n  - {name: x}\n", ":1: field hosts: unknown key at the top level (an inventory has devices: and a list)"},
		{"devices:\n  - {name: x, sit: a}\n", ":2: field sit: unknown key in a device (did you mean site? a device has name, address, cidr, site, region, role, vendor, platform, tags, relay)"},
		{"devices:\n  - {name: x, colour: a}\n", ":2: field colour: unknown key in a device (name, address, cidr, site, region, role, vendor, platform, tags, relay)"},
		{"devices:\n  - {name: x, tags: [a]}\n", ":2: cannot unmarshal !!seq into a mapping of tags (key: value)"},
		{"devices:\n  - name: x\n    tags: {a: [1]}\n", ":3: devices[0].tags.a: cannot unmarshal !!seq into string"},
		{"devices:\n  name: x\n", ":2: devices: cannot unmarshal !!map into a list of devices"},
		{"- {name: x}\n", ":1: cannot unmarshal !!seq into the file's mapping (devices: and a list)"},
	} {
		_, err := ParseInventory([]byte(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "enrich.") {
			t.Errorf("%q:\n error %v\n want %q", tc.file, err, tc.want)
		}
	}
}

// TestInventoryRelativePathNotFound: a relative inventory path is taken
// from the directory weir runs in, not the config file's (README); an
// example's config run from its own folder said only "stat
// examples/syslog-events/inventory.yaml: no such file or directory". The
// error says where the path was looked for.
func TestInventoryRelativePathNotFound(t *testing.T) {
	t.Chdir(t.TempDir())
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadInventory("examples/x/inventory.yaml", slog.New(slog.DiscardHandler))
	want := "relative to the directory weir runs in, " + wd
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to say %q", err, want)
	}
	if _, err := LoadInventory(filepath.Join(wd, "inventory.yaml"), slog.New(slog.DiscardHandler)); err == nil || strings.Contains(err.Error(), "relative") {
		t.Errorf("absolute path: error %v, want one that says nothing of relative paths", err)
	}
}

// TestInventoryReloadRefusesEmptyFile: a SIGHUP that reads the file while
// an editor has it truncated (before writing it again) loaded an empty
// inventory: every device unknown, its records untagged, until the watch
// saw the save. An empty file keeps the inventory loaded; a comment (or
// devices: []) empties it on purpose.
func TestInventoryReloadRefusesEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: ams1}\n"), 0o644)
	inv, err := LoadInventory(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, nil, 0o644)
	if err := inv.Reload(); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("reload of an empty file: %v", err)
	}
	if got := siteOf(inv, "edge1"); got != "ams1" {
		t.Errorf("after an empty file: site %q, want the previous ams1", got)
	}
	os.WriteFile(path, []byte("# no devices for now\n"), 0o644)
	if err := inv.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := siteOf(inv, "edge1"); got != "" {
		t.Errorf("after a file of comments: site %q, want none", got)
	}
	// Empty before, empty now: nothing to keep.
	os.WriteFile(path, nil, 0o644)
	if err := inv.Reload(); err != nil {
		t.Errorf("an empty file after an empty inventory: %v", err)
	}
}

// TestInventoryErrorsOneALineEachNamesTheFile: a file with several
// errors gives one a line, and only the first said which file ("line 4:
// devices[1].tags: ..." under the config's own errors could be either);
// as FILE:LINE:, as the config's.
func TestInventoryErrorsOneALineEachNamesTheFile(t *testing.T) {
	_, err := parseInventory([]byte("devices:\n  - {name: a, sit: x}\n  - name: b\n    tags: [1]\n"), "/etc/weir/inventory.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), err)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "/etc/weir/inventory.yaml:2: ") && !strings.HasPrefix(l, "/etc/weir/inventory.yaml:4: ") {
			t.Errorf("line %q does not name the file", l)
		}
	}
}

// TestInventorySecondDocumentRefused: an inventory of two YAML documents
// (two files joined, each starting with ---) had the devices of the
// second ignored without a word.
func TestInventorySecondDocumentRefused(t *testing.T) {
	_, err := parseInventory([]byte("devices:\n  - {name: a, address: 192.0.2.1}\n---\ndevices:\n  - {name: b, address: 192.0.2.2}\n"), "inv.yaml")
	if err == nil || !strings.Contains(err.Error(), "inv.yaml:3: ") || !strings.Contains(err.Error(), "second YAML document") {
		t.Errorf("got %v, want the file, the line of the second --- and why", err)
	}
	if _, err := parseInventory([]byte("---\ndevices:\n  - {name: a, address: 192.0.2.1}\n---\n"), "inv.yaml"); err != nil {
		t.Errorf("a leading and a trailing ---: %v", err)
	}
}

// TestInventoryWatchSeesAFileOfTheSameTime: a new version of the file
// with the modification time of the one loaded (a symlink switched to
// another file, as NixOS does with its store's files, all of time 1; a
// file renamed over it with its time kept, by cp -p, rsync -t or tar)
// was never reloaded by the watch, only by SIGHUP: it compared times
// alone. A file is another version when its time, its size or the file
// itself differ; a broken one is still reported once.
func TestInventoryWatchSeesAFileOfTheSameTime(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inventory.yaml")
	stamp := time.Unix(1, 0)
	version := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
		return p
	}
	point := func(target string) { // as ln -sfn does: a new link renamed over the old
		t.Helper()
		tmp := path + ".tmp"
		os.Remove(tmp)
		if err := os.Symlink(target, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	point(version("a.yaml", "devices:\n  - {name: edge1, site: ams1}\n"))
	var logs syncbuf.Buffer
	inv, err := LoadInventory(path, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	waitSite := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); siteOf(inv, "edge1") != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("site %q, want %q", siteOf(inv, "edge1"), want)
			}
		}
	}
	// The same size and time: another file.
	point(version("b.yaml", "devices:\n  - {name: edge1, site: fra1}\n"))
	waitSite("fra1")

	// A broken one of the same time, then a good one of the same time
	// and size as the broken one: the broken one is reported once, and
	// the good one read.
	point(version("c.yaml", "devices:\n  - {name: edge1, site: lon1 \n"))
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "inventory reload failed"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a broken file not reported:\n%s", logs.String())
		}
	}
	point(version("d.yaml", "devices:\n  - {name: edge1, site: lon1}\n"))
	waitSite("lon1")
	if n := strings.Count(logs.String(), "inventory reload failed"); n != 1 {
		t.Fatalf("a broken file was reported %d times, want once:\n%s", n, logs.String())
	}

	// A file of the same time renamed over it (its time kept).
	tmp := version("e.yaml", "devices:\n  - {name: edge1, site: par1}\n")
	os.Remove(path)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	waitSite("par1")
}

// TestInventoryWatchRetriesAnUnreadableFile: a file weir may not read (a
// new version installed 0600 by root, weir running as its own user) was
// remembered as a version that failed, so once its mode was fixed
// (chmod 644: the same time, size and file) the watch never read it,
// until the next edit or a SIGHUP. A file that cannot be read is tried
// again at every check, and reported once.
func TestInventoryWatchRetriesAnUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a file of mode 0")
	}
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	inv, logs := loggedInventory(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	if err := os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: fra1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "permission denied"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("an unreadable file not reported:\n%s", logs.String())
		}
	}
	if got := siteOf(inv, "edge1"); got != "ams1" {
		t.Fatalf("site %q while the file cannot be read, want the previous ams1", got)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); siteOf(inv, "edge1") != "fra1"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("site %q after the file's mode was fixed, want fra1:\n%s", siteOf(inv, "edge1"), logs.String())
		}
	}
	if n := strings.Count(logs.String(), "permission denied"); n != 1 {
		t.Fatalf("an unreadable file was reported %d times, want once:\n%s", n, logs.String())
	}
}

// TestInventoryObserveReloads: a file the watch could not load was only
// logged, so /metrics said nothing of an inventory saved broken (the
// config reload metrics count SIGHUP alone). The observer is told each
// outcome the watch reports (once per broken version, once while the
// file is gone) and each Reload's.
func TestInventoryObserveReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	write := func(content string, at int) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(time.Duration(at) * time.Second)
		os.Chtimes(path, when, when)
	}
	write("devices:\n  - {name: edge1, site: ams1}\n", 1)
	inv, err := LoadInventory(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	waitOutcomes := watchOutcomes(t, inv, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	write("devices: [unterminated\n", 2)
	waitOutcomes("failure")
	write("devices:\n  - {name: edge1, site: fra1}\n", 3)
	waitOutcomes("failure", "success")
	os.Remove(path)
	waitOutcomes("failure", "success", "failure")
	if err := inv.Reload(); err == nil {
		t.Fatal("Reload of a removed file: no error")
	}
	waitOutcomes("failure", "success", "failure", "failure")
	write("devices:\n  - {name: edge1, site: lon1}\n", 4)
	waitOutcomes("failure", "success", "failure", "failure", "success")
	if err := inv.Reload(); err != nil {
		t.Fatal(err)
	}
	waitOutcomes("failure", "success", "failure", "failure", "success", "success")
}

// TestInventoryReloadsDoNotCross: a SIGHUP reload and the watch's, at the
// same moment, each read the file and store what they read. The one that
// read the older version must not store it after the other stored the
// newer: the inventory would go back until the next change.
func TestInventoryReloadsDoNotCross(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.yaml")
	os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: ams1}\n"), 0o644)
	inv, err := LoadInventory(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// The first reload has read ams1 when the file changes to fra1 and
	// a second reload starts; the first waits for the second a while
	// (for ever would deadlock when they are serialised), then stores.
	var first atomic.Bool
	second := make(chan error, 1)
	inv.afterRead = func() {
		if first.CompareAndSwap(false, true) { // not sync.Once: the second would wait for the first
			os.WriteFile(path, []byte("devices:\n  - {name: edge1, site: fra1}\n"), 0o644)
			go func() { second <- inv.Reload() }()
			select {
			case err := <-second:
				second <- err
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	if err := inv.Reload(); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := siteOf(inv, "edge1"); got != "fra1" {
		t.Errorf("after both reloads: site %q, want the newer file's fra1", got)
	}
}

// Top-level "x-" keys are the writer's own, as in weir.yaml: anchors for
// attributes several devices share.
func TestInventoryExtensionKeys(t *testing.T) {
	inv, err := ParseInventory([]byte(`
x-dc1: &dc1 {site: dc1, region: eu}
x-owner: netops
devices:
  - name: r1
    address: 192.0.2.1
    <<: *dc1
`))
	if err != nil {
		t.Fatal(err)
	}
	d := inv.Lookup("", "192.0.2.1")
	if d == nil || d.Name != "r1" || d.Site != "dc1" || d.Region != "eu" {
		t.Fatalf("192.0.2.1: %+v, want r1 at dc1 in eu", d)
	}
	// Elsewhere an unknown key is still one, and with a key refused
	// beside an extension key the file is refused.
	for _, doc := range []string{
		"devices:\n  - {name: x, x-site: a}\n",
		"x-a: 1\nxdevices: []\n",
	} {
		if _, err := ParseInventory([]byte(doc)); err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%q: err %v, want an unknown key", doc, err)
		}
	}
}

// TestInventoryWatchReportsTheLoadedVersionBack: a broken edit saved as
// a new file (an editor keeping the loaded one as its backup) failed,
// and /metrics said so; putting the loaded file back (mv
// inventory.yaml~ inventory.yaml: the very version in use, the same
// file, time and size) was no new version, so the watch neither loaded
// nor reported it, and weir_inventory_last_reload_successful stayed 0
// for a file that is the one in use. The same after the file was moved
// away and back. The watch reports the loaded version back as a success.
func TestInventoryWatchReportsTheLoadedVersionBack(t *testing.T) {
	dir := t.TempDir()
	path, backup := filepath.Join(dir, "inventory.yaml"), filepath.Join(dir, "inventory.yaml~")
	inv, logs := loggedInventory(t, path)
	waitOutcomes := watchOutcomes(t, inv, logs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inv.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	// An editor's save: the loaded file becomes the backup, the new
	// (broken) text a new file.
	if err := os.Rename(path, backup); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("devices: [unterminated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitOutcomes("failure")
	if err := os.Rename(backup, path); err != nil {
		t.Fatal(err)
	}
	waitOutcomes("failure", "success")
	if got := siteOf(inv, "edge1"); got != "ams1" {
		t.Fatalf("site %q, want ams1", got)
	}
	if !strings.Contains(logs.String(), "loaded version again") {
		t.Fatalf("the loaded version back not logged:\n%s", logs.String())
	}

	// Moved away (unreadable) and back.
	if err := os.Rename(path, backup); err != nil {
		t.Fatal(err)
	}
	waitOutcomes("failure", "success", "failure")
	if err := os.Rename(backup, path); err != nil {
		t.Fatal(err)
	}
	waitOutcomes("failure", "success", "failure", "success")
}

// TestInventoryNameWithSpacesRefused: a name quoted with spaces around it
// (" edge3 ") loaded and never matched a record, without a word.
func TestInventoryNameWithSpacesRefused(t *testing.T) {
	_, err := ParseInventory([]byte("devices:\n  - {name: \" edge3 \", site: x}\n"))
	if err == nil || !strings.Contains(err.Error(), "white space") {
		t.Errorf("got %v, want the name's white space refused", err)
	}
}

// watchOutcomes records the outcome of each reload inv reports, and
// returns a wait for exactly want ("success", "failure"), which fails with
// what logs holds (nil: nothing to show).
func watchOutcomes(t *testing.T, inv *Inventory, logs fmt.Stringer) func(want ...string) {
	var mu sync.Mutex
	var outcomes []string
	inv.Observe(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			outcomes = append(outcomes, "failure")
		} else {
			outcomes = append(outcomes, "success")
		}
	})
	return func(want ...string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			got := slices.Clone(outcomes)
			mu.Unlock()
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				shown := ""
				if logs != nil {
					shown = logs.String()
				}
				t.Fatalf("outcomes %v, want %v:\n%s", got, want, shown)
			}
		}
	}
}

// TestInventoryLookupOfAPolledAgentAllocatesNothing: a metrics worker looks
// up every SNMP row by its target's name and its agent tag, the host the
// config polls: a bare address (no port), or a host name. A target the
// inventory lists by its address (or not at all) was looked up with an
// allocation per row, the error of parsing the agent as "ip:port" first:
// the one allocation left per row of BenchmarkEnrichMetrics. The sender
// is still found as before, in each form a record gives it.
func TestInventoryLookupOfAPolledAgentAllocatesNothing(t *testing.T) {
	inv, err := ParseInventory([]byte(testInventory + "  - {name: pe6, address: \"2001:db8::6\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, agent, want string }{
		{"sw1", "192.0.2.1", "edge1"},
		{"sw1", "10.9.9.9", "lab"},
		{"sw1", "203.0.113.9", ""},
		{"sw1", "2001:db8::6", "pe6"},
		{"sw1", "router7.example.net", ""},
		{"sw1", "", ""},
		{"sw1", "192.0.2.1:161", "edge1"},
		{"sw1", "[2001:db8::6]:161", "pe6"},
		{"sw1", "[::ffff:10.1.2.3]:161", "lab"},
		{"sw1", "::ffff:192.0.2.1", "edge1"},
	} {
		got := ""
		if d := inv.LookupTarget(c.target, c.agent); d != nil {
			got = d.Name
		}
		if got != c.want {
			t.Errorf("LookupTarget(%q, %q) = %q, want %q", c.target, c.agent, got, c.want)
		}
		if a := testing.AllocsPerRun(100, func() { inv.LookupTarget(c.target, c.agent) }); a != 0 {
			t.Errorf("LookupTarget(%q, %q): %v allocations, want 0", c.target, c.agent, a)
		}
	}
}
