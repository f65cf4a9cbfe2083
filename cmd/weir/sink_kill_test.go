package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFileSinkSurvivesKill: weir runs a file sink while it is killed with
// SIGKILL at random points and started again, 10 times. Every record ends
// up in the file at least once, and the duplicates are bounded by one
// batch per kill (the sink commits only after the file is fsynced).
func TestFileSinkSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "archive.jsonl")
	const batch = 200
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("enrich: {enabled: false}\nsyslog: {enabled: false}\nsinks:\n  - {type: file, name: archive, path: %s, topics: [t], batch_size: %d, compress: false}\n", out, batch)), 0o644)

	p := startWeir(t, dir, "-c", cfg)
	const n = 200000
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.DefaultProduceTopic("t"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		cl.Produce(context.Background(), &kgo.Record{Key: []byte(fmt.Sprint(i % 50)), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))},
			func(_ *kgo.Record, err error) {
				if err != nil {
					t.Error(err)
				}
				wg.Done()
			})
	}
	wg.Wait()
	cl.Close()

	kills, midway := 0, 0
	for i := 0; i < 10; i++ {
		time.Sleep(time.Duration(20+rand.IntN(120)) * time.Millisecond)
		p.Cmd.Process.Signal(syscall.SIGKILL)
		<-p.Exited
		kills++
		// Fewer complete lines than records: some were still to be
		// written (duplicates only add lines). Counting newlines, not
		// decoding 200,000 lines of JSON after every kill (seconds
		// each with -race); the file is decoded once, at the end.
		if archiveLines(t, out) < n {
			midway++ // killed while the sink was still writing
		}
		p = startWeir(t, dir, "-c", cfg)
	}
	if midway == 0 {
		t.Log("every kill came after the sink had finished; the test proved little this time")
	}
	// Let the last one finish.
	deadline := time.Now().Add(60 * time.Second)
	var seen map[int]int
	var lines int
	for time.Now().Before(deadline) {
		seen, lines = readArchive(t, out)
		if len(seen) == n {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(seen) != n {
		t.Fatalf("%d of %d records in the file after %d kills", len(seen), n, kills)
	}
	if dups := lines - n; dups > kills*batch {
		t.Fatalf("%d duplicates after %d kills, more than one batch (%d) per kill", dups, kills, batch)
	} else {
		t.Logf("%d records, %d duplicate lines after %d kills (%d while the sink was writing)", n, dups, kills, midway)
	}
}

// archiveLines is the number of complete (newline-ended) lines in the
// file at path: a line torn by a kill has no newline yet.
func archiveLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte{'\n'})
}

func readArchive(t *testing.T, path string) (map[int]int, int) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	seen := map[int]int{}
	lines := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Value struct{ N *int } `json:"value"`
		}
		// A line torn by the kill after the last fsync is not counted.
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Value.N == nil {
			continue
		}
		seen[*r.Value.N]++
		lines++
	}
	return seen, lines
}
