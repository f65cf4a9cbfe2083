package main

import (
	"bufio"
	"os"
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
