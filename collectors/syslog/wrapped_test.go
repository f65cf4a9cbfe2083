package syslog

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/weirnet/weir/telemetry"
)

// relayWrappers put a relay's own header in front of a device's line that
// the relay read from a file, as captured on the wire: util-linux logger
// 2.38 --prio-prefix takes the device's PRI for its own (BSD with
// --rfc3164, else RFC 5424 with its timeQuality element); rsyslog 8.2302's
// imfile (Tag "corpus:") forwarded by omfwd keeps the line whole behind
// its own PRI, local0.notice (RSYSLOG_TraditionalForwardFormat,
// RSYSLOG_ForwardFormat, RSYSLOG_SyslogProtocol23Format); with a Tag
// without its colon ("corpus") the BSD templates write a space after it,
// and a template of "%syslogtag%%msg%" nothing (RFC 5424 is as with the
// colon: the tag is the APP-NAME).
var relayWrappers = []struct {
	name, head string
	keepPRI    bool
}{
	{"logger --rfc3164", "Dec  5 00:57:12 vm corpus: ", false},
	{"logger --rfc5424", `1 2026-12-05T00:57:12.808038+00:00 vm corpus - - [timeQuality tzKnown="1" isSynced="0"] `, false},
	{"rsyslog imfile traditional", "<133>Dec  5 01:00:27 vm corpus: ", true},
	{"rsyslog imfile forward", "<133>2026-12-05T01:00:27.862257+00:00 vm corpus: ", true},
	{"rsyslog imfile protocol-23", "<133>1 2026-12-05T01:00:27.862257+00:00 vm corpus - - - ", true},
	{"rsyslog imfile Tag without colon, traditional", "<133>Dec  5 01:00:27 vm corpus ", true},
	{"rsyslog imfile Tag without colon, forward", "<133>2026-12-05T01:00:27.862257+00:00 vm corpus ", true},
	{"rsyslog imfile Tag without colon, %syslogtag%%msg%", "<133>Dec  5 01:00:27 vm corpus", true},
}

// wrap puts head in front of the corpus line raw: after its PRI, or
// before it when the relay keeps the line whole.
func wrap(raw, head string, keepPRI bool) (string, bool) {
	_, rest, err := parsePRI(raw)
	switch {
	case err != nil:
		return "", false
	case keepPRI:
		return head + raw, true
	}
	return raw[:len(raw)-len(rest)] + head + rest, true
}

// TestRelayWrappedCorpus: a device's line a relay read from a file and
// forwarded behind its own header (two headers: "<189>Dec  5 ... vm
// corpus: 48: edge1: Nov 29 ...: %BGP-5-ADJCHANGE: ...") was read as the
// relay's: its host name or tag ("corpus") as the device, the device's
// header in the message, so enrichment took an IOS line for Arista's and
// a Junos one for generic. The device's header is read as if it had come
// directly, the relay's host name kept in Relay (and as the host name when
// the device's header has none).
func TestRelayWrappedCorpus(t *testing.T) {
	p := Parser{Now: fixedNow}
	n := 0
	for _, c := range loadCorpus(t) {
		if c.Format == FormatMalformed {
			continue
		}
		n += checkWrappedAsDirect(t, &p, c.Raw, nil)
	}
	if n == 0 {
		t.Fatal("no corpus line wrapped")
	}
}

// checkWrappedAsDirect checks that raw behind each relay wrapper (but
// those whose head skip leaves out) parses as raw sent directly, the
// relay's host name ("vm") in Relay, and as the host name when raw names
// none. It returns how many wrapped forms it checked (none for a line
// without a PRI).
func checkWrappedAsDirect(t *testing.T, p *Parser, raw string, skip func(head string) bool) int {
	t.Helper()
	var direct telemetry.Log
	p.ParseCopy([]byte(raw), &direct)
	n := 0
	for _, w := range relayWrappers {
		if skip != nil && skip(w.head) {
			continue
		}
		in, ok := wrap(raw, w.head, w.keepPRI)
		if !ok {
			continue
		}
		n++
		var l telemetry.Log
		p.ParseCopy([]byte(in), &l)
		want := direct
		want.Raw, want.Relay = in, "vm"
		if want.Hostname == "" {
			want.Hostname = "vm"
		}
		if !reflect.DeepEqual(l, want) {
			t.Errorf("%s: %.100q:\n got %s\nwant %s", w.name, in, logSummary(&l), logSummary(&want))
		}
	}
	return n
}

