package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
)

// TestRunRefusesMissingFilesBeforeStarting: weir run with an inventory,
// a syslog rules file or a certificate the config names missing (or, for
// the syslog rules, refused) fails as weir check does,
// naming the setting and its line, before anything starts: it opened the
// log (making data_dir) and bound its listeners first, only to stop them.
func TestRunRefusesMissingFilesBeforeStarting(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	badRules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(badRules, []byte("rules:\n  - {name: a, match: 'z (?P<user>y)', event: config_changed, examples: [{line: x y, event: config_changed}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"inventory", "enrich:\n  inventory: " + filepath.Join(dir, "nope.yaml") + "\n",
			[]string{"weir.yaml:5: enrich.inventory: stat ", "nope.yaml: no such file"}},
		{"syslog rules", "enrich:\n  syslog_rules: " + filepath.Join(dir, "nope.yaml") + "\nbroker:\n  kafka_listen: 127.0.0.1:0\n",
			[]string{"weir.yaml:5: enrich.syslog_rules: stat ", "nope.yaml: no such file"}},
		{"syslog rules whose example fails", "enrich:\n  syslog_rules: " + badRules + "\nbroker:\n  kafka_listen: 127.0.0.1:0\n",
			[]string{"weir.yaml:5: enrich.syslog_rules: " + badRules + ":2: rule \"a\": example \"x y\": matches no rule"}},
		{"kafka_tls", "broker:\n  kafka_listen: 127.0.0.1:0\n  kafka_tls: {cert_file: " + filepath.Join(dir, "c.pem") + ", key_file: " + filepath.Join(dir, "k.pem") + "}\n",
			[]string{"weir.yaml: broker.kafka_tls: ", "c.pem"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := filepath.Join(dir, "weir.yaml")
			head := "data_dir: " + data + "\nhttp:\n  listen: 127.0.0.1:0\n"
			if err := os.WriteFile(cfg, []byte(head+c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := dispatch(ctx, []string{"run", "-c", cfg, "--syslog-listen", "off", "--trap-listen", "off"}, strings.NewReader(""), &stdout, &stderr)
			if err == nil || exitCode(err) != 1 {
				t.Fatalf("weir run: %v (exit %d), want exit 1; stderr:\n%s", err, exitCode(err), stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if _, serr := os.Stat(data); serr == nil {
				t.Errorf("data_dir %s was made: the log was opened before the files were read (log:\n%s)", data, stderr.String())
			}
		})
	}
}

// TestRunReadsOnlyItsRolesFiles: weir run reads at start the files of
// the parts its roles run, as those parts would: a sink-only process
// starts without the collectors' inventory and certificates (on another
// machine), and a collector without a sink's.
func TestRunReadsOnlyItsRolesFiles(t *testing.T) {
	dir := t.TempDir()
	missing := func(name string) string { return filepath.Join(dir, name) }
	cfg := filepath.Join(dir, "weir.yaml")
	yaml := "enrich:\n  inventory: " + missing("inv.yaml") + "\n  syslog_rules: " + missing("rules.yaml") + "\n" +
		"syslog:\n  listeners:\n    - {protocol: tls, address: \"127.0.0.1:0\", cert_file: " + missing("syslog.pem") + ", key_file: " + missing("syslog.key") + "}\n" +
		"gnmi:\n  targets:\n    - {name: r1, address: \"192.0.2.1:57400\", tls: {ca_file: " + missing("gnmi-ca.pem") + "}, subscriptions: [{path: /a}]}\n" +
		"sinks:\n  - {type: webhook, name: w, url: \"https://192.0.2.2/\", topics: [events], tls: {ca_file: " + missing("sink-ca.pem") + "}}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := configs.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		roles     []string
		want, not []string
	}{
		{[]string{roleSink}, []string{"sink-ca.pem"}, []string{"inv.yaml", "rules.yaml", "syslog.pem", "gnmi-ca.pem"}},
		{[]string{roleEnrich}, []string{"inv.yaml", "rules.yaml"}, []string{"sink-ca.pem", "syslog.pem", "gnmi-ca.pem"}},
		{[]string{roleCollect}, []string{"inv.yaml", "syslog.pem", "gnmi-ca.pem"}, []string{"sink-ca.pem", "rules.yaml"}},
	} {
		roles := map[string]bool{}
		for _, r := range tc.roles {
			roles[r] = true
		}
		err := checkStartFiles(c, roles)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("roles %v: %q does not name %s", tc.roles, msg, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(msg, n) {
				t.Errorf("roles %v: %q names %s, a file no part of these roles reads", tc.roles, msg, n)
			}
		}
	}
}
