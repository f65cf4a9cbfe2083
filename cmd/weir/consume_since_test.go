package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumeSince: `weir consume --since` starts each partition at its
// first record at or after the time (by the records' timestamps), reads to
// the end and exits, on weir's listener and on a Kafka cluster (kfake).
func TestConsumeSince(t *testing.T) {
	for _, backend := range []string{"weir", "kafka"} {
		t.Run(backend, func(t *testing.T) {
			addr, cl := backendClient(t, backend)
			// A record a minute, the last a minute ago: offset i at
			// base + i min, on one partition; the other stays empty.
			// Per backend: "5m30s" below counts from here.
			base := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "since"); err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				r := &kgo.Record{Topic: "since", Partition: 1, Value: []byte{'0' + byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Minute)}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			consume := func(since string) ([]int64, error) {
				var stdout, stderr bytes.Buffer
				err := dispatch(ctx, []string{"consume", "since", "--brokers", addr, "--since", since}, strings.NewReader(""), &stdout, &stderr)
				var offsets []int64
				for line := range strings.Lines(stdout.String()) {
					var r consumedRecord
					if err := json.Unmarshal([]byte(line), &r); err != nil {
						t.Fatalf("%q: %v", line, err)
					}
					offsets = append(offsets, r.Offset)
				}
				if err != nil {
					return offsets, &cliError{err, stderr.String()}
				}
				return offsets, nil
			}
			for _, c := range []struct {
				since string
				want  []int64
			}{
				{base.Add(6*time.Minute + 30*time.Second).UTC().Format(time.RFC3339), []int64{7, 8, 9}},
				{base.Add(6 * time.Minute).Format(time.RFC3339Nano), []int64{6, 7, 8, 9}},
				// Half a millisecond after a record's (whole
				// millisecond) time: that record is before it.
				{base.Add(6*time.Minute + 500*time.Microsecond).Format(time.RFC3339Nano), []int64{7, 8, 9}},
				// 5 min 30 s back from a now a little after the records were
				// written: the last 5 (the test has 30 s to get here).
				{"5m30s", []int64{5, 6, 7, 8, 9}},
				{"1d", []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
				{time.Now().Add(time.Hour).Format(time.RFC3339), nil},
			} {
				got, err := consume(c.since)
				if err != nil || !slices.Equal(got, c.want) {
					t.Errorf("--since %s: offsets %v (%v), want %v", c.since, got, err, c.want)
				}
			}
			for _, bad := range []string{"yesterday", "-5m", "0s"} {
				if _, err := consume(bad); err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--since") {
					t.Errorf("--since %s: %v, want a usage error naming --since", bad, err)
				}
			}
		})
	}
}

// cliError is a command's error with what it printed on stderr.
type cliError struct {
	err    error
	stderr string
}

func (e *cliError) Error() string { return e.err.Error() + ": " + e.stderr }
func (e *cliError) Unwrap() error { return e.err }

// backendClient is a Kafka listener to run a client command against, weir's
// ("weir") or a Kafka cluster's ("kafka": kfake), with a franz-go client
// of it; both end with the test. weirArgs go to weir run.
func backendClient(t *testing.T, backend string, weirArgs ...string) (string, *kgo.Client) {
	t.Helper()
	var addr string
	if backend == "weir" {
		addr = startWeir(t, t.TempDir(), weirArgs...).KafkaAddr
	} else {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		addr = c.ListenAddrs()[0]
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return addr, cl
}
