package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
)

// TestSnmpbulkwalkReadsTheSimulator checks the agent with Net-SNMP's own
// walker: every column of the table comes back, in order, complete.
func TestSnmpbulkwalkReadsTheSimulator(t *testing.T) {
	snmptest.Require(t, "snmpbulkwalk", "snmpwalk")
	a, err := Listen("127.0.0.1:0", Options{Name: "sim1", Interfaces: 30, Community: "public", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Serve(ctx)
	addr := a.Addr().String()
	dir := t.TempDir()
	out := snmptest.Run(t, dir, "snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Cr7", addr, "1.3.6.1.2.1")
	vbs := snmptest.ParseWalk(out)
	// 7 scalars + 30 x (20 ifTable + 19 ifXTable columns).
	if want := 7 + 30*39; len(vbs) != want {
		t.Fatalf("snmpbulkwalk read %d varbinds, want %d:\n%s", len(vbs), want, out[:min(len(out), 2000)])
	}
	if vbs[4].Value != "sim1" || !strings.HasPrefix(vbs[2].Type, "Timeticks") {
		t.Errorf("system: %+v", vbs[:7])
	}
	// GETNEXT (v1) walks the same.
	out1 := snmptest.Run(t, dir, "snmpwalk", "-v1", "-c", "public", "-On", addr, "1.3.6.1.2.1.31.1.1.1.1")
	if n := len(snmptest.ParseWalk(out1)); n != 30 {
		t.Errorf("v1 walk of ifName: %d rows", n)
	}
	// Counters grow.
	get := func() string {
		return snmptest.ParseWalk(snmptest.Run(t, dir, "snmpget", "-v2c", "-c", "public", "-On", addr, "1.3.6.1.2.1.31.1.1.1.6.2"))[0].Value
	}
	v0 := get()
	time.Sleep(50 * time.Millisecond)
	if v1 := get(); v1 == v0 {
		t.Errorf("ifHCInOctets.2 did not grow: %s", v0)
	}
}

// TestV3WithNetSNMP reads the simulator over SNMPv3 authPriv with
// Net-SNMP's snmpget and snmpbulkwalk: engine discovery, keys, privacy.
func TestV3WithNetSNMP(t *testing.T) {
	snmptest.Require(t, "snmpget", "snmpbulkwalk")
	for _, c := range []struct {
		auth, priv string
		gAuth      gosnmp.SnmpV3AuthProtocol
		gPriv      gosnmp.SnmpV3PrivProtocol
	}{
		{"SHA-256", "AES", gosnmp.SHA256, gosnmp.AES},
		{"SHA-512", "AES", gosnmp.SHA512, gosnmp.AES},
		{"MD5", "DES", gosnmp.MD5, gosnmp.DES},
	} {
		a, err := Listen("127.0.0.1:0", Options{Name: "v3sim", Interfaces: 5, Seed: 7, V3: &gosnmp.UsmSecurityParameters{
			UserName: "weir", AuthenticationProtocol: c.gAuth, AuthenticationPassphrase: "authpass123",
			PrivacyProtocol: c.gPriv, PrivacyPassphrase: "privpass123",
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go a.Serve(ctx)
		dir := t.TempDir()
		v3 := []string{"-v3", "-l", "authPriv", "-u", "weir", "-a", c.auth, "-A", "authpass123", "-x", c.priv, "-X", "privpass123", "-On", "-t", "2", "-r", "0"}
		out := snmptest.Run(t, dir, "snmpget", append(v3, a.Addr().String(), "1.3.6.1.2.1.1.5.0")...)
		if vbs := snmptest.ParseWalk(out); len(vbs) != 1 || vbs[0].Value != "v3sim" {
			t.Errorf("%s/%s snmpget: %s", c.auth, c.priv, out)
		}
		out = snmptest.Run(t, dir, "snmpbulkwalk", append(v3, a.Addr().String(), "1.3.6.1.2.1.31.1.1.1.1")...)
		if vbs := snmptest.ParseWalk(out); len(vbs) != 5 {
			t.Errorf("%s/%s snmpbulkwalk: %s", c.auth, c.priv, out)
		}
		cancel()
	}
}

// FuzzHandle feeds arbitrary datagrams to the agent: it answers or stays
// silent, never panics.
func FuzzHandle(f *testing.F) {
	for _, pt := range []gosnmp.PDUType{gosnmp.GetRequest, gosnmp.GetNextRequest, gosnmp.GetBulkRequest} {
		p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: pt, RequestID: 1, MaxRepetitions: 10,
			Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.2.2.1.2", Type: gosnmp.Null}}}
		if b, err := p.MarshalMsg(); err == nil {
			f.Add(b)
		}
	}
	// A v3 header gosnmp's decoder panics on (a nil dereference in
	// getTrapIdentifier), found by this fuzzer.
	f.Add([]byte("0'\x02\x01\x03000000000000000000000000000000000000"))
	a, err := Listen("127.0.0.1:0", Options{Name: "f", Interfaces: 3, V3: &gosnmp.UsmSecurityParameters{
		UserName: "weir", AuthenticationProtocol: gosnmp.SHA, AuthenticationPassphrase: "authpass123", PrivacyProtocol: gosnmp.NoPriv}})
	if err != nil {
		f.Fatal(err)
	}
	defer a.conn.Close()
	now := time.Now()
	f.Fuzz(func(t *testing.T, pkt []byte) {
		out, err := a.handle(pkt, now)
		if err != nil || out == nil || isV3(pkt) {
			return // a v3 answer needs the user's keys to read
		}
		// A v1/v2c answer is a response to the request, as a manager
		// reads it.
		req, err := a.dec.SnmpDecodePacket(pkt)
		if err != nil {
			t.Fatalf("answered % x, which does not decode: %v", pkt, err)
		}
		resp, err := (&gosnmp.GoSNMP{Version: req.Version, Logger: gosnmp.NewLogger(nil)}).SnmpDecodePacket(out)
		if err != nil {
			t.Fatalf("answer % x to % x does not decode: %v", out, pkt, err)
		}
		if resp.PDUType != gosnmp.GetResponse || resp.RequestID != req.RequestID || resp.Version != req.Version ||
			resp.Community != req.Community || len(resp.Variables) > maxVarbinds {
			t.Fatalf("answer %+v to %+v", resp, req)
		}
	})
}

// TestSetOperStatus: an interface set down reads down(2) in Net-SNMP's
// snmpget, and up(1) once set up again; the others keep theirs (every
// tenth down).
func TestSetOperStatus(t *testing.T) {
	snmptest.Require(t, "snmpget")
	a, err := Listen("127.0.0.1:0", Options{Name: "sim1", Interfaces: 10, Community: "public"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Serve(ctx)
	dir := t.TempDir()
	oper := func() string {
		var got []string
		for _, vb := range snmptest.ParseWalk(snmptest.Run(t, dir, "snmpget", "-v2c", "-c", "public", "-On", "-Oe", a.Addr().String(),
			"1.3.6.1.2.1.2.2.1.8.3", "1.3.6.1.2.1.2.2.1.8.4", "1.3.6.1.2.1.2.2.1.8.10")) {
			got = append(got, vb.Value)
		}
		return strings.Join(got, " ")
	}
	if got := oper(); got != "1 1 2" {
		t.Fatalf("ifOperStatus.3, .4, .10: %s, want 1 1 2", got)
	}
	a.SetOperStatus(3, false)
	if got := oper(); got != "2 1 2" {
		t.Errorf("after SetOperStatus(3, false): %s, want 2 1 2", got)
	}
	a.SetOperStatus(3, true)
	a.SetOperStatus(10, true)
	if got := oper(); got != "1 1 1" {
		t.Errorf("after setting 3 and 10 up: %s, want 1 1 1", got)
	}
}

// TestCountersStandStillWhileDown: a port's octet counters do not move
// while it is down, and go on from where they stood once it is up; one
// down for good (every tenth) carries nothing. (The lab showed traffic on
// a link it reported down.)
func TestCountersStandStillWhileDown(t *testing.T) {
	a, err := Listen("127.0.0.1:0", Options{Name: "sim1", Interfaces: 10, Community: "public"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.conn.Close()
	inOctets := func(idx int, at time.Time) uint64 {
		return a.state(at).get(append(oidOf(mib2, 31, 1, 1, 1, 6), uint32(idx))).Value.(uint64)
	}
	t0 := a.start
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	a.setOperStatus(3, false, at(10))
	a.setOperStatus(3, true, at(20))
	if d, u := inOctets(3, at(20))-inOctets(3, at(10)), inOctets(4, at(20))-inOctets(4, at(10)); d != 0 || u == 0 {
		t.Errorf("over 10 s down: interface 3 counted %d octets (want 0), interface 4, up, %d", d, u)
	}
	if before, after := inOctets(3, at(10))-inOctets(3, at(0)), inOctets(3, at(30))-inOctets(3, at(20)); before == 0 || after != before {
		t.Errorf("interface 3 counted %d octets in 10 s before it went down and %d in 10 s after it came up, want the same, not 0", before, after)
	}
	if n := inOctets(10, at(30)) - inOctets(10, at(0)); n != 0 {
		t.Errorf("interface 10, down for good, counted %d octets", n)
	}
	a.setOperStatus(10, true, at(40))
	if n := inOctets(10, at(50)) - inOctets(10, at(40)); n == 0 {
		t.Error("interface 10, set up, counts nothing")
	}
}
