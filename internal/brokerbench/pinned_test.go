package brokerbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/embedded"
	"github.com/weirnet/weir/broker/kafkawire"
)

// The pinned comparison runs the broker (weir's Kafka listener or kfake) in
// one process on CPU 1 and the franz-go client in another on CPU 0, so the
// client no longer takes the broker's core: on two shared cores the client
// sets the rate for both brokers and hides what each costs.
const (
	pinnedServeEnv  = "WEIR_BENCH_SERVE"  // "weir" or "kfake": be the broker
	pinnedClientEnv = "WEIR_BENCH_CLIENT" // "produce ADDR N" or "consume ADDR N"
)

// pinnedChild runs the child roles; it reports whether this process is one.
func pinnedChild(t *testing.T) bool {
	if kind := os.Getenv(pinnedServeEnv); kind != "" {
		serveChild(kind)
		return true
	}
	if role := os.Getenv(pinnedClientEnv); role != "" {
		var op, addr string
		var n int
		fmt.Sscanf(role, "%s %s %d", &op, &addr, &n)
		var r float64
		if op == "produce" {
			r = wireProduce(t, addr, n)
		} else {
			r = wireConsume(t, addr, n)
		}
		fmt.Printf("rate %.0f\n", r)
		return true
	}
	return false
}

// serveChild serves a broker until stdin closes, printing its address,
// then its CPU time.
func serveChild(kind string) {
	dir, _ := os.MkdirTemp("", "brokerbench")
	defer os.RemoveAll(dir)
	var addr string
	var stop func()
	switch kind {
	case "weir":
		b, err := embedded.Open(dir, embedded.WithRetentionCheckInterval(0))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		b.CreateTopic(context.Background(), "wire", broker.TopicConfig{Partitions: partitions})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { kafkawire.New(b).Serve(ctx, ln); close(done) }()
		addr = ln.Addr().String()
		stop = func() { cancel(); <-done; b.Close() }
	default:
		kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DataDir(dir), kfake.SeedTopics(partitions, "wire"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		addr, stop = kf.ListenAddrs()[0], kf.Close
	}
	if path := os.Getenv("WEIR_BENCH_SERVE_PROFILE"); path != "" {
		f, err := os.Create(path + "." + kind)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
	}
	fmt.Println("addr", addr)
	io.Copy(io.Discard, os.Stdin)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("cpu %d\n", ru.Utime.Nano()+ru.Stime.Nano())
	stop()
	pprof.StopCPUProfile()
	os.Exit(0)
}

// pinnedRound starts a broker of kind on CPU 1, produces then consumes n
// records with a client on CPU 0, and returns both rates and the broker's
// CPU time per record over the two.
func pinnedRound(t *testing.T, kind string, n int) (prod, cons float64, cpuPerRec time.Duration) {
	srv := exec.Command("taskset", "-c", "1", os.Args[0], "-test.run=^TestBrokerFigures$", "-test.count=1")
	srv.Env = append(os.Environ(), pinnedServeEnv+"="+kind)
	stdin, _ := srv.StdinPipe()
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatalf("start %s broker: %v", kind, err)
	}
	lines := bufio.NewScanner(stdout)
	next := func(prefix string) string {
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), prefix+" "); ok {
				return rest
			}
		}
		t.Fatalf("%s broker: no %q line", kind, prefix)
		return ""
	}
	addr := next("addr")
	client := func(op string) float64 {
		cmd := exec.Command("taskset", "-c", "0", os.Args[0], "-test.run=^TestBrokerFigures$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d", pinnedClientEnv, op, addr, n))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s client against %s: %v %s", op, kind, err, out)
		}
		var r float64
		for _, l := range strings.Split(string(out), "\n") {
			if _, err := fmt.Sscanf(l, "rate %f", &r); err == nil {
				return r
			}
		}
		t.Fatalf("%s client said %s", op, out)
		return 0
	}
	prod = client("produce")
	cons = client("consume")
	stdin.Close()
	var cpu int64
	fmt.Sscanf(next("cpu"), "%d", &cpu)
	srv.Wait()
	return prod, cons, time.Duration(cpu / int64(2*n))
}

// pinnedFigures alternates the two brokers over three rounds and keeps
// each one's best.
func pinnedFigures(t *testing.T, n int, add func(row)) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Logf("no taskset: pinned comparison skipped")
		return
	}
	best := map[string][3]float64{}
	for range 3 {
		for _, kind := range []string{"kfake", "weir"} {
			p, c, cpu := pinnedRound(t, kind, n)
			b := best[kind]
			if b[2] == 0 || float64(cpu) < b[2] {
				b[2] = float64(cpu)
			}
			b[0], b[1] = max(b[0], p), max(b[1], c)
			best[kind] = b
		}
	}
	w, k := best["weir"], best["kfake"]
	add(row{"pinned: listener produce, broker on CPU 1, client on CPU 0", fmtRate(w[0]), fmtRate(k[0]) + " kfake", fmt.Sprintf("%.2fx", w[0]/k[0]), ">= 1.3x kfake"})
	add(row{"pinned: listener consume, broker on CPU 1, client on CPU 0", fmtRate(w[1]), fmtRate(k[1]) + " kfake", fmt.Sprintf("%.2fx", w[1]/k[1]), ">= 1.5x kfake"})
	add(row{"pinned: broker CPU per record (produce + consume)", fmt.Sprintf("%v", time.Duration(w[2])), fmt.Sprintf("%v kfake", time.Duration(k[2])), fmt.Sprintf("%.2fx less", k[2]/w[2]), ""})
}
