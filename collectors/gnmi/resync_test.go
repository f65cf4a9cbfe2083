package gnmi

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/peers"
)

// counterPath is the in-octets leaf of interface name.
func counterPath(name string) string {
	return "/interfaces/interface[name=" + name + "]/state/counters/in-octets"
}

// session is what a scripted target sends in one session: its snapshot,
// then (sync) the sync_response, then after, then the end of the stream
// (drop) or nothing more.
type session struct {
	snapshot []string // leaves, one notification each
	deletes  []string // deletes the target sends after its snapshot
	after    []string // leaves the target sends after its sync_response
	sync     bool
	drop     bool
}

// resyncTarget serves sessions in turn (the last one for every later
// subscription); sent counts the sessions whose messages all went out.
func resyncTarget(t *testing.T, sessions []session) (*scriptServer, string, *atomic.Int32) {
	t.Helper()
	var sent atomic.Int32
	s, addr := startScript(t, func(n int, req *gpb.SubscribeRequest, stream gpb.GNMI_SubscribeServer) error {
		sc := sessions[min(n, len(sessions))-1]
		for i, p := range sc.snapshot {
			if err := sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
				Path: mustPath(t, p), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: uint64(100*n + i)}}}}}); err != nil {
				return err
			}
		}
		if sc.sync {
			if err := stream.Send(&gpb.SubscribeResponse{Response: &gpb.SubscribeResponse_SyncResponse{SyncResponse: true}}); err != nil {
				return err
			}
		}
		for i, p := range sc.after {
			if err := sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Update: []*gpb.Update{{
				Path: mustPath(t, p), Val: &gpb.TypedValue{Value: &gpb.TypedValue_UintVal{UintVal: uint64(100*n + 50 + i)}}}}}); err != nil {
				return err
			}
		}
		for _, p := range sc.deletes {
			if err := sendUpd(stream, &gpb.Notification{Timestamp: time.Now().UnixNano(), Delete: []*gpb.Path{mustPath(t, p)}}); err != nil {
				return err
			}
		}
		sent.Add(1)
		if sc.drop {
			return status.Error(codes.Unavailable, "target going away")
		}
		<-stream.Context().Done()
		return nil
	})
	return s, addr, &sent
}

// deletedPaths are the paths of the delete records published, in order.
func deletedPaths(t *testing.T, r *running) []string {
	var out []string
	for _, m := range r.b.where(t, func(m metric) bool { return m.Fields["deleted"] == true }) {
		out = append(out, m.Tags["path"])
	}
	return out
}

func resyncCollector(t *testing.T, addr string, s configs.GNMISubscription, opts ...Option) *running {
	return startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "r1", Address: addr, Insecure: true, Encoding: "proto",
		Subscriptions: []configs.GNMISubscription{s}}}}, opts...)
}

// waitSettled waits for sessions sessions to be sent, and for what they
// sent to be published (records stop coming for a while).
func waitSettled(t *testing.T, r *running, sent *atomic.Int32, sessions int32) {
	t.Helper()
	waitFor(t, 30*time.Second, "the sessions sent", func() bool { return sent.Load() >= sessions })
	waitFor(t, 30*time.Second, "the records published", func() bool {
		n := len(r.b.metrics(t))
		time.Sleep(200 * time.Millisecond)
		return n > 0 && len(r.b.metrics(t)) == n
	})
}

// TestResyncDeletesVanishedPaths: a path a target reported in an earlier
// session and not in the snapshot of a resubscription (an interface
// removed while the stream was down) is deleted after the resync's
// sync_response, once, as the target's own delete is published; a path
// reported again is not, nor anything at the first session's sync or in
// a session that ended before its sync_response.
// Both for ON_CHANGE and SAMPLE: a sample subscription's snapshot lists
// every path too.
func TestResyncDeletesVanishedPaths(t *testing.T) {
	t.Run("on_change", func(t *testing.T) { testResyncDeletes(t, sub(countersPath, "stream", "on_change", 0)) })
	t.Run("sample", func(t *testing.T) { testResyncDeletes(t, sub(countersPath, "stream", "sample", 10*time.Second)) })
}

