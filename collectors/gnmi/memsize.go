package gnmi

import (
	"slices"
	"unsafe"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/protobuf/types/known/anypb"
)

// heldBytes estimates the heap a decoded notification holds, which is
// what it is charged against queue_bytes and queue_memory while queued.
// Decoded, a notification takes about 10 times its size as received when
// its values are scalars (every update a struct, a path, path elements
// with key maps, a typed value and its oneof wrapper, each a separate
// allocation), about twice when they are JSON: its size as received
// says little. The estimate walks the structs gRPC decoded, adding each
// allocation rounded up to Go's size classes, without allocating; it
// stays within a few percent of runtime.MemStats for the shapes targets
// send (memsize_test.go).
func heldBytes(n *gpb.Notification) int {
	size := alloc(sizeNotification) + alloc(ptrSize*cap(n.GetUpdate())) + alloc(ptrSize*cap(n.GetDelete())) +
		alloc(len(n.ProtoReflect().GetUnknown()))
	size += pathBytes(n.GetPrefix())
	for _, u := range n.GetUpdate() {
		size += alloc(sizeUpdate) + pathBytes(u.GetPath()) + valueBytes(u.GetVal())
		if v := u.GetValue(); v != nil { // gNMI before 0.4's Value
			size += alloc(sizeValue) + alloc(cap(v.GetValue()))
		}
	}
	for _, p := range n.GetDelete() {
		size += pathBytes(p)
	}
	return size
}

// Sizes of what decoding allocates.
const (
	ptrSize          = int(unsafe.Sizeof(uintptr(0)))
	sizeNotification = int(unsafe.Sizeof(gpb.Notification{}))
	sizeUpdate       = int(unsafe.Sizeof(gpb.Update{}))
	sizeValue        = int(unsafe.Sizeof(gpb.Value{}))
	sizePath         = int(unsafe.Sizeof(gpb.Path{}))
	sizePathElem     = int(unsafe.Sizeof(gpb.PathElem{}))
	sizeTypedValue   = int(unsafe.Sizeof(gpb.TypedValue{}))
	sizeScalarArray  = int(unsafe.Sizeof(gpb.ScalarArray{}))
	sizeDecimal      = int(unsafe.Sizeof(gpb.Decimal64{}))
	sizeAny          = int(unsafe.Sizeof(anypb.Any{}))
	// A map of up to 8 entries is its header and one group of 8 slots
	// (Go's swiss tables); past 8, about 72 bytes an entry (measured).
	sizeSmallMap   = 48 + 288
	sizeMapPerSlot = 72
)

func pathBytes(p *gpb.Path) int {
	if p == nil {
		return 0
	}
	size := alloc(sizePath) + alloc(len(p.GetOrigin())) + alloc(len(p.GetTarget())) + alloc(ptrSize*cap(p.GetElem()))
	for _, e := range p.GetElem() {
		size += alloc(sizePathElem) + alloc(len(e.GetName()))
		if keys := e.GetKey(); len(keys) > 0 {
			size += mapBytes(len(keys))
			for k, v := range keys {
				size += alloc(len(k)) + alloc(len(v))
			}
		}
	}
	if old := p.GetElement(); len(old) > 0 { // gNMI before 0.4's path
		size += alloc(2 * ptrSize * cap(old))
		for _, s := range old {
			size += alloc(len(s))
		}
	}
	return size
}

func mapBytes(entries int) int {
	if entries <= 8 {
		return sizeSmallMap
	}
	return 96 + sizeMapPerSlot*entries
}

// valueBytes is the typed value, its oneof wrapper and what that holds.
func valueBytes(v *gpb.TypedValue) int {
	if v == nil {
		return 0
	}
	size := alloc(sizeTypedValue)
	switch x := v.GetValue().(type) {
	case *gpb.TypedValue_StringVal:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(len(x.StringVal))
	case *gpb.TypedValue_AsciiVal:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(len(x.AsciiVal))
	case *gpb.TypedValue_BytesVal:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(cap(x.BytesVal))
	case *gpb.TypedValue_JsonVal:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(cap(x.JsonVal))
	case *gpb.TypedValue_JsonIetfVal:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(cap(x.JsonIetfVal))
	case *gpb.TypedValue_ProtoBytes:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(cap(x.ProtoBytes))
	case *gpb.TypedValue_DecimalVal:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(sizeDecimal)
	case *gpb.TypedValue_AnyVal:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(sizeAny) + alloc(len(x.AnyVal.GetTypeUrl())) + alloc(cap(x.AnyVal.GetValue()))
	case *gpb.TypedValue_LeaflistVal:
		size += alloc(int(unsafe.Sizeof(*x))) + alloc(sizeScalarArray) + alloc(ptrSize*cap(x.LeaflistVal.GetElement()))
		for _, e := range x.LeaflistVal.GetElement() {
			size += valueBytes(e)
		}
	case nil:
	default: // the scalars: an 8-byte wrapper (Go's tiny allocator packs the bools)
		size += 8
	}
	return size
}

// alloc is what the Go heap takes for an allocation of n bytes: n
// rounded up to its size class (runtime/sizeclasses.go), or to whole
// 8 KiB pages past the largest.
func alloc(n int) int {
	if n <= 0 {
		return 0
	}
	if n <= smallAlloc {
		return int(smallClasses[(n+7)/8])
	}
	if n > sizeClasses[len(sizeClasses)-1] {
		return (n + 8191) &^ 8191
	}
	i, _ := slices.BinarySearch(sizeClasses, n)
	return sizeClasses[i]
}

var sizeClasses = []int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384,
	416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456,
	4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072,
	20480, 21760, 24576, 27264, 28672, 32768}

// queueCharge is what a queued notification is charged: the heap it
// holds, and its item in the queue's two slices (items and spare).
func queueCharge(n *gpb.Notification) int {
	return heldBytes(n) + 2*int(unsafe.Sizeof(item{}))
}

// smallClasses[(n+7)/8] is alloc(n) for n up to smallAlloc: the charge
// walks many small allocations, a search each would cost a third of it.
const smallAlloc = 1024

var smallClasses = func() (t [smallAlloc/8 + 1]uint16) {
	for i := 1; i < len(t); i++ {
		j, _ := slices.BinarySearch(sizeClasses, 8*i)
		t[i] = uint16(sizeClasses[j])
	}
	return t
}()
