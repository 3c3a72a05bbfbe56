package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var rowSizes = []int{1, 3, 8, 15, 16, 17, 31, 32, 33, 64, 100, 257, 2048, 5632}

func randRow(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

// closeTo reports whether got is within rel·|want| + abs of want.
func closeTo(got float32, want, rel, abs float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(float64(got))
	}
	if math.IsInf(want, 0) {
		return float64(got) == want
	}
	return math.Abs(float64(got)-want) <= rel*math.Abs(want)+abs
}

// rowCase is an element-wise kernel and its float64 definition.
type rowCase struct {
	name string
	run  func(k Kernels, dst, x []float32)
	want func(x float64) float64
	rel  float64
}

var unaryCases = []rowCase{
	{"SiLU", func(k Kernels, dst, x []float32) { copy(dst, x); k.SiLU(dst) },
		func(x float64) float64 { return x / (1 + math.Exp(-x)) }, 1e-6},
	{"GELUTanh", func(k Kernels, dst, x []float32) { copy(dst, x); k.GELUTanh(dst) },
		func(x float64) float64 {
			// 0.5·x·(1 + tanh(u)), written as x·σ(2u) to avoid the
			// cancellation of 1 + tanh(u) for negative u.
			u := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
			return x / (1 + math.Exp(-2*u))
		}, 1e-5}, // float32 rounding of u, amplified by exp for large |x|
}

func TestUnaryKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for _, c := range unaryCases {
			for _, n := range rowSizes {
				for _, scale := range []float64{1, 10, 100} {
					x := randRow(r, n, scale)
					x[0] = -1000 // saturates to -0
					dst, check := guarded(n, 0)
					c.run(k, dst, x)
					check(t)
					for i, v := range x {
						want := c.want(float64(v))
						if !closeTo(dst[i], want, c.rel, 1e-30) {
							t.Fatalf("%s/%s n=%d: f(%v) = %v, want %v", l, c.name, n, v, dst[i], want)
						}
					}
				}
			}
		}
	}
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for _, n := range rowSizes {
			for _, scale := range []float64{0.1, 5, 50} {
				x := randRow(r, n, scale)
				if n > 4 {
					x[2] = float32(math.Inf(-1)) // a masked position
				}
				want := make([]float64, n)
				m := math.Inf(-1)
				for _, v := range x {
					m = math.Max(m, float64(v))
				}
				var s float64
				for i, v := range x {
					want[i] = math.Exp(float64(v) - m)
					s += want[i]
				}
				buf, check := guarded(n, 0)
				copy(buf, x)
				k.Softmax(buf)
				check(t)
				for i := range buf {
					if !closeTo(buf[i], want[i]/s, 2e-6, 1e-9) {
						t.Fatalf("%s n=%d scale %v: softmax[%d] = %v, want %v", l, n, scale, i, buf[i], want[i]/s)
					}
				}
			}
		}
	}
}

func TestExpRange(t *testing.T) {
	// The polynomial exp over its whole domain, through Softmax's
	// expSum with m = 0.
	for _, l := range Levels() {
		k := Detect().Limit(l)
		var xs []float32
		for v := -110.0; v <= 90; v += 0.37 {
			xs = append(xs, float32(v))
		}
		xs = append(xs, 0, -0.5, 0.5, 88.7, 88.8, -87.3, -103.9, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()))
		got := append([]float32(nil), xs...)
		k.expSum(got, 0)
		for i, v := range xs {
			want := math.Exp(float64(v))
			if float64(float32(want)) == 0 || want < 1e-37 {
				// Underflow: denormal results may flush differently.
				if got[i] > 2e-37 {
					t.Errorf("%s: exp(%v) = %v, want ~%v", l, v, got[i], want)
				}
				continue
			}
			if want > math.MaxFloat32 {
				want = math.Inf(1)
			}
			if !closeTo(got[i], want, 3e-7, 0) {
				t.Errorf("%s: exp(%v) = %v, want %v", l, v, got[i], want)
			}
		}
	}
}

