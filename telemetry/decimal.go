package telemetry

import "math/bits"

// appendUint appends x in decimal, as strconv.AppendUint(b, x, 10) does,
// writing the digits in place, two at a time: metric values are most of
// what an enriched row's encoding writes.
func appendUint(b []byte, x uint64) []byte {
	n := decimalLen(x)
	if cap(b)-len(b) < n {
		b = append(b, make([]byte, n)...)[:len(b)]
	}
	b = b[:len(b)+n]
	i := len(b)
	for x >= 100 {
		q := x / 100
		r := x - q*100
		i -= 2
		b[i], b[i+1] = digitPairs[2*r], digitPairs[2*r+1]
		x = q
	}
	if x >= 10 {
		b[i-2], b[i-1] = digitPairs[2*x], digitPairs[2*x+1]
	} else {
		b[i-1] = byte('0' + x)
	}
	return b
}

// appendInt is appendUint for a signed x, as strconv.AppendInt(b, x, 10).
func appendInt(b []byte, x int64) []byte {
	if x < 0 {
		return appendUint(append(b, '-'), uint64(-x)) // -MinInt64 wraps to its magnitude
	}
	return appendUint(b, uint64(x))
}

// decimalLen is the number of decimal digits of x.
func decimalLen(x uint64) int {
	// log10(2) is about 1233/4096: t is floor(log10(x)) or one more.
	t := (bits.Len64(x|1) * 1233) >> 12
	if t > 0 && x < powersOf10[t] {
		return t
	}
	return t + 1
}

var powersOf10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" + "60616263646566676869" +
	"70717273747576777879" + "80818283848586878889" + "90919293949596979899"
