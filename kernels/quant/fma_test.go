package quant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32Exact is a·b + c rounded once to float32 by big.Float.
func fma32Exact(a, b, c float32) float32 {
	p := new(big.Float).SetPrec(512).SetFloat64(float64(a))
	p.Mul(p, new(big.Float).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetFloat64(float64(c)))
	f, _ := p.Float32()
	return f
}

// TestFMA32 checks FMA32 against an exact rounding on random operands and
// on sums whose float64 rounding lands exactly halfway between two
// float32s while the exact sum does not (where rounding twice is wrong).
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		t.Helper()
		got, want := FMA32(a, b, c), fma32Exact(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	for range 200000 {
		a := float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20)))
		b := float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20)))
		c := float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(60)-30)))
		check(a, b, c)
	}
	// p = a·b = 2^e(1 ± 2^-46) sits just off half an ulp of c: r = p + c
	// rounds to the halfway point in float64, and both sides of it occur.
	for range 20000 {
		ec := rng.IntN(200) - 100
		c := float32(math.Ldexp(1+float64(rng.IntN(1<<23))/(1<<23), ec))
		if rng.IntN(2) == 0 {
			c = -c
		}
		e := ec - 24 // half an ulp of c
		a := float32(math.Ldexp(1+1.0/(1<<23), e/2))
		b := float32(math.Ldexp(1-1.0/(1<<23), e-e/2))
		if rng.IntN(2) == 0 {
			b = float32(math.Ldexp(1+1.0/(1<<23), e-e/2))
		}
		if rng.IntN(2) == 0 {
			a = -a
		}
		check(a, b, c)
	}
	// The same below float32's smallest normal, where rounding to float32
	// drops more than 29 bits: c an odd multiple of the smallest
	// subnormal, p just below half of it.
	for range 20000 {
		k := 2*rng.IntN(1<<22) + 1
		c := float32(math.Ldexp(float64(k), -149))
		a := float32(math.Ldexp(1+1.0/(1<<23), -75))
		b := float32(math.Ldexp(1-1.0/(1<<23), -75))
		check(a, b, c)
		check(-a, b, -c)
	}
	// Results near and below float32's smallest normal.
	for range 20000 {
		a := float32(rng.NormFloat64() * 0x1p-70)
		b := float32(rng.NormFloat64() * 0x1p-60)
		c := float32(rng.NormFloat64() * 0x1p-128)
		check(a, b, c)
	}
}
