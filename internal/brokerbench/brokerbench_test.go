// Package brokerbench measures the embedded broker against its baselines in
// one run and prints the figures as a table: `make bench` runs it.
//
// It is a test so that kfake, the in-process Kafka cluster used as the
// baseline, stays out of the weir binary. Run it with:
//
//	WEIR_BENCH=1 go test -run TestBrokerFigures -v -timeout 30m ./internal/brokerbench
//
// WEIR_BENCH_RECORDS sets the records per throughput run (default 1,000,000);
// WEIR_BENCH_OPEN_RECORDS the records on disk for the open-time runs
// (default 2,000,000, about 400 MB); WEIR_BENCH_PINNED=0 leaves out the
// comparison with broker and client pinned to separate cores;
// WEIR_BENCH_SERVE_PROFILE=FILE writes the pinned brokers' CPU profiles
// (FILE.weir, FILE.kfake; the last round's).
package brokerbench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/broker/kafkawire"
	"github.com/weirnet/weir/broker/recordbatch"
)

const (
	valueSize  = 200
	devices    = 1000
	partitions = 6
	batch      = 1000
)

type row struct {
	name, value, baseline, ratio, target string
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func records(n int) []broker.Record {
	val := make([]byte, valueSize)
	for i := range val {
		val[i] = 'a' + byte(i%26)
	}
	recs := make([]broker.Record, n)
	for i := range recs {
		recs[i] = broker.Record{Key: []byte(fmt.Sprintf("device-%04d", i%devices)), Value: val}
	}
	return recs
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

func fmtRate(r float64) string { return fmt.Sprintf("%.0f rec/s", r) }

func TestBrokerFigures(t *testing.T) {
	if os.Getenv(openChildEnv) != "" {
		openChild()
		return
	}
	if pinnedChild(t) {
		return
	}
	if os.Getenv("WEIR_BENCH") == "" {
		t.Skip("set WEIR_BENCH=1 (make bench) to measure")
	}
	n := envInt("WEIR_BENCH_RECORDS", 1_000_000)
	var rows []row
	add := func(r row) {
		rows = append(rows, r)
		t.Logf("%s: %s (baseline %s, ratio %s)", r.name, r.value, r.baseline, r.ratio)
	}

	// 1. In-process produce vs a plain buffered file write of the same
	// bytes, alternated, best of three each. Each run's files are removed
	// after it, so that both write to pages the kernel just freed: on
	// this VM, a page the host has to supply anew costs several times
	// more to write (see the README's "Measuring on this machine").
	// The baseline writes the bytes the log holds for each record (the
	// value, its key and framing, a share of its batch's header), written
	// uncompressed for the comparison to hold; the values alone are
	// reported beside it, and the default, snappy, against them.
	var plain, plainValues, prod, snappy float64
	var perRecord, snappyRecord int
	for range 3 {
		var r float64
		r, perRecord = inProcessProduce(t, n, embedded.WithCompression(recordbatch.CodecNone))
		prod = max(prod, r)
		r, snappyRecord = inProcessProduce(t, n)
		snappy = max(snappy, r)
		plain = max(plain, plainWrite(t, n, perRecord))
		plainValues = max(plainValues, plainWrite(t, n, valueSize))
	}
	add(row{"in-process produce (200 B, 6 partitions, batches of 1000), uncompressed", fmtRate(prod), fmtRate(plain) + fmt.Sprintf(" plain write (%d B)", perRecord), fmt.Sprintf("%.0f%%", 100*prod/plain), ">= 1,500,000 rec/s and >= 50%"})
	add(row{"  against a plain write of the values alone", "", fmtRate(plainValues) + fmt.Sprintf(" plain write (%d B)", valueSize), fmt.Sprintf("%.0f%%", 100*prod/plainValues), ""})
	add(row{fmt.Sprintf("  compressed with snappy, the default (%d B a record)", snappyRecord), fmtRate(snappy), fmtRate(plainValues) + fmt.Sprintf(" plain write (%d B)", valueSize), fmt.Sprintf("%.0f%%", 100*snappy/plainValues), ""})

	dir := t.TempDir()
	b, err := embedded.Open(dir, embedded.WithRetentionCheckInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	recs := records(batch)
	for i := 0; i < n; i += batch {
		if err := b.Produce(context.Background(), "bench", recs[:min(batch, n-i)]); err != nil {
			t.Fatal(err)
		}
	}

	// 2. In-process consume of a group over all partitions.
	c, err := b.Consume(context.Background(), "bench", []string{"bench"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for seen := 0; seen < n; {
		got, err := c.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		seen += len(got)
	}
	cons := rate(n, time.Since(start))
	c.Close()
	add(row{"in-process group consume, 6 partitions", fmtRate(cons), "", "", ">= 3,000,000 rec/s"})

	// 3. Over the Kafka listener vs kfake, franz-go default batching, acks=all.
	addr, stop := serveWire(t, b)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(t.TempDir()), kfake.SeedTopics(partitions, "wire", "wire.latency"))
	if err != nil {
		t.Fatal(err)
	}
	// Alternate the two brokers and keep each one's best of three, so
	// neither pays alone for a noisy moment or for running first.
	wn := n / 2
	b.CreateTopic(context.Background(), "wire", broker.TopicConfig{Partitions: partitions})
	// The ceiling: the listener over a log that does no work at all. The
	// client is then all that runs, so its rate is the most any broker
	// can reach on this machine, and its ratio to kfake the most any
	// broker can show.
	free := newFreeLog()
	free.CreateTopic(context.Background(), "wire", broker.TopicConfig{Partitions: partitions})
	freeAddr, stopFree := serveWire(t, free)
	defer stopFree()
	var kfProd, weirProd, freeProd, kfCons, weirCons, freeCons float64
	for range 3 {
		kfProd = max(kfProd, wireProduce(t, kf.ListenAddrs()[0], wn))
		weirProd = max(weirProd, wireProduce(t, addr, wn))
		freeProd = max(freeProd, wireProduce(t, freeAddr, wn))
	}
	add(row{"Kafka listener produce (franz-go, acks=all)", fmtRate(weirProd), fmtRate(kfProd) + " kfake", fmt.Sprintf("%.2fx", weirProd/kfProd), ">= 1.3x kfake"})
	add(row{"  ceiling: the listener over a log that does nothing", fmtRate(freeProd), fmtRate(kfProd) + " kfake", fmt.Sprintf("%.2fx", freeProd/kfProd), ""})
	for range 3 {
		kfCons = max(kfCons, wireConsume(t, kf.ListenAddrs()[0], wn))
		weirCons = max(weirCons, wireConsume(t, addr, wn))
		freeCons = max(freeCons, wireConsume(t, freeAddr, wn))
	}
	add(row{"Kafka listener consume (franz-go)", fmtRate(weirCons), fmtRate(kfCons) + " kfake", fmt.Sprintf("%.2fx", weirCons/kfCons), ">= 1.5x kfake"})
	add(row{"  ceiling: the listener over a log that does nothing", fmtRate(freeCons), fmtRate(kfCons) + " kfake", fmt.Sprintf("%.2fx", freeCons/kfCons), ""})
	if os.Getenv("WEIR_BENCH_PINNED") != "0" {
		pinnedFigures(t, wn, add)
	}

	// 4. Produce-to-consume latency at 20,000 records/s.
	p99, p50 := inProcessLatency(t, b, 20000, 5*time.Second)
	add(row{"latency in-process at 20k rec/s", fmt.Sprintf("p99 %v (p50 %v)", p99, p50), "", "", "p99 < 5ms"})
	kp99, kp50 := wireLatency(t, kf.ListenAddrs()[0], 20000, 5*time.Second)
	kf.Close()
	wp99, wp50 := wireLatency(t, addr, 20000, 5*time.Second)
	add(row{"latency over the listener at 20k rec/s", fmt.Sprintf("p99 %v (p50 %v)", wp99, wp50), fmt.Sprintf("p99 %v (p50 %v) kfake", kp99, kp50), "", "p99 < 10ms"})
	stop()
	b.Close()

	// 5. Open time and RSS with ~400 MB on disk, after a clean stop and
	// after a crash.
	on := envInt("WEIR_BENCH_OPEN_RECORDS", 2_000_000)
	odir := t.TempDir()
	fillDir(t, odir, on)
	cleanOpen, cleanRSS := openInChild(t, odir, false)
	crashOpen, crashRSS := openInChild(t, odir, true)
	size := dirSize(odir)
	add(row{fmt.Sprintf("open after clean stop (%d records, %d MB)", on, size>>20), cleanOpen.Round(time.Millisecond).String(), "", fmt.Sprintf("RSS %d MiB", cleanRSS>>20), "< 1s, RSS < 200 MiB"})
	add(row{fmt.Sprintf("open after crash (%d records, %d MB)", on, size>>20), crashOpen.Round(time.Millisecond).String(), "", fmt.Sprintf("RSS %d MiB", crashRSS>>20), "< 1s, RSS < 200 MiB"})

	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tWEIR\tBASELINE\tRATIO\tTARGET")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.name, r.value, r.baseline, r.ratio, r.target)
	}
	tw.Flush()
	fmt.Printf("\nweir broker figures (%d records per throughput run, GOMAXPROCS=%s):\n%s", n, os.Getenv("GOMAXPROCS"), sb.String())
}

// plainWrite is the baseline of in-process produce: n records of size
// bytes written to a new file through a 4 MiB buffer, removed after.
func plainWrite(t *testing.T, n, size int) float64 {
	name := filepath.Join(t.TempDir(), "plain")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(name)
	defer f.Close()
	w := bufio.NewWriterSize(f, 4<<20)
	rec := make([]byte, size)
	start := time.Now()
	for i := 0; i < n; i++ {
		w.Write(rec)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return rate(n, time.Since(start))
}

// inProcessProduce produces n records in calls of batch to a new log,
// removed after. It returns the rate and the log's bytes per record.
func inProcessProduce(t *testing.T, n int, opts ...embedded.Option) (float64, int) {
	dir, err := os.MkdirTemp(t.TempDir(), "produce")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	b, err := embedded.Open(dir, append([]embedded.Option{embedded.WithRetentionCheckInterval(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	recs := records(batch)
	start := time.Now()
	for i := 0; i < n; i += batch {
		if err := b.Produce(context.Background(), "bench", recs[:min(batch, n-i)]); err != nil {
			t.Fatal(err)
		}
	}
	r := rate(n, time.Since(start))
	infos, err := b.DescribeTopics(context.Background(), "bench")
	if err != nil {
		t.Fatal(err)
	}
	var bytes int64
	for _, p := range infos[0].Partitions {
		bytes += p.Bytes
	}
	return r, int(bytes / int64(n))
}

func serveWire(t *testing.T, b kafkawire.Log) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := kafkawire.New(b)
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	return ln.Addr().String(), func() { cancel(); <-done }
}

func wireProduce(t *testing.T, addr string, n int) float64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("wire"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	val := make([]byte, valueSize)
	keys := make([][]byte, devices)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("device-%04d", i))
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	wg.Add(n)
	start := time.Now()
	for i := 0; i < n; i++ {
		cl.Produce(context.Background(), &kgo.Record{Key: keys[i%devices], Value: val}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
			}
			wg.Done()
		})
	}
	wg.Wait()
	d := time.Since(start)
	if failed.Load() > 0 {
		t.Fatalf("%d produce errors against %s", failed.Load(), addr)
	}
	return rate(n, d)
}

func wireConsume(t *testing.T, addr string, n int) float64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("wire"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	for seen := 0; seen < n; {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d from %s", seen, n, addr)
		}
		seen += f.NumRecords()
	}
	return rate(n, time.Since(start))
}

// inProcessLatency produces single records at the given rate, each carrying
// its send time, and measures when a group consumer sees them.
func inProcessLatency(t *testing.T, b *embedded.Broker, perSec int, dur time.Duration) (p99, p50 time.Duration) {
	b.CreateTopic(context.Background(), "latency", broker.TopicConfig{Partitions: partitions})
	c, err := b.Consume(context.Background(), "latency", []string{"latency"}, broker.WithResetToLatest())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	total := perSec * int(dur/time.Second)
	lats := make([]time.Duration, 0, total)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for len(lats) < total {
			recs, err := c.Poll(context.Background())
			if err != nil {
				return
			}
			now := time.Now().UnixNano()
			for _, r := range recs {
				sent, _ := strconv.ParseInt(string(r.Value), 10, 64)
				lats = append(lats, time.Duration(now-sent))
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	pace(total, perSec, func(i int) {
		rec := []broker.Record{{Key: []byte(strconv.Itoa(i % devices)), Value: strconv.AppendInt(nil, time.Now().UnixNano(), 10)}}
		if err := b.Produce(context.Background(), "latency", rec); err != nil {
			t.Error(err)
		}
	})
	<-done
	return percentiles(lats)
}

func wireLatency(t *testing.T, addr string, perSec int, dur time.Duration) (p99, p50 time.Duration) {
	// No linger: franz-go's default 10ms would measure the client's
	// batching, not the broker.
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("wire.latency"), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	// Create the topic and wait for it before measuring.
	if err := prod.ProduceSync(context.Background(), &kgo.Record{Value: []byte("0")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("wire.latency"), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchMaxWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	cons.ForceMetadataRefresh()
	time.Sleep(500 * time.Millisecond)
	total := perSec * int(dur/time.Second)
	lats := make([]time.Duration, 0, total)
	done := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	go func() {
		defer close(done)
		for len(lats) < total && ctx.Err() == nil {
			f := cons.PollFetches(ctx)
			now := time.Now().UnixNano()
			f.EachRecord(func(r *kgo.Record) {
				sent, _ := strconv.ParseInt(string(r.Value), 10, 64)
				if sent > 0 {
					lats = append(lats, time.Duration(now-sent))
				}
			})
		}
	}()
	pace(total, perSec, func(i int) {
		prod.Produce(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i % devices)), Value: strconv.AppendInt(nil, time.Now().UnixNano(), 10)}, nil)
	})
	<-done
	return percentiles(lats)
}

// pace calls fn total times at perSec, in small bursts every millisecond.
func pace(total, perSec int, fn func(i int)) {
	start := time.Now()
	for i := 0; i < total; {
		due := int(time.Since(start).Seconds() * float64(perSec))
		for ; i < due && i < total; i++ {
			fn(i)
		}
		time.Sleep(time.Millisecond)
	}
}

func percentiles(lats []time.Duration) (p99, p50 time.Duration) {
	if len(lats) == 0 {
		return 0, 0
	}
	slices.Sort(lats)
	return lats[len(lats)*99/100].Round(time.Microsecond), lats[len(lats)/2].Round(time.Microsecond)
}

func fillDir(t *testing.T, dir string, n int) {
	b, err := embedded.Open(dir, embedded.WithRetentionCheckInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	recs := records(batch)
	for i := 0; i < n; i += batch {
		if err := b.Produce(context.Background(), "open", recs[:min(batch, n-i)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

const openChildEnv = "WEIR_BENCH_OPEN_DIR"

// openInChild opens dir in a fresh process, so its RSS is the broker's alone.
// crash removes the clean-shutdown marker first, which sends the open down
// the same full-scan recovery a kill -9 does.
func openInChild(t *testing.T, dir string, crash bool) (time.Duration, int64) {
	if crash {
		os.Remove(filepath.Join(dir, ".clean_shutdown"))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBrokerFigures$", "-test.count=1")
	cmd.Env = append(os.Environ(), openChildEnv+"="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("open child: %v %s", err, out)
	}
	var ns, rss int64
	for _, l := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(l, "open %d %d", &ns, &rss); err == nil {
			return time.Duration(ns), rss
		}
	}
	t.Fatalf("open child said %s", out)
	return 0, 0
}

func openChild() {
	dir := os.Getenv(openChildEnv)
	start := time.Now()
	b, err := embedded.Open(dir, embedded.WithRetentionCheckInterval(0))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	d := time.Since(start)
	// Read the last records of every partition, as a consumer resuming
	// would, so lookups are part of what memory holds.
	infos, _ := b.DescribeTopics(context.Background())
	var res broker.FetchResult
	for _, ti := range infos {
		for _, p := range ti.Partitions {
			b.Fetch(context.Background(), ti.Name, p.Partition, max(p.HighWatermark-10, 0), broker.FetchOptions{}, &res)
		}
	}
	b.Close()
	fmt.Printf("open %d %d\n", d.Nanoseconds(), peakRSS())
	os.Exit(0)
}

// peakRSS is this process's peak resident set (VmHWM). getrusage's maxrss
// would also count the parent's memory, which Linux carries over the
// vfork and exec that started us.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb * 1024
		}
	}
	return -1
}
