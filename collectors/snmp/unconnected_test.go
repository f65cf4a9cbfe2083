package snmp

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// multihomed stands in front of the agent at upstream as a multi-homed
// device does: it takes requests at the address it returns and answers
// from another port.
func multihomed(t *testing.T, upstream string) string {
	t.Helper()
	listen := func(network, addr string) net.PacketConn {
		c, err := net.ListenPacket(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	in, out := listen("udp", "127.0.0.1:0"), listen("udp", "127.0.0.1:0")
	up, err := net.Dial("udp", upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := in.ReadFrom(buf)
			if err != nil {
				return
			}
			if _, err := up.Write(buf[:n]); err != nil {
				return
			}
			up.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err = up.Read(buf); err != nil {
				continue // unanswered: the poller's retry or timeout
			}
			out.WriteTo(buf[:n], from)
		}
	}()
	return in.LocalAddr().String()
}

// TestUnconnectedUDPTakesAnswersFromAnotherAddress: Net-SNMP's snmpd
// answering from another port than the one polled (as a multi-homed agent
// answers from another address) is polled with use_unconnected_udp_socket,
// and times out without it, as a connected socket drops those answers.
func TestUnconnectedUDPTakesAnswersFromAnotherAddress(t *testing.T) {
	agent := snmptest.StartSNMPD(t)
	addr := multihomed(t, agent.Addr)
	for _, unconnected := range []bool{false, true} {
		capture := snmptest.NewCapture()
		p, err := New(Config{
			Targets: []configs.SNMPTarget{testTarget("mh", addr, func(tc *configs.SNMPTarget) {
				tc.UnconnectedUDP = unconnected
				tc.Profiles = configs.SNMPProfiles{Names: []string{"system"}}
				tc.Timeout = 2 * time.Second
			})},
			Profiles: loadProfiles(t),
			Broker:   capture,
		})
		if err != nil {
			t.Fatal(err)
		}
		err = p.PollOnce(context.Background(), "mh")
		switch {
		case unconnected && err != nil:
			t.Errorf("use_unconnected_udp_socket: %v", err)
		case !unconnected && err == nil:
			t.Error("a connected socket took an answer from another port: the test's agent is not multi-homed")
		}
		if up := statuses(t, capture.Records(), "mh")[0].Fields["snmp_up"]; up != float64(map[bool]int{false: 0, true: 1}[unconnected]) {
			t.Errorf("unconnected %v: snmp_up %v", unconnected, up)
		}
	}
}
