package enrich

import (
	"testing"
	"time"
)

// TestConfigChangeSource: IOS's and EOS's %SYS-5-CONFIG_I names the user
// and the line they configured from, with the client's address: "by
// netops on vty0 (10.1.1.5)". That address is the change's source, as a
// line naming no user ("by vty2 (10.1.1.5)") and the login lines give
// theirs; the enriched record's source was "console" (IOS's word for the
// CLI, "Configured from console"), the address lost.
func TestConfigChangeSource(t *testing.T) {
	for _, c := range []struct{ line, user, source string }{
		{"<189>51: edge1: Nov 29 14:05:00.000 UTC: %SYS-5-CONFIG_I: Configured from console by netops on vty0 (10.34.195.36)", "netops", "10.34.195.36"},
		{"<189>Nov 29 14:09:00 leaf1 ConfigAgent: %SYS-5-CONFIG_I: Configured from console by admin on vty3 (10.0.0.9)", "admin", "10.0.0.9"},
		{"<189>52: edge1: Nov 29 14:05:00.000 UTC: %SYS-5-CONFIG_I: Configured from console by admin on vty1 (2001:DB8::5)", "admin", "2001:DB8::5"},
		// At the console: no address.
		{"<189>53: edge1: Nov 29 14:05:00.000 UTC: %SYS-5-CONFIG_I: Configured from console by netops on console", "netops", "console"},
		{"<189>54: edge1: Nov 29 14:05:00.000 UTC: %SYS-5-CONFIG_I: Configured from console by vty2 (10.34.195.37)", "", "10.34.195.37"},
	} {
		enriched, evs := syslogLineRecords(t, time.Second, c.line)
		if len(enriched) != 1 || enriched[0].Event != "config_changed" || enriched[0].Fields["user"] != c.user || enriched[0].Fields["source"] != c.source {
			t.Errorf("%s: enriched %+v, want config_changed with user %q, source %q", c.line, enriched[0].Fields, c.user, c.source)
		}
		if want := c.user; want == "" && (len(evs) != 1 || evs[0].Object != c.source) || want != "" && (len(evs) != 1 || evs[0].Object != want) {
			t.Errorf("%s: events %+v, want one config_changed about %q (else %q)", c.line, evs, c.user, c.source)
		}
	}
}