func testResyncDeletes(t *testing.T, s configs.GNMISubscription) {
	a, b, c := counterPath("Ethernet1"), counterPath("Ethernet2"), counterPath("Ethernet3")
	_, addr, sent := resyncTarget(t, []session{
		{snapshot: []string{a, b, c}, sync: true, drop: true},
		{snapshot: []string{a}, drop: true}, // down before its snapshot is complete
		{snapshot: []string{a, c}, sync: true},
	})
	r := resyncCollector(t, addr, s)
	waitSettled(t, r, sent, 3)
	got := deletedPaths(t, r)
	if !slices.Equal(got, []string{b}) {
		t.Fatalf("deletes %q, want one of %s", got, b)
	}
	// After the resync's snapshot, as a target's delete would come.
	ms := r.b.metrics(t)
	if last := ms[len(ms)-1]; last.Fields["deleted"] != true || last.Device != "r1" || last.Measurement != "interfaces_interface_state_counters_in_octets" || last.Tags["name"] != "Ethernet2" {
		t.Errorf("last record %+v, want the delete of %s", last.Metric, b)
	}
	if n := testutil.ToFloat64(r.m.ResyncDeletes.WithLabelValues("r1")); n != 1 {
		t.Errorf("weir_gnmi_resync_deletes_total %v, want 1", n)
	}
}

// TestResyncNoDeletes: no delete is made up for a path the target deleted
// itself, for an updates_only stream (it sends no snapshot), for a
// snapshot with no data at all (a target that answers sync_response
// before its first sample), or past the bound of paths kept.
func TestResyncNoDeletes(t *testing.T) {
	a, b, c := counterPath("Ethernet1"), counterPath("Ethernet2"), counterPath("Ethernet3")
	onChange := sub(countersPath, "stream", "on_change", 0)
	updatesOnly := onChange
	updatesOnly.UpdatesOnly = true
	for _, tc := range []struct {
		name     string
		sessions []session
		sub      configs.GNMISubscription
		opts     []Option
	}{
		{"deleted by the target", []session{{snapshot: []string{a, b, c}, sync: true, deletes: []string{b}, drop: true}, {snapshot: []string{a, c}, sync: true}}, onChange, nil},
		{"updates_only", []session{{snapshot: []string{a, b, c}, sync: true, drop: true}, {snapshot: []string{a, c}, sync: true}}, updatesOnly, nil},
		{"empty snapshot", []session{{snapshot: []string{a, b, c}, sync: true, drop: true}, {sync: true}}, onChange, nil},
		{"past the bound", []session{{snapshot: []string{a, b, c}, sync: true, drop: true}, {snapshot: []string{a, c}, sync: true}}, onChange, []Option{withResyncPaths(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr, sent := resyncTarget(t, tc.sessions)
			r := resyncCollector(t, addr, tc.sub, tc.opts...)
			waitSettled(t, r, sent, 2)
			want := []string(nil)
			if tc.name == "deleted by the target" {
				want = []string{b} // its own
			}
			if got := deletedPaths(t, r); !slices.Equal(got, want) {
				t.Errorf("deletes %q, want %q", got, want)
			}
			if n := testutil.ToFloat64(r.m.ResyncDeletes.WithLabelValues("r1")); n != 0 {
				t.Errorf("weir_gnmi_resync_deletes_total %v, want 0", n)
			}
		})
	}
}

// TestResyncSampleAfterSync: a target may send a SAMPLE subscription's
// first sample after its sync_response (the snapshot has the ON_CHANGE
// paths, or a faster sample's). The paths of a sample subscription that
// had no data in the snapshot are not deleted (those of the others are) (they were every counter,
// deleted and back one sample later, at each resubscription); they are
// once a snapshot has that subscription's data and not theirs. Both for a
// sample at the target's default interval beside ON_CHANGE and for a slow
// sample beside a fast one.
func TestResyncSampleAfterSync(t *testing.T) {
	const operPath = "/interfaces/interface/state/oper-status"
	oper := func(name string) string { return "/interfaces/interface[name=" + name + "]/state/oper-status" }
	for _, tc := range []struct {
		name string
		subs []configs.GNMISubscription
	}{
		{"default interval beside on_change", []configs.GNMISubscription{sub(countersPath, "stream", "sample", 0), sub(operPath, "stream", "on_change", 0)}},
		{"slow sample beside a fast one", []configs.GNMISubscription{sub(countersPath, "stream", "sample", 10*time.Second), sub(operPath, "stream", "sample", time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, o, o2 := counterPath("Ethernet1"), counterPath("Ethernet2"), oper("Ethernet1"), oper("Ethernet2")
			_, addr, sent := resyncTarget(t, []session{
				{snapshot: []string{a, b, o, o2}, sync: true, drop: true},
				{snapshot: []string{o}, sync: true, after: []string{a, b}, drop: true},
				{snapshot: []string{o, a}, sync: true},
			})
			r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "r1", Address: addr, Insecure: true, Encoding: "proto",
				Subscriptions: tc.subs}}})
			waitSettled(t, r, sent, 3)
			// o2 at the second snapshot: its subscription's data came.
			if got, want := deletedPaths(t, r), []string{o2, b}; !slices.Equal(got, want) {
				t.Errorf("deletes %q, want %q", got, want)
			}
		})
	}
}

