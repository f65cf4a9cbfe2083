package configs

import (
	"strings"
	"testing"
)

// TestEveryBadValueReported: weir check reports every value of a file it
// cannot take, each with its line and key path, not only the first (a
// duration, an address or a size its own type refuses stopped the
// decoding there, and the next run of weir check found the next one).
func TestEveryBadValueReported(t *testing.T) {
	data := `snmp:
  targets:
    - name: r1
      address: 127.0.0.1:161
      interval: 5x
      retries: six
      timeout: 2q
syslog:
  listeners:
    - {protocol: udp, address: "nowhere"}
`
	_, err := Parse([]byte(data))
	if err == nil {
		t.Fatal("parsed")
	}
	want := []string{
		`line 5: snmp.targets[0].interval: "5x" is not a duration`,
		"line 6: snmp.targets[0].retries: cannot unmarshal !!str `six`",
		`line 7: snmp.targets[0].timeout: "2q" is not a duration`,
		`line 10: syslog.listeners[0].address: "nowhere" is not host:port`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d: %q, want it to start %q", i+1, lines[i], w)
		}
	}
}