func logSummary(l *telemetry.Log) string {
	tm := ""
	if l.Time != nil {
		tm = l.Time.String()
	}
	return strings.Join([]string{"format=" + l.Format, "host=" + l.Hostname, "relay=" + l.Relay, "app=" + l.AppName,
		"pid=" + l.ProcID, "msgid=" + l.MsgID, "seq=" + l.Sequence, "time=" + tm, "err=" + l.ParseError, "msg=" + l.Message}, " ")
}

// TestRealRelaysWrapCorpus sends the corpus lines through the real
// wrappers: util-linux logger --prio-prefix -f (BSD and RFC 5424, over
// UDP) and rsyslogd reading them from a file with imfile, forwarding over
// TCP (its traditional BSD template and RFC 5424; and, from a second file
// whose Tag has no colon, the traditional template and one that glues the
// line to the tag, "%syslogtag%%msg%"). Each line arrives as the device's,
// as if sent directly, with the relay's host name in Relay.
func TestRealRelaysWrapCorpus(t *testing.T) {
	for _, bin := range []string{"logger", "rsyslogd"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed", bin)
		}
	}
	h := startCollector(t, listener("udp"), listener("tcp"))
	_, udpPort, _ := net.SplitHostPort(h.addrs["udp"])
	_, tcpPort, _ := net.SplitHostPort(h.addrs["tcp"])
	p := Parser{Now: fixedNow}
	direct := map[string]telemetry.Log{} // by message
	var lines []string
	for _, c := range loadCorpus(t) {
		if c.Format == FormatMalformed || strings.ContainsAny(c.Raw, "\n\x00") {
			continue
		}
		var l telemetry.Log
		p.ParseCopy([]byte(c.Raw), &l)
		direct[l.Message] = l
		lines = append(lines, c.Raw)
	}
	work := t.TempDir()
	src := filepath.Join(work, "devices.log")
	if err := os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"--rfc3164", "--rfc5424"} {
		args := []string{"-n", "127.0.0.1", "-P", udpPort, "-d", format, "--prio-prefix", "-t", "devlogs", "-f", src}
		if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v %s", args, err, out)
		}
	}
	watched, noColon := filepath.Join(work, "watched.log"), filepath.Join(work, "nocolon.log")
	for _, name := range []string{watched, noColon} {
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stderr := startRsyslog(t, work, fmt.Sprintf(`
global(workDirectory="%s")
module(load="imfile")
template(name="glued" type="string" string="<%%PRI%%>%%TIMESTAMP%% %%HOSTNAME%% %%syslogtag%%%%msg%%")
input(type="imfile" File="%s" Tag="devlogs:" ruleset="relay")
input(type="imfile" File="%s" Tag="devlogs" ruleset="nocolon")
ruleset(name="relay") {
  action(type="omfwd" target="127.0.0.1" port="%[4]s" protocol="tcp" template="RSYSLOG_TraditionalForwardFormat")
  action(type="omfwd" target="127.0.0.1" port="%[4]s" protocol="tcp" TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format")
}
ruleset(name="nocolon") {
  action(type="omfwd" target="127.0.0.1" port="%[4]s" protocol="tcp" template="RSYSLOG_TraditionalForwardFormat")
  action(type="omfwd" target="127.0.0.1" port="%[4]s" protocol="tcp" TCP_Framing="octet-counted" template="glued")
}
`, work, watched, noColon, tcpPort))
	for _, name := range []string{watched, noColon} {
		f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}

	want := 6 * len(lines)
	logs := h.waitLogs(want)
	if len(logs) != want {
		t.Fatalf("%d messages, want %d\nrsyslogd: %s", len(logs), want, stderr.String())
	}
	for _, l := range logs {
		d, ok := direct[l.Message]
		if !ok {
			t.Errorf("%.120q: message %.60q is no corpus line's", l.Raw, l.Message)
			continue
		}
		host := d.Hostname
		if host == "" {
			host = l.Relay
		}
		got := [...]string{l.Format, l.Hostname, l.AppName, l.ProcID, l.MsgID, l.Sequence, strconv.Itoa(l.Facility), strconv.Itoa(l.Severity)}
		exp := [...]string{d.Format, host, d.AppName, d.ProcID, d.MsgID, d.Sequence, strconv.Itoa(d.Facility), strconv.Itoa(d.Severity)}
		if l.Relay == "" || got != exp || (l.Time == nil) != (d.Time == nil) || l.Time != nil && !l.Time.Equal(*d.Time) {
			t.Errorf("%.120q: relay %q, got %q, want %q (time %v, want %v)", l.Raw, l.Relay, got, exp, l.Time, d.Time)
		}
	}
}

