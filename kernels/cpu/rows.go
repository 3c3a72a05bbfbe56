package cpu

import "math"

// RMSNorm writes dst = x / sqrt(mean(x²) + eps) * w for one row.
func RMSNorm(dst, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	if w == nil {
		for i, v := range x {
			dst[i] = v * scale
		}
		return
	}
	for i, v := range x {
		dst[i] = v * scale * w[i]
	}
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
func RoPE(x []float32, pos, heads, headDim, ropeDim int, base float32, pairing int) {
	half := ropeDim / 2
	for j := 0; j < half; j++ {
		theta := float64(pos) * math.Pow(float64(base), -2*float64(j)/float64(ropeDim))
		s, c := math.Sincos(theta)
		cs, sn := float32(c), float32(s)
		for h := 0; h < heads; h++ {
			v := x[h*headDim : (h+1)*headDim]
			var a, b int
			if pairing == RoPEAdjacent {
				a, b = 2*j, 2*j+1
			} else {
				a, b = j, j+half
			}
			x0, x1 := v[a], v[b]
			v[a] = x0*cs - x1*sn
			v[b] = x0*sn + x1*cs
		}
	}
}

// Softmax normalises x in place.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	var sum float32
	for i, v := range x {
		e := float32(math.Exp(float64(v - m)))
		x[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range x {
		x[i] *= inv
	}
}

// SiLU applies x·σ(x) in place.
func SiLU(x []float32) {
	for i, v := range x {
		x[i] = v / (1 + float32(math.Exp(float64(-v))))
	}
}

// GELU applies the exact (erf) GELU in place.
func GELU(x []float32) {
	for i, v := range x {
		x[i] = 0.5 * v * (1 + float32(math.Erf(float64(v)/math.Sqrt2)))
	}
}

// GELUTanh applies the tanh approximation of GELU in place.
func GELUTanh(x []float32) {
	const c = 0.7978845608028654 // sqrt(2/pi)
	for i, v := range x {
		x[i] = 0.5 * v * (1 + float32(math.Tanh(c*(float64(v)+0.044715*float64(v)*float64(v)*float64(v)))))
	}
}

// ReLU applies max(0, x) in place.
func ReLU(x []float32) {
	for i, v := range x {
		if v < 0 {
			x[i] = 0
		}
	}
}

// Add writes dst = a + b.
func Add(dst, a, b []float32) {
	b = b[:len(a)]
	for i := range a {
		dst[i] = a[i] + b[i]
	}
}

// Mul writes dst = a ⊙ b.
func Mul(dst, a, b []float32) {
	b = b[:len(a)]
	for i := range a {
		dst[i] = a[i] * b[i]
	}
}

// SwiGLU writes dst = silu(gate) ⊙ up.
func SwiGLU(dst, gate, up []float32) {
	up = up[:len(gate)]
	for i, g := range gate {
		dst[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
	}
}
