package snmp

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestOutOfRangeValuesLeftOut: an agent that encodes a Counter32 in more
// octets than 32 bits need (here 0x01_00000005) was published as the
// counter 4294967301, which no Counter32 can be: enrichment's 32-bit wrap
// handling then computes nonsense. Net-SNMP's decoder refuses such a
// value; weir leaves it out of the record, counts it by column and
// reason, and logs it, as it does a value of the wrong type.
func TestOutOfRangeValuesLeftOut(t *testing.T) {
	addr := rawAgent(t)
	metrics, _ := NewMetrics(nil)
	capture := snmptest.NewCapture()
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("a", addr, func(tc *configs.SNMPTarget) {
			tc.Profiles = configs.SNMPProfiles{Names: []string{"t1"}}
		})},
		Profiles: oneColumnProfile(t), Broker: capture, Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PollOnce(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, m := range decode(t, capture.Records()) {
		if m.Measurement == "tbl" {
			got[m.Tags["idx"]] = m.Fields["c"]
		}
	}
	if got["1"] != float64(1) || got["2"] != nil {
		t.Errorf("values published %v, want row 1's and none for row 2", got)
	}
	if n := testutil.ToFloat64(metrics.InvalidValues.WithLabelValues("a", "c", InvalidOutOfRange)); n != 1 {
		t.Errorf("out-of-range values counted %v, want 1", n)
	}
}

// rawAgent answers GETs with sysUpTime and a GETBULK of testColumn with
// row 1 a good Counter32 and row 2 one of 5 octets, written on the wire
// (gosnmp would not encode it).
func rawAgent(t *testing.T) string {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			req, err := (&gosnmp.GoSNMP{}).SnmpDecodePacket(buf[:n])
			if err != nil {
				continue
			}
			resp := &gosnmp.SnmpPacket{Version: req.Version, Community: req.Community, PDUType: gosnmp.GetResponse, RequestID: req.RequestID}
			placeholder := []byte("\x01\x00\x00\x00\x05")
			switch name := strings.TrimPrefix(req.Variables[0].Name, "."); {
			case req.PDUType == gosnmp.GetRequest:
				for _, v := range req.Variables {
					resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.TimeTicks, Value: uint32(1234)})
				}
			case name == testColumn:
				resp.Variables = []gosnmp.SnmpPDU{
					{Name: "." + testColumn + ".1", Type: gosnmp.Counter32, Value: uint(1)},
					{Name: "." + testColumn + ".2", Type: gosnmp.OctetString, Value: placeholder},
				}
			default:
				from, _ := strconv.Atoi(strings.TrimPrefix(name, testColumn+"."))
				resp.Variables = []gosnmp.SnmpPDU{{Name: fmt.Sprintf(".%s.%d", testColumn, from), Type: gosnmp.EndOfMibView}}
			}
			b, err := resp.MarshalMsg()
			if err != nil {
				panic(err)
			}
			if i := bytes.Index(b, append([]byte{0x04, 5}, placeholder...)); i >= 0 {
				b[i] = byte(gosnmp.Counter32)
			}
			_, _ = conn.WriteTo(b, from)
		}
	}()
	return conn.LocalAddr().String()
}
