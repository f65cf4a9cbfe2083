package telemetry

import (
	"bytes"
	"math"
)

// A metric's shape is everything in its value but the values that change
// from record to record: the keys, the punctuation, the measurement, the
// counter lists. The rows of one table from one collector share a shape,
// row after row and poll after poll, so the Decoder remembers the shapes
// of the last few values it read token by token, and reads a value of the
// same shape by comparing the bytes between its values with the shape's
// and reading only the values: the device, tag values, field values,
// times and uptime. What it gives is what decodeTokens gives for the same
// value; a value that differs anywhere else is read token by token.

// maxShapes bounds the shapes a Decoder keeps: a sink or worker usually
// sees a handful of tables.
const maxShapes = 8

// maxShapeBytes bounds the value a shape is learnt from.
const maxShapeBytes = 64 << 10

// pointShape is a value decoded token by token, with its values as holes,
// and what of the Point the rest of the value fixes.
type pointShape struct {
	lit   []byte // the value the shape was learnt from
	holes []hole // where its values are, in order

	v                                              int
	measurement, source                            string
	tags                                           []Tag   // keys; values come from holes
	fields                                         []Field // keys and counter marks; values come from holes
	counters, counters64                           []string
	hasTags, hasFields, hasCounters, hasCounters64 bool
}

// hole is where one value is in a shape's lit.
type hole struct {
	start, end int32
	kind       holeKind
	idx        int32 // the tag or field (in the value's order), or the time's slot
}

type holeKind uint8

const (
	holeDevice holeKind = iota
	holeTag
	holeField
	holeTime
	holeUptime
)

// Shapes are judged every shapeJudge values: when fewer than one in four
// had a known shape, the next shapeRest values are read token by token
// without trying or learning any, which bounds what shapes cost a stream
// they do not fit to a few percent.
const (
	shapeJudge = 64
	shapeRest  = 1024
)

func (d *Decoder) shapeTally(hit bool) {
	d.shapeTries++
	if hit {
		d.shapeHits++
	}
	if d.shapeTries < shapeJudge {
		return
	}
	if d.shapeHits < shapeJudge/4 {
		d.shapesOff = shapeRest
	}
	d.shapeTries, d.shapeHits = 0, 0
}

// hole notes a value read token by token, from start to where the scanner
// is now.
func (d *Decoder) hole(kind holeKind, idx, start int) {
	d.holes = append(d.holes, hole{start: int32(start), end: int32(d.s.i), kind: kind, idx: int32(idx)})
}

// learnShape keeps the shape of b, just decoded token by token into p
// with its tags and fields in order, in place of the oldest shape.
func (d *Decoder) learnShape(b []byte, p *Point) {
	if len(b) > maxShapeBytes || len(d.holes) == 0 {
		return
	}
	slot := d.nextShape
	d.nextShape = (d.nextShape + 1) % maxShapes
	sh := d.shapes[slot]
	if sh == nil {
		sh = new(pointShape)
		d.shapes[slot] = sh
	}
	sh.lit = append(sh.lit[:0], b...)
	sh.holes = append(sh.holes[:0], d.holes...)
	sh.v, sh.measurement, sh.source = p.V, p.Measurement, p.Source
	sh.tags = append(sh.tags[:0], p.Tags...)
	sh.fields = append(sh.fields[:0], p.Fields...)
	sh.counters = append(sh.counters[:0], p.Counters...)
	sh.counters64 = append(sh.counters64[:0], p.Counters64...)
	sh.hasTags, sh.hasFields, sh.hasCounters, sh.hasCounters64 = p.hasTags, p.hasFields, p.hasCounters, p.hasCounters64
	d.lastShape = slot
}

// decodeShaped decodes b into p if it has one of the shapes learnt.
func (d *Decoder) decodeShaped(b []byte, p *Point) bool {
	if sh := d.shapes[d.lastShape]; sh != nil && d.decodeShape(b, sh, p) {
		return true
	}
	for i, sh := range d.shapes {
		if sh == nil {
			break
		}
		if i != d.lastShape && d.decodeShape(b, sh, p) {
			d.lastShape = i
			return true
		}
	}
	return false
}

// decodeShape decodes b into p if b is sh's shape: the bytes between its
// values are sh's, and its values read as decodeTokens reads them.
func (d *Decoder) decodeShape(b []byte, sh *pointShape, p *Point) bool {
	// In what weir writes the first hole (the device) comes after the
	// measurement, so a value of another table fails here, before p is
	// touched.
	if len(sh.holes) == 0 || !bytes.HasPrefix(b, sh.lit[:sh.holes[0].start]) {
		return false
	}
	p.reset()
	p.V, p.Measurement, p.Source = sh.v, sh.measurement, sh.source
	p.Tags = append(p.Tags, sh.tags...)
	p.Fields = append(p.Fields, sh.fields...)
	p.Counters = append(p.Counters, sh.counters...)
	p.Counters64 = append(p.Counters64, sh.counters64...)
	p.hasTags, p.hasFields, p.hasCounters, p.hasCounters64 = sh.hasTags, sh.hasFields, sh.hasCounters, sh.hasCounters64
	s := &d.s
	s.reset(b)
	d.nth = 0
	s.i = int(sh.holes[0].start)
	from := s.i // in sh.lit
	for k := range sh.holes {
		h := &sh.holes[k]
		between := sh.lit[from:h.start]
		if len(b)-s.i < len(between) || string(b[s.i:s.i+len(between)]) != string(between) {
			return false
		}
		s.i += len(between)
		from = int(h.end)
		switch h.kind {
		case holeDevice:
			v, ok := s.str()
			if !ok {
				return false
			}
			p.Device = d.str(v)
		case holeTag:
			v, ok := s.str()
			if !ok {
				return false
			}
			p.Tags[h.idx].Value = d.str(v)
		case holeField:
			f := &p.Fields[h.idx]
			f.Kind, f.bits, f.Str = FieldNull, 0, ""
			if u, digits, ok := s.plainUint(); ok {
				// What typeNumber makes of such a number, read once.
				switch {
				case f.Counter:
					f.Kind, f.bits = FieldInt, u
				case digits <= 15:
					f.Kind, f.bits = FieldFloat, math.Float64bits(float64(u))
				default:
					typeNumber(f, s.b[s.i-digits:s.i], false)
				}
				continue
			}
			n, ok := d.fieldValue(f)
			if !ok || n != nil && !typeNumber(f, n, f.Counter) {
				return false
			}
		case holeTime:
			t, ok := d.timeField(int(h.idx))
			if !ok {
				return false
			}
			if h.idx == 0 {
				p.Time = t
			} else {
				p.ReceivedAt = t
			}
		case holeUptime:
			if !d.uptime(p) {
				return false
			}
		}
	}
	return string(b[s.i:]) == string(sh.lit[from:])
}
