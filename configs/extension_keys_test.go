package configs

import (
	"strings"
	"testing"
	"time"
)

// Top-level keys that begin with "x-" are the operator's own, as in
// docker-compose files: a place for anchors that belong to no section.
func TestExtensionKeysAtTopLevel(t *testing.T) {
	cfg, err := Parse([]byte(`
x-snmp-common: &common
  community: lab
  interval: 30s
x-notes: "core switches, see the wiki"
snmp:
  targets:
    - <<: *common
      name: a
      address: 192.0.2.1
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.SNMP.Targets[0]; got.Community != "lab" || got.Interval != 30*time.Second {
		t.Errorf("target a: community %q interval %v, want lab 30s", got.Community, got.Interval)
	}
}

// Only at the top level, and only "x-": elsewhere an unknown key is still
// a mistake.
func TestExtensionKeysElsewhereRefused(t *testing.T) {
	for _, doc := range []string{
		"snmp:\n  x-common: 1\n",
		"xnotes: 1\n",
		"X-notes: 1\n",
	} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%q: err %v, want an unknown key", doc, err)
		}
	}
}

// ${VAR} in an anchor under an extension key is expanded where it is used.
func TestExtensionKeysExpandEnv(t *testing.T) {
	t.Setenv("WEIR_TEST_COMMUNITY", "from-env")
	cfg, err := Parse([]byte(`
x-common: &common
  community: ${WEIR_TEST_COMMUNITY}
snmp:
  targets:
    - <<: *common
      name: a
      address: 192.0.2.1
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.SNMP.Targets[0].Community; got != "from-env" {
		t.Errorf("community %q, want from-env", got)
	}
}

// An extension key is the operator's: a ${VAR} in one nothing uses (a
// template kept for later, a note) need not be set. One an alias uses is
// expanded where it is used, once however many use it: a value that
// holds "${" after its expansion is data, not expanded again.
func TestExtensionKeysUnusedEnvNotRequired(t *testing.T) {
	t.Setenv("WEIR_TEST_COMMUNITY", "a${b}")
	cfg, err := Parse([]byte(`
x-later: {community: "${WEIR_TEST_SURELY_UNSET}"}
x-common: &common
  community: ${WEIR_TEST_COMMUNITY}
snmp:
  targets:
    - {<<: *common, name: a, address: 192.0.2.1}
    - {<<: *common, name: b, address: 192.0.2.2}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range cfg.SNMP.Targets {
		if tg.Community != "a${b}" {
			t.Errorf("target %s: community %q, want a${b}", tg.Name, tg.Community)
		}
	}
}
