package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
)

// TestShortIntervalConfigLoads: `weir-sim snmp --interval 2s
// --write-config F` wrote timeout 2s x (retries 1 + 1) = 4s, which weir
// refuses ("exceeds the interval"): the written config must run.
func TestShortIntervalConfigLoads(t *testing.T) {
	for _, iv := range []time.Duration{minPollInterval, time.Second, 2 * time.Second, 3 * time.Second} {
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

// TestTooShortIntervalRefused: below minPollInterval the written timeout
// would be under weir's floor; weir-sim says so instead of writing a
// config weir refuses.
func TestTooShortIntervalRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snmp.yaml")
	err := writeSNMPConfig(path, "127.0.0.1", 16100, 2, "public", 100*time.Millisecond, configs.SNMPv3{})
	if err == nil || !strings.Contains(err.Error(), "--interval must be at least 200ms") {
		t.Errorf("--interval 100ms: %v, want an error naming the least interval", err)
	}
}
