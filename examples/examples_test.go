// The examples' tests run each example as its README tells a user to:
// the same config files, the same commands, with real Prometheus,
// Alertmanager and InfluxDB where the example feeds them. Only addresses
// and paths move (to free ports and the test's directories), and a
// replacement that no longer finds its text fails the test, so an
// example and its test cannot drift apart unnoticed.
package examples_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/internal/peers"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/internal/weirproc"
)

// weirBin and simBin are bin/weir and bin/weir-sim, built once.
var weirBin, simBin string

// root is the checkout's root, where the READMEs' commands run.
var root string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "weir-examples")
	if err != nil {
		panic(err)
	}
	if root, err = filepath.Abs(".."); err == nil {
		weirBin, simBin, err = weirproc.Build(root, dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// read returns an example's file (path relative to examples/).
func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// moved returns text with each pair of old, new strings replaced, and
// fails if an old one is not in it.
func moved(t *testing.T, what, text string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(text, pairs[i]) {
			t.Fatalf("%s no longer has %q: update the test with the example", what, pairs[i])
		}
		text = strings.ReplaceAll(text, pairs[i], pairs[i+1])
	}
	return text
}

// movedFile writes an example's file, moved as moved does, into a new
// directory of the test's and returns its path.
func movedFile(t *testing.T, path string, pairs ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, []byte(moved(t, path, read(t, path), pairs...)), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// moveFile moves a file written by a README's command, as movedFile moves
// an example's.
func moveFile(t *testing.T, path string, pairs ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(moved(t, path, string(b), pairs...)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readmeLine returns the line of an example's README that contains
// marker: the command the test runs as the user would.
func readmeLine(t *testing.T, readme, marker string) string {
	t.Helper()
	for _, line := range strings.Split(read(t, readme), "\n") {
		if strings.Contains(line, marker) {
			return line
		}
	}
	t.Fatalf("%s has no line with %q", readme, marker)
	return ""
}

// commands skips the test unless the tools its README's commands use
// are installed.
func commands(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		peers.Look(t, tool, tool)
	}
}

// shell runs a README's command line with bash in the checkout's root.
func shell(t *testing.T, line string) string {
	t.Helper()
	out, err := try(line)
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return out
}

// try is shell for a command that may fail for now (its file not written
// yet): its output and its error.
func try(line string) (string, error) {
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// freePort returns a loopback port free for TCP and UDP alike, for a
// syslog listener of both.
func freePort(t *testing.T) string {
	t.Helper()
	return fmt.Sprint(peers.FreePort(t, "tcp", "udp"))
}

// freePorts returns the first of n consecutive free loopback ports of
// network ("udp", "tcp"), for weir-sim's agents and targets (--base-port).
func freePorts(t *testing.T, network string, n int) int {
	t.Helper()
	return peers.FreePorts(t, n, network)
}

// sim runs bin/weir-sim with args until the test ends, once it listens.
func sim(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, simBin, args...)
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("weir-sim %s:\n%s", strings.Join(args, " "), out.String())
		}
	})
	// It says what it simulates once it listens.
	peers.Eventually(t, "weir-sim to listen", func() bool { return strings.Contains(out.String(), "weir-sim: ") })
}
