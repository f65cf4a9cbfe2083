package gnmi

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package when a collector or simulator goroutine
// outlives the tests: every stream must stop with its context.
func TestMain(m *testing.M) {
	// The fake agent logs through glog, which writes files to the temp
	// directory unless told otherwise.
	dir, err := os.MkdirTemp("", "gnmi-glog")
	if err == nil {
		_ = flag.Set("log_dir", dir)
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	if code == 0 {
		if leaked := waitLeaks(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func waitLeaks(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "weir/collectors/gnmi") && !strings.Contains(g, "gnmi.TestMain") && !strings.Contains(g, "gnmi.waitLeaks") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
