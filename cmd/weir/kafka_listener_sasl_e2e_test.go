package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/internal/tlsconf/tlstest"
)

// TestKafkaListenerSASLEndToEnd: weir run with broker.kafka_tls and
// kafka_sasl (passwords from the environment): its own parts need no
// credentials, so a line sent with logger is enriched as without them;
// kcat (SASL_SSL, SCRAM-SHA-512) and weir's own CLI (--tls-ca,
// --sasl-mechanism) read it; the read_only user may not produce or
// delete the topic; a wrong password is refused with a clear
// error and counted; a client without SASL gets nothing.
func TestKafkaListenerSASLEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger not installed")
	}
	ca := tlstest.NewCA(t, "weir-ca")
	cert, key := ca.LeafFiles(t, "weir")
	t.Setenv("WEIR_TEST_KAFKA_ADMIN_PW", "adm1n-s3cret")
	t.Setenv("WEIR_TEST_KAFKA_DASH_PW", "d4sh-s3cret")
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	y := "broker:\n" +
		"  kafka_tls: {cert_file: " + cert + ", key_file: " + key + "}\n" +
		"  kafka_sasl:\n" +
		"    mechanisms: [SCRAM-SHA-512, PLAIN]\n" +
		"    users:\n" +
		"      - {name: admin, password: \"${WEIR_TEST_KAFKA_ADMIN_PW}\"}\n" +
		"      - {name: dashboards, password: \"${WEIR_TEST_KAFKA_DASH_PW}\", read_only: true}\n"
	if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startWeir(t, t.TempDir(), "-c", cfg)
	p.waitLog(t, `sasl=SCRAM-SHA-512,PLAIN`, "the listener's start line does not say SASL is on")
	p.arista(t, "%LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet7, changed state to down")

	secured := func(user string) []string {
		return []string{"--brokers", p.KafkaAddr, "--tls-ca", ca.File, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-username", user}
	}
	var out string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		t.Setenv("WEIR_SASL_PASSWORD", "d4sh-s3cret")
		var errs string
		out, errs, _ = p.cli(t, "", append([]string{"consume", "enriched.syslog", "--from-beginning"}, secured("dashboards")...)...)
		if strings.Contains(out, `"mnemonic":"UPDOWN"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("weir consume with SASL: %s\n%s\n%s", out, errs, p.Logs())
		}
	}

	if _, err := exec.LookPath("kcat"); err != nil {
		t.Log("kcat not installed: skipping its part")
	} else {
		kc := exec.Command("kcat", "-b", p.KafkaAddr, "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
			"-X", "sasl.username=dashboards", "-X", "sasl.password=d4sh-s3cret", "-X", "ssl.ca.location="+ca.File,
			"-C", "-t", "enriched.syslog", "-o", "beginning", "-e", "-q")
		var kout, kerr bytes.Buffer
		kc.Stdout, kc.Stderr = &kout, &kerr
		if err := kc.Run(); err != nil || !strings.Contains(kout.String(), `"mnemonic":"UPDOWN"`) {
			t.Fatalf("kcat SASL_SSL: %v\n%s\n%s", err, kout.String(), kerr.String())
		}
	}

	// The read_only user may not write or delete; the admin may.
	_, errs, err := p.cli(t, "{}\n", append([]string{"produce", "enriched.syslog"}, secured("dashboards")...)...)
	// weir produce is idempotent: its InitProducerID is refused
	// first, as Kafka refuses it without IDEMPOTENT_WRITE.
	if err == nil || !strings.Contains(errs, "CLUSTER_AUTHORIZATION_FAILED") {
		t.Fatalf("produce as the read_only user: %v\n%s", err, errs)
	}
	_, errs, err = p.cli(t, "", append([]string{"topics", "delete", "enriched.syslog"}, secured("dashboards")...)...)
	if err == nil || !strings.Contains(errs, "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("topics delete as the read_only user: %v\n%s", err, errs)
	}
	t.Setenv("WEIR_SASL_PASSWORD", "adm1n-s3cret")
	if _, errs, err := p.cli(t, "{}\n", append([]string{"produce", "scratch"}, secured("admin")...)...); err != nil {
		t.Fatalf("produce as admin: %v\n%s", err, errs)
	}

	// A wrong password: the CLI says authentication failed.
	t.Setenv("WEIR_SASL_PASSWORD", "wrong")
	_, errs, err = p.cli(t, "", append([]string{"topics", "list"}, secured("dashboards")...)...)
	if err == nil || !strings.Contains(errs, "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("topics list with a wrong password: %v\n%s", err, errs)
	}
	t.Logf("wrong password: %s", strings.TrimSpace(errs))
	// Without SASL (TLS only): refused.
	_, errs, err = p.cli(t, "", "topics", "list", "--brokers", p.KafkaAddr, "--tls-ca", ca.File)
	if err == nil {
		t.Fatalf("topics list without SASL succeeded:\n%s", errs)
	}
	p.waitLog(t, "kafka client: authentication failed", "no log line for the refused client")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		m := p.Metrics(t)
		if m[`weir_kafka_auth_failures_total{reason="credentials"}`] >= 1 && m[`weir_kafka_auth_failures_total{reason="unauthenticated"}`] >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("auth failures not counted: %v", m)
		}
	}
}
