package snmp

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// strayRelay relays datagrams between its clients and upstream, and sends
// a client, before each answer, the datagrams stray(answer) returns: from
// the address the client polls, or, with otherHost, from another socket
// (a host that is not the agent, which only an unconnected socket hears).
func strayRelay(t *testing.T, upstream string, otherHost bool, stray func(answer []byte) [][]byte) string {
	t.Helper()
	var other net.PacketConn
	if otherHost {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		other = c
	}
	return udpRelay(t, upstream, nil, func(ln net.PacketConn, answer []byte, client net.Addr) {
		from := ln
		if other != nil {
			from = other
		}
		for _, d := range stray(append([]byte(nil), answer...)) {
			from.WriteTo(d, client)
		}
	})
}

// otherMsgID is the SNMPv3 message m with another msgID, as sent: its
// digest no longer matches.
func otherMsgID(t *testing.T, m []byte) []byte {
	t.Helper()
	m = append([]byte(nil), m...)
	msg, _, _ := berTLV(m, 0x30)
	_, msg, _ = berTLV(msg, 0x02)
	global, _, _ := berTLV(msg, 0x30)
	id, _, ok := berTLV(global, 0x02)
	if !ok {
		t.Fatalf("not an SNMPv3 message: % x", m)
	}
	id[len(id)-1] ^= 1 // m's own bytes
	return m
}

