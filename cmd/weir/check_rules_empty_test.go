package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirnet/weir/enrich"
)

// TestCheckWarnsOfSyslogRulesFileWithoutRules: a rules file with no rule
// (empty, or every rule commented out) is legal and adds nothing, which a
// config naming it hardly means: weir check passes it with a warning, and
// a file with a rule gets none.
func TestCheckWarnsOfSyslogRulesFileWithoutRules(t *testing.T) {
	dir := t.TempDir()
	rules, cfg := filepath.Join(dir, "rules.yaml"), filepath.Join(dir, "weir.yaml")
	y := "http: {listen: off}\ndata_dir: " + filepath.Join(dir, "data") + "\nenrich:\n  syslog_rules: " + rules + "\n"
	if err := os.WriteFile(cfg, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	const oneRule = "rules:\n  - {name: late, match: 'x (?P<user>y)', event: config_changed, examples: [{line: x y, event: config_changed}]}\n"
	for _, c := range []struct {
		name, file string
		warn       bool
	}{
		{"empty", "", true},
		{"commented out", "# rules:\n#  - {name: late}\n", true},
		{"an empty list", "rules: []\n", true},
		{"one rule", oneRule, false},
	} {
		if err := os.WriteFile(rules, []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errw bytes.Buffer
		if err := dispatch(context.Background(), []string{"check", "-c", cfg}, strings.NewReader(""), &out, &errw); err != nil {
			t.Fatalf("%s: check: %v (%s)", c.name, err, errw.String())
		}
		want := rules + ": warning: no rules in the file: weir's own rules alone are used"
		if warned := strings.Contains(errw.String(), want); warned != c.warn {
			t.Errorf("%s: check printed %q; want the warning %q: %v", c.name, errw.String(), want, c.warn)
		}
	}
}

// TestRunWarnsOfSyslogRulesFileWithoutRules: weir run, at start and at
// each SIGHUP, logs the same warning as weir check.
func TestRunWarnsOfSyslogRulesFileWithoutRules(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	if _, err := useSyslogRules(enrich.NewClassifier(), rules, logger); err != nil {
		t.Fatal(err)
	}
	if want := `level=WARN msg="syslog rules: no rules in the file: weir's own rules alone are used" file=` + rules; !strings.Contains(log.String(), want) {
		t.Errorf("logged %q, want %q", log.String(), want)
	}
}
