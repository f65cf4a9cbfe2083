package trap

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/profile"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/telemetry"
)

var testUser = configs.SNMPv3{User: snmptest.V3User, SecurityLevel: "authPriv", AuthProtocol: "SHA256",
	AuthPassword: snmptest.V3AuthPass, PrivProtocol: "AES", PrivPassword: snmptest.V3PrivPass}

type harness struct {
	r       *Receiver
	addr    string
	capture *snmptest.Capture
	metrics *Metrics
	dir     string
}

func start(t *testing.T, cfg Config) *harness {
	t.Helper()
	ps, err := profile.Load(configs.BuiltinSNMPProfiles(), "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{capture: snmptest.NewCapture(), metrics: m, dir: t.TempDir()}
	cfg.Listen = "127.0.0.1:0"
	if cfg.Broker == nil {
		cfg.Broker = h.capture
	}
	cfg.Names = NewNames(ps)
	cfg.Metrics = m
	h.r, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(5 * time.Second):
			t.Error("receiver did not stop")
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	addr, err := h.r.Addr(wctx)
	if err != nil {
		t.Fatal(err)
	}
	h.addr = addr.String()
	return h
}

func (h *harness) traps(t *testing.T) []telemetry.Trap {
	var out []telemetry.Trap
	for _, r := range h.capture.Records() {
		var tr telemetry.Trap
		if err := json.Unmarshal(r.Value, &tr); err != nil {
			t.Fatal(err)
		}
		if string(r.Key) != tr.Device || r.Topic != telemetry.TopicRawTraps {
			t.Fatalf("key %q topic %q for %+v", r.Key, r.Topic, tr)
		}
		out = append(out, tr)
	}
	return out
}

func (h *harness) waitTraps(t *testing.T, n int) []telemetry.Trap {
	t.Helper()
	h.capture.WaitFor(5*time.Second, func(r []broker.Record) bool { return len(r) >= n })
	trs := h.traps(t)
	if len(trs) != n {
		t.Fatalf("got %d traps, want %d: %+v", len(trs), n, trs)
	}
	return trs
}

// waitOutcome waits for weir_trap_received_total{version, outcome} to
// reach want (drops are counted a moment after the sender returns), and
// fails if it is not exactly want.
func (h *harness) waitOutcome(t *testing.T, version, outcome string, want float64) {
	t.Helper()
	c := h.metrics.Received.WithLabelValues(version, outcome)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && testutil.ToFloat64(c) < want; {
		time.Sleep(10 * time.Millisecond)
	}
	if n := testutil.ToFloat64(c); n != want {
		t.Errorf("received{%s,%s} = %v, want %v", version, outcome, n, want)
	}
}

func vbByName(tr telemetry.Trap) map[string]telemetry.Varbind {
	out := map[string]telemetry.Varbind{}
	for _, v := range tr.Varbinds {
		out[v.Name] = v
	}
	return out
}

func TestNetSNMPTraps(t *testing.T) {
	snmptest.Require(t, "snmptrap", "snmpinform")
	logs := &syncbuf.Buffer{}
	h := start(t, Config{Communities: []string{"public"}, Users: []configs.SNMPv3{testUser},
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	run := func(args ...string) {
		t.Helper()
		snmptest.Run(t, h.dir, args[0], args[1:]...)
	}

	// v2c linkDown with the IF-MIB varbinds.
	run("snmptrap", "-v2c", "-c", "public", h.addr, "12345", "1.3.6.1.6.3.1.1.5.3",
		"1.3.6.1.2.1.2.2.1.1.3", "i", "3", "1.3.6.1.2.1.2.2.1.7.3", "i", "1", "1.3.6.1.2.1.2.2.1.8.3", "i", "2",
		"1.3.6.1.2.1.31.1.1.1.1.3", "s", "ge-0/0/3")
	tr := h.waitTraps(t, 1)[0]
	if tr.Version != "2c" || tr.TrapOID != "1.3.6.1.6.3.1.1.5.3" || tr.TrapName != "linkDown" || tr.Uptime != 12345 ||
		tr.Community != "public" || tr.Device != "127.0.0.1" || tr.Inform || !strings.HasPrefix(tr.SourceAddr, "127.0.0.1:") {
		t.Errorf("v2c trap: %+v", tr)
	}
	vb := vbByName(tr)
	if vb["ifOperStatus.3"].Value != float64(2) || vb["ifIndex.3"].Type != "integer" || vb["ifName.3"].Value != "ge-0/0/3" {
		t.Errorf("v2c varbinds: %+v", tr.Varbinds)
	}

	// v1 generic linkUp, converted to the v2 form (RFC 3584).
	run("snmptrap", "-v1", "-c", "public", h.addr, "1.3.6.1.4.1.8072.2.3", "192.0.2.7", "3", "0", "777",
		"1.3.6.1.2.1.2.2.1.1.5", "i", "5")
	tr = h.waitTraps(t, 2)[1]
	vb = vbByName(tr)
	if tr.Version != "1" || tr.TrapOID != "1.3.6.1.6.3.1.1.5.4" || tr.TrapName != "linkUp" || tr.Uptime != 777 ||
		vb["snmpTrapAddress.0"].Value != "192.0.2.7" || vb["snmpTrapEnterprise.0"].Value != "1.3.6.1.4.1.8072.2.3" ||
		vb["snmpTrapCommunity.0"].Value != "public" || vb["ifIndex.5"].Value != float64(5) {
		t.Errorf("v1 trap: %+v", tr)
	}
	// v1 enterprise-specific: enterprise.0.specific.
	run("snmptrap", "-v1", "-c", "public", h.addr, "1.3.6.1.2.1.15", "192.0.2.7", "6", "2", "",
		"1.3.6.1.2.1.15.3.1.7.10.0.0.1", "a", "10.0.0.1", "1.3.6.1.2.1.15.3.1.2.10.0.0.1", "i", "1")
	tr = h.waitTraps(t, 3)[2]
	vb = vbByName(tr)
	if tr.TrapOID != "1.3.6.1.2.1.15.0.2" || tr.TrapName != "bgpBackwardTransNotification" ||
		vb["bgpPeerRemoteAddr.10.0.0.1"].Value != "10.0.0.1" || vb["bgpPeerState.10.0.0.1"].Value != float64(1) {
		t.Errorf("v1 specific trap: %+v", tr)
	}

	// v3 authPriv from an engine of the sender's own.
	run("snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
		"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-e", "0x80001f8880aabbccdd", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	tr = h.waitTraps(t, 4)[3]
	if tr.Version != "3" || tr.User != snmptest.V3User || tr.TrapName != "coldStart" || tr.Community != "" ||
		tr.EngineID != "80001f8880aabbccdd" || tr.SecurityLevel != "authPriv" {
		t.Errorf("v3 trap: %+v", tr)
	}

	// A v2c inform: snmpinform exits 0 only once it is acknowledged.
	run("snmpinform", "-v2c", "-c", "public", "-t", "3", "-r", "0", h.addr, "", "1.3.6.1.2.1.15.0.1",
		"1.3.6.1.2.1.15.3.1.7.10.0.0.2", "a", "10.0.0.2")
	tr = h.waitTraps(t, 5)[4]
	if !tr.Inform || tr.TrapName != "bgpEstablishedNotification" {
		t.Errorf("inform: %+v", tr)
	}
	// A v3 authPriv inform: snmpinform first discovers weir's engine ID
	// (weir is the authoritative engine for informs), then sends.
	run("snmpinform", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
		"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-t", "3", "-r", "0", h.addr, "", "1.3.6.1.2.1.15.0.2",
		"1.3.6.1.2.1.15.3.1.7.10.0.0.3", "a", "10.0.0.3")
	tr = h.waitTraps(t, 6)[5]
	if !tr.Inform || tr.Version != "3" || tr.User != snmptest.V3User || tr.TrapName != "bgpBackwardTransNotification" ||
		tr.EngineID == "" || tr.EngineID == hex.EncodeToString([]byte(h.r.engineID)) || tr.SecurityLevel != "authPriv" {
		t.Errorf("v3 inform (the sender's engine ID, not weir's %x): %+v", h.r.engineID, tr)
	}
	// The ack counter moves just after the response is sent, which is
	// when snmpinform returns: wait for it.
	for deadline := time.Now().Add(5 * time.Second); testutil.ToFloat64(h.metrics.Acked) < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := testutil.ToFloat64(h.metrics.Acked); n != 2 {
		t.Errorf("informs acked %v", n)
	}

	// Unknown community and unknown user: counted, not published.
	run("snmptrap", "-v2c", "-c", "private", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	run("snmptrap", "-v3", "-l", "authPriv", "-u", "nobody", "-a", "SHA", "-A", "whatever123", "-x", "AES", "-X", "whatever123",
		"-e", "0x80001f8880aabbccdd", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	run("snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", "wrongpass123",
		"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-e", "0x80001f8880aabbccdd", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if testutil.ToFloat64(h.metrics.Received.WithLabelValues("2c", OutcomeUnknownCommunity)) == 1 &&
			testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeUnknownUser)) == 1 &&
			testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeAuthFailure)) == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []struct{ version, outcome string }{{"2c", OutcomeUnknownCommunity}, {"3", OutcomeUnknownUser}, {"3", OutcomeAuthFailure},
		{"2c", OutcomePublished}, {"1", OutcomePublished}, {"3", OutcomePublished}} {
		want := 1.0
		if c.outcome == OutcomePublished {
			want = 2
		}
		if got := testutil.ToFloat64(h.metrics.Received.WithLabelValues(c.version, c.outcome)); got != want {
			t.Errorf("received{%s,%s} = %v, want %v", c.version, c.outcome, got, want)
		}
	}
	// Each kind of drop is logged with its sender, to find the device.
	for _, outcome := range []string{OutcomeUnknownCommunity, OutcomeUnknownUser, OutcomeAuthFailure} {
		if !regexp.MustCompile(`msg="trap dropped" outcome=` + outcome + ` version=\S+ from=127\.0\.0\.1:\d+ times=1`).MatchString(logs.String()) {
			t.Errorf("no log line of the %s drop with its sender:\n%s", outcome, logs.String())
		}
	}
	if n := len(h.traps(t)); n != 6 {
		t.Errorf("%d traps published, want 6", n)
	}
}

// TestInformFromGoSNMP checks the inform acknowledgement with a second
// implementation of the protocol.
func TestInformFromGoSNMP(t *testing.T) {
	h := start(t, Config{})
	host, port, _ := net.SplitHostPort(h.addr)
	var p uint16
	for _, c := range port {
		p = p*10 + uint16(c-'0')
	}
	g := &gosnmp.GoSNMP{Target: host, Port: p, Version: gosnmp.Version2c, Community: "any", Timeout: 2 * time.Second, Retries: 0}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	_, err := g.SendTrap(gosnmp.SnmpTrap{IsInform: true, Variables: []gosnmp.SnmpPDU{
		{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
		{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.2"},
		{Name: ".1.3.6.1.4.1.99.1", Type: gosnmp.OctetString, Value: []byte{0, 1, 2}},
	}})
	if err != nil {
		t.Fatalf("inform not acknowledged: %v", err)
	}
	tr := h.waitTraps(t, 1)[0]
	if tr.TrapName != "warmStart" || tr.Uptime != 42 || !tr.Inform || tr.Varbinds[0].Value != "000102" || tr.Varbinds[0].Type != "octet_string_hex" {
		t.Errorf("%+v", tr)
	}
}

func TestNoUsersDropsV3(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	h := start(t, Config{})
	snmptest.Run(t, h.dir, "snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
		"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-e", "0x80001f8880aabbccdd", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeUnknownUser)) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeUnknownUser)) != 1 || len(h.capture.Records()) != 0 {
		t.Error("v3 trap without configured users was not dropped as unknown_user")
	}
}

func TestNames(t *testing.T) {
	n := NewNames(nil)
	for oid, want := range map[string]string{
		"1.3.6.1.2.1.2.2.1.8.12":          "ifOperStatus.12",
		"1.3.6.1.2.1.15.3.1.14.192.0.2.1": "bgpPeerLastError.192.0.2.1",
		"1.3.6.1.2.1.1.3.0":               "sysUpTime.0",
		"1.3.6.1.4.1.9.9.9":               "",
	} {
		if got := n.Object(oid); got != want {
			t.Errorf("%s: %q, want %q", oid, got, want)
		}
	}
}

func TestPeekVersion(t *testing.T) {
	for _, tc := range []struct {
		pkt  []byte
		want string
	}{
		{[]byte{0x30, 0x10, 0x02, 0x01, 0x01}, "2c"},
		{[]byte{0x30, 0x81, 0x90, 0x02, 0x01, 0x00}, "1"},
		{[]byte{0x30, 0x82, 0x01, 0x00, 0x02, 0x01, 0x03}, "3"},
		{[]byte{0x31}, "unknown"},
		{nil, "unknown"},
	} {
		if got := peekVersion(tc.pkt); got != tc.want {
			t.Errorf("% x: %s, want %s", tc.pkt, got, tc.want)
		}
	}
}

// TestUserPinnedToEngine accepts a v3 user's traps only from the engine
// its engine_id names.
func TestUserPinnedToEngine(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	pinned := testUser
	pinned.EngineID = "0x80001F8880AABBCCDD"
	h := start(t, Config{Users: []configs.SNMPv3{pinned}})
	send := func(engine string) {
		snmptest.Run(t, h.dir, "snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
			"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-e", engine, h.addr, "", "1.3.6.1.6.3.1.1.5.2")
	}
	send("0x80001f8880aabbccdd")
	send("0x80001f8880eeeeeeee")
	h.waitTraps(t, 1)
	h.waitOutcome(t, "3", OutcomeWrongEngine, 1)
}

// TestSecurityLevel: a v3 trap below its user's security_level is dropped
// and counted: gosnmp takes a message at the level its flags claim, so an
// authPriv user's trap sent unencrypted, or neither signed nor encrypted
// (which anyone who knows the user name can send), was published.
func TestSecurityLevel(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	strict := testUser
	strict.LevelGiven = true // security_level: authPriv in the config
	h := start(t, Config{Users: []configs.SNMPv3{strict}})
	send := func(args ...string) {
		args = append(append([]string{"-v3", "-u", snmptest.V3User, "-e", "0x80001f8880aabbccdd"}, args...), h.addr, "", "1.3.6.1.6.3.1.1.5.2")
		snmptest.Run(t, h.dir, "snmptrap", args...)
	}
	send("-l", "authNoPriv", "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass)
	h.waitOutcome(t, "3", OutcomeLowSecurityLevel, 1)
	// Neither signed nor encrypted: gosnmp refuses it for the user's
	// keys already.
	send("-l", "noAuthNoPriv")
	h.waitOutcome(t, "3", OutcomeAuthFailure, 1)
	send("-l", "authPriv", "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass, "-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass)
	h.waitTraps(t, 1)
	if n := len(h.traps(t)); n != 1 {
		t.Errorf("%d traps published, want the authPriv one", n)
	}

	// A user of authNoPriv takes authNoPriv traps; so does one whose
	// level came from its passwords (no security_level written), as
	// snmptrapd does by default: it asks for authentication only.
	authOnly := testUser
	authOnly.SecurityLevel, authOnly.PrivProtocol, authOnly.PrivPassword, authOnly.LevelGiven = "authNoPriv", "", "", true
	for _, u := range []configs.SNMPv3{authOnly, testUser} {
		h = start(t, Config{Users: []configs.SNMPv3{u}})
		send("-l", "authNoPriv", "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass)
		h.waitTraps(t, 1)
	}
}

// TestLevelOfTheSigningEntry: the level a trap needs is the level of the
// entry whose keys signed it: a user with an authPriv entry pinned to an
// engine and an authNoPriv one for any engine took an unencrypted trap
// signed with the authPriv entry's keys.
func TestLevelOfTheSigningEntry(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	strict := testUser
	strict.EngineID, strict.LevelGiven = "0x80001F8880AAAAAAAA", true
	loose := testUser
	loose.SecurityLevel, loose.AuthPassword, loose.PrivProtocol, loose.PrivPassword, loose.LevelGiven = "authNoPriv", "looseauthpass1", "", "", true
	h := start(t, Config{Users: []configs.SNMPv3{strict, loose}})
	send := func(auth string) {
		snmptest.Run(t, h.dir, "snmptrap", "-v3", "-l", "authNoPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", auth,
			"-e", "0x80001f8880aaaaaaaa", h.addr, "", "1.3.6.1.6.3.1.1.5.2")
	}
	send(snmptest.V3AuthPass) // the strict entry's keys, unencrypted
	h.waitOutcome(t, "3", OutcomeLowSecurityLevel, 1)
	send("looseauthpass1") // the loose entry's: taken
	h.waitTraps(t, 1)
}

// TestV1GenericTrapOutOfRange: RFC 1157 defines generic-trap 0 to 6; a v1
// trap with another is malformed, not published under a made-up OID.
func TestV1GenericTrapOutOfRange(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	h := start(t, Config{})
	snmptest.Run(t, h.dir, "snmptrap", "-v1", "-c", "public", h.addr, "1.3.6.1.4.1.8072.2.3", "192.0.2.7", "9", "0", "")
	snmptest.Run(t, h.dir, "snmptrap", "-v1", "-c", "public", h.addr, "1.3.6.1.4.1.8072.2.3", "192.0.2.7", "6", "17", "")
	h.waitTraps(t, 1)
	h.waitOutcome(t, "1", OutcomeMalformed, 1)
	if trs := h.traps(t); len(trs) != 1 || trs[0].TrapOID != "1.3.6.1.4.1.8072.2.3.0.17" {
		t.Errorf("published %+v, want the enterprise-specific trap 17 only", trs)
	}
}

// TestUserPerEngine: one user name with an entry per sender engine, each
// with its own keys (as each sender localizes them): each sender's traps
// are taken, a third engine's are not.
func TestUserPerEngine(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	a, b := testUser, testUser
	a.EngineID = "0x80001F8880AAAAAAAA"
	b.EngineID, b.AuthPassword, b.PrivPassword = "0x80001F8880BBBBBBBB", "otherauthpass1", "otherprivpass1"
	h := start(t, Config{Users: []configs.SNMPv3{a, b}})
	send := func(engine, auth, priv string) {
		snmptest.Run(t, h.dir, "snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", auth,
			"-x", snmptest.V3PrivProto, "-X", priv, "-e", engine, h.addr, "", "1.3.6.1.6.3.1.1.5.2")
	}
	send("0x80001f8880aaaaaaaa", snmptest.V3AuthPass, snmptest.V3PrivPass)
	send("0x80001f8880bbbbbbbb", "otherauthpass1", "otherprivpass1")
	send("0x80001f8880cccccccc", snmptest.V3AuthPass, snmptest.V3PrivPass)
	// B's keys, claiming to be A: the keys of A's entry must sign it.
	send("0x80001f8880aaaaaaaa", "otherauthpass1", "otherprivpass1")
	h.waitTraps(t, 2)
	h.waitOutcome(t, "3", OutcomeWrongEngine, 1)
	h.waitOutcome(t, "3", OutcomeAuthFailure, 1)
	if n := len(h.traps(t)); n != 2 {
		t.Errorf("%d traps published, want one of each configured engine", n)
	}
}

// TestUserPinnedToEngineInform acknowledges an inform from a pinned user
// when its contextEngineID is the pinned engine (its authoritative engine
// is weir's own), and refuses one naming another engine.
func TestUserPinnedToEngineInform(t *testing.T) {
	snmptest.Require(t, "snmpinform")
	pinned := testUser
	pinned.EngineID = "0x80001F8880AABBCCDD"
	h := start(t, Config{Users: []configs.SNMPv3{pinned}})
	inform := func(engine string) error {
		cmd := exec.Command("snmpinform", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
			"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-E", engine, "-t", "2", "-r", "0", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
		cmd.Env = snmptest.Env(h.dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	if err := inform("0x80001f8880aabbccdd"); err != nil {
		t.Errorf("inform from the pinned engine not acknowledged: %v; wrong_engine=%v", err,
			testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeWrongEngine)))
	}
	if tr := h.waitTraps(t, 1)[0]; !tr.Inform || tr.User != snmptest.V3User || tr.TrapName != "coldStart" {
		t.Errorf("pinned inform: %+v", tr)
	}
	if err := inform("0x80001f8880eeeeeeee"); err == nil {
		t.Error("inform from another engine acknowledged")
	}
	if n := testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeWrongEngine)); n != 1 {
		t.Errorf("wrong_engine counted %v, want 1", n)
	}
	if n := len(h.capture.Records()); n != 1 {
		t.Errorf("%d traps published, want 1", n)
	}
}

// TestV3TimeWindow: authenticated v3 traps are checked against their
// sender's engine clock (RFC 3414 section 3.2, step 7), as Net-SNMP's
// snmptrap sets it with -Z boots,time: a replay more than 150 s older than
// the clock, or from before a reboot (fewer boots), is counted as
// not_in_time_window and not published; a later one, a reboot, and a
// message within the window pass.
func TestV3TimeWindow(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	h := start(t, Config{Users: []configs.SNMPv3{testUser}})
	send := func(engine, clock string) {
		snmptest.Run(t, h.dir, "snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
			"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-e", engine, "-Z", clock, h.addr, "", "1.3.6.1.6.3.1.1.5.3")
	}
	refused := func() float64 {
		return testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeNotInTimeWindow))
	}
	const a, b = "0x80001f8880aabbcc01", "0x80001f8880aabbcc02"
	send(a, "5,10000")
	h.waitTraps(t, 1)
	for i, clock := range []string{"5,9000", "4,20000"} { // replayed; from before a reboot
		send(a, clock)
		waitCount(t, "a stale trap refused", func() bool { return refused() == float64(i+1) })
	}
	send(a, "5,9900") // within 150 s of the clock
	send(b, "1,5")    // another engine has its own clock
	send(a, "6,1")    // rebooted
	h.waitTraps(t, 4)
	send(a, "5,10001") // before the reboot now
	waitCount(t, "a trap from before the reboot refused", func() bool { return refused() == 3 })
	if n := len(h.capture.Records()); n != 4 {
		t.Errorf("%d traps published, want 4", n)
	}
}

// TestV3InformTimeWindow: an authenticated inform whose time is far from
// weir's engine clock gets a signed usmStatsNotInTimeWindows Report, is
// counted, and is not published; Net-SNMP's snmpinform learns the clock
// from the Report and sends it again, which is acknowledged and published.
func TestV3InformTimeWindow(t *testing.T) {
	snmptest.Require(t, "snmpinform")
	h := start(t, Config{Users: []configs.SNMPv3{testUser}})
	engine := "0x" + hex.EncodeToString([]byte(h.r.engineID))
	cmd := exec.Command("snmpinform", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
		"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-e", engine, "-Z", "1,100000", "-t", "2", "-r", "1", h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	cmd.Env = snmptest.Env(h.dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("inform not acknowledged after the time report: %v: %s", err, out)
	}
	if n := testutil.ToFloat64(h.metrics.Received.WithLabelValues("3", OutcomeNotInTimeWindow)); n != 1 {
		t.Errorf("not_in_time_window counted %v, want 1", n)
	}
	if tr := h.waitTraps(t, 1); len(tr) != 1 || !tr[0].Inform {
		t.Errorf("informs published: %+v", tr)
	}
}

func waitCount(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestRoutingTrapsNamed: OSPF-TRAP-MIB's, CISCO-BGP4-MIB's, Junos's
// BGP4-V2-MIB-JUNIPER's and EOS's ARISTA-BGP4V2-MIB's neighbor
// notifications, sent by Net-SNMP's snmptrap as routers send them, are
// named with the columns enrichment reads their state and peer from.
func TestRoutingTrapsNamed(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	h := start(t, Config{})
	snmptest.Run(t, h.dir, "snmptrap", "-v2c", "-c", "public", h.addr, "", "1.3.6.1.2.1.14.16.2.2",
		"1.3.6.1.2.1.14.1.1.0", "a", "1.1.1.1", "1.3.6.1.2.1.14.10.1.1.10.8.8.8.0", "a", "10.8.8.8",
		"1.3.6.1.2.1.14.10.1.6.10.8.8.8.0", "i", "1")
	snmptest.Run(t, h.dir, "snmptrap", "-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.9.9.187.0.8",
		"1.3.6.1.4.1.9.9.187.1.2.5.1.3.2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1", "i", "1",
		"1.3.6.1.4.1.9.9.187.1.2.5.1.29.2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1", "i", "6")
	const jnx = "0.2.32.1.13.136.0.1.0.0.0.0.0.0.0.0.0.1.2.32.1.13.136.0.1.0.0.0.0.0.0.0.0.0.2"
	snmptest.Run(t, h.dir, "snmptrap", "-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.2636.5.1.1.1.0.2",
		"1.3.6.1.4.1.2636.5.1.1.2.1.1.1.11."+jnx, "x", "20010D88000100000000000000000002",
		"1.3.6.1.4.1.2636.5.1.1.2.1.1.1.2."+jnx, "i", "1")
	snmptest.Run(t, h.dir, "snmptrap", "-v2c", "-c", "public", h.addr, "", "1.3.6.1.4.1.30065.4.1.0.1",
		"1.3.6.1.4.1.30065.4.1.1.2.1.13.1.1.4.10.9.9.9", "i", "6")
	trs := h.waitTraps(t, 4)
	if vb := vbByName(trs[2]); trs[2].TrapName != "jnxBgpM2BackwardTransition" || vb["jnxBgpM2PeerState."+jnx].Value != float64(1) ||
		vb["jnxBgpM2PeerRemoteAddr."+jnx].Value != "20010d88000100000000000000000002" {
		t.Errorf("jnxBgpM2BackwardTransition: %+v", trs[2])
	}
	if vb := vbByName(trs[3]); trs[3].TrapName != "aristaBgp4V2EstablishedNotification" || vb["aristaBgp4V2PeerState.1.1.4.10.9.9.9"].Value != float64(6) {
		t.Errorf("aristaBgp4V2EstablishedNotification: %+v", trs[3])
	}
	vb := vbByName(trs[0])
	if trs[0].TrapName != "ospfNbrStateChange" || vb["ospfNbrState.10.8.8.8.0"].Value != float64(1) || vb["ospfNbrIpAddr.10.8.8.8.0"].Value != "10.8.8.8" {
		t.Errorf("ospfNbrStateChange: %+v", trs[0])
	}
	vb = vbByName(trs[1])
	const v6 = "2.16.32.1.13.184.0.0.0.0.0.0.0.0.0.0.0.1"
	if trs[1].TrapName != "cbgpPeer2BackwardTransition" || vb["cbgpPeer2State."+v6].Value != float64(1) || vb["cbgpPeer2PrevState."+v6].Value != float64(6) {
		t.Errorf("cbgpPeer2BackwardTransition: %+v", trs[1])
	}
}

// TestV1OSPFTrapsNamed: a router sending v1 traps sends OSPF-TRAP-MIB's
// notifications with enterprise ospfTraps, which RFC 3584 converts to
// ospfTraps.0.N; they are named as their v2 forms, or enrichment raises
// no ospf_neighbor event from them.
func TestV1OSPFTrapsNamed(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	h := start(t, Config{})
	for _, specific := range []string{"2", "1", "16"} {
		snmptest.Run(t, h.dir, "snmptrap", "-v1", "-c", "public", h.addr, "1.3.6.1.2.1.14.16.2", "192.0.2.7", "6", specific, "",
			"1.3.6.1.2.1.14.10.1.6.10.8.8.8.0", "i", "1")
	}
	trs := h.waitTraps(t, 3)
	for i, want := range []string{"ospfNbrStateChange", "ospfVirtIfStateChange", "ospfIfStateChange"} {
		if trs[i].TrapName != want {
			t.Errorf("v1 trap %s: named %q, want %q", trs[i].TrapOID, trs[i].TrapName, want)
		}
	}
}

// TestSetAccess: the communities and users a reloaded config gives apply
// to the datagrams read from then on, without a restart (which loses the
// traps sent meanwhile); a user list that does not build changes nothing.
func TestSetAccess(t *testing.T) {
	snmptest.Require(t, "snmptrap")
	h := start(t, Config{Communities: []string{"old"}})
	v2c := func(community string) {
		snmptest.Run(t, h.dir, "snmptrap", "-v2c", "-c", community, h.addr, "", "1.3.6.1.6.3.1.1.5.1")
	}
	v3 := func() {
		snmptest.Run(t, h.dir, "snmptrap", "-v3", "-l", "authPriv", "-u", snmptest.V3User, "-a", snmptest.V3AuthProto, "-A", snmptest.V3AuthPass,
			"-x", snmptest.V3PrivProto, "-X", snmptest.V3PrivPass, "-e", "0x80001f8880aabbccdd", h.addr, "", "1.3.6.1.6.3.1.1.5.2")
	}
	v2c("new")
	v3()
	h.waitOutcome(t, "2c", OutcomeUnknownCommunity, 1)
	h.waitOutcome(t, "3", OutcomeUnknownUser, 1)

	if err := h.r.SetAccess([]string{"new"}, []configs.SNMPv3{testUser}); err != nil {
		t.Fatal(err)
	}
	v2c("new")
	v3()
	v2c("old")
	h.waitTraps(t, 2)
	h.waitOutcome(t, "2c", OutcomeUnknownCommunity, 2)

	bad := testUser
	bad.AuthProtocol = "SHA9"
	if err := h.r.SetAccess(nil, []configs.SNMPv3{bad}); err == nil {
		t.Fatal("a user with an unknown auth protocol was taken")
	}
	v2c("old")
	h.waitOutcome(t, "2c", OutcomeUnknownCommunity, 3)
}
