package enrich

import (
	"bytes"
	"slices"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/telemetry"
)

// TestGNMIStateReadBackLeavesTheWindowsState: the states the warm-up's
// read back finds past the window do not take the place of the window's,
// whatever the device's clock said, and among themselves are taken as a
// worker that ran all along took them, in log order by its clock then.
// Each case is spine1's Ethernet1: the window's records, then the read
// back's (each at its log time, stamped by the device), then a live UP or
// DOWN, which is the change a worker that ran all along saw. Before, a
// read back state stamped ahead (a device clock a day ahead, set right
// since) took the window's place, a resync delete stamped by weir's clock
// marked deleted the window's state of a device whose clock is behind,
// and a state after the clock was set right did not take the place of one
// stamped ahead before: no event. Nor does a state the worker kept from
// before it lost the partition stay, when the read back has a newer one.
func TestGNMIStateReadBackLeavesTheWindowsState(t *testing.T) {
	const iface = "/interfaces/interface[name=Ethernet1]/state"
	now := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	// oper is Ethernet1's oper-status v stamped at by the device, in the
	// log at logAt.
	oper := func(at, logAt time.Time, v string) []broker.Record {
		return gnmiRecords(t, gnmiNotification(t, at, iface, map[string]any{"oper-status": v}), logAt)
	}
	del := func(at, logAt time.Time) []broker.Record {
		return gnmiRecords(t, &gpb.Notification{Timestamp: at.UnixNano(),
			Delete: []*gpb.Path{mustPath(t, "/interfaces/interface[name=Ethernet1]")}}, logAt)
	}
	day := 24 * time.Hour
	for _, tc := range []struct {
		name           string
		window, before []broker.Record
		live           []broker.Record
		want           string
		// stale are what the worker enriched live before it lost the
		// partition, which it now takes back.
		stale []broker.Record
	}{
		{"a read back state stamped ahead",
			oper(now.Add(-5*time.Minute), now.Add(-5*time.Minute), "DOWN"),
			oper(now.Add(day), now.Add(-3*day), "UP"),
			oper(now, now, "UP"), "interface_up", nil},
		{"a resync delete after a device clock behind",
			oper(now.Add(-time.Hour), now.Add(-5*time.Minute), "UP"),
			del(now.Add(-20*time.Minute), now.Add(-20*time.Minute)),
			oper(now.Add(-55*time.Minute), now, "DOWN"), "interface_down", nil},
		{"a device clock set back within the read back",
			nil,
			append(oper(now.Add(day), now.Add(-3*day), "UP"), oper(now.Add(-2*day), now.Add(-2*day), "DOWN")...),
			oper(now, now, "UP"), "interface_up", nil},
		{"a state the worker kept from before it lost the partition",
			nil,
			oper(now.Add(-2*time.Hour), now.Add(-2*time.Hour), "DOWN"),
			oper(now, now, "UP"), "interface_up",
			oper(now.Add(-3*time.Hour), now.Add(-3*time.Hour), "UP")},
	} {
		inv, _ := ParseInventory([]byte(testInventory))
		// A worker that ran all along: the records in log order, each
		// enriched when it came.
		all := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
		var ran []string
		for _, r := range slices.Concat(tc.stale, tc.before, tc.window, tc.live) {
			all.rates.setNow(r.Timestamp)
			evs, _ := all.enrich(&r)
			if r.Timestamp.Equal(now) {
				for _, ev := range evs {
					ran = append(ran, ev.Type)
				}
			}
		}
		if !slices.Equal(ran, []string{tc.want}) {
			t.Fatalf("%s: a worker that ran all along: live events %q, want %s", tc.name, ran, tc.want)
		}
		w := NewMetricsWorker(nil, inv, WithInputTopic(telemetry.TopicRawGNMI))
		for _, r := range tc.stale {
			w.rates.setNow(r.Timestamp)
			w.enrich(&r)
		}
		w.rates.setNow(now)
		for _, r := range tc.window {
			w.warm(&r, now)
		}
		for _, r := range tc.before {
			w.warmOlder(&r, now)
		}
		var got []string
		for _, r := range tc.live {
			evs, _ := w.enrich(&r)
			for _, ev := range evs {
				got = append(got, ev.Type)
			}
		}
		if !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s: live events %q, want %s", tc.name, got, tc.want)
		}
	}
}

// TestQuietStatePicksWhatEnrichmentReads: the read back's look for state
// records picks each record enrichment reads as an on_change state or its
// delete, also as JSON another producer to raw.gnmi writes it (spaced, a
// key escaped), and no counters. Before, it looked for {"deleted" and
// -stat as the collector writes them, and missed the others.
func TestQuietStatePicksWhatEnrichmentReads(t *testing.T) {
	now := time.Now()
	st := gnmiOper(t, now, "Ethernet1", "UP")[0]
	dl := gnmiRecords(t, &gpb.Notification{Timestamp: now.UnixNano(),
		Delete: []*gpb.Path{mustPath(t, "/interfaces/interface[name=Ethernet1]")}}, now)[0]
	replace := func(v []byte, old, new string) []byte { return bytes.ReplaceAll(v, []byte(old), []byte(new)) }
	var dec telemetry.Decoder
	var p telemetry.Point
	for _, tc := range []struct {
		v    []byte
		want bool
	}{
		{st.Value, true},
		{dl.Value, true},
		{replace(st.Value, "oper-status", `oper\u002dstatus`), true},
		{replace(dl.Value, `{"deleted":true}`, `{ "deleted": true }`), true},
		{replace(dl.Value, `"deleted"`, `"del\u0065ted"`), true},
		{replace(dl.Value, `{"deleted":true}`, "{\n  \"deleted\": true\n}"), true},
		{gnmiCounters(t, now, "Ethernet1", 1000)[0].Value, false},
	} {
		if err := dec.DecodePoint(tc.v, &p); err != nil {
			t.Fatalf("%s: %v", tc.v, err)
		}
		_, state := openConfigState(&p)
		_, del := openConfigDelete(&p)
		if (state || del) != tc.want {
			t.Fatalf("%s: enrichment reads a state %v or delete %v, want %v", tc.v, state, del, tc.want)
		}
		r := st
		r.Value = tc.v
		if got := quietState(&dec, &p, &r); got != tc.want {
			t.Errorf("%s: picked %v, want %v", tc.v, got, tc.want)
		}
	}
}

// FuzzQuietStatePicksWhatEnrichmentReads: whatever the bytes, a record
// that decodes as an on_change state or its delete is picked by the read
// back's look for them.
func FuzzQuietStatePicksWhatEnrichmentReads(f *testing.F) {
	now := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	t := testing.TB(f)
	f.Add(gnmiOper(t, now, "Ethernet1", "UP")[0].Value)
	f.Add(gnmiRecords(t, &gpb.Notification{Timestamp: now.UnixNano(),
		Delete: []*gpb.Path{mustPath(t, "/interfaces/interface[name=Ethernet1]")}}, now)[0].Value)
	f.Add(gnmiCounters(t, now, "Ethernet1", 1000)[0].Value)
	f.Fuzz(func(t *testing.T, v []byte) {
		var dec telemetry.Decoder
		var p telemetry.Point
		if dec.DecodePoint(v, &p) != nil || p.Device == "" {
			return
		}
		ch, state := openConfigState(&p)
		_, del := openConfigDelete(&p)
		if !(state && ch.object != "" || del) {
			return
		}
		r := broker.Record{Value: v}
		if !quietState(&dec, &p, &r) {
			t.Errorf("%q: read as a state %v or a delete %v, not picked", v, state, del)
		}
	})
}
