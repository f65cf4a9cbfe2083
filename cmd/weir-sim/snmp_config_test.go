package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
)

// TestShortIntervalConfigLoads: `weir-sim snmp --interval 2s
// --write-config F` wrote timeout 2s x (retries 1 + 1) = 4s, which weir
// refuses ("exceeds the interval"): the written config must run.
func TestShortIntervalConfigLoads(t *testing.T) {
	for _, iv := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		for _, v3 := range []configs.SNMPv3{{}, {User: "u", SecurityLevel: "authNoPriv", AuthProtocol: "SHA", AuthPassword: "authpass123"}} {
			path := filepath.Join(t.TempDir(), "snmp.yaml")
			if err := writeSNMPConfig(path, "127.0.0.1", 16100, 2, "public", iv, v3); err != nil {
				t.Fatal(err)
			}
			if _, err := configs.Load(path); err != nil {
				t.Errorf("--interval %v (v3 %v): weir refuses the written config: %v", iv, v3.User != "", err)
			}
		}
	}
}