func TestBinaryAndNorms(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for _, n := range rowSizes {
			a, b := randRow(r, n, 1), randRow(r, n, 2)
			for _, op := range []struct {
				name string
				run  func(dst []float32)
				want func(i int) float64
			}{
				{"Add", func(d []float32) { k.Add(d, a, b) }, func(i int) float64 { return float64(a[i] + b[i]) }},
				{"Mul", func(d []float32) { k.Mul(d, a, b) }, func(i int) float64 { return float64(a[i] * b[i]) }},
				{"SwiGLU", func(d []float32) { k.SwiGLU(d, a, b) },
					func(i int) float64 { g := float64(a[i]); return g / (1 + math.Exp(-g)) * float64(b[i]) }},
				{"Axpy", func(d []float32) { copy(d, b); k.Axpy(d, a, 0.75) },
					func(i int) float64 { return float64(b[i]) + 0.75*float64(a[i]) }},
				{"RMSNorm", func(d []float32) { k.RMSNorm(d, a, b, 1e-5) }, func(i int) float64 {
					var ss float64
					for _, v := range a {
						ss += float64(v) * float64(v)
					}
					return float64(a[i]) / math.Sqrt(ss/float64(n)+1e-5) * float64(b[i])
				}},
				{"RMSNormNoWeight", func(d []float32) { k.RMSNorm(d, a, nil, 1e-6) }, func(i int) float64 {
					var ss float64
					for _, v := range a {
						ss += float64(v) * float64(v)
					}
					return float64(a[i]) / math.Sqrt(ss/float64(n)+1e-6)
				}},
			} {
				dst, check := guarded(n, 0)
				op.run(dst)
				check(t)
				for i := range dst {
					if want := op.want(i); !closeTo(dst[i], want, 2e-6, 1e-6) {
						t.Fatalf("%s/%s n=%d: [%d] = %v, want %v", l, op.name, n, i, dst[i], want)
					}
				}
			}
		}
	}
}

// refAttend is attention written out in float64 from its definition.
func refAttend(q []float32, kv *KV, p AttendParams) []float64 {
	hd := p.HeadDim
	out := make([]float64, p.Heads*hd)
	var ks, vs [][]float32
	for s := range kv.K {
		for r := 0; r < kv.Len[s]; r++ {
			ks = append(ks, kv.K[s][r*p.KVHeads*hd:(r+1)*p.KVHeads*hd])
			vs = append(vs, kv.V[s][r*p.KVHeads*hd:(r+1)*p.KVHeads*hd])
		}
	}
	for h := 0; h < p.Heads; h++ {
		kh := h / (p.Heads / p.KVHeads)
		sc := make([]float64, p.N)
		m := math.Inf(-1)
		for i := 0; i < p.N; i++ {
			var d float64
			for j := 0; j < hd; j++ {
				d += float64(q[h*hd+j]) * float64(ks[i][kh*hd+j])
			}
			d *= float64(p.Scale)
			if p.Slopes != nil {
				d -= float64(p.Slopes[h]) * float64(p.N-1-i)
			}
			if p.Window > 0 && i >= p.Sink && i < p.N-p.Window {
				d = math.Inf(-1)
			}
			sc[i] = d
			m = math.Max(m, d)
		}
		var s float64
		for i := range sc {
			sc[i] = math.Exp(sc[i] - m)
			s += sc[i]
		}
		for i := range sc {
			for j := 0; j < hd; j++ {
				out[h*hd+j] += sc[i] / s * float64(vs[i][kh*hd+j])
			}
		}
	}
	return out
}

