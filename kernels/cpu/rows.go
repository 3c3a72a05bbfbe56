package cpu

import "math"

// Row kernels. Each exported function uses the kernels Detect selects; the
// methods of the same names on Kernels use a given set.

// RMSNorm writes dst = x / sqrt(mean(x²) + eps) * w for one row (w may be
// nil).
func RMSNorm(dst, x, w []float32, eps float32) { detected.RMSNorm(dst, x, w, eps) }

// RMSNorm writes dst = x / sqrt(mean(x²) + eps) * w for one row (w may be
// nil).
//
// It rounds as ggml's rms_norm does, so that weft's normalized rows, which
// are quantized before a matmul, are llama.cpp's bit for bit: the squares
// are rounded to float32 and summed in float64 (in sumSqGo's order), the
// mean is rounded to float32, scale = 1/sqrt(mean+eps) is computed in
// float32, and dst = (x·scale)·w with each product rounded.
func (k Kernels) RMSNorm(dst, x, w []float32, eps float32) {
	n := len(x)
	if n == 0 {
		return
	}
	dst = dst[:n]
	mean := float32(k.sumSq(x) / float64(n))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	if w == nil {
		k.scale(dst, x, scale)
		return
	}
	k.scaleMul(dst, x, w[:n], scale)
}

// LayerNorm writes dst = (x - mean) / sqrt(var + eps) * w + b for one row.
// w and b may be nil.
func LayerNorm(dst, x, w, b []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := sum / float64(len(x))
	var vs float64
	for _, v := range x {
		d := float64(v) - mean
		vs += d * d
	}
	inv := 1 / math.Sqrt(vs/float64(len(x))+float64(eps))
	for i, v := range x {
		y := float32((float64(v) - mean) * inv)
		if w != nil {
			y *= w[i]
		}
		if b != nil {
			y += b[i]
		}
		dst[i] = y
	}
}

// RoPE pairing conventions.
const (
	// RoPEAdjacent rotates pairs (x[2j], x[2j+1]): GGUF and llama2.c.
	RoPEAdjacent = 0
	// RoPERotateHalf rotates pairs (x[j], x[j+d/2]): Hugging Face, GPT-NeoX.
	RoPERotateHalf = 1
)

// RoPE rotates one token's heads in place: x holds heads×headDim values;
// the first ropeDim features of each head are rotated by angle
// pos·base^(-2j/ropeDim).
//
// The arithmetic is ggml's: the angle of pair j is pos multiplied j times
// by the float32 base^(-2/ropeDim), its cosine and sine are rounded to
// float32, and the rotation is x0·c − x1·s and x0·s + x1·c with the second
// product rounded and the first fused. RoPE is RoPEAngles followed by
// RoPERotate; callers that turn several rows by the same position can
// compute the angles once.
func RoPE(x []float32, pos, heads, headDim, ropeDim int, base float32, pairing int) {
	var cbuf, sbuf [256]float32
	cs, sn := cbuf[:], sbuf[:]
	if half := ropeDim / 2; half <= len(cbuf) {
		cs, sn = cs[:half], sn[:half]
	} else {
		cs, sn = make([]float32, half), make([]float32, half)
	}
	RoPEAngles(cs, sn, pos, ropeDim, base)
	RoPERotate(x, heads, headDim, ropeDim, pairing, cs, sn)
}

// RoPEAngles writes the float32 cosines and sines of the ropeDim/2 angles
// of position pos to cs and sn, computed as RoPE computes them.
func RoPEAngles(cs, sn []float32, pos, ropeDim int, base float32) {
	half := ropeDim / 2
	step := float32(math.Pow(float64(base), float64(float32(-2)/float32(ropeDim))))
	theta := float32(pos)
	for j := 0; j < half; j++ {
		s, c := math.Sincos(float64(theta))
		cs[j], sn[j] = float32(c), float32(s)
		theta *= step
	}
}

// RoPERotate rotates one token's heads in place (x holds heads×headDim
// values) by the angles in cs and sn (ropeDim/2 each, from RoPEAngles),
// with RoPE's arithmetic.
func RoPERotate(x []float32, heads, headDim, ropeDim, pairing int, cs, sn []float32) {
	half := ropeDim / 2
	cs, sn = cs[:half], sn[:half]
	for h := 0; h < heads; h++ {
		v := x[h*headDim : (h+1)*headDim]
		if pairing == RoPEAdjacent {
			v = v[:2*half]
			for j, c := range cs {
				s := sn[j]
				x0, x1 := v[2*j], v[2*j+1]
				v[2*j] = fmaf(x0, c, -(x1 * s))
				v[2*j+1] = fmaf(x0, s, x1*c)
			}
			continue
		}
		lo, hi := v[:half], v[half:2*half]
		for j, c := range cs {
			s := sn[j]
			x0, x1 := lo[j], hi[j]
			lo[j] = fmaf(x0, c, -(x1 * s))
			hi[j] = fmaf(x0, s, x1*c)
		}
	}
}

// Softmax normalises x in place.
func Softmax(x []float32) { detected.Softmax(x) }

// Softmax normalises x in place.
func (k Kernels) Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	m := k.max(x)
	s := k.expSum(x, m)
	k.scale(x, x, 1/s)
}

