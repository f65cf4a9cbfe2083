package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumeKeepsRepeatedAndNullHeaders: Kafka headers are a list, and a
// key may repeat (kcat -H a=1 -H a=2, `weir produce --header a=1 --header
// a=2`); `weir consume` printed them as a JSON object of strings, so all
// but the last value of a repeated key were lost, and a null header value
// read as "". A repeated key's values are an array, in order; a null
// value is null.
func TestConsumeKeepsRepeatedAndNullHeaders(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	r := &kgo.Record{Topic: "t", Value: []byte("v"), Headers: []kgo.RecordHeader{
		{Key: "dup", Value: []byte("a")},
		{Key: "one", Value: []byte("x")},
		{Key: "dup", Value: []byte("b")},
		{Key: "null"},
		{Key: "empty", Value: []byte{}},
		{Key: "dup", Value: nil},
	}}
	if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := dispatch(ctx, []string{"consume", "--brokers", c.ListenAddrs()[0], "t", "--from-beginning"},
		strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("consume: %v (%s)", err, stderr.String())
	}
	var got struct {
		Headers map[string]json.RawMessage `json:"headers"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	want := map[string]string{
		"dup":   `["a","b",null]`,
		"one":   `"x"`,
		"null":  `null`,
		"empty": `""`,
	}
	if len(got.Headers) != len(want) {
		t.Errorf("headers %s, want the keys of %v", stdout.String(), want)
	}
	for k, w := range want {
		if string(got.Headers[k]) != w {
			t.Errorf("header %q printed as %s, want %s (line %s)", k, got.Headers[k], w, strings.TrimSpace(stdout.String()))
		}
	}
}
