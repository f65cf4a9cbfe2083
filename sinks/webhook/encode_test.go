package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/sinks"
	"github.com/weirnet/weir/telemetry"
)

var notLabelChar = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// oracle is the alert logic as it was with maps and json.Marshal, to check
// the encoder against.
type oracle struct {
	active map[string]Alert
	resend time.Duration
}

func (o *oracle) alerts(items []sinks.Item, now time.Time) []Alert {
	labels := func(alertname string, e *telemetry.Event) map[string]string {
		l := make(map[string]string, len(e.Tags)+3)
		for k, v := range e.Tags {
			k = notLabelChar.ReplaceAllString(k, "_")
			if k != "" && k[0] >= '0' && k[0] <= '9' {
				k = "_" + k
			}
			if old, ok := l[k]; v != "" && k != "" && (!ok || v < old) {
				l[k] = v
			}
		}
		l["alertname"] = alertname
		l["device"] = e.Device
		if e.Object != "" {
			l["object"] = e.Object
		}
		return l
	}
	// key is the alert's key: the object as every path spells it, each
	// byte that is not UTF-8 as U+FFFD (as the state file's JSON writes
	// it).
	valid := func(s string) string {
		var b strings.Builder
		for _, r := range s { // a byte that is not UTF-8 ranges as U+FFFD
			b.WriteRune(r)
		}
		return b.String()
	}
	key := func(name string, e *telemetry.Event) string {
		obj := e.Object
		if obj == "" {
			obj = e.Tags["object"]
		}
		return valid(name) + "\x00" + valid(e.Device) + "\x00" + valid(telemetry.ObjectID(name, obj))
	}
	// What the batch did so far with a key: the alert firing (the first
	// event since the last resolution, or the remembered one it fired
	// again), nil when resolved or never fired.
	inBatch := map[string]*Alert{}
	type op struct {
		resolved bool
		key      string
		fresh    Alert
		event    string
	}
	var ops []op
	alerts := make([]Alert, 0, len(items))
	for i := range items {
		e := items[i].Event
		at := e.Time
		if at.IsZero() || at.After(now) { // not after the post
			at = now
		}
		name, resolved := resolves(e.Type)
		if !resolved {
			name = e.Type
		}
		k := key(name, e)
		var prior *Alert
		if a, seen := inBatch[k]; seen {
			prior = a
		} else if a, ok := o.active[k]; ok {
			prior = &a
		}
		if resolved {
			l := labels(name, e)
			a := Alert{Labels: l, StartsAt: at, EndsAt: &at,
				Annotations: map[string]string{"summary": e.Message, "resolved_by": e.Type}}
			if prior != nil {
				a.StartsAt = prior.StartsAt
				a.Labels = prior.Labels
				if at.Before(prior.StartsAt) {
					a.EndsAt = &prior.StartsAt // Alertmanager refuses an end before the start
				}
			}
			inBatch[k] = nil
			ops = append(ops, op{resolved: true, key: k})
			alerts = append(alerts, a)
			continue
		}
		l := labels(e.Type, e)
		ann := map[string]string{"summary": e.Message}
		if e.Severity != "" {
			ann["severity"] = e.Severity
		}
		if e.Count > 0 {
			ann["count"] = fmt.Sprint(e.Count)
		}
		ann["cause"] = fmt.Sprintf("%s/%d@%d", e.Cause.Topic, e.Cause.Partition, e.Cause.Offset)
		fresh := Alert{Labels: l, Annotations: ann, StartsAt: at}
		a := fresh
		if prior != nil && resolvable(e.Type) {
			a.Labels, a.StartsAt = prior.Labels, prior.StartsAt
		}
		if resolvable(e.Type) {
			end := now.Add(4 * o.resend) // past the next re-sends
			a.EndsAt = &end
		}
		if _, seen := inBatch[k]; !seen || inBatch[k] == nil {
			if !resolvable(e.Type) {
				if !seen {
					inBatch[k] = nil
				}
			} else if prior != nil {
				inBatch[k] = prior
			} else {
				f := fresh
				inBatch[k] = &f
			}
		}
		ops = append(ops, op{key: k, fresh: fresh, event: e.Type})
		alerts = append(alerts, a)
	}
	for _, x := range ops {
		_, active := o.active[x.key]
		switch {
		case x.resolved:
			delete(o.active, x.key)
		case !active && resolvable(x.event):
			o.active[x.key] = x.fresh
		}
	}
	return alerts
}

