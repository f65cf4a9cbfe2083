package telemetry

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestAppendIntMatchesStrconv: around every power of ten, at the ends
// of the ranges, and at random.
func TestAppendIntMatchesStrconv(t *testing.T) {
	check := func(x uint64) {
		if got, want := string(appendUint([]byte("x"), x)), "x"+strconv.FormatUint(x, 10); got != want {
			t.Fatalf("appendUint(%d) = %s", x, got)
		}
		i := int64(x)
		if got, want := string(appendInt(nil, i)), strconv.FormatInt(i, 10); got != want {
			t.Fatalf("appendInt(%d) = %s", i, got)
		}
	}
	for _, p := range powersOf10 {
		for d := uint64(0); d < 3; d++ {
			check(p + d)
			check(p - d)
		}
	}
	check(math.MaxUint64)
	check(math.MaxUint64 - 1)
	check(1 << 63)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		check(rng.Uint64() >> rng.IntN(64))
	}
}

func BenchmarkAppendUint(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.Run("weir", func(b *testing.B) {
		for i := uint64(0); b.Loop(); i++ {
			buf = appendUint(buf[:0], 60_000_000*i)
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for i := uint64(0); b.Loop(); i++ {
			buf = strconv.AppendUint(buf[:0], 60_000_000*i, 10)
		}
	})
}

// strconvFloat is appendMarshalFloat without the short path.
func strconvFloat(f float64) string {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.FormatFloat(f, format, -1, 64)
}

// TestShortFloatMatchesStrconv: decimals of up to nine digits at every
// scale the short path takes are written by it, as strconv writes them;
// and whatever else it takes, it writes as strconv does.
func TestShortFloatMatchesStrconv(t *testing.T) {
	check := func(f float64) bool {
		got, ok := appendShortFloat([]byte("x"), f)
		if ok && string(got) != "x"+strconvFloat(f) {
			t.Fatalf("appendShortFloat(%v) = %s, want x%s", f, got, strconvFloat(f))
		}
		return ok
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200_000 {
		digits := 1 + rng.IntN(9)
		m := rng.Int64N(int64(math.Pow10(digits)))
		k := rng.IntN(23)
		f := float64(m) / math.Pow10(k)
		if rng.IntN(2) == 0 {
			f = -f
		}
		if a := math.Abs(f); !check(f) && a >= 1e-6 && a < 1e15 && a != math.Trunc(a) {
			t.Fatalf("%v (%d / 10^%d) not taken", f, m, k)
		}
		check(rng.Float64() * math.Pow10(rng.IntN(30)-10))
		check(math.Float64frombits(rng.Uint64()))
	}
	for _, f := range []float64{1e-6, 1.5e-6, 0.1, 0.2, 0.3, 1e15 - 0.5, 999999999.5, 0.0167, 2057167.43, 0.56, 100, 1e8, 123456789} {
		check(f)
		check(math.Nextafter(f, 0))
		check(math.Nextafter(f, 2e15))
	}
}

func BenchmarkShortFloat(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.Run("short", func(b *testing.B) {
		for b.Loop() {
			buf, _ = appendShortFloat(buf[:0], 2057167.43)
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for b.Loop() {
			buf = strconv.AppendFloat(buf[:0], 2057167.43, 'f', -1, 64)
		}
	})
}

// TestRoundSignificant: nine digits kept, and the result takes the short
// path.
func TestRoundSignificant(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{123456789.0 / 60.013, 2057167.43}, {0.5599999999999999, 0.56}, {1000, 1000}, {-1.0 / 3, -0.333333333},
		{1e-7, 1e-7}, {2e15 / 3, 666666667000000}, {2e16 / 3, 2e16 / 3}, {0, 0}, {0.016666666666666666, 0.0166666667}, {99999999999.99, 100000000000},
	} {
		got := RoundSignificant(c.x, 9)
		if got != c.want {
			t.Errorf("RoundSignificant(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 100_000 {
		x := rng.Float64() * math.Pow10(rng.IntN(21)-6)
		r := RoundSignificant(x, 9)
		if math.Abs(r-x) > math.Abs(x)*5e-9 {
			t.Fatalf("RoundSignificant(%v) = %v: off by more than half a ninth digit", x, r)
		}
		if _, ok := appendShortFloat(nil, r); !ok && r >= 1e-6 && r < 1e15 && r != math.Trunc(r) {
			t.Fatalf("RoundSignificant(%v) = %v does not take the short path", x, r)
		}
	}
}

// nearestSignificant is x rounded to digits significant digits from its
// exact decimal expansion, halfway away from zero: what RoundSignificant
// must give.
func nearestSignificant(x float64, digits int) float64 {
	s := strconv.FormatFloat(math.Abs(x), 'e', 800, 64) // exact for these magnitudes
	mant, exp, _ := strings.Cut(s, "e")
	mant = mant[:1] + mant[2:]
	m, _ := strconv.ParseInt(mant[:digits], 10, 64)
	if mant[digits] >= '5' {
		m++
	}
	e, _ := strconv.Atoi(exp)
	r, _ := strconv.ParseFloat(strconv.FormatInt(m, 10)+"e"+strconv.Itoa(e-digits+1), 64)
	return math.Copysign(r, x)
}

// TestRoundSignificantNearest: a value just below a halfway point rounds
// down, though its product with the power of ten rounds to the halfway
// point (317.7072745 is 317.70727449999998...).
func TestRoundSignificantNearest(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want float64
	}{{317.7072745, 317.707274}, {94.91216555, 94.9121655}, {4211.758255, 4211.75825}, {8.785399655e-06, 8.78539965e-06}, {-317.7072745, -317.707274}} {
		if got := RoundSignificant(c.x, 9); got != c.want {
			t.Errorf("RoundSignificant(%v, 9) = %v, want %v", c.x, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for n := range 200_000 {
		var x float64
		digits := 9
		if n%2 == 0 { // next to a halfway point of nine digits
			m := 100_000_000 + rng.Int64N(900_000_000)
			x, _ = strconv.ParseFloat(strconv.FormatInt(m, 10)+"5e"+strconv.Itoa(rng.IntN(20)-15), 64)
		} else {
			x, digits = rng.Float64()*math.Pow10(rng.IntN(21)-6), 1+rng.IntN(15)
		}
		if a := math.Abs(x); !(a >= 1e-6 && a < 1e15) {
			continue
		}
		if got, want := RoundSignificant(x, digits), nearestSignificant(x, digits); got != want {
			t.Fatalf("RoundSignificant(%v, %d) = %v, want %v", x, digits, got, want)
		}
	}
}

// TestRoundSignificantTiny: values down to 1e-14 (a utilisation in
// percent of an idle fast port is 1e-7 and below) round to the nearest
// decimal too: they were left with all their digits below 1e-6.
func TestRoundSignificantTiny(t *testing.T) {
	if got := RoundSignificant(2.482666664e-07, 9); got != 2.48266666e-07 {
		t.Errorf("RoundSignificant(2.482666664e-07, 9) = %v, want 2.48266666e-07", got)
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for n := range 200_000 {
		x := rng.Float64() * math.Pow10(-rng.IntN(9)-6) // below 1e-6
		digits := 9
		if n%2 == 1 {
			digits = 1 + rng.IntN(15)
		}
		if a := math.Abs(x); !(a >= 1e-14) || digits-1-int(math.Floor(math.Log10(a))) >= 22 {
			continue // left as it is
		}
		if got, want := RoundSignificant(x, digits), nearestSignificant(x, digits); got != want {
			t.Fatalf("RoundSignificant(%v, %d) = %v, want %v", x, digits, got, want)
		}
	}
}
