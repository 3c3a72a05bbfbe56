package cpu

import (
	"math"
	"testing"
)

// TestRoPEExt checks the scaled rotations against properties written out:
// linear scaling by 4 at position 8 is plain RoPE at position 2
// (position interpolation); factors divide each pair's angle; YaRN keeps
// the unscaled angle for the pairs below its ramp, the scaled one above,
// and multiplies cos and sin by 1 + 0.1·ln 4.
func TestRoPEExt(t *testing.T) {
	const heads, hd = 2, 16
	x := make([]float32, heads*hd)
	for i := range x {
		x[i] = float32(math.Sin(float64(i) + 1))
	}
	rot := func(pos int, s *RoPEScaling, pairing int) []float32 {
		y := append([]float32(nil), x...)
		if s == nil {
			RoPE(y, pos, heads, hd, hd, 10000, pairing)
		} else {
			RoPEExt(y, pos, heads, hd, hd, 10000, pairing, s)
		}
		return y
	}
	near := func(what string, got, want []float32, tol float64) {
		t.Helper()
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > tol {
				t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
			}
		}
	}
	for _, pairing := range []int{RoPEAdjacent, RoPERotateHalf} {
		near("no scaling", rot(5, &RoPEScaling{}, pairing), rot(5, nil, pairing), 0)
		near("linear", rot(8, &RoPEScaling{FreqScale: 0.25}, pairing), rot(2, nil, pairing), 1e-6)
	}
	// Factors: pair j's angle pos·θ_j / f_j, written out.
	f := make([]float32, hd/2)
	for j := range f {
		f[j] = float32(j + 1)
	}
	got := rot(3, &RoPEScaling{Factors: f}, RoPEAdjacent)
	want := make([]float32, len(x))
	for h := 0; h < heads; h++ {
		for j := 0; j < hd/2; j++ {
			th := 3 * math.Pow(10000, -2*float64(j)/hd) / float64(f[j])
			a, b := float64(x[h*hd+2*j]), float64(x[h*hd+2*j+1])
			want[h*hd+2*j] = float32(a*math.Cos(th) - b*math.Sin(th))
			want[h*hd+2*j+1] = float32(a*math.Sin(th) + b*math.Cos(th))
		}
	}
	near("factors", got, want, 1e-5)
	// YaRN with factor 4 over an original context of 64.
	s := &RoPEScaling{FreqScale: 0.25, ExtFactor: 1, BetaFast: 32, BetaSlow: 1, OrigCtx: 64}
	lo, hi := yarnCorrDims(hd, 64, 32, 1, 10000)
	if lo != 0 || hi <= lo || hi > hd-1 {
		t.Fatalf("corr dims %v..%v", lo, hi)
	}
	got = rot(7, s, RoPEAdjacent)
	m := 1 + 0.1*math.Log(4)
	for h := 0; h < heads; h++ {
		for j := 0; j < hd/2; j++ {
			th := 7 * math.Pow(10000, -2*float64(j)/hd)
			r := 1 - math.Min(1, math.Max(0, (float64(j)-lo)/(hi-lo)))
			th = th/4*(1-r) + th*r
			a, b := float64(x[h*hd+2*j]), float64(x[h*hd+2*j+1])
			want[h*hd+2*j] = float32(m * (a*math.Cos(th) - b*math.Sin(th)))
			want[h*hd+2*j+1] = float32(m * (a*math.Sin(th) + b*math.Cos(th)))
		}
	}
	near("yarn", got, want, 1e-5)
}

// TestLlama3Factors checks Llama 3.1's per-pair divisors against values
// worked out by hand from Meta's rule (wavelength λ = 2π·base^(2j/d): 1
// below orig/high, factor above orig/low, 1/((1-s)/factor + s) between
// with s = (orig/λ - low)/(high - low)).
func TestLlama3Factors(t *testing.T) {
	for _, c := range []struct {
		name              string
		base              float32
		dim, orig         int
		factor, low, high float64
		want              map[int]float64
	}{
		// λ_0 = 2π lies between 16/4 and 16/1: s = (8/π - 1)/3, divisor π/2.
		{"small", 10000, 8, 16, 4, 1, 4, map[int]float64{0: math.Pi / 2, 1: 4, 2: 4, 3: 4}},
		// Llama 3.1 8B: base 5e5, 128-dim heads, ×8 over 8192 positions.
		{"llama3.1-8b", 500000, 128, 8192, 8, 1, 4, map[int]float64{0: 1, 28: 1, 29: 1.207483871283662,
			30: 1.5534146285049255, 34: 5.257326588708467, 35: 8, 63: 8}},
	} {
		got := make([]float32, c.dim/2)
		Llama3Factors(got, c.base, c.dim, c.factor, c.low, c.high, c.orig)
		for j, w := range c.want {
			if math.Abs(float64(got[j])-w) > 1e-6*w {
				t.Errorf("%s: pair %d: %v, want %v", c.name, j, got[j], w)
			}
		}
	}
}

// TestRoPEBits checks RoPE, and RoPEAngles followed by RoPERotate, bit for
// bit against ggml's arithmetic written out: the angle accumulated in
// float32 by repeated multiplication, cos and sin rounded to float32, the
// first output fused (x0·c − x1·s with x1·s rounded) and the second
// x0·s + x1·c with x1·c rounded. Partial rotation (ropeDim < headDim)
// leaves the other features alone.
func TestRoPEBits(t *testing.T) {
	const heads, hd = 3, 16
	x := make([]float32, heads*hd)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*1.7 + 0.3))
	}
	for _, pairing := range []int{RoPEAdjacent, RoPERotateHalf} {
		for _, ropeDim := range []int{hd, 8} {
			for _, pos := range []int{0, 1, 37, 4095} {
				want := append([]float32(nil), x...)
				half := ropeDim / 2
				step := float32(math.Pow(10000, float64(float32(-2)/float32(ropeDim))))
				theta := float32(pos)
				for j := 0; j < half; j++ {
					c, s := float32(math.Cos(float64(theta))), float32(math.Sin(float64(theta)))
					theta *= step
					for h := 0; h < heads; h++ {
						a, b := h*hd+2*j, h*hd+2*j+1
						if pairing == RoPERotateHalf {
							a, b = h*hd+j, h*hd+j+half
						}
						x0, x1 := want[a], want[b]
						want[a] = float32(math.FMA(float64(x0), float64(c), -float64(x1*s)))
						want[b] = float32(math.FMA(float64(x0), float64(s), float64(x1*c)))
					}
				}
				got := append([]float32(nil), x...)
				RoPE(got, pos, heads, hd, ropeDim, 10000, pairing)
				cs, sn := make([]float32, half), make([]float32, half)
				RoPEAngles(cs, sn, pos, ropeDim, 10000)
				split := append([]float32(nil), x...)
				RoPERotate(split, heads, hd, ropeDim, pairing, cs, sn)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(split[i]) != math.Float32bits(want[i]) {
						t.Fatalf("pairing %d, ropeDim %d, pos %d, [%d]: RoPE %v, angles+rotate %v, want %v", pairing, ropeDim, pos, i, got[i], split[i], want[i])
					}
				}
			}
		}
	}
}