// TestStrayDatagramBeforeTheAnswer: a datagram that is not an SNMP
// message, or not the answer, reaching the poller's socket before the
// agent's answer (a broken middlebox, another program, or with
// use_unconnected_udp_socket any host at all) made gosnmp send the
// request again (it stops at the first datagram it cannot decode, and an
// SNMPv3 one that fails authentication): a retry, or with retries 0 a
// failed poll of a healthy agent. They are dropped and counted, and the
// read goes on; against snmpd, for each version, with retries 0.
func TestStrayDatagramBeforeTheAnswer(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	garbage := func(answer []byte) [][]byte {
		return [][]byte{[]byte("not snmp at all"), answer[:len(answer)/2], {0x30, 0x80, 0x02, 0x01, 0x01, 0, 0}}
	}
	for _, c := range []struct {
		name      string
		version   string
		otherHost bool
		stray     func(answer []byte) [][]byte
		reason    string
	}{
		{"v1", "1", false, garbage, DropMalformed},
		{"v2c", "2c", false, garbage, DropMalformed},
		{"v3", "3", false, garbage, DropMalformed},
		{"v3 another msgID", "3", false, func(answer []byte) [][]byte { return [][]byte{otherMsgID(t, answer)} }, DropMsgID},
		{"v2c from another host, unconnected", "2c", true, garbage, DropMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			relay := strayRelay(t, agent.Addr, c.otherHost, c.stray)
			metrics, _ := NewMetrics(nil)
			capture := snmptest.NewCapture()
			p, err := New(Config{
				Targets: []configs.SNMPTarget{testTarget("s", relay, func(tc *configs.SNMPTarget) {
					tc.Version = c.version
					if c.version == "3" {
						v3(snmptest.V3User, snmptest.V3AuthPass, snmptest.V3PrivPass)(tc)
					}
					tc.UnconnectedUDP = c.otherHost
					tc.Retries = 0
					tc.Profiles.Names = []string{"system", "if-mib"}
				})},
				Profiles: loadProfiles(t), Broker: capture, Metrics: metrics,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.PollOnce(context.Background(), "s"); err != nil {
				t.Fatalf("poll of a healthy agent with stray datagrams before its answers: %v", err)
			}
			if n := testutil.ToFloat64(metrics.DroppedDatagrams.WithLabelValues("s", c.reason)); n < 2 {
				t.Errorf("dropped %v datagrams as %s, want one or more per request", n, c.reason)
			}
			if n := testutil.ToFloat64(metrics.Retries.WithLabelValues("s")); n != 0 {
				t.Errorf("%v retries, want 0", n)
			}
			rows := 0
			for _, m := range decode(t, capture.Records()) {
				if m.Measurement == "snmp_interface" {
					rows++
				}
			}
			if rows == 0 {
				t.Error("no interface rows published")
			}
		})
	}
}

// TestRequestIDZeroIsNoAnswer: gosnmp takes a message with request ID 0
// for the answer to whatever request it waits on. A datagram with ID 0
// before the agent's answer (spoofed, or a broken agent's) was published
// as the device's values; an SNMPv1 Trap (which has no request ID, so 0
// to gosnmp) sent to the poller's port failed the poll. Both are dropped
// and counted, and the agent's answer is taken.
func TestRequestIDZeroIsNoAnswer(t *testing.T) {
	upstream := fakeAgent(t, func(req *gosnmp.SnmpPacket) *gosnmp.SnmpPacket {
		resp := &gosnmp.SnmpPacket{}
		for _, v := range req.Variables {
			resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.TimeTicks, Value: uint32(1234)})
		}
		return resp
	})
	spoof := func(t *testing.T) func(answer []byte) [][]byte {
		return func(answer []byte) [][]byte {
			p, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(answer)
			if err != nil {
				t.Errorf("decode the agent's answer: %v", err)
				return nil
			}
			p.RequestID = 0
			for i := range p.Variables {
				p.Variables[i].Value = uint32(999)
			}
			b, err := p.MarshalMsg()
			if err != nil {
				t.Errorf("marshal: %v", err)
			}
			return [][]byte{b}
		}
	}
	trap := func(t *testing.T) func([]byte) [][]byte {
		return func([]byte) [][]byte {
			b, err := (&gosnmp.SnmpPacket{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.Trap,
				SnmpTrap: gosnmp.SnmpTrap{Enterprise: ".1.3.6.1.4.1.9999", AgentAddress: "127.0.0.1", GenericTrap: 6, SpecificTrap: 1, Timestamp: 999,
					Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(999)}}},
			}).MarshalMsg()
			if err != nil {
				t.Errorf("marshal: %v", err)
			}
			return [][]byte{b}
		}
	}
	for _, c := range []struct {
		name      string
		version   string
		otherHost bool
		stray     func(*testing.T) func([]byte) [][]byte
	}{
		{"v2c", "2c", false, spoof},
		{"v1", "1", false, spoof},
		{"v2c from another host, unconnected", "2c", true, spoof},
		{"v1 trap", "1", false, trap},
	} {
		t.Run(c.name, func(t *testing.T) {
			relay := strayRelay(t, upstream, c.otherHost, c.stray(t))
			metrics, _ := NewMetrics(nil)
			capture := snmptest.NewCapture()
			p, err := New(Config{
				Targets: []configs.SNMPTarget{testTarget("z", relay, func(tc *configs.SNMPTarget) {
					tc.Version = c.version
					tc.UnconnectedUDP = c.otherHost
					tc.Retries = 0
					tc.Timeout = 2 * time.Second
					tc.Profiles.Names = []string{"system"}
				})},
				Profiles: loadProfiles(t), Broker: capture, Metrics: metrics,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.PollOnce(context.Background(), "z"); err != nil {
				t.Fatalf("poll: %v", err)
			}
			for _, m := range decode(t, capture.Records()) {
				if m.Uptime != 1234 {
					t.Errorf("%s record with uptime %d: the ID-0 datagram was taken for the answer", m.Measurement, m.Uptime)
				}
			}
			if n := testutil.ToFloat64(metrics.DroppedDatagrams.WithLabelValues("z", DropRequestID)); n < 1 {
				t.Errorf("dropped %v datagrams as %s, want 1 or more", n, DropRequestID)
			}
		})
	}
}

// TestFilterConnPassesWhatGosnmpSends: the header check reads every kind
// of message gosnmp sends and agents answer (each version, SNMPv3 with
// and without privacy, long-form lengths), and what it reads is the ID
// gosnmp matches by.
func TestFilterConnPassesWhatGosnmpSends(t *testing.T) {
	long := make([]gosnmp.SnmpPDU, 40) // over 255 octets: 0x82 lengths
	for i := range long {
		long[i] = gosnmp.SnmpPDU{Name: ".1.3.6.1.2.1.2.2.1.2.1", Type: gosnmp.OctetString, Value: []byte(strings.Repeat("x", 20))}
	}
	for _, c := range []struct {
		name string
		p    *gosnmp.SnmpPacket
		id   int64
	}{
		{"v1", &gosnmp.SnmpPacket{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.GetResponse, RequestID: 77}, 77},
		{"v2c long", &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetResponse, RequestID: 0x7fffffff, Variables: long}, 0x7fffffff},
		{"v2c getbulk", &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetBulkRequest, RequestID: 128, MaxRepetitions: 10,
			Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6", Type: gosnmp.Null}}}, 128},
	} {
		b, err := c.p.MarshalMsg()
		if err != nil {
			t.Fatal(err)
		}
		h, ok := parseHeader(b)
		if !ok || !h.hasID || h.requestID != c.id {
			t.Errorf("%s: header %+v, ok %v; want request ID %d", c.name, h, ok, c.id)
		}
		if _, ok := parseHeader(b[:len(b)-1]); ok {
			t.Errorf("%s: a truncated message passed", c.name)
		}
		if _, ok := parseHeader(append(b, 0)); ok {
			t.Errorf("%s: a message with a trailing octet passed", c.name)
		}
	}
}

// FuzzParseHeader: the header check never panics on what a socket
// brings, and it reads every SNMPv1/v2c message gosnmp encodes (what
// agents send, by their encoders), with its request ID: it drops nothing
// gosnmp would take but ID 0.
func FuzzParseHeader(f *testing.F) {
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01}, uint8(1), "public", uint32(77), uint8(0xa2), "ok")
	f.Add([]byte("not snmp"), uint8(0), "", uint32(0x7fffffff), uint8(0xa8), "")
	f.Fuzz(func(t *testing.T, b []byte, version uint8, community string, id uint32, pdu uint8, value string) {
		parseHeader(b) // gosnmp decodes more than answers are (any field where the community goes): not compared
		if len(community) > 127 {
			return // gosnmp writes its length in one octet, wrong past 127: not a message
		}
		p := &gosnmp.SnmpPacket{Version: gosnmp.SnmpVersion(version % 2), Community: community, RequestID: id & 0x7fffffff,
			PDUType: gosnmp.PDUType(0xa0 + pdu%9), MaxRepetitions: 10,
			Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.1.5.0", Type: gosnmp.OctetString, Value: []byte(value)}}}
		if p.PDUType == gosnmp.Trap {
			p.PDUType = gosnmp.GetResponse
		}
		m, err := p.MarshalMsg()
		if err != nil {
			return
		}
		h, ok := parseHeader(m)
		if !ok || !h.hasID || h.version != int64(p.Version) || h.requestID != int64(p.RequestID) {
			t.Fatalf("%+v: header %+v, ok %v, of % x", p, h, ok, m)
		}
	})
}