// SiLU applies x·σ(x) in place.
func SiLU(x []float32) { detected.SiLU(x) }

// SiLU applies x·σ(x) in place.
func (k Kernels) SiLU(x []float32) { k.silu(x, x) }

// GELU applies the exact (erf) GELU in place.
func GELU(x []float32) {
	for i, v := range x {
		x[i] = 0.5 * v * (1 + float32(math.Erf(float64(v)/math.Sqrt2)))
	}
}

// GELUTanh applies the tanh approximation of GELU in place.
func GELUTanh(x []float32) { detected.GELUTanh(x) }

// GELUTanh applies the tanh approximation of GELU in place.
func (k Kernels) GELUTanh(x []float32) { k.geluTanh(x, x) }

// ReLU applies max(0, x) in place.
func ReLU(x []float32) {
	for i, v := range x {
		if v < 0 {
			x[i] = 0
		}
	}
}

// Add writes dst = a + b.
func Add(dst, a, b []float32) { detected.Add(dst, a, b) }

// Add writes dst = a + b.
func (k Kernels) Add(dst, a, b []float32) { k.add(dst[:len(a)], a, b[:len(a)]) }

// Mul writes dst = a ⊙ b.
func Mul(dst, a, b []float32) { detected.Mul(dst, a, b) }

// Mul writes dst = a ⊙ b.
func (k Kernels) Mul(dst, a, b []float32) { k.mul(dst[:len(a)], a, b[:len(a)]) }

// SwiGLU writes dst = silu(gate) ⊙ up.
func SwiGLU(dst, gate, up []float32) { detected.SwiGLU(dst, gate, up) }

// SwiGLU writes dst = silu(gate) ⊙ up.
func (k Kernels) SwiGLU(dst, gate, up []float32) {
	k.swiglu(dst[:len(gate)], gate, up[:len(gate)])
}

// Axpy adds a·x to y (y[i] += a·x[i] over len(x)).
func Axpy(y, x []float32, a float32) { detected.Axpy(y, x, a) }

// Axpy adds a·x to y (y[i] += a·x[i] over len(x)).
func (k Kernels) Axpy(y, x []float32, a float32) { k.axpy(y[:len(x)], x, a) }

// Pure-Go versions of the row kernels.

// sumSqGo returns Σ x[i]², each square rounded to float32 and added in
// float64, in the order of the SIMD kernels: eight lanes, lane j adding the
// squares of x[j], x[j+8], x[j+16], … in turn, combined by sumLanes.
func sumSqGo(x []float32) float64 {
	var l [8]float64
	addSquares(&l, x, 0)
	return sumLanes(&l)
}

// addSquares adds the square of each x[i], i ≥ i0, rounded to float32, to
// lane i%8 of l.
func addSquares(l *[8]float64, x []float32, i0 int) {
	for i := i0; i < len(x); i++ {
		l[i%8] += float64(float32(x[i] * x[i]))
	}
}

// sumLanes returns ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)).
func sumLanes(l *[8]float64) float64 {
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

func scaleGo(dst, x []float32, a float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v * a
	}
}

func scaleMulGo(dst, x, w []float32, a float32) {
	dst, w = dst[:len(x)], w[:len(x)]
	for i, v := range x {
		dst[i] = v * a * w[i]
	}
}

func maxGo(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

func expSumGo(x []float32, m float32) float32 {
	var sum float64
	for i, v := range x {
		e := float32(math.Exp(float64(v - m)))
		x[i] = e
		sum += float64(e)
	}
	return float32(sum)
}

func siluGo(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = siluf(v)
	}
}

func geluTanhGo(dst, x []float32) {
	const c = 0.7978845608028654 // sqrt(2/pi)
	dst = dst[:len(x)]
	for i, v := range x {
		// 0.5·(1+tanh(u)) = 1/(1+exp(-2u)), without tanh's cancellation
		// near -1.
		x := float64(v)
		u := c * (x + 0.044715*x*x*x)
		dst[i] = float32(x / (1 + math.Exp(-2*u)))
	}
}

func swigluGo(dst, g, u []float32) {
	dst, u = dst[:len(g)], u[:len(g)]
	for i, v := range g {
		dst[i] = siluf(v) * u[i]
	}
}

func addGo(dst, a, b []float32) {
	dst, b = dst[:len(a)], b[:len(a)]
	for i := range a {
		dst[i] = a[i] + b[i]
	}
}

func mulGo(dst, a, b []float32) {
	dst, b = dst[:len(a)], b[:len(a)]
	for i := range a {
		dst[i] = a[i] * b[i]
	}
}

func axpyGo(y, x []float32, a float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// dotRowsGo sets out[r] = q·k[r*stride : r*stride+len(q)] for r < len(out).
func dotRowsGo(out, q, k []float32, stride int) {
	for r := range out {
		out[r] = dotF32F32Go(q, k[r*stride:r*stride+len(q)])
	}
}

// axpyRowsGo adds Σ_r p[r]·v[r*stride : r*stride+len(o)] to o.
func axpyRowsGo(o, p, v []float32, stride int) {
	for r, w := range p {
		if w == 0 {
			continue
		}
		axpyGo(o, v[r*stride:r*stride+len(o)], w)
	}
}