// TestAlertEncodingMatchesJSONMarshal: random batches of events give the
// bytes json.Marshal gave for the same alerts, and the same firing alerts
// are remembered.
func TestAlertEncodingMatchesJSONMarshal(t *testing.T) {
	var got []byte
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
	}))
	defer hs.Close()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s, err := NewSink(configs.Sink{Name: "am", URL: hs.URL, Format: "alertmanager"}, sinks.Env{}, func() time.Time { return now }, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	o := &oracle{active: map[string]Alert{}, resend: time.Hour}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	odd := []string{"", "ams1", `a "quoted" <b> & c`, "tab\there\nnl", "caf\xe9", "\u2028\u2029", "é😀", "\x01\x7f", "\\"}
	for batch := 0; batch < 300; batch++ {
		items := make([]sinks.Item, 1+rng.IntN(20))
		for i := range items {
			e := &telemetry.Event{V: 1,
				Type:     pick("interface_down", "interface_up", "bgp_peer_flapping", "bgp_peer_flapping_cleared", "config_changed", "device_unreachable", "device_reachable"),
				Device:   pick("r1", "r2", "", odd[rng.IntN(len(odd))]),
				Object:   pick("", "Ethernet1", "Ethernet2", "Et1", odd[rng.IntN(len(odd))]),
				Severity: pick("", "error", "info"),
				Message:  pick("down", "", odd[rng.IntN(len(odd))]),
				Count:    rng.IntN(3) - 1,
				Cause:    telemetry.Cause{Topic: pick("enriched.syslog", odd[rng.IntN(len(odd))]), Partition: rng.Int32N(4), Offset: rng.Int64()},
			}
			if e.Object != "" && rng.IntN(3) > 0 { // as enrichment sets it; else an earlier build's event
				e.ObjectID = map[string]string{"Ethernet1": "et1", "Et1": "et1", "Ethernet2": "et2"}[e.Object]
				if e.ObjectID == "" {
					e.ObjectID = e.Object
				}
			}
			if rng.IntN(4) > 0 {
				// Before the post mostly, in zones; after it too (a
				// device clock ahead), which is posted as now.
				e.Time = now.Add(time.Duration(rng.Int64N(1e12)) - 8e11).In(time.FixedZone("x", 3600*(rng.IntN(5)-2)))
			}
			if rng.IntN(3) > 0 {
				e.Tags = map[string]string{}
				for range rng.IntN(4) {
					e.Tags[pick("site", "role", "object", "device", "alertname", odd[rng.IntN(len(odd))])] = odd[rng.IntN(len(odd))]
				}
			}
			items[i] = sinks.Item{Event: e}
		}
		want, err := json.Marshal(o.alerts(items, now))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(context.Background(), items); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("batch %d:\ngot  %s\nwant %s", batch, got, want)
		}
		if !reflect.DeepEqual(s.active, o.active) {
			t.Fatalf("batch %d: active alerts differ:\ngot  %v\nwant %v", batch, s.active, o.active)
		}
	}
	if len(s.active) == 0 {
		t.Fatal("no alert stayed active: the test does not test much")
	}
}

// TestAlertEncodingTimeOutOfRange: a time json.Marshal refuses is refused
// the same way. (One after the year 9999 is after now, so posted as now:
// the year before 0 is the one that still reaches the encoding.)
func TestAlertEncodingTimeOutOfRange(t *testing.T) {
	s, err := NewSink(configs.Sink{Name: "am", URL: "http://127.0.0.1:1", Format: "alertmanager"}, sinks.Env{}, time.Now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e := &telemetry.Event{Type: "interface_down", Device: "r1", Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}
	err = s.Write(context.Background(), []sinks.Item{{Event: e}})
	if _, ok := err.(*sinks.RejectedError); !ok {
		t.Fatalf("err = %v, want a rejection", err)
	}
}

func BenchmarkWriteAlerts(b *testing.B) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer hs.Close()
	s, _ := NewSink(configs.Sink{Name: "am", URL: hs.URL, Format: "alertmanager"}, sinks.Env{}, time.Now, time.Hour)
	items := make([]sinks.Item, 5000)
	for i := range items {
		items[i].Event = &telemetry.Event{V: 1, Type: "interface_down", Device: fmt.Sprintf("r%d", i%1000), Object: fmt.Sprintf("Ethernet%d", i%48),
			Severity: "error", Message: "Interface changed state to down", Tags: map[string]string{"site": "ams1"},
			Time: time.Now(), Cause: telemetry.Cause{Topic: "enriched.syslog", Partition: 1, Offset: int64(i)}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Write(context.Background(), items); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(items))/b.Elapsed().Seconds(), "alerts/s")
}