// TestPathKeyReadsBack: the key of a path is the path as flatten names it
// (its "path" tag), and reads back to the same path.
func TestPathKeyReadsBack(t *testing.T) {
	for _, c := range []struct {
		prefix, path *gpb.Path
		want         string
	}{
		{nil, mustPath(t, counterPath("Ethernet1")), counterPath("Ethernet1")},
		{&gpb.Path{Origin: "openconfig", Elem: mustPath(t, "/interfaces").Elem}, mustPath(t, "/interface[name=a\\]b\\\\c]/state"), `openconfig:/interfaces/interface[name=a\]b\\c]/state`},
		{mustPath(t, "/network-instances/network-instance[name=default]"), mustPath(t, "/protocols/protocol[name=BGP][identifier=BGP]/bgp"),
			"/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp"},
		{nil, &gpb.Path{Origin: "cli"}, "cli:/"},
		{nil, &gpb.Path{Element: []string{"interfaces", "interface[name=Ethernet1]"}}, "/interfaces/interface[name=Ethernet1]"},
	} {
		key := string(appendPathKey(nil, c.prefix, c.path))
		if key != c.want {
			t.Errorf("key %q, want %q", key, c.want)
			continue
		}
		// flatten's path tag of the same delete.
		ms := Flatten("d", &gpb.Notification{Prefix: c.prefix, Delete: []*gpb.Path{c.path}}, time.Now())
		if len(ms) != 1 || ms[0].Tags["path"] != key {
			t.Errorf("key %q, flatten's path %v", key, ms)
		}
		p, err := parsePathKey(key)
		if err != nil {
			t.Errorf("key %q: %v", key, err)
			continue
		}
		if again := string(appendPathKey(nil, nil, p)); again != key {
			t.Errorf("key %q read back as %q", key, again)
		}
	}
}

// TestResyncNoteAllocs: a path already reported in the session costs no
// allocation (every sample of a stream passes here).
func TestResyncNoteAllocs(t *testing.T) {
	r := newResyncPaths(100, nil)
	r.begin()
	n := &gpb.Notification{Prefix: mustPath(t, "/interfaces/interface[name=Ethernet1]/state/counters"), Update: []*gpb.Update{
		{Path: mustPath(t, "in-octets")}, {Path: mustPath(t, "/x[b=1][a=2]/y")}}}
	r.note(n)
	if allocs := testing.AllocsPerRun(100, func() { r.note(n) }); allocs != 0 {
		t.Errorf("%v allocations per notification of known paths", allocs)
	}
	if len(r.paths) != 2 {
		t.Errorf("paths %v", r.paths)
	}
}

