package snmp

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// lossyRelay relays UDP datagrams between its clients and upstream (one
// upstream socket per client), dropping the client datagrams whose
// 1-based sequence numbers drop says: packet loss on some PDUs only.
func lossyRelay(t *testing.T, upstream string, drop func(n int64) bool) string {
	t.Helper()
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	up, err := net.ResolveUDPAddr("udp", upstream)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	conns := map[string]*net.UDPConn{}
	var seq atomic.Int64
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := ln.ReadFrom(buf)
			if err != nil {
				return
			}
			if drop(seq.Add(1)) {
				continue
			}
			mu.Lock()
			c := conns[from.String()]
			if c == nil {
				c, err = net.DialUDP("udp", nil, up)
				if err != nil {
					mu.Unlock()
					continue
				}
				conns[from.String()] = c
				t.Cleanup(func() { c.Close() })
				go func(c *net.UDPConn, client net.Addr) {
					b := make([]byte, 65535)
					for {
						n, err := c.Read(b)
						if err != nil {
							return
						}
						ln.WriteTo(b[:n], client)
					}
				}(c, from)
			}
			mu.Unlock()
			c.Write(buf[:n])
		}
	}()
	return ln.LocalAddr().String()
}

// TestV3LostPacketNotDiagnosedAsWrongPrivPassword: an authPriv target
// whose agent answers every request but one mid-walk (one lost datagram,
// or a PDU the agent is slow on) fails that poll with a timeout, and that
// is what weir reports: not a wrong priv password (diagnosePriv asking the
// agent without privacy and getting an answer), which would send the
// engineer after credentials that are right. The priv settings are
// suspected only when nothing of the poll was answered.
func TestV3LostPacketNotDiagnosedAsWrongPrivPassword(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	// Datagram 1 is engine discovery, 2 the GET of the scalars, 3 the
	// first GETBULK of the walk: lost.
	relay := lossyRelay(t, agent.Addr, func(n int64) bool { return n == 3 })
	capture := snmptest.NewCapture()
	metrics, _ := NewMetrics(nil)
	p, err := New(Config{
		Targets: []configs.SNMPTarget{testTarget("wan1", relay, func(tc *configs.SNMPTarget) {
			v3(snmptest.V3User, snmptest.V3AuthPass, snmptest.V3PrivPass)(tc)
			tc.Timeout, tc.Retries = 500*time.Millisecond, 0
			tc.Profiles.Names = []string{"if-mib"}
		})},
		Profiles: loadProfiles(t), Broker: capture, Metrics: metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	err = p.PollOnce(context.Background(), "wan1")
	if err == nil {
		t.Fatal("the poll with a lost request succeeded: the relay dropped nothing that mattered")
	}
	t.Logf("poll error: %v", err)
	if strings.Contains(err.Error(), "priv_password") || classify(err) == ResultAuth {
		t.Errorf("a lost datagram is reported as wrong priv credentials (result %q): %v", classify(err), err)
	}
	// With the right credentials the same target polls fine.
	if err := p.PollOnce(context.Background(), "wan1"); err != nil {
		t.Errorf("next poll: %v", err)
	}
}