// TestRelayWrappedOnlyWholeHeaders: a tagged message that merely starts
// like a header, and the relayed forms read before, stay as they were.
func TestRelayWrappedOnlyWholeHeaders(t *testing.T) {
	checkParseCases(t, []parseCase{
		{raw: "<13>Nov 29 14:10:00 h1 cron: Nov 29 report done", format: "rfc3164", host: "h1", app: "cron",
			m: "Nov 29 report done", time: "2026-11-29T14:10:00Z"},
		{raw: "<13>Nov 29 14:10:00 h1 app: 42: hello", format: "rfc3164", host: "h1", app: "app",
			m: "42: hello", time: "2026-11-29T14:10:00Z"},
		{raw: "<13>Nov 29 14:10:00 h1 app: <13>hello", format: "rfc3164", host: "h1", app: "app",
			m: "<13>hello", time: "2026-11-29T14:10:00Z"},
		{raw: "<13>Nov 29 14:10:00 h1 app: 2026 was a year", format: "rfc3164", host: "h1", app: "app",
			m: "2026 was a year", time: "2026-11-29T14:10:00Z"},
		// No tag, a word and what only starts like a header.
		{raw: "<13>Nov 29 14:10:00 h1 report <13>hello", format: "rfc3164", host: "h1",
			m: "report <13>hello", time: "2026-11-29T14:10:00Z"},
		{raw: "<13>Nov 29 14:10:00 h1 report Nov 29 done", format: "rfc3164", host: "h1",
			m: "report Nov 29 done", time: "2026-11-29T14:10:00Z"},
		{raw: "<13>Nov 29 14:10:00 h1 report<13>42: hello", format: "rfc3164", host: "h1",
			m: "report<13>42: hello", time: "2026-11-29T14:10:00Z"},
		// A clock or an uptime after a word (with its colon or without) but
		// no Cisco mnemonic after it: a daemon's words, not a Cisco header.
		{raw: "<13>Nov 29 14:10:00 h1 job 00:01:23: elapsed", format: "rfc3164", host: "h1",
			m: "job 00:01:23: elapsed", time: "2026-11-29T14:10:00Z"},
		{raw: "<13>Nov 29 14:10:00 h1 cron: 12:00:00: nightly run", format: "rfc3164", host: "h1", app: "cron",
			m: "12:00:00: nightly run", time: "2026-11-29T14:10:00Z"},
		{raw: "<13>Nov 29 14:10:00 h1 backup 4: Nov 29 14:02:11: done", format: "rfc3164", host: "h1",
			m: "backup 4: Nov 29 14:02:11: done", time: "2026-11-29T14:10:00Z"},
		{raw: "<14>1 2026-11-29T14:08:11Z host3 app - - - 1 2026-11-29 was a day", format: "rfc5424", host: "host3", app: "app",
			m: "1 2026-11-29 was a day", time: "2026-11-29T14:08:11Z"},
		// RFC 5424 behind RFC 5424 only with a whole header: not without
		// its SD field, nor with a one-digit hour (Go's time.Parse takes it).
		{raw: "<14>1 2026-11-29T14:08:11Z host3 app - - - 1 2026-11-29T14:08:12Z h2 a p m  text", format: "rfc5424", host: "host3", app: "app",
			m: "1 2026-11-29T14:08:12Z h2 a p m  text", time: "2026-11-29T14:08:11Z"},
		{raw: "<14>1 2026-11-29T14:08:11Z host3 app - - - 1 2026-11-29T4:08:12Z h2 a p m - text", format: "rfc5424", host: "host3", app: "app",
			m: "1 2026-11-29T4:08:12Z h2 a p m - text", time: "2026-11-29T14:08:11Z"},
		// Arista's agent tag before the mnemonic is the device's own.
		{raw: "<187>Nov 29 14:07:08 leaf1 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet3, changed state to down", format: "rfc3164", host: "leaf1", app: "Ebra",
			m: "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet3, changed state to down", time: "2026-11-29T14:07:08Z"},
		// rsyslog relaying what it received from an IOS device with an
		// origin host and sequence numbers, padded to six digits, but no
		// message counter: the host is the device's.
		{raw: "<189>Nov 29 14:03:02 relay1 edge1: 000045: *Nov 29 14:03:01.272: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down", format: "cisco", host: "edge1", seq: "000045",
			m: "%LINK-3-UPDOWN: Interface Gi0/1, changed state to down", time: "2026-11-29T14:03:01.272Z"},
	})
}

