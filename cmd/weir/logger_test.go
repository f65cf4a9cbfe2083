package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
)

// TestJSONLogDurations: a duration in JSON logs is seconds (0.0015), not
// slog's nanoseconds (1500000), which read as 1.5 million of whatever unit;
// text logs keep the String form (1.5ms).
func TestJSONLogDurations(t *testing.T) {
	var buf bytes.Buffer
	newLogger(configs.LogConfig{Format: "json"}, &buf).Info("x", slog.Duration("took", 1500*time.Microsecond),
		"retry_in", 2*time.Second, slog.Group("g", slog.Duration("waited", time.Minute)))
	var got struct {
		Took    any `json:"took"`
		RetryIn any `json:"retry_in"`
		G       struct {
			Waited any `json:"waited"`
		} `json:"g"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Took != 0.0015 || got.RetryIn != 2.0 || got.G.Waited != 60.0 {
		t.Errorf("durations in JSON: %s", buf.String())
	}
	buf.Reset()
	newLogger(configs.LogConfig{Format: "text"}, &buf).Info("x", slog.Duration("took", 1500*time.Microsecond))
	if !strings.Contains(buf.String(), "took=1.5ms") {
		t.Errorf("text: %s", buf.String())
	}
}