func TestAttend(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	cases := []struct {
		heads, kvh, hd int
		lens           []int
		n              int
		sink, window   int
		alibi          bool
	}{
		{8, 4, 8, []int{5}, 5, 0, 0, false},
		{4, 4, 16, []int{3, 9}, 12, 0, 0, false},
		{32, 4, 64, []int{40, 23}, 60, 0, 0, false},
		{4, 2, 20, []int{17}, 17, 0, 0, true},
		{2, 1, 128, []int{50}, 50, 4, 16, false},
		{6, 3, 100, []int{7, 7, 7}, 19, 2, 5, true},
		{2, 2, 300, []int{9}, 9, 0, 0, false},
		{4, 1, 33, []int{1}, 1, 0, 0, false},
	}
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for ci, c := range cases {
			t.Run(fmt.Sprintf("%s/%d", l, ci), func(t *testing.T) {
				kv := &KV{Len: c.lens}
				for _, ln := range c.lens {
					// Rows are padded beyond the segment to catch over-reads
					// turning into wrong results.
					kv.K = append(kv.K, randRow(r, (ln+1)*c.kvh*c.hd, 1))
					kv.V = append(kv.V, randRow(r, (ln+1)*c.kvh*c.hd, 1))
				}
				p := AttendParams{Heads: c.heads, KVHeads: c.kvh, HeadDim: c.hd,
					Scale: float32(1 / math.Sqrt(float64(c.hd))), N: c.n, Sink: c.sink, Window: c.window}
				if c.alibi {
					p.Slopes = make([]float32, c.heads)
					for h := range p.Slopes {
						p.Slopes[h] = float32(math.Pow(2, -float64(h+1)))
					}
				}
				q := randRow(r, c.heads*c.hd, 1)
				want := refAttend(q, kv, p)
				out, check := guarded(c.heads*c.hd, 7)
				scratch := make([]float32, c.n)
				// Two halves of the heads, as a caller splitting over
				// threads would.
				half := c.heads / 2
				k.AttendHeads(out, q, kv, p, scratch, 0, half)
				k.AttendHeads(out, q, kv, p, scratch, half, c.heads)
				check(t)
				for i := range out {
					if !closeTo(out[i], want[i], 1e-5, 1e-6) {
						t.Fatalf("out[%d] = %v, want %v", i, out[i], want[i])
					}
				}
			})
		}
	}
}

// ggmlRMSNorm is ggml's rms_norm followed by the multiplication by w,
// written out: float32 squares summed in float64 one after another, the
// mean rounded to float32, scale = 1/sqrtf(mean + eps) in float32.
func ggmlRMSNorm(x, w []float32, eps float32) []float32 {
	var sum float64
	for _, v := range x {
		sum += float64(float32(v * v))
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v * scale)
		if w != nil {
			out[i] = float32(out[i] * w[i])
		}
	}
	return out
}

// TestRMSNormRoundsAsGGML checks RMSNorm bit for bit against ggml's
// arithmetic, on every level. The lanes of sumSq add in another order
// than ggml's one running sum, which shows only if the float64 sums round
// to different float32 means: about once in 10⁷ rows, not in these.
func TestRMSNormRoundsAsGGML(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range rowSizes {
		rows := map[string][]float32{"gauss": randRow(r, n, 1), "wide": randRow(r, n, 1e3)}
		// A row of dequantized 4-bit weights: few distinct squares.
		grid := make([]float32, n)
		for i := range grid {
			grid[i] = float32(r.IntN(16)-8) * 0.0123
		}
		rows["grid"] = grid
		w := randRow(r, n, 1)
		for name, x := range rows {
			for _, wt := range [][]float32{w, nil} {
				want := ggmlRMSNorm(x, wt, 1e-5)
				for _, l := range Levels() {
					k := Detect().Limit(l)
					dst, check := guarded(n, 0)
					k.RMSNorm(dst, x, wt, 1e-5)
					check(t)
					for i := range dst {
						if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s/%s n=%d weighted=%v: [%d] = %v, ggml %v", l, name, n, wt != nil, i, dst[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestSumSqLevelsAgree checks that every level sums the squares in the same
// order, so that the SIMD and pure-Go RMSNorm agree bit for bit.
func TestSumSqLevelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range rowSizes {
		// Magnitudes spread over 2¹²⁰: the sum's last bits depend on
		// the order of the additions.
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(60)-30))
		}
		want := sumSqGo(x)
		for _, l := range Levels() {
			if got := Detect().Limit(l).sumSq(x); math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("%s n=%d: sumSq = %v, pure Go %v", l, n, got, want)
			}
		}
	}
}
