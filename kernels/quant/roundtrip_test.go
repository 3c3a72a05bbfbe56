package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// testData returns named inputs of n values (a multiple of 256) that
// exercise symmetric, one-sided, outlier, mixed-scale and degenerate blocks.
func testData(n int) map[string][]float32 {
	r := rand.New(rand.NewPCG(7, 11))
	gen := func(f func(i int) float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	return map[string][]float32{
		"gauss":    gen(func(int) float32 { return float32(r.NormFloat64()) }),
		"positive": gen(func(int) float32 { return 1 + 2*r.Float32() }),
		"negative": gen(func(int) float32 { return -0.5 - r.Float32() }),
		"outliers": gen(func(i int) float32 {
			if i%37 == 0 {
				return 10 * float32(r.NormFloat64())
			}
			return 0.01 * float32(r.NormFloat64())
		}),
		"mixed": gen(func(i int) float32 {
			return float32(math.Pow(10, float64(i/16%5-3)) * r.NormFloat64())
		}),
		"sparse": gen(func(i int) float32 {
			if r.IntN(8) == 0 {
				return float32(r.NormFloat64())
			}
			return 0
		}),
		"zeros": make([]float32, n),
		"const": gen(func(int) float32 { return 0.7 }),
	}
}

type blockStats struct{ amax, lo, hi float32 }

func stats(x []float32) blockStats {
	s := blockStats{lo: x[0], hi: x[0]}
	for _, v := range x {
		s.amax = max(s.amax, abs32(v))
		s.lo = min(s.lo, v)
		s.hi = max(s.hi, v)
	}
	return s
}

const f16eps = 1.0 / 2048 // relative rounding error of an f16 scale

// maxErr gives, per type, the largest absolute error allowed for a value of
// a block (of the type's block size) with the given statistics, and the
// reasoning.
var maxErr = map[tensor.DType]func(s blockStats) float32{
	// Round to nearest within the scale's step, the scale itself rounded to
	// f16 (at most 127 steps × its error).
	tensor.Q8_0: func(s blockStats) float32 { return s.amax / 127 * (0.5 + 128*f16eps) },
	tensor.Q8_1: func(s blockStats) float32 { return s.amax / 127 * (0.5 + 128*f16eps) },
	// Float32 scale: half a step plus float rounding.
	tensor.Q8_K: func(s blockStats) float32 { return s.amax / 127 * 0.5001 },
	// d = max/-8: half a step, except the value opposite the max, which
	// clamps from +8 to +7 steps: one whole step.
	tensor.Q4_0: func(s blockStats) float32 { return s.amax / 8 * (1 + 16*f16eps) },
	tensor.Q5_0: func(s blockStats) float32 { return s.amax / 16 * (1 + 32*f16eps) },
	// Half a step of (max-min)/15, plus the f16 roundings of d (times up
	// to 15 steps) and of the min.
	tensor.Q4_1: func(s blockStats) float32 {
		r := s.hi - s.lo
		return r/30*1.001 + (r+abs32(s.lo))*f16eps
	},
	tensor.Q5_1: func(s blockStats) float32 {
		r := s.hi - s.lo
		return r/62*1.001 + (r+abs32(s.lo))*f16eps
	},
	// K-quants (per 256-value super-block). Sub-block scales are fitted
	// by a search that may clip a few values to gain precision on the
	// rest, and are themselves quantized relative to the largest one, so
	// these bounds allow a little more than half of the largest step.
	// Q6_K: 64 levels, step ≈ amax/32.
	tensor.Q6_K: func(s blockStats) float32 { return s.amax / 32 },
	// Q5_K: 32 levels over a sub-block's range (≤ 2·amax).
	tensor.Q5_K: func(s blockStats) float32 { return 2 * s.amax / 31 },
	// Q4_K: 16 levels over a sub-block's range.
	tensor.Q4_K: func(s blockStats) float32 { return 2 * s.amax / 15 },
	// Q3_K: levels -4..3, step ≈ amax/4.
	tensor.Q3_K: func(s blockStats) float32 { return s.amax / 4 },
	// Q2_K: 4 levels over the range, step ≈ range/3.
	tensor.Q2_K: func(s blockStats) float32 { return 2 * s.amax / 3 },
	// Plain conversions: relative rounding error (normal range).
	tensor.F16:  func(s blockStats) float32 { return s.amax * f16eps },
	tensor.BF16: func(s blockStats) float32 { return s.amax / 256 },
}

// maxRelRMS bounds the RMS error relative to the RMS of the Gaussian data
// set (fixed seed): about 10% above what ggml's reference quantizers reach
// on it, so that a quantizer that stops searching well shows up here.
var maxRelRMS = map[tensor.DType]float64{
	tensor.F16: 0.00025, tensor.BF16: 0.0019,
	tensor.Q8_0: 0.006, tensor.Q8_1: 0.006, tensor.Q8_K: 0.008,
	tensor.Q5_0: 0.047, tensor.Q5_1: 0.042, tensor.Q4_0: 0.095, tensor.Q4_1: 0.088,
	tensor.Q6_K: 0.02, tensor.Q5_K: 0.04, tensor.Q4_K: 0.08, tensor.Q3_K: 0.165, tensor.Q2_K: 0.32,
}

func TestRoundTripErrorBounds(t *testing.T) {
	const n = 4096
	for dt, bound := range maxErr {
		t.Run(dt.String(), func(t *testing.T) {
			bs := dt.BlockSize()
			if bs == 1 {
				bs = 32 // judge plain types over groups of 32
			}
			var worstAll float32
			var worstName string
			var worstIdx int
			for name, x := range testData(n) {
				nb, _ := dt.RowBytes(n)
				q := make([]byte, nb)
				if err := Quantize(dt, q, x); err != nil {
					t.Fatal(err)
				}
				y := make([]float32, n)
				if err := Dequantize(dt, y, q); err != nil {
					t.Fatal(err)
				}
				worst, worstAt := float32(0), 0
				var se, sx float64
				for b := 0; b < n; b += bs {
					lim := bound(stats(x[b : b+bs]))
					for i := b; i < b+bs; i++ {
						e := abs32(x[i] - y[i])
						if !(e <= lim) {
							t.Fatalf("%s: value %d = %v decodes to %v: error %g > bound %g", name, i, x[i], y[i], e, lim)
						}
						if lim > 0 && e/lim > worst {
							worst, worstAt = e/lim, i
						}
						se += float64(e) * float64(e)
						sx += float64(x[i]) * float64(x[i])
					}
				}
				if name == "gauss" {
					rel := math.Sqrt(se / sx)
					if rel > maxRelRMS[dt] {
						t.Errorf("%s: RMS error %.4f of the RMS value, want ≤ %.4f", name, rel, maxRelRMS[dt])
					}
					t.Logf("%s gauss: relative RMS error %.5f", dt, rel)
				}
				if worst > worstAll {
					worstAll, worstName, worstIdx = worst, name, worstAt
				}
			}
			t.Logf("%s: worst error %.3f of the bound (%s value %d)", dt, worstAll, worstName, worstIdx)
		})
	}
}
