package file_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/sinks/file"
)

// TestRepeatedHeaderKeysAreAnArray: a record may carry one header key
// twice (kcat -H, weir produce --header, a record dead-lettered twice); the
// line has it as `weir consume` prints it, an array of the values in order,
// not the key twice in one object, of which jq and every JSON decoder keep
// only the last.
func TestRepeatedHeaderKeysAreAnArray(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	dest, err := file.NewSink(configs.Sink{Type: "file", Name: "f", Path: path, Topics: []string{"t"}}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer dest.Close()
	hs := []broker.Header{{Key: "tag", Value: []byte("a")}, {Key: "one", Value: []byte("x")},
		{Key: "tag", Value: nil}, {Key: "tag", Value: []byte("c")}}
	items := []sinks.Item{{Record: broker.Record{Topic: "t", Key: []byte("k"), Value: []byte(`{}`), Headers: hs}}}
	if err := dest.Write(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	bs, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Headers map[string]any `json:"headers"`
	}
	if err := json.Unmarshal(bs, &line); err != nil {
		t.Fatalf("%v: %s", err, bs)
	}
	want := map[string]any{"tag": []any{"a", nil, "c"}, "one": "x"}
	if !reflect.DeepEqual(line.Headers, want) {
		t.Errorf("headers = %v, want %v; line: %s", line.Headers, want, bs)
	}
}
