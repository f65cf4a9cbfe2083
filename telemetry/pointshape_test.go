package telemetry

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// ifRow is a raw.snmp IF-MIB row as the poller writes it, with the
// device, interface and counters varying.
func ifRow(dev, i, poll int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"v":1,"measurement":"snmp_interface","device":"leaf%02d","tags":{"agent":"10.0.%d.1","ifAlias":"uplink %d","ifDescr":"Ethernet%d","ifIndex":"%d","ifName":"Et%d"},"fields":{`, dev, dev, i, i, i, i)
	counters := []string{"ifHCInOctets", "ifHCOutOctets", "ifInDiscards", "ifInErrors", "ifOutDiscards", "ifOutErrors"}
	fmt.Fprintf(&b, `"ifAdminStatus":1,"ifHCInOctets":%d,"ifHCOutOctets":%d,"ifHighSpeed":10000,"ifInDiscards":%d,"ifInErrors":0,"ifOperStatus":%d,"ifOutDiscards":3,"ifOutErrors":%d,"ifPhysAddress":"00:1c:73:aa:bb:%02x"},`,
		uint64(poll)*1e12+uint64(i), poll*1000, poll, 1+poll%2, i, i)
	fmt.Fprintf(&b, `"counters":["%s"],"counters64":["ifHCInOctets","ifHCOutOctets"],"time":"2026-11-29T14:%02d:00Z","received_at":"2026-11-29T14:%02d:00.0%dZ","uptime":%d,"source":"snmp"}`,
		strings.Join(counters, `","`), poll, poll, i%10, 100000+poll*6000)
	return []byte(b.String())
}

// TestShapedMatchesTokens: rows of one shape take the shaped path after
// the first, and decode as they do token by token.
func TestShapedMatchesTokens(t *testing.T) {
	var shaped, tokens Decoder
	var got, want Point
	for poll := range 3 {
		for i := 1; i <= 4; i++ {
			v := ifRow(i%2, i, poll)
			took := shaped.decodeShaped(v, &got)
			if !took && !shaped.decodePoint(v, &got) {
				t.Fatalf("refused %s", v)
			}
			if poll+i > 1 && !took {
				t.Errorf("row %d of poll %d did not take the shaped path", i, poll)
			}
			if !tokens.decodeTokens(v, &want) {
				t.Fatalf("tokens refused %s", v)
			}
			if !reflect.DeepEqual(&got, &want) {
				t.Fatalf("%s:\nshaped %#v\ntokens %#v", v, &got, &want)
			}
		}
	}
	// A row of another shape, then the first shape again: both kept.
	other := []byte(`{"v":1,"measurement":"cpu","device":"leaf01","tags":{"idx":"1"},"fields":{"load":3.5},"time":"2026-11-29T14:00:00Z","received_at":"2026-11-29T14:00:00Z","source":"snmp"}`)
	if !shaped.decodePoint(other, &got) || !shaped.decodeShaped(ifRow(1, 9, 7), &got) {
		t.Error("the first shape was forgotten after another")
	}
}

// TestShapedAllocatesNothing: a row of a known shape with strings seen
// before allocates nothing.
func TestShapedAllocatesNothing(t *testing.T) {
	var d Decoder
	var p Point
	a, b := ifRow(1, 1, 1), ifRow(1, 1, 2)
	d.decodePoint(a, &p)
	d.decodePoint(b, &p)
	allocs := testing.AllocsPerRun(100, func() {
		if !d.decodeShaped(a, &p) || !d.decodeShaped(b, &p) {
			t.Fatal("not shaped")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations, want 0", allocs)
	}
}

// FuzzDecodeShaped: a value decoded after another (whose shape is then
// known) decodes as encoding/json decodes it, whichever path takes it.
func FuzzDecodeShaped(f *testing.F) {
	row := ifRow(1, 2, 3)
	f.Add(row, ifRow(2, 3, 4))
	f.Add(row, ifRow(1, 3, 3)) // received_at in the same second
	f.Add(row, []byte(strings.Replace(string(row), `"ifInErrors":0`, `"ifInErrors":"x"`, 1)))
	f.Add(row, []byte(strings.Replace(string(row), `"Et2"`, `"Et\u0032"`, 1)))
	f.Add(row, []byte(strings.Replace(string(row), `"uptime":118000`, `"uptime":-1`, 1)))
	f.Add(row, []byte(strings.Replace(string(row), `"uptime":118000`, `"uptime":"x"`, 1)))
	f.Add(row, []byte(strings.Replace(string(row), `"uptime":118000`, `"uptime":1.18e5`, 1)))
	f.Add(row, []byte(strings.Replace(string(row), `"ifHCOutOctets":3000`, `"ifHCOutOctets":3e3`, 1)))
	f.Add(row, []byte(strings.Replace(string(row), `"ifInErrors":0`, `"ifInErrors":null`, 1)))
	f.Add(row, []byte(strings.Replace(string(row), `,"source":"snmp"}`, `,"source":"snmp"}x`, 1)))
	f.Add(row, []byte(strings.Replace(string(row), `"leaf01"`, `"leaf01","device":"x"`, 1)))
	for _, s := range metricSeeds {
		f.Add([]byte(metricSeeds[0]), []byte(s))
		f.Add([]byte(s), []byte(s))
	}
	f.Fuzz(func(t *testing.T, first, b []byte) {
		var d Decoder
		var p Point
		d.decodePoint(first, &p)
		var fast Point
		if !d.decodePoint(b, &fast) {
			return
		}
		slow, uptimeInvalid, err := decodeMetricJSON(b)
		if err != nil {
			t.Fatalf("fast accepted what encoding/json refuses (%v): %q after %q", err, b, first)
		}
		if got := fast.Metric(); !reflect.DeepEqual(got, slow) {
			t.Fatalf("%q after %q:\nfast %#v\nslow %#v", b, first, got, slow)
		}
		want := PointOf(slow)
		want.uptimeInvalid = uptimeInvalid
		if !reflect.DeepEqual(emptyAsNil(fast), emptyAsNil(*want)) {
			t.Fatalf("%q after %q:\nfast %#v\nslow %#v", b, first, &fast, want)
		}
	})
}

// emptyAsNil is p with its empty slices nil: a Point keeps the storage a
// value of another shape began to fill, and only hasTags and the like say
// whether a value had a list.
func emptyAsNil(p Point) Point {
	if len(p.Tags) == 0 {
		p.Tags = nil
	}
	if len(p.Fields) == 0 {
		p.Fields = nil
	}
	if len(p.Counters) == 0 {
		p.Counters = nil
	}
	if len(p.Counters64) == 0 {
		p.Counters64 = nil
	}
	return p
}

// BenchmarkDecodeIFMIBRow: rows of 48 interfaces on 20 devices, as a sink
// or enrichment reads them poll after poll; tokens is the token-by-token
// path alone, encoding-json the path for values neither takes.
func BenchmarkDecodeIFMIBRow(b *testing.B) {
	var rows [][]byte
	size := 0
	for d := range 20 {
		for i := 1; i <= 48; i++ {
			rows = append(rows, ifRow(d, i, 1))
			size += len(rows[len(rows)-1])
		}
	}
	benchDecoders(b, rows, int64(size/len(rows)), decoderPath{"encoding-json", func(_ *Decoder, v []byte, p *Point) bool {
		m, err := decodeMetricSlow(v)
		if err == nil {
			pointOf(m, p)
		}
		return err == nil
	}})
}

// decoderPath is a way to decode a metric, for benchDecoders.
type decoderPath struct {
	name   string
	decode func(*Decoder, []byte, *Point) bool
}

// benchDecoders decodes rows in turn with one Decoder and Point, by the
// shaped path, the token path and then the others given, a sub-benchmark
// each; bytes per row (0 for none) gives MB/s.
func benchDecoders(b *testing.B, rows [][]byte, bytes int64, others ...decoderPath) {
	paths := append([]decoderPath{{"shaped", (*Decoder).decodePoint}, {"tokens", (*Decoder).decodeTokens}}, others...)
	for _, path := range paths {
		b.Run(path.name, func(b *testing.B) {
			var d Decoder
			var p Point
			if bytes > 0 {
				b.SetBytes(bytes)
			}
			i := 0
			for b.Loop() {
				if !path.decode(&d, rows[i], &p) {
					b.Fatal("refused")
				}
				if i++; i == len(rows) {
					i = 0
				}
			}
		})
	}
}

// TestShapedAfterCallerChanges: a caller that changes a decoded Point in
// place, swaps its slices with its own or appends to them (as the enrich
// worker does) changes nothing in what the next values of the shape
// decode to: the Point's slices are its own, not the shape's.
func TestShapedAfterCallerChanges(t *testing.T) {
	var d Decoder
	var p Point
	var tagBuf []Tag
	for n := range 40 {
		v := ifRow(n%3, n%5, n/5)
		if !d.decodePoint(v, &p) {
			t.Fatalf("refused %s", v)
		}
		var want Point
		var fresh Decoder
		if !fresh.decodeTokens(v, &want) || !reflect.DeepEqual(emptyAsNil(p), emptyAsNil(want)) {
			t.Fatalf("%s after changes:\ngot  %#v\nwant %#v", v, &p, &want)
		}
		switch n % 4 {
		case 0:
			for i := range p.Tags {
				p.Tags[i] = Tag{"zz", "zz"}
			}
			for i := range p.Fields {
				p.Fields[i] = StringField("zz", "zz")
			}
			p.Counters[0], p.Counters64[0] = "zz", "zz"
		case 1:
			tagBuf = append(tagBuf[:0], p.Tags...)
			tagBuf = append(tagBuf, Tag{"zz", "zz"})
			p.Tags, tagBuf = tagBuf, p.Tags
			p.Fields = append(p.Fields[:1], IntField("zz", 1))
		case 2:
			p.Tags, p.Fields, p.Counters = nil, nil, nil
		}
	}
}

// TestShapesRestOnStreamsTheyDoNotFit: values cycling through more shapes
// than a Decoder keeps stop being tried against shapes for a while, and
// rows of one table take the shaped path again after that.
func TestShapesRestOnStreamsTheyDoNotFit(t *testing.T) {
	var d Decoder
	var p Point
	for n := range shapeJudge {
		v := fmt.Sprintf(`{"v":1,"measurement":"m%d","device":"d","fields":{"f":1.5},"source":"gnmi"}`, n%(maxShapes+3))
		if !d.decodePoint([]byte(v), &p) {
			t.Fatalf("refused %s", v)
		}
	}
	if d.shapesOff != shapeRest {
		t.Fatalf("shapes not resting after %d values of %d shapes: off %d", shapeJudge, maxShapes+3, d.shapesOff)
	}
	for n := range shapeRest + shapeJudge {
		if !d.decodePoint(ifRow(1, 1+n%48, n/48%10), &p) {
			t.Fatal("refused")
		}
	}
	if !d.decodeShaped(ifRow(1, 1, 9), &p) || d.shapesOff != 0 {
		t.Errorf("rows of one table do not take the shaped path after the rest (off %d)", d.shapesOff)
	}
}

// BenchmarkDecodeManyShapes: values cycling through more shapes than a
// Decoder keeps, the worst case for shapes (gNMI paths interleaved):
// shaped should stay within a few percent of tokens.
func BenchmarkDecodeManyShapes(b *testing.B) {
	var rows [][]byte
	for s := range maxShapes + 4 {
		rows = append(rows, fmt.Appendf(nil, `{"v":1,"measurement":"m%d","device":"d","tags":{"a":"1"},"fields":{"f%d":1.5,"g":2},"time":"2026-11-29T14:00:00Z","received_at":"2026-11-29T14:00:00Z","source":"gnmi"}`, s, s))
	}
	benchDecoders(b, rows, 0)
}
