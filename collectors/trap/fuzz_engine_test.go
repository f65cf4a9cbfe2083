package trap

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzStartEngine starts the trap receiver's SNMPv3 engine on an arbitrary
// state file: no panic, boots is within RFC 3414's range, and the boots of
// a kept engine ID never go back (a captured inform would be in time
// again).
func FuzzStartEngine(f *testing.F) {
	f.Add([]byte(`{"engine_id":"8000000001020304","boots":7}`), "")
	f.Add([]byte(`{"engine_id":"8000000001020304","boots":7}`), "8000000001020304")
	f.Add([]byte(`{"engine_id":"8000000001020304","boots":2147483647}`), "")
	f.Add([]byte(`{"engine_id":"8000000001020304","boots":4294967295}`), "")
	f.Add([]byte(`{"engine_id":"zz","boots":1}`), "0x8000000001020305")
	f.Add([]byte(`{`), "")
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, state []byte, configured string) {
		file := filepath.Join(t.TempDir(), "engine.json")
		if err := os.WriteFile(file, state, 0o644); err != nil {
			t.Fatal(err)
		}
		id, boots, _, err := startEngine(file, configured, now)
		if err != nil {
			return
		}
		if boots < 1 || boots > maxBoots {
			t.Fatalf("boots %d", boots)
		}
		var kept engineState
		if json.Unmarshal(state, &kept) == nil && kept.ID == hex.EncodeToString([]byte(id)) && kept.Boots > 0 {
			if boots < min(kept.Boots, maxBoots) || boots == kept.Boots && boots < maxBoots {
				t.Fatalf("engine %x kept boots %d, starts at %d", id, kept.Boots, boots)
			}
		}
		// What it wrote, read back, starts the next engine after it.
		id2, boots2, _, err := startEngine(file, configured, now)
		if err != nil {
			t.Fatalf("a second start on the state the first wrote: %v", err)
		}
		if id2 != id || boots2 < boots || boots2 == boots && boots < maxBoots {
			t.Fatalf("second start %x boots %d after %x boots %d", id2, boots2, id, boots)
		}
	})
}
