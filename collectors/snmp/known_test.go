package snmp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/collectors/snmp/sim"
	"github.com/weirnet/weir/collectors/snmp/snmptest"
	"github.com/weirnet/weir/configs"
)

// TestStateFileSavedAfterAFailedSave: the state file is saved at start
// and at reloads only, so one that could not be written at start (a full
// disk) was missing until a reload, and a target taken out of the config
// meanwhile, while weir was stopped, was never told removed. A failed
// save is tried again until it succeeds.
func TestStateFileSavedAfterAFailedSave(t *testing.T) {
	dir := t.TempDir()
	// A file where the state file's directory goes: every save fails.
	blocker := filepath.Join(dir, "snmp")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(blocker, "targets.json")
	addr, _ := startSim(t, context.Background(), sim.Options{Name: "a", Interfaces: 1})
	target := testTarget("a", addr, func(tc *configs.SNMPTarget) {
		tc.Interval, tc.Timeout = 300*time.Millisecond, 250*time.Millisecond
		tc.Profiles.Names = []string{"system"}
	})
	capture := snmptest.NewCapture()
	p, err := New(Config{Targets: []configs.SNMPTarget{target}, Profiles: loadProfiles(t), Broker: capture, StateFile: state})
	if err != nil {
		t.Fatal(err)
	}
	p.knownRetry = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if !capture.WaitFor(10*time.Second, func(recs []broker.Record) bool { return countStatus(recs, "a") >= 1 }) {
		t.Fatal("no poll")
	}
	if _, err := os.Stat(state); err == nil {
		t.Fatal("the state file was saved with a file in place of its directory")
	}
	os.Remove(blocker) // space freed
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(state)
		if err == nil {
			if !strings.Contains(string(b), `"name":"a"`) {
				t.Fatalf("the state file holds %s, want target a", b)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the state file was not saved again once it could be: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
