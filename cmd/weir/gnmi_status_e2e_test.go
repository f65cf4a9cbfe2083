package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gnmisim "github.com/weirnet/weir/collectors/gnmi/sim"
)

// TestGNMIInterfaceStatusEndToEnd: a gNMI target's interface oper-status,
// subscribed on change as weir-sim's written config does, gives the
// interface measurement its oper_up (as an SNMP poll's ifOperStatus does),
// and an interface going DOWN raises interface_down for it.
func TestGNMIInterfaceStatusEndToEnd(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	target := gnmisim.New(gnmisim.Config{Interfaces: 2, Neighbors: 1, ToggleEvery: -1})
	served := make(chan error, 1)
	go func() { served <- target.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-served })

	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("gnmi:\n  subscriptions:\n"+
		"    oper: {path: /interfaces/interface/state/oper-status, mode: stream, stream_mode: on_change}\n"+
		"  targets:\n    - {name: spine9, address: %q, encoding: proto, insecure: true, subscriptions: [oper]}\n",
		lis.Addr())), 0o644)
	p := startWeir(t, t.TempDir(), "-c", cfg)

	// waitFor consumes topic until a record has all of want.
	waitFor := func(topic string, want ...string) {
		t.Helper()
		var out string
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			out, _, _ = p.cli(t, "", "consume", topic, "--from-beginning")
			for line := range strings.Lines(out) {
				all := true
				for _, w := range want {
					all = all && strings.Contains(line, w)
				}
				if all {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no record on %s with %q:\n%s\n%s", topic, want, out, p.Logs())
			}
		}
	}
	waitFor("enriched.metrics", `"measurement":"interface"`, `"interface":"Ethernet2"`, `"oper_up":true`)
	target.Flap(1)
	waitFor("events", `"type":"interface_down"`, `"device":"spine9"`, `"object":"Ethernet2"`)
	waitFor("enriched.metrics", `"measurement":"interface"`, `"interface":"Ethernet2"`, `"oper_up":false`)
}
