package trap

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// forgedV3Trap is a v3 trap for user, signed with a password that is not
// its own, from engine ID number i: what anyone who saw the user name on
// the wire (it travels in clear) can send.
func forgedV3Trap(t testing.TB, user string, i uint64) []byte {
	t.Helper()
	eid := []byte{0x80, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(eid[5:], i)
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: gosnmp.AuthNoPriv, SecurityModel: gosnmp.UserSecurityModel,
		SecurityParameters: &gosnmp.UsmSecurityParameters{UserName: user, AuthoritativeEngineID: string(eid),
			AuthoritativeEngineBoots: 1, AuthoritativeEngineTime: 1,
			AuthenticationProtocol: gosnmp.SHA256, AuthenticationPassphrase: "not-the-password", PrivacyProtocol: gosnmp.NoPriv},
		PDUType: gosnmp.SNMPv2Trap, Variables: []gosnmp.SnmpPDU{
			{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(42)},
			{Name: ".1.3.6.1.6.3.1.1.4.1.0", Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1.6.3.1.1.5.3"}}}
	if err := p.SecurityParameters.InitSecurityKeys(); err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForgedV3TrapsCheap: a v3 trap that does not authenticate costs the
// read loop microseconds whatever engine ID it names. gosnmp derives a
// user's privacy key for every new engine ID before it checks the digest,
// and for AES (and AES192C, AES256C: Reeder's key extension) that is a
// password-to-key over 1 MB, some milliseconds, kept in a cache that never
// shrinks: a few hundred forged datagrams a second, from anyone who saw a
// user name, took the whole read loop (genuine traps were dropped by the
// kernel) and grew the memory without bound.
func TestForgedV3TrapsCheap(t *testing.T) {
	for _, priv := range []string{"AES", "AES256C"} {
		t.Run(priv, func(t *testing.T) {
			u := testUser
			u.PrivProtocol = priv
			r, err := New(Config{Broker: snmptest.NewCapture(), Users: []configs.SNMPv3{u}})
			if err != nil {
				t.Fatal(err)
			}
			withoutDecoder(r)
			from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
			const n = 100
			pkts := make([][]byte, n)
			base := uint64(time.Now().UnixNano()) // engine IDs gosnmp's process-wide cache has not seen
			for i := range pkts {
				pkts[i] = forgedV3Trap(t, u.User, base+uint64(i))
			}
			for _, p := range pkts {
				// Refused before gosnmp reads it: gosnmp would derive the
				// key for the new engine ID (BenchmarkForgedV3Trap gives
				// what the refusal costs).
				if outcome := r.access.Load().preAuthenticate(p); outcome != OutcomeAuthFailure {
					t.Fatalf("forged trap: pre-check outcome %q, want %s: left to gosnmp's key derivation", outcome, OutcomeAuthFailure)
				}
				if _, _, outcome := r.decode(p, from, time.Now()); outcome != OutcomeAuthFailure || r.decodePanics.Load() > 0 {
					t.Fatalf("forged trap: outcome %q, want %s, and gosnmp's decoder reached %d times", outcome, OutcomeAuthFailure, r.decodePanics.Load())
				}
			}
		})
	}
}

// berElems splits b into its TLV elements, whole (tag, length and
// contents), for the tests to rebuild a message from.
func berElems(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		_, _, rest, ok := berAny(b)
		if !ok {
			t.Fatalf("not BER: %x", b)
		}
		out = append(out, b[:len(b)-len(rest)])
		b = rest
	}
	return out
}

// berContents is the contents of the one element e.
func berContents(t *testing.T, e []byte) []byte {
	t.Helper()
	_, c, _, ok := berAny(e)
	if !ok {
		t.Fatalf("not BER: %x", e)
	}
	return c
}

// berWrap is an element of tag holding parts, its length in lenOctets
// octets of long form (0: the shortest form).
func berWrap(tag byte, lenOctets int, parts ...[]byte) []byte {
	var c []byte
	for _, p := range parts {
		c = append(c, p...)
	}
	out := []byte{tag}
	switch {
	case lenOctets > 0:
		out = append(out, 0x80|byte(lenOctets))
		l := make([]byte, lenOctets)
		for i, n := lenOctets-1, len(c); i >= 0; i, n = i-1, n>>8 {
			l[i] = byte(n)
		}
		out = append(out, l...)
	case len(c) < 0x80:
		out = append(out, byte(len(c)))
	case len(c) < 0x100:
		out = append(out, 0x81, byte(len(c)))
	default:
		out = append(out, 0x82, byte(len(c)>>8), byte(len(c)))
	}
	return append(out, c...)
}

// TestForgedV3TrapsCheapWhateverTheirEncoding: a forged v3 trap whose
// header weir's own reading does not take, but gosnmp's lenient one does,
// is refused as cheaply as a well-formed one. The pre-check found the
// user by a strict reading of the header and left any message it could
// not read to gosnmp: a msgID with its top bit set, a version or a
// message length in a longer form than needed, or msgGlobalData declared
// long enough to hide the real security parameters behind a decoy with an
// unknown user name all got a forged trap the megabyte hash of a new
// engine ID again, milliseconds of the read loop each.
func TestForgedV3TrapsCheapWhateverTheirEncoding(t *testing.T) {
	u := testUser
	r, err := New(Config{Broker: snmptest.NewCapture(), Users: []configs.SNMPv3{u}})
	if err != nil {
		t.Fatal(err)
	}
	withoutDecoder(r)
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	base := uint64(time.Now().UnixNano())
	var next uint64
	mutations := []struct {
		name   string
		mutate func(version, global, secParams, data []byte) []byte
	}{
		{"msgID with its top bit set", func(version, global, secParams, data []byte) []byte {
			g := berElems(t, berContents(t, global))
			id := append([]byte(nil), g[0]...)
			id[2] |= 0x80
			return berWrap(0x30, 0, version, berWrap(0x30, 0, id, g[1], g[2], g[3]), secParams, data)
		}},
		{"version in two octets", func(_, global, secParams, data []byte) []byte {
			return berWrap(0x30, 0, []byte{0x02, 0x02, 0x00, 0x03}, global, secParams, data)
		}},
		{"message length in five octets", func(version, global, secParams, data []byte) []byte {
			return berWrap(0x30, 5, version, global, secParams, data)
		}},
		{"security parameters hidden in msgGlobalData", func(version, global, secParams, data []byte) []byte {
			g := berElems(t, berContents(t, global))
			usm := berElems(t, berContents(t, berContents(t, secParams)))
			usm[3] = berWrap(0x04, 0, []byte("nobody"))
			decoy := berWrap(0x04, 0, berWrap(0x30, 0, usm...))
			return berWrap(0x30, 0, version, berWrap(0x30, 0, g[0], g[1], g[2], g[3], secParams), decoy, data)
		}},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			const n = 20
			pkts := make([][]byte, n)
			for i := range pkts {
				next++
				e := berElems(t, berContents(t, forgedV3Trap(t, u.User, base+next)))
				pkts[i] = m.mutate(e[0], e[1], e[2], e[3])
			}
			for _, p := range pkts {
				if outcome := r.access.Load().preAuthenticate(p); outcome == "" {
					t.Fatal("forged trap left to gosnmp's key derivation for its new engine ID")
				}
				if _, _, outcome := r.decode(p, from, time.Now()); outcome == OutcomePublished || outcome == "" || r.decodePanics.Load() > 0 {
					t.Fatalf("forged trap: outcome %q, and gosnmp's decoder reached %d times", outcome, r.decodePanics.Load())
				}
			}
		})
	}
}

// withoutDecoder takes r's gosnmp decoder away, so that decode of a
// datagram that reaches it panics, which r.decodePanics counts: the
// forged-trap tests check that decode refuses them before, not only that
// preAuthenticate would (decode without it took seconds, and passed).
func withoutDecoder(r *Receiver) {
	r.access.Load().dec = nil
}

// BenchmarkForgedV3Trap is what refusing a forged v3 trap from an engine
// ID never seen before costs the read loop: an HMAC, not the megabyte
// hash gosnmp's key derivation would take (milliseconds).
func BenchmarkForgedV3Trap(b *testing.B) {
	u := testUser
	u.PrivProtocol = "AES"
	r, err := New(Config{Broker: snmptest.NewCapture(), Users: []configs.SNMPv3{u}})
	if err != nil {
		b.Fatal(err)
	}
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}
	pkts := make([][]byte, 1024)
	base := uint64(time.Now().UnixNano())
	for i := range pkts {
		pkts[i] = forgedV3Trap(b, u.User, base+uint64(i))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, _, outcome := r.decode(pkts[i%len(pkts)], from, time.Now()); outcome != OutcomeAuthFailure {
			b.Fatalf("outcome %q", outcome)
		}
	}
}
