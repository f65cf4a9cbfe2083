package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerImageTrustsPublicCAs: the image's last stage has the system's
// CA certificates. debian:bookworm-slim has none, so a weir in it failed
// every TLS connection verified by the system's roots (broker.kafka's
// `tls: {}`, an https:// webhook, InfluxDB or remote-write url without
// ca_file) with "x509: certificate signed by unknown authority".
func TestDockerImageTrustsPublicCAs(t *testing.T) {
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last []string // the lines of the last stage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(strings.ToUpper(line), "FROM ") {
			last = nil
		}
		last = append(last, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	stage := strings.Join(last, "\n")
	if !strings.Contains(stage, "ca-certificates") {
		t.Errorf("the image's last stage installs no ca-certificates:\n%s", stage)
	}
}

// TestDockerBuildContextLeavesOutData: the build context leaves out what
// `make run` and `make build` leave in the checkout: the log in weir-data
// (up to gigabytes, sent to the daemon at every --build) and the binaries.
func TestDockerBuildContextLeavesOutData(t *testing.T) {
	data, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.Trim(strings.TrimSpace(l), "/")] = true
	}
	for _, p := range []string{"weir-data", "bin", ".git"} {
		if !have[p] {
			t.Errorf(".dockerignore does not list %s", p)
		}
	}
}

// TestDockerImageListensOutside: the image's own run (no config) takes
// syslog, traps and HTTP on every address of the container, as published
// ports reach them: weir's defaults are loopback, which `docker run -p
// 5514:5514/udp weir` never reached. Kafka stays on loopback (no
// credentials by default). The flags must be ones weir run takes.
func TestDockerImageListensOutside(t *testing.T) {
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var cmd []string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "CMD "); ok {
			if err := json.Unmarshal([]byte(rest), &cmd); err != nil {
				t.Fatalf("CMD %s: %v", rest, err)
			}
		}
	}
	flags := map[string]string{}
	for i := 0; i+1 < len(cmd); i++ {
		if strings.HasPrefix(cmd[i], "--") {
			flags[cmd[i]] = cmd[i+1]
		}
	}
	for flag, want := range map[string]string{"--syslog-listen": "0.0.0.0:5514", "--trap-listen": "0.0.0.0:5162", "--http-listen": "0.0.0.0:8080", "--data-dir": "/var/lib/weir"} {
		if flags[flag] != want {
			t.Errorf("CMD %q: %s %q, want %q", cmd, flag, flags[flag], want)
		}
	}
	if _, ok := flags["--kafka-listen"]; ok {
		t.Errorf("CMD %q opens the Kafka listener, which has no credentials by default", cmd)
	}
	for _, port := range []string{"5514/udp", "5514/tcp", "5162/udp", "8080/tcp"} {
		if !strings.Contains(string(data), "EXPOSE") || !strings.Contains(string(data), port) {
			t.Errorf("Dockerfile does not EXPOSE %s", port)
		}
	}
	// weir run takes them (a flag renamed would stop the image at once).
	if len(cmd) == 0 || cmd[0] != "run" {
		t.Fatalf("CMD %q does not run weir", cmd)
	}
	// Its addresses and data dir overridden after it (the last flag
	// wins), on a context already ended: it parses, starts and stops.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := append(append([]string{}, cmd...), "--data-dir", filepath.Join(t.TempDir(), "data"),
		"--syslog-listen", "off", "--trap-listen", "off", "--http-listen", "off", "--kafka-listen", "off")
	var stdout, stderr bytes.Buffer
	if err := dispatch(ctx, args, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Errorf("weir %q: %v\n%s", args, err, stderr.String())
	}
}
