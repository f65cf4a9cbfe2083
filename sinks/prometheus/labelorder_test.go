package prometheus

import (
	"bytes"
	"testing"

	"github.com/weirnet/weir/telemetry"
)

// TestRemoteWriteLabelOrder: label names go out sorted with __name__ in
// its place, also when a sanitised tag ("1x" → "_1x") sorts before it.
func TestRemoteWriteLabelOrder(t *testing.T) {
	r := newRWWorker("", labeler{})
	r.appendPoint(telemetry.PointOf(&telemetry.Metric{Measurement: "m", Device: "d", Tags: map[string]string{"1x": "a", "site": "b"},
		Fields: map[string]any{"f": 1.0}}), nil)
	under := bytes.Index(r.body, []byte("_1x"))
	name := bytes.Index(r.body, []byte("__name__"))
	site := bytes.Index(r.body, []byte("site"))
	if under < 0 || name < 0 || site < 0 || !(under < name && name < site) {
		t.Fatalf("label order _1x@%d __name__@%d site@%d", under, name, site)
	}
}