// TestRelayTagBeforeSixDigitCounter: IOS's message counter passes six
// digits after 99,999 messages; behind a relay's tag ("vm devlogs:
// 123456: Nov 29 ...", rsyslog imfile's Tag="devlogs:" as it sends it) the
// tag was read as the device's origin host (IOS's "edge1: 000045: *Nov 29
// ...", host and sequence number) and the relay's host name lost. IOS
// pads its sequence numbers to six digits with zeros, so a number of six
// or more digits is one only with a leading zero; else it is a counter.
func TestRelayTagBeforeSixDigitCounter(t *testing.T) {
	const link = "%LINK-3-UPDOWN: Interface Gi0/1, changed state to down"
	for _, tc := range []struct {
		raw, host, relay, seq string
	}{
		{"<133>Dec  5 10:00:00 vm devlogs: 123456: Nov 29 10:00:00.123: " + link, "vm", "vm", "123456"},
		{"<133>Dec  5 10:00:00 vm devlogs: 1234567: *Nov 29 10:00:00.123: " + link, "vm", "vm", "1234567"},
		{"<133>Dec  5 10:00:00 vm devlogs: <189>123456: Nov 29 10:00:00.123: " + link, "vm", "vm", "123456"},
		// IOS's own origin host and zero-padded sequence number, relayed.
		{"<189>Nov 29 14:03:02 relay1 edge1: 000045: *Nov 29 14:03:01.272: " + link, "edge1", "", "000045"},
		{"<189>Nov 29 14:03:02 relay1 edge1: 099999: Nov 29 14:03:01.272: " + link, "edge1", "", "099999"},
		// Past 99,999 in RFC 5424 the two differ: rsyslog relaying a
		// device's line keeps the space after the tag in the message,
		// imfile's line has none.
		{"<189>1 2026-12-05T06:14:49Z relay1 edge1 - - -  123456: *Nov 29 10:00:00.123: " + link, "edge1", "", "123456"},
		{"<133>1 2026-12-05T06:14:49Z vm devlogs - - - 123456: *Nov 29 10:00:00.123: " + link, "vm", "vm", "123456"},
	} {
		var l telemetry.Log
		p := Parser{Now: fixedNow}
		p.ParseCopy([]byte(tc.raw), &l)
		got := [...]string{l.Format, l.Hostname, l.Relay, l.Sequence, l.Message}
		want := [...]string{FormatCisco, tc.host, tc.relay, tc.seq, link}
		if got != want || l.Time == nil || l.Time.Day() != 29 {
			t.Errorf("%.80q:\n got %q (time %v)\nwant %q (time Nov 29)", tc.raw, got, l.Time, want)
		}
	}
}

