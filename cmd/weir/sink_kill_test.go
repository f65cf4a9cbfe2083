package main

import (
	"bufio"
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
// SIGKILL at random points and started again, 10 times, each time while a
// Kafka client is producing to it and the sink is writing what came.
// Every record the broker acknowledged ends up in the file at least once,
// and the duplicates are bounded by one batch per kill (the sink commits
// only after the file is fsynced).
func TestFileSinkSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "archive.jsonl")
	const batch = 200
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("enrich: {enabled: false}\nsyslog: {enabled: false}\nsinks:\n  - {type: file, name: archive, path: %s, topics: [t], batch_size: %d, compress: false}\n", out, batch)), 0o644)

	const kills = 10
	var acked ackedSet
	next := 0 // the next record's number
	p := startWeir(t, dir, "-c", cfg)
	midway := 0
	for i := 0; i < kills; i++ {
		// The first round also makes the topic: not killed before.
		stop := produceUntil(t, p.KafkaAddr, &next, &acked, i == 0)
		time.Sleep(time.Duration(20+rand.IntN(120)) * time.Millisecond)
		p.Cmd.Process.Signal(syscall.SIGKILL)
		<-p.Exited
		stop()
		if seen, _ := readArchive(t, out); acked.missing(seen) > 0 {
			midway++ // killed while the sink had acknowledged records to write
		}
		p = startWeir(t, dir, "-c", cfg)
	}
	if midway == 0 {
		t.Error("every kill came after the sink had written all it was given: the test proved nothing")
	}
	if acked.len() < kills*batch {
		t.Fatalf("only %d records acknowledged in %d rounds", acked.len(), kills)
	}
	// Let the last one finish.
	deadline := time.Now().Add(60 * time.Second)
	var seen map[int]int
	var lines int
	for time.Now().Before(deadline) {
		seen, lines = readArchive(t, out)
		if acked.allIn(seen) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if missing := acked.missing(seen); missing > 0 {
		t.Fatalf("%d of %d acknowledged records not in the file after %d kills", missing, acked.len(), kills)
	}
	// Records the broker took but did not acknowledge before the kill
	// may be there too, once each (at most one batch a kill again).
	if dups := lines - len(seen); dups > kills*batch {
		t.Fatalf("%d duplicates after %d kills, more than one batch (%d) per kill", dups, kills, batch)
	} else {
		t.Logf("%d records acknowledged, %d in the file, %d duplicate lines after %d kills (%d while the sink was writing)",
			acked.len(), len(seen), dups, kills, midway)
	}
}

// ackedSet is the numbers of the records the broker acknowledged.
type ackedSet struct {
	mu sync.Mutex
	n  map[int]bool
}

func (a *ackedSet) add(i int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[int]bool{}
	}
	a.n[i] = true
}

func (a *ackedSet) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.n)
}

func (a *ackedSet) missing(seen map[int]int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := 0
	for i := range a.n {
		if seen[i] == 0 {
			m++
		}
	}
	return m
}

func (a *ackedSet) allIn(seen map[int]int) bool { return a.missing(seen) == 0 }

// produceUntil produces records {"n":*next}, {"n":*next+1}, ... to topic t
// of the broker at addr, noting in acked those the broker acknowledges,
// until the returned stop is called (after the broker was killed: what
// is not acknowledged by then fails). With first, it returns once the
// first record is acknowledged (the topic is made).
func produceUntil(t *testing.T, addr string, next *int, acked *ackedSet, first bool) (stop func()) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("t"), kgo.AllowAutoTopicCreation(),
		kgo.MaxBufferedRecords(2000))
	if err != nil {
		t.Fatal(err)
	}
	if first {
		i := *next
		*next++
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Key: []byte(fmt.Sprint(i % 50)), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		acked.add(i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			i := *next
			*next++
			// Blocks while 2,000 are unacknowledged; ends with ctx.
			cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i % 50)), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))},
				func(_ *kgo.Record, err error) {
					if err == nil {
						acked.add(i)
					}
				})
		}
	}()
	return func() {
		cancel()
		<-done
		cl.Close() // fails what is left: the broker it went to is gone
	}
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