// TestResyncWithReferenceServer: openconfig's reference server (a cache
// behind subscribe.Server, as gNMI gateways serve) restarted after one of
// its device's interfaces was removed while weir's stream was down: weir
// deletes that interface's counter after the new snapshot, and only it.
func TestResyncWithReferenceServer(t *testing.T) {
	c, s := refCache(t, "Ethernet1", "Ethernet2", "Ethernet3")
	// The same address after the restart, as weir dials it: a free port
	// outside the ephemeral range, which no other socket is given between
	// the two servers.
	addr := peers.FreeAddr(t)
	serve := func() *grpc.Server {
		var lis net.Listener
		waitFor(t, 30*time.Second, "listen on "+addr, func() bool {
			var err error
			lis, err = net.Listen("tcp", addr)
			return err == nil
		})
		srv := grpc.NewServer()
		gpb.RegisterGNMIServer(srv, s)
		go srv.Serve(lis)
		return srv
	}
	srv := serve()
	r := startCollector(t, configs.GNMI{Targets: []configs.GNMITarget{{Name: "ref", Address: addr, Insecure: true, Encoding: "proto", PrefixTarget: "dev1",
		Subscriptions: []configs.GNMISubscription{sub("/interfaces/interface[name=*]/state/counters", "stream", "on_change", 0)}}}})
	counters := func() int {
		return len(r.b.where(t, func(m metric) bool { return m.Fields["in-octets"] != nil }))
	}
	waitFor(t, 30*time.Second, "the first snapshot", func() bool { return counters() == 3 && r.c.Status()[0].Synced })

	srv.Stop()
	waitFor(t, 30*time.Second, "the stream down", func() bool { return !r.c.Status()[0].Connected })
	// Removed while nobody listens: the cache tells no stream.
	if err := c.GnmiUpdate(&gpb.Notification{Timestamp: time.Now().UnixNano(), Prefix: &gpb.Path{Target: "dev1"},
		Delete: []*gpb.Path{mustPath(t, "/interfaces/interface[name=Ethernet2]")}}); err != nil {
		t.Fatal(err)
	}
	srv = serve()
	defer srv.Stop()
	waitFor(t, 30*time.Second, "the resync's delete", func() bool { return len(deletedPaths(t, r)) > 0 })
	time.Sleep(200 * time.Millisecond) // a second delete would be queued with the first
	if got, want := deletedPaths(t, r), []string{counterPath("Ethernet2")}; !slices.Equal(got, want) {
		t.Errorf("deletes %q, want %q", got, want)
	}
	if n := counters(); n != 5 {
		t.Errorf("%d counter records, want 5 (3, then Ethernet1 and Ethernet3 again)", n)
	}
}

// BenchmarkResyncNote: what noting a notification's paths for the resync
// deletes costs the stream's reader, per update (10 counters under an
// interface's prefix, every path known already).
func BenchmarkResyncNote(b *testing.B) {
	var ns []*gpb.Notification
	for i := range 100 {
		n := &gpb.Notification{Prefix: mustPath(b, "/interfaces/interface[name=Ethernet"+strconv.Itoa(i)+"]/state/counters")}
		for j := range 10 {
			n.Update = append(n.Update, &gpb.Update{Path: mustPath(b, "counter-"+strconv.Itoa(j))})
		}
		ns = append(ns, n)
	}
	r := newResyncPaths(maxResyncPaths, nil)
	r.begin()
	for _, n := range ns {
		r.note(n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.note(ns[i%len(ns)])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10), "ns/update")
}