// relayedCiscoShapes are direct Cisco lines of shapes the corpus lacks:
// IOS-XR without "service sequence-numbers" (its node first), ASA with a
// device id and no time, ASA with no header at all, an AireOS task with
// no system name before it, IOS stamping its uptime and no counter, NX-OS
// with a space after the PRI, and Comware's year after the time.
var relayedCiscoShapes = []string{
	"<187>RP/0/RSP0/CPU0:Nov 29 14:05:00.123 UTC: bgp[1052]: %ROUTING-BGP-5-ADJCHANGE : neighbor 192.0.2.1 Down",
	"<187>LC/0/1/CPU0:Nov 29 14:05:01.004 UTC: ifmgr[215]: %PKT_INFRA-LINK-3-UPDOWN : Interface GigabitEthernet0/1/0/3, changed state to Down",
	"<166>fw1 : %ASA-6-302013: Built outbound TCP connection 1234 for outside:192.0.2.10/443",
	"<166>%ASA-6-302013: Built outbound TCP connection 1235 for outside:192.0.2.10/443",
	"<132>*spamApTask4: Nov 26 18:52:01.958: %CAPWAP-4-DISC_INTF_ERR2: [PA]capwap_ac_sm.c:2053 Ignoring discovery request",
	"<189>1w2d: %LINK-3-UPDOWN: Interface Gi0/1, changed state to down",
	"<189> Nov 29 13:58:46 nx7 %MODULE-5-MOD_OK: Module 2 is online",
	"<189>2026-04-13T20:41:09+00:00 2026 core1 %%10BGP/5/BGP_STATE_CHANGED: BGP.: 3.3.3.2 state has changed from OPENCONFIRM to ESTABLISHED.",
}

// TestRelayWrappedCiscoShapes: lines of these shapes, replayed by logger
// or read by rsyslog's imfile, stayed the relay's: IOS-XR's node, ASA's
// device id, an AireOS task and an uptime were not taken for a header, so
// enrichment read an IOS-XR or IOS line as Arista's and an ASA one as
// generic, and the device's host name was lost. Each is read as if sent
// directly, the relay's host name in Relay.
func TestRelayWrappedCiscoShapes(t *testing.T) {
	p := Parser{Now: fixedNow}
	for _, raw := range relayedCiscoShapes {
		// "vm corpus: *task: ..." is rsyslog relaying a WLC named corpus
		// (TestRelayedWLCTaskAfterTag).
		wlcTask := func(head string) bool { return strings.Contains(raw, ">*spam") && strings.HasSuffix(head, ": ") }
		if checkWrappedAsDirect(t, &p, raw, wlcTask) == 0 {
			t.Errorf("%.60q: not wrapped", raw)
		}
	}
}

// TestRelayedWLCTaskAfterTag pins what cannot be told apart: rsyslog
// relaying a WLC's "wlc1: *task: ..." and logger --rfc3164 relaying a
// WLC line without its system name ("*task: ...", tag root) write the
// same bytes. The word before the task is read as the WLC's name.
func TestRelayedWLCTaskAfterTag(t *testing.T) {
	checkParseCases(t, []parseCase{
		{raw: "<13>Dec  5 06:14:49 vm root: *spamApTask4: Nov 26 18:52:01.958: %CAPWAP-4-DISC_INTF_ERR2: x", format: "cisco", host: "root", app: "spamApTask4",
			m: "%CAPWAP-4-DISC_INTF_ERR2: x", time: "2026-11-26T18:52:01.958Z"},
	})
}

