package enrich

import (
	"context"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestTrapsNamedByOIDAlone: a raw.traps record a Kafka client wrote with
// OIDs alone, no trap_name nor varbind names, raises the event weir's own
// receiver's record of it raises: the trap and its varbinds are named as
// the receiver names them. A linkDown of 1.3.6.1.6.3.1.1.5.3 raised
// nothing before, and was counted nowhere.
func TestTrapsNamedByOIDAlone(t *testing.T) {
	b := openBroker(t)
	now := time.Now()
	for _, value := range []string{
		`{"v":1,"device":"edge1","version":"2c","trap_oid":".1.3.6.1.6.3.1.1.5.3","source_addr":"192.0.2.1:50000","received_at":"` + now.Format(time.RFC3339Nano) + `",` +
			`"varbinds":[{"oid":".1.3.6.1.2.1.2.2.1.1.3","type":"Integer","value":3},{"oid":"1.3.6.1.2.1.31.1.1.1.1.3","type":"OctetString","value":"Gi0/3"}]}`,
		`{"v":1,"device":"edge1","version":"2c","trap_oid":"1.3.6.1.2.1.15.0.2","source_addr":"192.0.2.1:50000","received_at":"` + now.Format(time.RFC3339Nano) + `",` +
			`"varbinds":[{"oid":"1.3.6.1.2.1.15.3.1.2.10.0.0.9","type":"Integer","value":1}]}`,
	} {
		if err := b.Produce(context.Background(), telemetry.TopicRawTraps, []broker.Record{{Key: []byte("edge1"), Value: []byte(value)}}); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, ev := range trapEvents(t, b, 2) {
		got[ev.Type] = ev.Object
	}
	if got["interface_down"] != "Gi0/3" || got["bgp_peer_down"] != "10.0.0.9" || len(got) != 2 {
		t.Errorf("events %v, want interface_down of Gi0/3 and bgp_peer_down of 10.0.0.9", got)
	}
}
