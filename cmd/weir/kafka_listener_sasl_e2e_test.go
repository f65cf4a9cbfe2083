package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

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
		"      - {name: dashboards, password: \"${WEIR_TEST_KAFKA_DASH_PW}\", read_only: true, topics: [events, \"enriched.*\"], groups: [\"grafana-*\"]}\n"
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
	if err == nil || !strings.Contains(errs, "CLUSTER_AUTHORIZATION_FAILED") || !strings.Contains(errs, "read_only user") {
		t.Fatalf("produce as the read_only user: %v\n%s", err, errs)
	}
	_, errs, err = p.cli(t, "", append([]string{"topics", "delete", "enriched.syslog"}, secured("dashboards")...)...)
	if err == nil || !strings.Contains(errs, "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("topics delete as the read_only user: %v\n%s", err, errs)
	}
	// Its topics and groups: raw.syslog is not listed, nor readable; a
	// group outside grafana-* is refused, one in it works.
	out, errs, err = p.cli(t, "", append([]string{"topics", "list"}, secured("dashboards")...)...)
	if err != nil || !strings.Contains(out, "enriched.syslog") || strings.Contains(out, "raw.syslog") {
		t.Errorf("topics list as dashboards (topics: events, enriched.*): %v\n%s%s", err, out, errs)
	}
	if _, errs, err = p.cli(t, "", append([]string{"topics", "describe", "raw.syslog"}, secured("dashboards")...)...); err == nil || !strings.Contains(errs, "TOPIC_AUTHORIZATION_FAILED") {
		t.Errorf("topics describe raw.syslog as dashboards: %v\n%s", err, errs)
	}
	if _, errs, err = p.cli(t, "", append([]string{"consume", "enriched.syslog", "--from-beginning", "--group", "ops"}, secured("dashboards")...)...); err == nil || !strings.Contains(errs, "GROUP_AUTHORIZATION_FAILED") {
		t.Errorf("consume --group ops as dashboards: %v\n%s", err, errs)
	}
	if out, errs, err = p.cli(t, "", append([]string{"consume", "enriched.syslog", "--from-beginning", "--group", "grafana-e2e"}, secured("dashboards")...)...); err != nil || !strings.Contains(out, `"mnemonic":"UPDOWN"`) {
		t.Errorf("consume --group grafana-e2e as dashboards: %v\n%s%s", err, out, errs)
	}
	t.Setenv("WEIR_SASL_PASSWORD", "adm1n-s3cret")
	if _, errs, err := p.cli(t, "{}\n", append([]string{"produce", "scratch"}, secured("admin")...)...); err != nil {
		t.Fatalf("produce as admin: %v\n%s", err, errs)
	}
	if out, errs, err := p.cli(t, "", append([]string{"topics", "list"}, secured("admin")...)...); err != nil || !strings.Contains(out, "raw.syslog") {
		t.Errorf("topics list as admin: %v\n%s%s", err, out, errs)
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

// TestKafkaListenerSASLReload: a password changed in weir.yaml and
// SIGHUP: without a restart, the old password is refused and the new
// one accepted (SCRAM and PLAIN), a user made read_only can no longer
// produce, on a session authenticated before the reload too (its rights
// apply at once, as Kafka's ACLs do), and the log
// names the part reloaded with no restart needed. A file that removes
// kafka_sasl is not applied: the listener keeps its users.
func TestKafkaListenerSASLReload(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "weir.yaml")
	writeConfig := func(opsPassword string, opsReadOnly bool) {
		t.Helper()
		y := "broker:\n" +
			"  kafka_sasl:\n" +
			"    mechanisms: [SCRAM-SHA-512, PLAIN]\n" +
			"    users:\n" +
			fmt.Sprintf("      - {name: ops, password: %q, read_only: %v}\n", opsPassword, opsReadOnly) +
			"      - {name: dash, password: d4sh-pw, read_only: true}\n"
		if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig("old-s3cret", false)
	p := startWeir(t, t.TempDir(), "-c", cfg)
	p.waitLog(t, `sasl=SCRAM-SHA-512,PLAIN`, "the listener's start line does not say SASL is on")
	as := func(mech, user, password string, stdin string, args ...string) (string, error) {
		t.Helper()
		t.Setenv("WEIR_SASL_PASSWORD", password)
		_, errs, err := p.cli(t, stdin, append(args, "--brokers", p.KafkaAddr, "--sasl-mechanism", mech, "--sasl-username", user)...)
		return errs, err
	}
	if errs, err := as("SCRAM-SHA-512", "ops", "old-s3cret", "{}\n", "produce", "scratch"); err != nil {
		t.Fatalf("produce with the first password: %v\n%s", err, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	before, err := kgo.NewClient(kgo.SeedBrokers(p.KafkaAddr), kgo.DisableIdempotentWrite(),
		kgo.SASL(scram.Auth{User: "ops", Pass: "old-s3cret"}.AsSha512Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	if err := before.ProduceSync(ctx, &kgo.Record{Topic: "scratch", Value: []byte("{}")}).FirstErr(); err != nil {
		t.Fatalf("produce before the reload: %v", err)
	}

	writeConfig("n3w-s3cret", true)
	p.sighup(t, `msg="SIGHUP: reloaded"`)
	if !strings.Contains(p.Logs(), `parts="kafka listener users, `) {
		t.Errorf("the reload does not name the listener's users:\n%s", p.Logs())
	}
	if strings.Contains(p.Logs(), "restart_needed") {
		t.Errorf("a reload that changed only kafka_sasl's users says sections need a restart:\n%s", p.Logs())
	}
	for _, mech := range []string{"SCRAM-SHA-512", "PLAIN"} {
		if errs, err := as(mech, "ops", "old-s3cret", "", "topics", "list"); err == nil || !strings.Contains(errs, "SASL_AUTHENTICATION_FAILED") {
			t.Errorf("%s with the old password after SIGHUP: %v\n%s", mech, err, errs)
		}
		if errs, err := as(mech, "ops", "n3w-s3cret", "", "topics", "list"); err != nil {
			t.Errorf("%s with the new password after SIGHUP: %v\n%s", mech, err, errs)
		}
	}
	if errs, err := as("SCRAM-SHA-512", "ops", "n3w-s3cret", "{}\n", "produce", "scratch"); err == nil || !strings.Contains(errs, "CLUSTER_AUTHORIZATION_FAILED") {
		t.Errorf("produce as ops, read_only since the reload: %v\n%s", err, errs)
	}
	if err := before.ProduceSync(ctx, &kgo.Record{Topic: "scratch", Value: []byte("{}")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("produce on the session authenticated before the reload, read_only since: %v", err)
	}

	// Removing kafka_sasl would open the listener: not applied.
	if err := os.WriteFile(cfg, []byte("broker: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.sighup(t, "turning authentication off takes a restart")
	if errs, err := as("PLAIN", "ops", "n3w-s3cret", "", "topics", "list"); err != nil {
		t.Errorf("the new password after a reload that removed kafka_sasl: %v\n%s", err, errs)
	}
	if _, errs, err := p.cli(t, "", "topics", "list", "--brokers", p.KafkaAddr); err == nil {
		t.Errorf("topics list without SASL after a reload that removed kafka_sasl succeeded:\n%s", errs)
	}
}