// TestLoggerRelaysCiscoShapes sends relayedCiscoShapes, each line's PRI
// cut as an operator replaying a saved device log does, through
// util-linux logger to the collector: over UDP and TCP, as RFC 5424
// (logger's default) and with --rfc3164. Each arrives as the device's
// line sent directly: its header's host name (else logger's), time, tag,
// sequence and message, logger's host name in Relay.
func TestLoggerRelaysCiscoShapes(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed (util-linux)")
	}
	h := startCollector(t, listener("udp"), listener("tcp"))
	_, udpPort, _ := net.SplitHostPort(h.addrs["udp"])
	_, tcpPort, _ := net.SplitHostPort(h.addrs["tcp"])
	p := Parser{Now: fixedNow}
	direct := map[string]telemetry.Log{} // by message
	sent := 0
	for _, raw := range relayedCiscoShapes {
		var d telemetry.Log
		p.ParseCopy([]byte(raw), &d)
		direct[d.Message] = d
		body := raw[strings.IndexByte(raw, '>')+1:]
		for _, args := range [][]string{
			{"--udp", "--port", udpPort}, {"--udp", "--port", udpPort, "--rfc3164"},
			{"--tcp", "--port", tcpPort}, {"--tcp", "--port", tcpPort, "--rfc3164"},
		} {
			if strings.HasPrefix(body, "*spam") && args[len(args)-1] == "--rfc3164" {
				continue // the tag taken for the WLC's name: TestRelayedWLCTaskAfterTag
			}
			args = append([]string{"--server", "127.0.0.1"}, append(args, body)...)
			if out, err := exec.Command("logger", args...).CombinedOutput(); err != nil {
				t.Fatalf("logger %q: %v %s", args, err, out)
			}
			sent++
		}
	}
	for _, l := range h.waitLogs(sent) {
		d, ok := direct[l.Message]
		if !ok {
			t.Errorf("%.120q: message %.60q is no line's as sent directly (format %s, host %q)", l.Raw, l.Message, l.Format, l.Hostname)
			continue
		}
		host := d.Hostname
		if host == "" {
			host = l.Relay
		}
		got := [...]string{l.Format, l.Hostname, l.AppName, l.ProcID, l.Sequence}
		exp := [...]string{d.Format, host, d.AppName, d.ProcID, d.Sequence}
		if l.Relay == "" || got != exp || (l.Time == nil) != (d.Time == nil) || l.Time != nil && !l.Time.Equal(*d.Time) {
			t.Errorf("%.120q: relay %q, got %q, want %q (time %v, want %v)", l.Raw, l.Relay, got, exp, l.Time, d.Time)
		}
	}
}

// tracebackLines are the continuation lines IOS sends after some messages
// (a process and its stack), each a message of its own: the header as
// the device writes it, and no time and no mnemonic; IOS-XE's stack has
// colons in it.
var tracebackLines = []string{
	"<187>124: -Traceback= 0x6017F4C4 0x60189B08 0x6018A1C0",
	"<187>125: edge1: -Traceback= 0x6017F4C4 0x60189B08 0x6018A1C0",
	"<187>126: edge1: 000126: -Traceback= 6017F4C4z 60189B08z",
	`<187>127: -Process= "IP Input", ipl= 0, pid= 72`,
	"<187>128: -Traceback= 1#8d5b2f7e0a9c :55E5A2DE7000+8E0A6B0 :55E5A2DE7000+8E0A1C4",
	"<187>-Traceback= 0x6017F4C4 0x60189B08",
	"<187>129: Nov 29 14:02:11.123: -Traceback= 0x6017F4C4 0x60189B08",
}

