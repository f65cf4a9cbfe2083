package gnmi

import (
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// lenientCodec is gRPC's proto codec, but a message that fails to decode
// only because a string field is not UTF-8 is decoded with the bad bytes
// of its strings replaced by U+FFFD. gNMI's strings must be UTF-8, and Go
// refuses a message with one that is not; but a target written in C++
// (whose protobuf logs the mistake and sends the bytes all the same)
// sends an interface description typed in a Latin-1 terminal as it is.
// Refused, that one message would end the stream, and every resubscribe
// would meet it again: the target's data lost for good.
type lenientCodec struct{ encoding.CodecV2 }

func newLenientCodec() lenientCodec { return lenientCodec{encoding.GetCodecV2("proto")} }

// Name is empty so that requests keep gRPC's plain content-type,
// "application/grpc", as with the default codec (a codec's name would be
// sent as its subtype: "application/grpc+proto").
func (lenientCodec) Name() string { return "" }

func (c lenientCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	if err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
		return err
	}
	m, ok := v.(proto.Message)
	if !ok {
		return err
	}
	b := data.Materialize()
	md := m.ProtoReflect().Descriptor()
	var mend utf8Mender
	size, changed, ok := mend.size(b, md, 0)
	if !ok || !changed {
		return err // not a matter of UTF-8
	}
	fixed := mend.write(make([]byte, 0, size), b, md)
	proto.Reset(m)
	if proto.Unmarshal(fixed, m) != nil {
		return err
	}
	return nil
}

// utf8Mender rewrites a wire-format message with every string field, at
// any depth (map keys and values too), made valid UTF-8, into one buffer:
// size measures what each nested message becomes, write writes them.
// Neither keeps a copy per level, so the cost is the message's size
// however deeply it nests (gNMI's leaf-lists hold values that hold
// leaf-lists), and neither goes deeper than protobuf does.
type utf8Mender struct {
	sizes []int // each nested message's size once mended, in the order met
	next  int   // write's place in sizes
}

// size returns the size of the wire-format message b of type md once
// mended; changed says whether a string was not UTF-8; ok is false for
// data that is not a well-formed message, or nests deeper than protobuf
// reads.
func (u *utf8Mender) size(b []byte, md protoreflect.MessageDescriptor, depth int) (n int, changed, ok bool) {
	if depth > protowire.DefaultRecursionLimit {
		return 0, false, false
	}
	for len(b) > 0 {
		num, typ, t := protowire.ConsumeTag(b)
		if t < 0 {
			return 0, false, false
		}
		b = b[t:]
		if fd := md.Fields().ByNumber(num); typ == protowire.BytesType && fd != nil &&
			(fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.MessageKind) {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return 0, false, false
			}
			b = b[m:]
			l := len(v)
			if fd.Kind() == protoreflect.StringKind {
				if !utf8.Valid(v) {
					l, changed = len(strings.ToValidUTF8(string(v), "\uFFFD")), true
				}
			} else {
				i := len(u.sizes)
				u.sizes = append(u.sizes, 0)
				sub, ch, ok := u.size(v, fd.Message(), depth+1)
				if !ok {
					return 0, false, false
				}
				u.sizes[i], l, changed = sub, sub, changed || ch
			}
			n += t + protowire.SizeBytes(l)
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return 0, false, false
		}
		n += t + m
		b = b[m:]
	}
	return n, changed, true
}

// write appends the wire-format message b of type md, mended, to out; b
// must be what size measured, in the same order.
func (u *utf8Mender) write(out, b []byte, md protoreflect.MessageDescriptor) []byte {
	for len(b) > 0 {
		num, typ, t := protowire.ConsumeTag(b)
		out = append(out, b[:t]...)
		b = b[t:]
		if fd := md.Fields().ByNumber(num); typ == protowire.BytesType && fd != nil &&
			(fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.MessageKind) {
			v, m := protowire.ConsumeBytes(b)
			b = b[m:]
			if fd.Kind() == protoreflect.StringKind {
				if !utf8.Valid(v) {
					v = []byte(strings.ToValidUTF8(string(v), "\uFFFD"))
				}
				out = protowire.AppendBytes(out, v)
			} else {
				sub := u.sizes[u.next]
				u.next++
				out = protowire.AppendVarint(out, uint64(sub))
				out = u.write(out, v, fd.Message())
			}
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		out = append(out, b[:m]...)
		b = b[m:]
	}
	return out
}
