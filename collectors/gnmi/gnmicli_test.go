package gnmi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/collectors/gnmi/sim"
)

// gnmiCLI finds openconfig's gnmi_cli (`go install
// github.com/openconfig/gnmi/cmd/gnmi_cli@v0.14.1`; .ci/run installs it).
func gnmiCLI(t *testing.T) string {
	if p, err := exec.LookPath("gnmi_cli"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "gnmi_cli")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("gnmi_cli not installed (go install github.com/openconfig/gnmi/cmd/gnmi_cli@v0.14.1); .ci/run installs it")
	return ""
}

// TestSimulatorWithGNMICLI: openconfig's own client reads the simulator's
// capabilities and a ONCE subscription, so weir-sim gnmi is a real gNMI
// target, not only one weir understands.
func TestSimulatorWithGNMICLI(t *testing.T) {
	cli := gnmiCLI(t)
	_, addr, _ := startSim(t, "127.0.0.1:0", sim.Config{Interfaces: 2, Neighbors: 1, ToggleEvery: -1})
	out, err := exec.Command(cli, "-a", addr, "-insecure", "-capabilities").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "supported_encodings") {
		t.Fatalf("gnmi_cli -capabilities: %v\n%s", err, out)
	}
	out, err = exec.Command(cli, "-a", addr, "-insecure", "-qt", "once", "-q", "/interfaces/interface/state/counters").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Ethernet1") || !strings.Contains(string(out), "in-octets") {
		t.Fatalf("gnmi_cli -qt once: %v\n%s", err, out)
	}
}
