package trap

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestDeviceNameKeysTraps: Config.DeviceName keys a trap by the name it
// gives (its device as enrichment names it), asked with the trap as
// received; the trap itself is unchanged. A trap it gives no name for is
// keyed by its sender's address, as without it.
func TestDeviceNameKeysTraps(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	name := "edge1"
	h := start(t, Config{Communities: []string{"public"}, DeviceName: func(tr *telemetry.Trap) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, tr.Device+" "+tr.TrapName)
		return name
	}})
	sendV2c(t, h.addr)
	h.capture.WaitFor(5*time.Second, func(r []broker.Record) bool { return len(r) >= 1 })
	mu.Lock()
	name = ""
	mu.Unlock()
	sendV2c(t, h.addr)
	h.capture.WaitFor(5*time.Second, func(r []broker.Record) bool { return len(r) >= 2 })
	recs := h.capture.Records()
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	var tr telemetry.Trap
	if err := json.Unmarshal(recs[0].Value, &tr); err != nil {
		t.Fatal(err)
	}
	if string(recs[0].Key) != "edge1" || tr.Device != "127.0.0.1" {
		t.Errorf("named trap: key %q, device %q; want key edge1, device 127.0.0.1 (as received)", recs[0].Key, tr.Device)
	}
	if string(recs[1].Key) != "127.0.0.1" {
		t.Errorf("unnamed trap: key %q, want its sender's address", recs[1].Key)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != "127.0.0.1 linkDown" {
		t.Errorf("asked %q, want the trap as received (127.0.0.1 linkDown)", asked)
	}
}
