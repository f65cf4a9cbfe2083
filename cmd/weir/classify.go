package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weirnet/weir/collectors/syslog"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/enrich"
	"github.com/weirnet/weir/telemetry"
)

// maxClassifyLine is the longest line classify reads from stdin (with its
// CR LF): syslog's max_message_size is at most 1 MiB.
const maxClassifyLine = 1<<20 + 2

// classifyCmd shows what enrichment makes of syslog lines, as the config's
// inventory, SNMP targets and syslog rules have it, without a running weir:
// for writing a site rule, or finding why a device's line raises no event.
func classifyCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("weir classify [-c FILE] [--from ADDR] [LINE...]", stderr)
	file := fs.String("c", "configs/weir.yaml", "config whose inventory, SNMP targets and syslog rules are used (none there, or \"\": weir's rules alone, every device unknown)")
	fs.StringVar(file, "config", "configs/weir.yaml", "config whose inventory, SNMP targets and syslog rules are used")
	from := fs.String("from", "", "the address the lines come from, as the receiver would see it (names the device by the inventory or an SNMP target when the line has no hostname)")
	lines, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	source, device, err := classifySender(*from)
	if err != nil {
		return &exitError{2, err}
	}
	cfg := configs.Defaults() // -c "": no config, as for weir run
	if *file != "" {
		cfg, err = configs.Load(*file)
	}
	switch {
	case err != nil && !flagGiven(fs, "c") && !flagGiven(fs, "config") && errors.Is(err, os.ErrNotExist):
		cfg = configs.Defaults() // no config here: weir's rules alone
	case err != nil:
		return &exitError{1, err}
	}
	w, err := classifier(cfg)
	if err != nil {
		return &exitError{1, err}
	}
	if !cfg.EnrichEnabled() {
		// Asked why a line raises no event, the answer is this.
		fmt.Fprintf(stderr, "%s: warning: enrich.enabled is false: weir run with this config enriches no line and raises no event; shown is what enrichment would make of them\n", cfg.File)
	}
	var p syslog.Parser
	warnedHostless := false
	one := func(line string) error {
		var l telemetry.Log
		p.ParseCopy([]byte(line), &l)
		if !utf8.ValidString(line) {
			l.RawBytes = []byte(line) // as the receiver keeps them: JSON's strings cannot
		}
		l.SourceAddr, l.ReceivedAt = source, time.Now().UTC()
		l.Device = l.Hostname
		if l.Device == "" {
			l.Device = device
		}
		if l.Device == "" && !warnedHostless {
			// weir run always has the sender's address to name it by:
			// without --from the line's device and event say none.
			warnedHostless = true
			fmt.Fprintf(stderr, "weir classify: warning: %q has no hostname: weir run names its device by the address it came from (an SNMP target's or the inventory's name for it); give --from ADDR to see that, device \"\" shown without\n", line)
		}
		tried, err := w.Try(l.AppendJSON(nil))
		if err != nil {
			return fmt.Errorf("%q: %w", line, err)
		}
		out := append([]byte(`{"rule":`), telemetry.AppendMarshalString(nil, tried.Rule)...)
		out = append(append(out, `,"enriched":`...), tried.Enriched...)
		if tried.Event.Type != "" {
			out = append(out, `,"event":`...)
			if out, _, err = tried.Event.AppendJSON(out, nil); err != nil {
				return fmt.Errorf("%q: its event: %w", line, err)
			}
		}
		_, err = stdout.Write(append(out, "}\n"...))
		return err
	}
	if len(lines) > 0 {
		for _, line := range lines {
			if err := one(line); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), maxClassifyLine)
	n := 0
	for sc.Scan() {
		n++
		if line := strings.TrimRight(sc.Text(), "\r"); line != "" {
			if err := one(line); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line %d is longer than 1 MiB, the longest syslog message a listener takes (max_message_size); the lines before it were classified", n+1)
	} else if err != nil {
		return fmt.Errorf("reading the lines: %w", err)
	}
	return nil
}

// classifySender is --from as the receiver has a sender: its source_addr
// ("ip:port", or the address alone when no port is given) and the device a
// line without a hostname is known by until enrichment names it (the
// address, IPv4-mapped IPv6 as IPv4). A name is no sender's address.
func classifySender(from string) (source, device string, err error) {
	if from == "" {
		return "", "", nil
	}
	if ap, err := netip.ParseAddrPort(from); err == nil {
		a := ap.Addr().Unmap()
		return netip.AddrPortFrom(a, ap.Port()).String(), a.String(), nil
	}
	a, err := netip.ParseAddr(from)
	if err != nil {
		return "", "", fmt.Errorf("classify: --from %q: not an address (192.0.2.7, 192.0.2.7:514, 2001:db8::1 or [2001:db8::1]:514): the sender's, as the receiver sees it", from)
	}
	a = a.Unmap()
	return a.String(), a.String(), nil
}

// classifier is a syslog worker over cfg's inventory, SNMP and gNMI
// targets and syslog rules, for Try: a line --from a target's address is
// named as weir run names it.
func classifier(cfg *configs.Config) (*enrich.Worker, error) {
	inv, err := checkInventory(cfg)
	if err != nil {
		return nil, err
	}
	cls, _, err := checkSyslogRules(cfg)
	if err != nil {
		return nil, err
	}
	targets := enrich.NewSNMPTargets(snmpTargetNames(cfg.SNMP.Targets))
	gnmiTargets := enrich.NewGNMITargets(gnmiTargetAddrs(cfg.GNMI.Targets))
	return enrich.NewWorker(nil, inv, cls, enrich.WithSNMPTargets(targets), enrich.WithGNMITargets(gnmiTargets)), nil
}
