package prometheus

import (
	"bytes"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/syncbuf"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

// TestTwoTagsOfOneLabelNameAreSaid: tags ifName and if_name both give the
// label if_name; the later in key order is served, and that was silent:
// the other tag's value vanished from the endpoint and from remote write
// with no word. A warning, once per label name, names the tags.
func TestTwoTagsOfOneLabelNameAreSaid(t *testing.T) {
	m := &telemetry.Metric{Measurement: "m", Device: "d", Tags: map[string]string{"ifName": "a", "if_name": "b"}, Fields: map[string]any{"f": 1.0}}

	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	dst, err := New(configs.Sink{Type: "prometheus", Name: "p", Listen: "127.0.0.1:0", Staleness: configs.Duration(time.Minute)}, sinks.Env{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	s := dst.(*Sink)
	defer s.Close()
	s.col.Update(m)
	s.col.Update(m)
	if got := string(s.col.render()); !strings.Contains(got, `m_f{device="d",if_name="b"} 1`) {
		t.Errorf("want the later tag's value served:\n%s", got)
	}
	if log := buf.String(); strings.Count(log, "\n") != 1 || !strings.Contains(log, "ifName") || !strings.Contains(log, "if_name") {
		t.Errorf("want one warning naming both tags, got %q", log)
	}

	buf.Reset()
	rw, err := NewRemoteWrite(configs.Sink{Type: "prometheus_remote_write", Name: "rw", URL: "http://127.0.0.1:1/api/v1/write"}, sinks.Env{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	items := []sinks.Item{{Point: telemetry.PointOf(m)}, {Point: telemetry.PointOf(m)}}
	rw.(*RemoteWrite).encode(items)
	if log := buf.String(); strings.Count(log, "\n") != 1 || !strings.Contains(log, "ifName") {
		t.Errorf("remote write: want one warning naming both tags, got %q", log)
	}
}

// TestRemoteWriteLabelClashSaidOnce: remote write encodes a large batch
// on several workers, each with its own labeler; the warning is still
// once per label name, not once per worker.
func TestRemoteWriteLabelClashSaidOnce(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	m := &telemetry.Metric{Measurement: "m", Device: "d", Tags: map[string]string{"ifName": "a", "if_name": "b"}, Fields: map[string]any{"f": 1.0}}
	var buf syncbuf.Buffer
	rw, err := NewRemoteWrite(configs.Sink{Type: "prometheus_remote_write", Name: "rw", URL: "http://127.0.0.1:1/api/v1/write"},
		sinks.Env{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]sinks.Item, 4*minChunk)
	for i := range items {
		items[i].Point = telemetry.PointOf(m)
	}
	if k := len(rw.(*RemoteWrite).encode(items)); k < 2 {
		t.Skipf("encoded on %d worker", k)
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Errorf("want one warning, got %d:\n%s", n, buf.String())
	}
}