// TestResyncDeletesDroppedAreKept: the deletes of a resync that the
// queue could not take (full behind a slow broker, as after a large
// snapshot) are counted as dropped, and their paths are kept: the next
// resubscription whose snapshot leaves them out deletes them, instead
// of their series staying in Prometheus and enrichment for good.
func TestResyncDeletesDroppedAreKept(t *testing.T) {
	c, err := New(configs.GNMI{QueueSize: 1, Targets: []configs.GNMITarget{{Name: "r1", Address: "127.0.0.1:1", Insecure: true, Encoding: "proto",
		Subscriptions: []configs.GNMISubscription{sub(countersPath, "stream", "on_change", 0)}}}}, &memBroker{})
	if err != nil {
		t.Fatal(err)
	}
	tg := c.targets[0]
	a, b := counterPath("Ethernet1"), counterPath("Ethernet2")
	session := func(paths ...string) {
		tg.resync.begin()
		for _, p := range paths {
			tg.resync.note(&gpb.Notification{Update: []*gpb.Update{{Path: mustPath(t, p)}}})
		}
	}
	session(a, b)
	tg.deleteVanished(testLogger(t), time.Now())

	// The queue is full (the broker takes nothing): b's delete is dropped.
	if tg.queue.push(item{n: &gpb.Notification{}, size: 1}) != pushed {
		t.Fatal("the queue took nothing")
	}
	session(a)
	tg.deleteVanished(testLogger(t), time.Now())
	if n := testutil.ToFloat64(tg.dropQueue); n != 1 {
		t.Fatalf("dropped %v notifications, want the delete's", n)
	}

	// Published meanwhile; the next resubscription deletes b.
	tg.queue.discard()
	session(a)
	tg.deleteVanished(testLogger(t), time.Now())
	if n, _ := tg.queue.state(); n != 1 {
		t.Fatalf("%d notifications queued after the next resubscription, want b's delete", n)
	}
	batch, ok := tg.queue.take(t.Context(), nil, nil)
	if !ok || len(batch) != 1 || len(batch[0].n.GetDelete()) != 1 {
		t.Fatalf("queued after the next resubscription: %v", batch)
	}
	if got := PathString(batch[0].n.GetDelete()[0]); got != b {
		t.Errorf("deleted %s, want %s", got, b)
	}
	if n := testutil.ToFloat64(tg.resyncDeleted); n != 1 {
		t.Errorf("weir_gnmi_resync_deletes_total %v, want 1", n)
	}
}

// TestResyncPathsBoundedByTheirLength: a target whose paths are long (a
// list keyed by long strings, thousands of keys in a path) is let go past
// maxResyncBytes of path text, not kept until the count bound: 100,000
// paths of 20 KB held 2 GB. The paths it deletes and those gone at a
// resync give their room back.
func TestResyncPathsBoundedByTheirLength(t *testing.T) {
	long := strings.Repeat("k", 20<<10)
	path := func(i int) *gpb.Path {
		return &gpb.Path{Elem: []*gpb.PathElem{{Name: "x", Key: map[string]string{"id": strconv.Itoa(i), "pad": long}}}}
	}
	r := newResyncPaths(maxResyncPaths, nil)
	r.begin()
	n := 0
	for ; n < 10_000; n++ {
		if r.note(&gpb.Notification{Update: []*gpb.Update{{Path: path(n)}}}) {
			break
		}
	}
	if !r.off || r.paths != nil {
		t.Fatalf("%d paths of 20 KB (%d MB) kept, tracking on: %v", n, n*len(long)>>20, !r.off)
	}
	if max := (32 << 20) / len(long); n > max {
		t.Errorf("let go at path %d; want by %d", n, max)
	}

	// Deleted and vanished paths free their room: the same paths, each
	// deleted after its update, never reach the bound.
	r = newResyncPaths(maxResyncPaths, nil)
	r.begin()
	for i := range 10_000 {
		if r.note(&gpb.Notification{Update: []*gpb.Update{{Path: path(i)}}}) {
			t.Fatalf("let go at path %d though each was deleted", i)
		}
		r.note(&gpb.Notification{Delete: []*gpb.Path{path(i)}})
	}
	r.note(&gpb.Notification{Update: []*gpb.Update{{Path: path(0)}}})
	r.begin()
	if got := r.vanished(); len(got) != 1 || r.size != 0 {
		t.Errorf("vanished %d paths, %d bytes left; want 1, 0", len(got), r.size)
	}
}
