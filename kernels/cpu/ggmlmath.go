package cpu

import (
	"math"

	"github.com/weftrun/weft/kernels/quant"
)

// Scalar arithmetic in ggml's CPU order. llama.cpp quantizes activations
// to 8 bits before every weight matmul, which turns a difference in the
// last bit of an activation into a whole quantization step now and then;
// over tens of layers those add up to visible logit differences. The
// functions here reproduce ggml's float operations one for one, so that
// weft and llama.cpp agree bit for bit where the rest of the arithmetic
// does.

// fmaf returns a·b + c rounded once to float32, as C's fmaf does.
func fmaf(a, b, c float32) float32 { return quant.FMA32(a, b, c) }

// expf returns e^x with ggml's vectorised exponential (ggml_v_expf): x is
// split as n·ln2 + b with n an integer (ln2 in two parts), e^b comes from
// a degree-5 polynomial evaluated in float32 with fused multiply-adds, and
// the result is scaled by 2^n; for |n| > 192 it is 0 or +Inf.
// Its error is within 2.5 ulp of e^x (2.22 at worst, measured); what
// matters here is that it has ggml's bits.
func expf(x float32) float32 {
	z := fmaf(x, 0x1.715476p+0, 0x1.8p23)
	n := z - 0x1.8p23
	b := fmaf(-n, 0x1.7f7d1cp-20, fmaf(-n, 0x1.62e4p-1, x))
	u := b * b
	j := fmaf(fmaf(fmaf(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fmaf(0x1.555e66p-3, b, 0x1.fffdb6p-2)),
		u, fmaf(0x1.ffffecp-1, b, 1))
	if n > 192 || n < -192 {
		if n <= 0 {
			return 0
		}
		return float32(math.Inf(1))
	}
	return float32(math.Ldexp(float64(j), int(n)))
}

// siluf returns x·σ(x) as ggml computes it: x / (1 + expf(-x)).
func siluf(x float32) float32 {
	return x / float32(1+expf(-x))
}

// hsum16 adds 16 lanes in the order of a 512-bit horizontal reduction
// (halves, then quarters, then pairs): ggml's and llamafile's final sum.
func hsum16(v *[16]float32) float32 {
	var t8 [8]float32
	for i := range t8 {
		t8[i] = v[i+8] + v[i]
	}
	var t4 [4]float32
	for i := range t4 {
		t4[i] = t8[i+4] + t8[i]
	}
	return float32(t4[0]+t4[2]) + float32(t4[1]+t4[3])
}

// expSumGGGo sets x[i] = expf(x[i] - m) and returns the sum as ggml's
// soft_max forms it: hsum16 of each 16 values (zero-padded), added in
// float64.
func expSumGGGo(x []float32, m float32) float64 {
	var sum float64
	var lanes [16]float32
	for c := 0; c < len(x); c += 16 {
		lanes = [16]float32{}
		for l := range min(16, len(x)-c) {
			e := expf(x[c+l] - m)
			x[c+l] = e
			lanes[l] = e
		}
		sum += float64(hsum16(&lanes))
	}
	return sum
}
