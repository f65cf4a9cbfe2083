package telemetry

import (
	"math"
	"math/bits"
)

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

// appendShortFloat appends f as appendMarshalFloat does when f is the
// double nearest a decimal of at most nine significant digits, written
// in 'f' form: a gauge like 12.5, or a rate enrichment rounded. Then the
// shortest text that reads back as f is that decimal (decimals of fewer
// than sixteen digits are too far apart to read back as one double), so
// it is written with integer arithmetic, several times cheaper than the
// shortest-float algorithm. ok is false for any other f, and for whole
// numbers (appendMarshalFloat writes those as integers first).
func appendShortFloat(b []byte, f float64) (_ []byte, ok bool) {
	neg := f < 0
	x := f
	if neg {
		x = -f
	}
	if !(x >= 1e-6 && x < 1e15) {
		return b, false // 0, NaN, infinities, the 'e' form, or too wide for m below
	}
	e := decimalExponent(x)
	// m: x's nine leading digits, as x = m * 10^(e-8).
	k := 8 - e
	var m float64
	if k >= 0 {
		m = math.Round(x * pow10f[k])
		if m/pow10f[k] != x {
			return b, false
		}
	} else {
		m = math.Round(x / pow10f[-k])
		if m*pow10f[-k] != x {
			return b, false
		}
	}
	if m < 1e8 || m >= 1e9 {
		return b, false // e was off by one at a power of ten
	}
	// k of the nine digits are after the point; trailing zeros go.
	digits := uint64(m)
	for k > 0 && digits%10 == 0 {
		digits /= 10
		k--
	}
	if k <= 0 {
		return b, false // whole: appendMarshalFloat writes those as integers
	}
	if neg {
		b = append(b, '-')
	}
	whole, frac := digits/powersOf10[k], digits%powersOf10[k]
	b = append(appendUint(b, whole), '.')
	for n := decimalLen(frac); n < k; n++ {
		b = append(b, '0')
	}
	return appendUint(b, frac), true
}

// decimalExponent is floor(log10(x)) for x in [1e-14, 1e15).
func decimalExponent(x float64) int {
	if x >= 1 {
		return decimalLen(uint64(x)) - 1
	}
	e := -1
	for x*pow10f[-e] < 1 {
		e--
	}
	return e
}

var pow10f = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// RoundSignificant rounds x to digits (1 to 15) significant decimal
// digits, for values computed to more precision than they carry, such as
// a rate from two counter samples: to the nearest such decimal, or of two
// equally near (x exactly halfway) to the one farther from zero. Values
// of magnitude outside [1e-14, 1e15) (or of more digits than 10^22, the
// largest power of ten a float holds exactly, can scale: below 1e-8 for
// 15), and NaN and infinities, are returned as they are. A value so
// rounded is also cheaper to encode. (Below 1e-6 is a utilisation in
// percent of an idle fast port: 2.482666664e-07 is 2.48266666e-07.)
func RoundSignificant(x float64, digits int) float64 {
	a := math.Abs(x)
	if !(a >= 1e-14 && a < 1e15) || digits < 1 || digits > 15 {
		return x
	}
	k := digits - 1 - decimalExponent(a)
	if k >= len(pow10f) {
		return x
	}
	var r float64
	if k >= 0 {
		s := pow10f[k]
		p := a * s
		m := math.Round(p)
		// p may be a tie only after its rounding: a*s exactly is then on
		// one side of it, which the exact sign of a*s - p tells.
		if m-p == 0.5 && math.FMA(a, s, -p) < 0 {
			m--
		}
		r = m / s
	} else {
		s := pow10f[-k]
		q := a / s
		m := math.Round(q)
		// Likewise: q*s > a when a/s exactly is below q.
		if m-q == 0.5 && math.FMA(q, s, -a) > 0 {
			m--
		}
		r = m * s
	}
	return math.Copysign(r, x)
}
