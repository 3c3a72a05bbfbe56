package quant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32Exact is a·b + c rounded once to float32 (big.Float).
func fma32Exact(a, b, c float32) float32 {
	p := new(big.Float).SetPrec(512).SetFloat64(float64(a))
	p.Mul(p, new(big.Float).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetFloat64(float64(c)))
	f, _ := p.Float32()
	return f
}

// TestFMA32 checks FMA32 against a single rounding of the exact sum on
// random operands over a wide range of exponents, subnormal results
// included, and on sums built to fall exactly halfway between two
// float32s in float64, where rounding twice goes the wrong way (a·b
// halfway and c tiny; a subnormal case).
func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	rnd := func(lo, hi int) float32 {
		return float32(r.NormFloat64() * math.Exp2(float64(lo+r.IntN(hi-lo))))
	}
	check := func(a, b, c float32) {
		t.Helper()
		got, want := FMA32(a, b, c), fma32Exact(a, b, c)
		if got != want && !(got != got && want != want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	for range 200000 {
		check(rnd(-30, 30), rnd(-30, 30), rnd(-30, 30))
		check(rnd(-80, -50), rnd(-80, -50), rnd(-150, -120))
	}
	halfway := 0
	for range 20000 {
		// a = 3, b odd of 23 bits: a·b, odd of 25 bits where it has 25,
		// is halfway between two float32s (scaled by 2^e); c lies far
		// below its last bit, so that p + q rounds to the halfway value.
		for _, e := range []int{-150, -140, -130, -20, 0, 40} {
			bm := float64(1<<22 | r.IntN(1<<21)<<1 | 1)
			a := float32(3 * math.Exp2(float64(e/2)))
			b := float32(bm * math.Exp2(float64(e-e/2-22)))
			m := float64(a) * float64(b)
			if 3*bm < 1<<24 || float64(float32(m)) == m {
				continue
			}
			c := float32(math.Copysign(math.Exp2(float64(e-60)), r.NormFloat64()))
			check(a, b, c)
			check(a, b, -c)
			check(-a, b, c)
			halfway++
		}
	}
	// Where float32s are subnormal, halfway values have more trailing
	// zeros: a·b = 2^-150 - 2^-196 on c = (2^19+1)·2^-149 rounds in
	// float64 to halfway between c and c + 2^-149, and then to the even
	// one, c + 2^-149, where c is right.
	a, b := float32((1+0x1p-23)*0x1p-75), float32((1-0x1p-23)*0x1p-75)
	c := float32(0x1p-130 + 0x1p-149)
	check(a, b, c)
	check(-a, b, -c)
	if halfway < 1000 {
		t.Fatalf("only %d halfway cases", halfway)
	}
}
