package gnmi

import (
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
)

// TestUnresolvableAddressSaysSo: a target whose host name does not
// resolve (a typo) fails with the lookup's error, not only gRPC's "name
// resolver error: produced zero addresses", which names neither the host
// nor DNS.
func TestUnresolvableAddressSaysSo(t *testing.T) {
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{simTarget("typo", "nonexistent.invalid:57400", sub(countersPath, "stream", "sample", time.Second))}})
	var msg string
	waitFor(t, 10*time.Second, "the first failure", func() bool {
		if err := r.c.Status()[0].LastError; err != nil {
			msg = err.Error()
			return true
		}
		return false
	})
	if !strings.Contains(msg, "nonexistent.invalid does not resolve") || !strings.Contains(msg, "lookup nonexistent.invalid") {
		t.Errorf("error %q; want it to say the host does not resolve, with the lookup's error", msg)
	}
}