// TestCiscoTracebackLines: IOS's traceback and process lines were
// malformed sent directly (no time after the header) and, relayed, stayed
// the relay's, their sequence number or the device's host name taken for
// a tag. They are Cisco lines with the header's sequence number and host
// name and the line as the message; relayed, the device's as if sent
// directly. A word before a bare traceback is not taken for a host name
// ("vm corpus: -Traceback= ..." is logger's tag as often as a device's
// name): the line is the relay's.
func TestCiscoTracebackLines(t *testing.T) {
	const tb = "-Traceback= 0x6017F4C4 0x60189B08"
	checkParseCases(t, []parseCase{
		{raw: "<187>124: -Traceback= 0x6017F4C4 0x60189B08 0x6018A1C0", format: "cisco", seq: "124", m: "-Traceback= 0x6017F4C4 0x60189B08 0x6018A1C0"},
		{raw: "<187>125: edge1: " + tb, format: "cisco", host: "edge1", seq: "125", m: tb},
		{raw: "<187>126: edge1: 000126: " + tb, format: "cisco", host: "edge1", seq: "000126", m: tb},
		{raw: `<187>127: -Process= "IP Input", ipl= 0, pid= 72`, format: "cisco", seq: "127", m: `-Process= "IP Input", ipl= 0, pid= 72`},
		{raw: "<187>128: -Traceback= 1#8d5b2f7e0a9c :55E5A2DE7000+8E0A6B0", format: "cisco", seq: "128", m: "-Traceback= 1#8d5b2f7e0a9c :55E5A2DE7000+8E0A6B0"},
		{raw: "<187>" + tb, format: "cisco", m: tb},
		{raw: "<187>edge1: " + tb, format: "cisco", host: "edge1", m: tb},
		// rsyslog relaying them in its forward formats.
		{raw: "<187>Dec  5 06:14:49 relay1 124: " + tb, format: "cisco", host: "relay1", seq: "124", m: tb},
		{raw: "<187>Dec  5 06:14:49 relay1 125: edge1: " + tb, format: "cisco", host: "edge1", seq: "125", m: tb},
		{raw: "<187>Dec  5 06:14:49 relay1 edge1: 000126: " + tb, format: "cisco", host: "edge1", seq: "000126", m: tb},
		{raw: "<187>Dec  5 06:14:49 relay1 " + tb, format: "cisco", host: "relay1", m: tb},
		{raw: "<187>1 2026-12-05T06:14:49.457124+00:00 relay1 124 - - -  " + tb, format: "cisco", host: "relay1", seq: "124", m: tb},
		// A daemon's words stay its own.
		{raw: "<13>Nov 29 14:10:00 h1 app: -Traceback is empty", format: "rfc3164", host: "h1", app: "app", m: "-Traceback is empty"},
		{raw: "<13>Nov 29 14:10:00 h1 app: 42: -Process=x", format: "rfc3164", host: "h1", app: "app", m: "42: -Process=x"},
	})
	p := Parser{Now: fixedNow}
	for _, raw := range tracebackLines {
		if checkWrappedAsDirect(t, &p, raw, nil) == 0 {
			t.Errorf("%.60q: not wrapped", raw)
		}
	}
}

// TestRsyslogNamesFileByDevice: a hostless device line (IOS without
// "logging origin-id") that rsyslog's imfile reads is named after the
// relay, as imfile knows no device. Its metadata has the file name,
// though: with one file per device and a template that writes the name
// taken from it as the header's host name, the line is that device's.
func TestRsyslogNamesFileByDevice(t *testing.T) {
	if _, err := exec.LookPath("rsyslogd"); err != nil {
		t.Skip("rsyslogd not installed")
	}
	h := startCollector(t, listener("tcp"))
	_, tcpPort, _ := net.SplitHostPort(h.addrs["tcp"])
	work := t.TempDir()
	src := filepath.Join(work, "edge7.log")
	if err := os.WriteFile(src, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := startRsyslog(t, work, fmt.Sprintf(`
global(workDirectory="%s")
module(load="imfile")
template(name="bydevice" type="string" string="<%%PRI%%>%%TIMESTAMP%% %%$.device%% %%syslogtag%%%%msg%%")
input(type="imfile" File="%s" Tag="devlogs:" addMetadata="on" ruleset="relay")
ruleset(name="relay") {
  set $.device = re_extract($!metadata!filename, "([^/]+)\\.log\$", 0, 1, "unknown");
  action(type="omfwd" target="127.0.0.1" port="%s" protocol="tcp" template="bydevice")
}
`, work, src, tcpPort))
	const line = "<187>45: Nov 29 14:02:11.123: %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet0/1, changed state to down"
	if err := os.WriteFile(src, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := h.waitLogs(1)[0]
	if l.Format != FormatCisco || l.Hostname != "edge7" || l.Sequence != "45" || l.Facility != 23 || l.Severity != 3 {
		t.Errorf("%.120q: format %s, host %q, seq %q, facility %d, severity %d; want cisco, edge7, 45, 23, 3\nrsyslogd: %s",
			l.Raw, l.Format, l.Hostname, l.Sequence, l.Facility, l.Severity, stderr.String())
	}
}
