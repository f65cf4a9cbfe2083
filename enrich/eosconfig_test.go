package enrich

import (
	"testing"
	"time"
)

// TestEOSConfigOverEAPISource: EOS names an eAPI session's terminal
// command-api, with the client's address as for a vty ("Message from
// arista on command-api (10.22.1.107)", the SYS-6-LOGMSG_INFO a remote
// eAPI call logs). A change made over it, %SYS-5-CONFIG_I "by admin on
// command-api (A)", has the client's address as its source, as "on vty0
// (A)" does (enrich/README.md), not the "console" it was configured from;
// the local socket's "(unix:)" is no address.
func TestEOSConfigOverEAPISource(t *testing.T) {
	for _, c := range []struct{ line, user, source string }{
		{"<189>Jun 29 13:47:35 eos1 ConfigAgent: %SYS-5-CONFIG_I: Configured from console by admin on command-api (10.22.1.107)", "admin", "10.22.1.107"},
		{"<189>Jun 29 13:47:35 eos1 FastCapi: 1039: %SYS-5-CONFIG_I: Configured from console by local_command_api on command-api (unix:)", "local_command_api", "console"},
	} {
		recs, evs := syslogLineRecords(t, time.Hour, c.line)
		if len(recs) != 1 || len(evs) != 1 {
			t.Fatalf("%s: %d records, %d events; want one of each", c.line, len(recs), len(evs))
		}
		if r := recs[0]; r.Event != "config_changed" || r.Fields["user"] != c.user || r.Fields["source"] != c.source || evs[0].Object != c.user {
			t.Errorf("%s: %q, %v, event about %q; want config_changed by %s from %s", c.line, r.Event, r.Fields, evs[0].Object, c.user, c.source)
		}
	}
}
