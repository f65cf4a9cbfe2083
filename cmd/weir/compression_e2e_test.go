package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/broker/recordbatch"
)

// TestCompressedTopicsEndToEnd: lines sent with logger are stored in
// raw.syslog, enriched.syslog and events with broker.compression's codec
// (snappy by default), and kcat (librdkafka) reads every one of them back.
func TestCompressedTopicsEndToEnd(t *testing.T) {
	for _, name := range []string{"kcat", "logger"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Skip(name + " not installed")
		}
	}
	for _, codec := range []string{"snappy", "zstd", "lz4", "gzip"} {
		t.Run(codec, func(t *testing.T) {
			t.Parallel()
			dir, data := t.TempDir(), t.TempDir()
			var extra []string
			if codec != "snappy" { // snappy: the default, with no config
				cfg := filepath.Join(dir, "weir.yaml")
				if err := os.WriteFile(cfg, []byte("broker:\n  compression: "+codec+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				extra = []string{"-c", cfg}
			}
			p := startWeir(t, data, extra...)
			_, tcp := p.SyslogAddrs(t)
			_, port, _ := strings.Cut(tcp, ":")
			const n = 200
			var lines strings.Builder
			for i := range n {
				fmt.Fprintf(&lines, "%%LINK-3-UPDOWN: Interface GigabitEthernet0/%d, changed state to down\n", i)
			}
			cmd := exec.Command("logger", "-n", "127.0.0.1", "-P", port, "-T", "--rfc3164", "-t", "edge1")
			cmd.Stdin = strings.NewReader(lines.String())
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("logger: %v %s", err, out)
			}
			// kcat reads each topic whole; events has one per interface.
			for _, topic := range []string{"raw.syslog", "enriched.syslog", "events"} {
				var got []string
				for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
					out, err := exec.Command("kcat", "-b", p.KafkaAddr, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%s\n").CombinedOutput()
					got = strings.Split(strings.TrimSpace(string(out)), "\n")
					if err == nil && len(got) >= n {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("kcat read %d records of %s, want %d: %v\n%s\nweir:\n%s", len(got), topic, n, err, out, p.Logs())
					}
				}
				seen := map[string]bool{}
				for _, line := range got {
					for i := range n {
						if strings.Contains(line, fmt.Sprintf(`GigabitEthernet0/%d"`, i)) || strings.Contains(line, fmt.Sprintf("GigabitEthernet0/%d,", i)) {
							seen[fmt.Sprint(i)] = true
						}
					}
				}
				if len(got) != n || len(seen) != n {
					t.Errorf("%s: %d records naming %d of the %d interfaces", topic, len(got), len(seen), n)
				}
				// A batch compression would not shrink (a lone event) is
				// kept as it is.
				codecs := storedCodecs(t, data, topic)
				t.Logf("%s: batches by codec %v", topic, codecs)
				want := recordbatch.CodecNames[codec]
				others := len(codecs) - 1
				if _, ok := codecs[recordbatch.CodecNone]; ok {
					others--
				}
				if codecs[want] == 0 || others > 0 {
					t.Errorf("%s: batches by codec %v, want %s ones", topic, codecs, codec)
				}
			}
		})
	}
}

// storedCodecs counts the batches of topic in weir's data directory by
// codec.
func storedCodecs(t *testing.T, dataDir, topic string) map[int]int {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dataDir, topic+"-*", "*.log"))
	codecs := map[int]int{}
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := recordbatch.Split(b, func(h *recordbatch.Header, _ []byte) error {
			codecs[h.Codec()]++
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return codecs
}
