package enrich

import (
	"testing"
	"time"
)

// TestFortinetLoginSource: FortiOS 6 and later write the client's address
// as srcip= in a successful admin login's log (logid 0100032001), as in a
// failed one's: the enriched record's source, as enrich/README.md says of
// Fortinet's logins and failed ones.
func TestFortinetLoginSource(t *testing.T) {
	recs, evs := syslogLineRecords(t, time.Hour,
		`<189>date=2019-05-13 time=11:20:54 devname="fw1" devid="FGT60ETEST00001" logid="0100032001" type="event" subtype="system" level="information" vd="vdom1" eventtime=1557771654587081441 logdesc="Admin login successful" sn="1557771654" user="admin" ui="ssh(172.16.200.254)" method="ssh" srcip=172.16.200.254 dstip=172.16.200.2 action="login" status="success" reason="none" profile="super_admin" msg="Administrator admin logged in successfully from ssh(172.16.200.254)"`)
	if len(recs) != 1 {
		t.Fatalf("%d records enriched, want 1", len(recs))
	}
	if r := recs[0]; r.Event != "login_succeeded" || r.Fields["user"] != "admin" || r.Fields["source"] != "172.16.200.254" {
		t.Errorf("enriched %q, %v; want login_succeeded by admin from 172.16.200.254", r.Event, r.Fields)
	}
	if len(evs) != 1 || evs[0].Object != "admin" {
		t.Errorf("events %+v, want one about admin", evs)
	}
}
