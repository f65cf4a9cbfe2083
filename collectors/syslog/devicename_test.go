package syslog

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/telemetry"
)

// keyBroker keeps the key and value of every record produced.
type keyBroker struct {
	broker.Broker
	mu           sync.Mutex
	keys, values []string
}

func (k *keyBroker) Produce(_ context.Context, _ string, recs []broker.Record) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, r := range recs {
		k.keys = append(k.keys, string(r.Key))
		k.values = append(k.values, string(r.Value))
	}
	return nil
}

// TestDeviceNameKeysRecords: WithDeviceName keys each line by the name it
// gives (its device as enrichment names it), asked with the line's
// hostname and sender; a line it gives no name for is keyed as without
// it (the hostname, else the sender's address). The records are as
// received: hostname and device unchanged.
func TestDeviceNameKeysRecords(t *testing.T) {
	type ask struct{ hostname, source string }
	var asked []ask
	names := map[string]string{"EDGE1.ams.example.net": "edge1", "edge1": "edge1", "": "edge1"}
	kb := &keyBroker{}
	c, err := New(configs.Syslog{}, kb, WithDeviceName(func(hostname, source string) string {
		asked = append(asked, ask{hostname, source})
		return names[hostname]
	}))
	if err != nil {
		t.Fatal(err)
	}
	p := c.newPublisher("l", c.metrics.forListener("l"))
	from := netip.MustParseAddrPort("127.0.0.1:40001")
	for _, line := range []string{
		"<189>Dec  3 07:00:01 EDGE1.ams.example.net %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet9/7, changed state to down",
		"<189>Dec  3 07:00:02 edge1 %LINEPROTO-5-UPDOWN: Line protocol on Interface GigabitEthernet9/7, changed state to up",
		"<189>12: *Dec  3 07:00:03: %SYS-5-CONFIG_I: Configured from console by admin on vty0", // no hostname
		"<13>Dec  3 07:00:04 other-host app: not in the inventory",
	} {
		p.add(context.Background(), []byte(line), from, time.Now(), false)
	}
	if !p.flush(context.Background()) {
		t.Fatal("flush failed")
	}
	if want := []string{"edge1", "edge1", "edge1", "other-host"}; len(kb.keys) != len(want) || kb.keys[0] != want[0] || kb.keys[1] != want[1] || kb.keys[2] != want[2] || kb.keys[3] != want[3] {
		t.Errorf("keys %q, want %q", kb.keys, want)
	}
	if want := []ask{{"EDGE1.ams.example.net", "127.0.0.1:40001"}, {"edge1", "127.0.0.1:40001"}, {"", "127.0.0.1:40001"}, {"other-host", "127.0.0.1:40001"}}; len(asked) != 4 || asked[0] != want[0] || asked[2] != want[2] || asked[3] != want[3] {
		t.Errorf("asked %q, want %q", asked, want)
	}
	var l telemetry.Log
	if err := telemetry.DecodeLog([]byte(kb.values[0]), &l); err != nil {
		t.Fatal(err)
	}
	if l.Hostname != "EDGE1.ams.example.net" || l.Device != "EDGE1.ams.example.net" || l.SourceAddr != "127.0.0.1:40001" {
		t.Errorf("record changed with its key: hostname %q device %q source %q", l.Hostname, l.Device, l.SourceAddr)
	}
	var noHost telemetry.Log
	if err := telemetry.DecodeLog([]byte(kb.values[2]), &noHost); err != nil {
		t.Fatal(err)
	}
	if noHost.Device != "127.0.0.1" {
		t.Errorf("a line without hostname: device %q, want its sender's address", noHost.Device)
	}
}

// TestWithoutDeviceNameKeysAsSent: without the option a line is keyed by
// its hostname, else its sender's address.
func TestWithoutDeviceNameKeysAsSent(t *testing.T) {
	kb := &keyBroker{}
	c, err := New(configs.Syslog{}, kb)
	if err != nil {
		t.Fatal(err)
	}
	p := c.newPublisher("l", c.metrics.forListener("l"))
	from := netip.MustParseAddrPort("[::ffff:192.0.2.7]:40001")
	p.add(context.Background(), []byte("<13>Dec  3 07:00:04 EDGE1 app: x"), from, time.Now(), false)
	p.add(context.Background(), []byte("<189>12: *Dec  3 07:00:03: %SYS-5-CONFIG_I: Configured from console by admin on vty0"), from, time.Now(), false)
	p.flush(context.Background())
	if len(kb.keys) != 2 || kb.keys[0] != "EDGE1" || kb.keys[1] != "192.0.2.7" {
		t.Errorf("keys %q, want [EDGE1 192.0.2.7]", kb.keys)
	}
}

// BenchmarkPublishNamed is BenchmarkPublish with the lines keyed by a
// device namer that knows none of their devices (the inventory's naming
// is measured in enrich): the option adds no allocation.
func BenchmarkPublishNamed(b *testing.B) {
	lines := loadCorpus(b)
	raws := make([][]byte, len(lines))
	for i, c := range lines {
		raws[i] = []byte(c.Raw)
	}
	names := map[string]string{"edge1": "edge1"}
	c, err := New(configs.Syslog{}, discardBroker{}, WithDeviceName(func(hostname, _ string) string { return names[hostname] }))
	if err != nil {
		b.Fatal(err)
	}
	c.now = fixedNow
	p := c.newPublisher("bench", c.metrics.forListener("bench"))
	p.parser.Now = fixedNow
	from := netip.MustParseAddrPort("192.0.2.1:514")
	ctx := context.Background()
	now := fixedNow()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.add(ctx, raws[i%len(raws)], from, now, false)
	}
	p.finalFlush(ctx)
}
