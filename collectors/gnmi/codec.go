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
	if err == nil {
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return err
	}
	b := data.Materialize()
	fixed, changed, ok := validUTF8(b, m.ProtoReflect().Descriptor())
	if !ok || !changed {
		return err // not a matter of UTF-8
	}
	proto.Reset(m)
	if proto.Unmarshal(fixed, m) != nil {
		return err
	}
	return nil
}

// validUTF8 rewrites the wire-format message b of type md with every
// string field, at any depth (map keys and values too), made valid UTF-8.
// changed says whether one was not; ok is false for data that is not a
// well-formed message.
func validUTF8(b []byte, md protoreflect.MessageDescriptor) (out []byte, changed, ok bool) {
	out = make([]byte, 0, len(b))
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false, false
		}
		tag := b[:n]
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		if typ == protowire.BytesType && fd != nil && (fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.MessageKind) {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil, false, false
			}
			b = b[m:]
			if fd.Kind() == protoreflect.StringKind {
				if !utf8.Valid(v) {
					v, changed = []byte(strings.ToValidUTF8(string(v), "\uFFFD")), true
				}
			} else {
				sub, ch, ok := validUTF8(v, fd.Message())
				if !ok {
					return nil, false, false
				}
				v, changed = sub, changed || ch
			}
			out = protowire.AppendBytes(append(out, tag...), v)
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil, false, false
		}
		out = append(append(out, tag...), b[:m]...)
		b = b[m:]
	}
	return out, changed, true
}
