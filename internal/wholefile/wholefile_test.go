package wholefile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReadFilePastTheBound: a file is read up to the bound, and refused
// with its size past it.
func TestReadFilePastTheBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := Read(path, 10); err != nil || string(data) != "0123456789" {
		t.Errorf("at the bound: %q, %v", data, err)
	}
	if _, err := Read(path, 9); err == nil || !strings.Contains(err.Error(), "10 bytes, more than the 9 weir reads") {
		t.Errorf("past the bound by its size: %v", err)
	}
}

// TestReadDevicePastTheBound: a device has no size: the read itself
// stops at the bound.
func TestReadDevicePastTheBound(t *testing.T) {
	if _, err := Read("/dev/zero", 9); err == nil || !strings.Contains(err.Error(), "/dev/zero gave more than the 9 bytes weir reads") {
		t.Errorf("Read(/dev/zero): %v, want it refused as it is read", err)
	}
}

// TestSaveAgainWhileFailed: saves are tried again while the last failed,
// not once one succeeded, and not after ctx ends.
func TestSaveAgainWhileFailed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	failing, saves := true, 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		SaveAgain(ctx, time.Millisecond, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return failing
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			if saves++; saves == 3 {
				failing = false // the third save succeeds
			}
		})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	<-done
	if saves != 3 {
		t.Errorf("%d saves, want 3: two that failed and one that succeeded", saves)
	}
}
