package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks/file"
	"github.com/weirnet/weir/sinks/internal/sinktest"
)

// TestNullValueAndHeaderStayNull: a tombstone (a record whose value is
// null, as a Kafka client compacting a key writes it) and a header with a
// null value are written as null, as `weir consume` prints them; the
// sink's copy of the records used to make them empty, written as "".
func TestNullValueAndHeaderStayNull(t *testing.T) {
	b := sinktest.Broker(t)
	recs := []broker.Record{
		{Key: []byte("gone"), Value: nil},
		{Key: []byte("empty"), Value: []byte{}, Headers: []broker.Header{{Key: "h", Value: nil}, {Key: "e", Value: []byte{}}}},
	}
	if err := b.Produce(context.Background(), "t", recs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "out.jsonl")
	cfg := configs.Sink{Type: "file", Name: "f", Path: path, Topics: []string{"t"}, Start: "earliest"}
	dest, err := file.NewSink(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer dest.Close()
	sinktest.Start(t, b, cfg, dest)
	var got string
	sinktest.Eventually(t, "two lines in the file", func() bool {
		bs, _ := os.ReadFile(path)
		got = string(bs)
		return strings.Count(got, "\n") == 2
	})
	for _, want := range []string{`"key":"gone","value":null`, `"key":"empty","value":""`, `"h":null`, `"e":""`} {
		if !strings.Contains(got, want) {
			t.Errorf("file lacks %s:\n%s", want, got)
		}
	}
}
