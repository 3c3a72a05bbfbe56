package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// halfRound rounds x to the nearest IEEE binary16 value, ties to even,
// from the format's definition: 11 significant bits down to 2⁻¹⁴, a fixed
// step of 2⁻²⁴ below (subnormals), ±Inf beyond the largest finite 65504.
func halfRound(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	_, e := math.Frexp(math.Abs(x)) // |x| = f·2^e, 0.5 ≤ f < 1
	step := math.Ldexp(1, max(e-11, -24))
	r := math.RoundToEven(math.Abs(x)/step) * step
	if r > 65504 {
		r = math.Inf(1)
	}
	return math.Copysign(r, x)
}

// halfValue decodes binary16 bits: sign, 5 exponent bits (bias 15), 10
// fraction bits.
func halfValue(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e, f := int(h>>10)&0x1f, float64(h&0x3ff)
	switch e {
	case 0:
		return s * math.Ldexp(f, -24)
	case 0x1f:
		if f != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	}
	return s * math.Ldexp(1024+f, e-25)
}

// randHalves returns n random binary16 values between 2⁻⁸ and 4 in
// magnitude, either sign, as bits.
func randHalves(r *rand.Rand, n int) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		h[i] = uint16(r.IntN(2))<<15 | uint16(7+r.IntN(10))<<10 | uint16(r.IntN(1024))
	}
	return h
}

// fenced returns n floats set to fill between guard bands of 8 sentinels,
// and a check of the bands.
func fenced(n int, fill float32) ([]float32, func(t *testing.T)) {
	const guard = float32(-7777.25)
	buf := make([]float32, n+16)
	for i := range buf {
		buf[i] = guard
	}
	s := buf[8 : 8+n]
	for i := range s {
		s[i] = fill
	}
	return s, func(t *testing.T) {
		t.Helper()
		for i := range 8 {
			if buf[i] != guard || buf[8+n+i] != guard {
				t.Fatalf("guard band overwritten: before %v after %v", buf[:8], buf[8+n:])
			}
		}
	}
}

// refAttendF16 is attention over a half-precision KV written out in
// float64, with ggml's roundings: the query rounded to f16 before the
// dot products (when roundQ), the probabilities rounded to f16 before the
// product with V (when roundP). tol[i] bounds the error a float32 kernel
// may make on out[i]: a relative 1e-5 of Σ p·|v|, plus the f16 step of
// every probability so close to a rounding midpoint that float32 may
// round it the other way.
func refAttendF16(q []float32, kv *KV, p AttendParams, roundQ, roundP bool) (out, tol []float64) {
	hd := p.HeadDim
	w := p.KVHeads * hd
	out = make([]float64, p.Heads*hd)
	tol = make([]float64, p.Heads*hd)
	var ks, vs [][]uint16
	for s := range kv.K16 {
		for r := 0; r < kv.Len[s]; r++ {
			ks = append(ks, kv.K16[s][r*w:(r+1)*w])
			vs = append(vs, kv.V16[s][r*w:(r+1)*w])
		}
	}
	for h := 0; h < p.Heads; h++ {
		kh := h / (p.Heads / p.KVHeads)
		sc := make([]float64, p.N)
		m := math.Inf(-1)
		for i := range sc {
			var d float64
			for j := 0; j < hd; j++ {
				qj := float64(q[h*hd+j])
				if roundQ {
					qj = halfRound(qj)
				}
				d += qj * halfValue(ks[i][kh*hd+j])
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
		var sum float64
		for i := range sc {
			sc[i] = math.Exp(sc[i] - m)
			sum += sc[i]
		}
		for i := range sc {
			pr := sc[i] / sum
			slack := 0.0
			if roundP {
				r := halfRound(pr)
				// Near a midpoint between two halves float32 may round
				// the other way.
				if up, down := halfRound(pr*(1+4e-6)), halfRound(pr*(1-4e-6)); up != r || down != r {
					slack = math.Max(math.Abs(up-r), math.Abs(r-down))
				}
				pr = r
			}
			for j := 0; j < hd; j++ {
				v := halfValue(vs[i][kh*hd+j])
				out[h*hd+j] += pr * v
				tol[h*hd+j] += 1e-5*math.Abs(pr*v) + slack*math.Abs(v)
			}
		}
		for j := 0; j < hd; j++ {
			tol[h*hd+j] += 1e-7
		}
	}
	return out, tol
}

// TestAttendF16 checks attention over half-precision segments, on every
// level, against the float64 reference with ggml's roundings: tails of
// the 16- and 8-wide vectors, several segments, GQA, ALiBi, windows, a
// head split over two calls. Segment rows past Len hold NaN, so an
// over-read shows; the output has guard bands, and q must stay unchanged.
// The test also checks that it can tell a kernel that skips either
// rounding.
func TestAttendF16(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	cases := []struct {
		heads, kvh, hd int
		lens           []int
		n              int
		sink, window   int
		alibi          bool
		qscale         float64
	}{
		{8, 4, 8, []int{5}, 5, 0, 0, false, 1},
		{4, 4, 16, []int{3, 9}, 12, 0, 0, false, 3},
		{32, 4, 64, []int{40, 23}, 60, 0, 0, false, 3},
		{8, 2, 64, []int{7}, 7, 0, 0, false, 1},
		{4, 2, 20, []int{17}, 17, 0, 0, true, 1},
		{2, 1, 128, []int{50}, 50, 4, 16, false, 2},
		{6, 3, 100, []int{7, 7, 7}, 19, 2, 5, true, 1},
		{2, 2, 300, []int{9}, 9, 0, 0, false, 1},
		{4, 1, 33, []int{1}, 1, 0, 0, false, 1},
		{2, 1, 65, []int{16, 16, 3}, 35, 0, 0, false, 4},
		{2, 2, 127, []int{4, 5}, 9, 0, 0, false, 2},
	}
	powerQ, powerP := false, false
	for ci, c := range cases {
		kv := &KV{Len: c.lens}
		w := c.kvh * c.hd
		for _, ln := range c.lens {
			k, v := randHalves(r, (ln+1)*w), randHalves(r, (ln+1)*w)
			for i := ln * w; i < len(k); i++ {
				k[i], v[i] = 0x7e00, 0x7e00 // NaN past the segment
			}
			kv.K16 = append(kv.K16, k)
			kv.V16 = append(kv.V16, v)
		}
		p := AttendParams{Heads: c.heads, KVHeads: c.kvh, HeadDim: c.hd,
			Scale: float32(1 / math.Sqrt(float64(c.hd))), N: c.n, Sink: c.sink, Window: c.window}
		if c.alibi {
			p.Slopes = make([]float32, c.heads)
			for h := range p.Slopes {
				p.Slopes[h] = float32(math.Pow(2, -float64(h+1)))
			}
		}
		q := randRow(r, c.heads*c.hd, c.qscale)
		q0 := slices.Clone(q)
		want, tol := refAttendF16(q, kv, p, true, true)
		// The test's power: the reference without one of the roundings
		// must fall outside the tolerance somewhere.
		for _, skip := range []struct {
			q, p  bool
			power *bool
		}{{false, true, &powerQ}, {true, false, &powerP}} {
			alt, _ := refAttendF16(q, kv, p, skip.q, skip.p)
			for i := range alt {
				if math.Abs(alt[i]-want[i]) > tol[i] {
					*skip.power = true
				}
			}
		}
		for _, l := range Levels() {
			k := Detect().Limit(l)
			t.Run(fmt.Sprintf("%s/%d", l, ci), func(t *testing.T) {
				out, check := fenced(c.heads*c.hd, 7)
				scratch, checkScratch := fenced(c.n, 0)
				half := c.heads / 2
				k.AttendHeads(out, q, kv, p, scratch, 0, half)
				k.AttendHeads(out, q, kv, p, scratch, half, c.heads)
				check(t)
				checkScratch(t)
				if !slices.Equal(q, q0) {
					t.Fatal("q was modified")
				}
				for i := range out {
					if d := math.Abs(float64(out[i]) - want[i]); !(d <= tol[i]) {
						t.Fatalf("out[%d] = %v, want %v ± %.2g", i, out[i], want[i], tol[i])
					}
				}
			})
		}
	}
	if !powerQ || !powerP {
		t.Errorf("the cases cannot tell a missing rounding: of q %v, of the probabilities %v", !powerQ, !powerP)
	}
}

// TestAttendF16InPlace: out may be q itself (the query rows are read
// before the head's output is written).
func TestAttendF16InPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	const heads, kvh, hd, n = 4, 2, 32, 10
	kv := &KV{Len: []int{n}, K16: [][]uint16{randHalves(r, n*kvh*hd)}, V16: [][]uint16{randHalves(r, n*kvh*hd)}}
	p := AttendParams{Heads: heads, KVHeads: kvh, HeadDim: hd, Scale: 0.2, N: n}
	q := randRow(r, heads*hd, 1)
	for _, l := range Levels() {
		k := Detect().Limit(l)
		want := make([]float32, len(q))
		k.AttendHeads(want, q, kv, p, make([]float32, n), 0, heads)
		got := slices.Clone(q)
		k.AttendHeads(got, got, kv, p, make([]float32, n), 0, heads)
		if !slices.Equal(got, want) {
			t.Errorf("%s: in place %v, want %v", l, got[:4], want[:4])
		}
	}
}

// TestF16RowKernels checks the building blocks of the f16 attention on
// every level against the pure-Go ones and the float64 definitions,
// across vector tails.
func TestF16RowKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for _, hd := range []int{1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 128, 129, 200, 256} {
		for _, rows := range []int{1, 2, 3, 4, 5, 9} {
			stride := hd + 3
			kr := randHalves(r, rows*stride)
			// The query and the probabilities hold f16 values, as in
			// attention, so that every product is exact.
			q := randRow(r, hd, 1)
			roundF16Go(q, q)
			pr := randRow(r, rows, 1)
			roundF16Go(pr, pr)
			want := make([]float64, rows)
			for i := range want {
				for j := 0; j < hd; j++ {
					want[i] += float64(q[j]) * halfValue(kr[i*stride+j])
				}
			}
			acc := make([]float64, hd)
			base := randRow(r, hd, 1)
			for j := range acc {
				acc[j] = float64(base[j])
				for i := 0; i < rows; i++ {
					acc[j] += float64(pr[i]) * halfValue(kr[i*stride+j])
				}
			}
			for _, l := range Levels() {
				k := Detect().Limit(l)
				for _, batched := range []bool{false, true} {
					out, check := fenced(rows, 0)
					k.dotRowsF16(out, q, kr, stride, batched)
					check(t)
					for i := range out {
						if !closeTo(out[i], want[i], 1e-5, 1e-5) {
							t.Fatalf("%s dotRowsF16 hd=%d rows=%d: [%d] = %v, want %v", l, hd, rows, i, out[i], want[i])
						}
						if g, w := out[i], ggmlDotF16(q, kr[i*stride:i*stride+hd], batched); math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("%s dotRowsF16 hd=%d rows=%d batched=%v: [%d] = %v, ggml's order gives %v", l, hd, rows, batched, i, g, w)
						}
					}
				}
				o, checkO := fenced(hd, 0)
				copy(o, base)
				k.axpyRowsF16(o, pr, kr, stride)
				checkO(t)
				for j := range o {
					if !closeTo(o[j], acc[j], 1e-5, 1e-5) {
						t.Fatalf("%s axpyRowsF16 hd=%d rows=%d: [%d] = %v, want %v", l, hd, rows, j, o[j], acc[j])
					}
				}
			}
		}
	}
}

// TestRoundF16 checks the f16 rounding (in place and to bits) on every
// level against halfRound, around ties, subnormals, overflow, Inf and NaN.
func TestRoundF16(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	x := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 65504, 65519.99, 65520, -65520, 1e6,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		1 + 1.0/2048, 1 + 3.0/2048, 2049, 2051, -2049, // ties: to even
		1 + 1.0/2048 + 1.0/(1<<20),       // just above a tie
		float32(math.Ldexp(1, -24)),      // the smallest subnormal
		float32(math.Ldexp(1, -25)),      // a tie to zero
		float32(math.Ldexp(1.5, -25)),    // rounds up to the smallest subnormal
		float32(math.Ldexp(3, -25)),      // a subnormal tie, to even (2⁻²³)
		float32(math.Ldexp(1023.5, -24)), // the largest subnormal tie: to 2⁻¹⁴
		float32(math.Ldexp(1, -30)), 1e-10,
	}
	for range 300 {
		x = append(x, float32(math.Ldexp(r.NormFloat64(), r.IntN(50)-30)))
	}
	for _, n := range []int{len(x), 1, 7, 8, 9, 16, 17, 33} {
		src := x[len(x)-n:]
		for _, l := range Levels() {
			k := Detect().Limit(l)
			dst, check := fenced(n, 0)
			k.roundF16(dst, src)
			check(t)
			bits := make([]uint16, n+1)
			bits[n] = 0xabcd
			k.toF16Bits(bits[:n], src)
			if bits[n] != 0xabcd {
				t.Fatalf("%s: toF16Bits wrote past its row", l)
			}
			in := slices.Clone(src)
			k.roundF16(in, in)
			for i, v := range src {
				want := halfRound(float64(v))
				same := func(got float64) bool {
					return got == want && math.Signbit(got) == math.Signbit(want) || math.IsNaN(got) && math.IsNaN(want)
				}
				if !same(float64(dst[i])) || !same(float64(in[i])) || !same(halfValue(bits[i])) {
					t.Fatalf("%s: %v rounds to %v (in place %v, bits %#04x), want %v", l, v, dst[i], in[i], bits[i], want)
				}
			}
		}
	}
	got := make([]uint16, 3)
	F32ToF16Bits(got, []float32{1, -2, 0.5})
	if !slices.Equal(got, []uint16{0x3c00, 0xc000, 0x3800}) {
		t.Errorf("F32ToF16Bits(1, -2, 0.5) = %#04x", got)
	}
}

// BenchmarkAttend times one decode token's attention (TinyLlama's shape:
// 32 heads, 4 KV heads of 64) over a float32 and a half-precision cache.
func BenchmarkAttend(b *testing.B) {
	r := rand.New(rand.NewPCG(39, 40))
	const heads, kvh, hd = 32, 4, 64
	for _, n := range []int{512, 4096} {
		f16 := &KV{Len: []int{n}, K16: [][]uint16{randHalves(r, n*kvh*hd)}, V16: [][]uint16{randHalves(r, n*kvh*hd)}}
		f32 := &KV{Len: []int{n}, K: [][]float32{make([]float32, n*kvh*hd)}, V: [][]float32{make([]float32, n*kvh*hd)}}
		for i := range f32.K[0] {
			f32.K[0][i], f32.V[0][i] = float32(halfValue(f16.K16[0][i])), float32(halfValue(f16.V16[0][i]))
		}
		p := AttendParams{Heads: heads, KVHeads: kvh, HeadDim: hd, Scale: 0.125, N: n}
		q := randRow(r, heads*hd, 1)
		out := make([]float32, heads*hd)
		scratch := make([]float32, AttendScratch(p))
		for _, c := range []struct {
			name string
			kv   *KV
		}{{"f32", f32}, {"f16", f16}} {
			for _, l := range Levels() {
				if l == Generic || l == AVX512 && Detect().Level() > AVX512 {
					continue
				}
				k := Detect().Limit(l)
				b.Run(fmt.Sprintf("%s/n=%d/%s", c.name, n, l), func(b *testing.B) {
					b.SetBytes(int64(2 * n * kvh * hd * (2 + 2*len(c.kv.K)))) // K and V read once
					for b.Loop() {
						k.AttendHeads(out, q, c.kv, p, scratch, 0, heads)
					}
				})
			}
		}
	}
}

// ggmlDotF16 is q·k in the order ggml sums it (llama.cpp, no flash
// attention), written out: in a batch, llamafile's tinyBLAS keeps one
// 16-lane accumulator over 16-element chunks and reduces it with
// _mm512_reduce_add_ps; a single query goes through ggml_vec_dot_f16:
// 4 accumulators over 64-element steps, combined as (a0+a2)+(a1+a3), that
// reduction, then the remaining elements added in double.
func ggmlDotF16(q []float32, k []uint16, batched bool) float32 {
	reduce := func(v [16]float32) float32 {
		var a [8]float32
		for i := range 8 {
			a[i] = v[i] + v[i+8]
		}
		var b [4]float32
		for i := range 4 {
			b[i] = a[i] + a[i+4]
		}
		return (b[0] + b[2]) + (b[1] + b[3])
	}
	prod := func(i int) float32 { return float32(float64(q[i]) * halfValue(k[i])) }
	if batched && len(q)%16 == 0 {
		var acc [16]float32
		for c := 0; c < len(q); c += 16 {
			for l := range 16 {
				acc[l] += prod(c + l)
			}
		}
		return reduce(acc)
	}
	var acc [4][16]float32
	np := len(q) / 64 * 64
	for i := 0; i < np; i += 64 {
		for c := range 4 {
			for l := range 16 {
				acc[c][l] += prod(i + 16*c + l)
			}
		}
	}
	var u [16]float32
	for l := range 16 {
		u[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l])
	}
	sum := 0.0
	if np > 0 {
		sum = float64(reduce(u))
	}
	for i := np; i < len(q); i++ {
		sum += float64(prod(i))
	}
	return float32(sum)
}

// TestAttendF16GGMLOrder checks that attention over an f16 cache gives
// exactly (bit for bit) what llama.cpp computes without flash attention,
// written out here: the query rounded to f16; K·q in ggml's order for a
// batch or a single query (ggmlDotF16); scaled; ggml's softmax (expf, the
// sum 16 at a time in float64, times the float32 reciprocal); the
// probabilities rounded to f16; and P·V as a dot product over the cells
// padded with zeros to a multiple of 32 (at least 32), in the same order.
// Every level, with AttendScratch's scratch and with the minimum, over
// lengths around the 16-, 32- and 64-cell boundaries and segments laid out
// as the KV cache lays them (a prompt, then blocks of 16).
func TestAttendF16GGMLOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, hd := range []int{64, 128, 48, 20} {
		for _, n := range []int{1, 2, 7, 16, 31, 32, 33, 63, 64, 65, 95, 96, 100, 130} {
			const heads, kvh = 4, 2
			w := kvh * hd
			prompt := min(n, 1+r.IntN(n))
			lens := []int{prompt}
			for left := n - prompt; left > 0; left -= 16 {
				lens = append(lens, min(16, left))
			}
			kv := &KV{Len: lens}
			for _, ln := range lens {
				kv.K16 = append(kv.K16, randHalves(r, ln*w))
				kv.V16 = append(kv.V16, randHalves(r, ln*w))
			}
			cell := func(seg [][]uint16, j, h, d int) uint16 {
				for s, ln := range lens {
					if j < ln {
						return seg[s][j*w+h*hd+d]
					}
					j -= ln
				}
				panic("cell out of range")
			}
			q := randRow(r, heads*hd, 3)
			for _, batched := range []bool{false, true} {
				p := AttendParams{Heads: heads, KVHeads: kvh, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd))), N: n, Batched: batched}
				want := make([]float32, heads*hd)
				for h := range heads {
					kh := h / (heads / kvh)
					qh := slices.Clone(q[h*hd : (h+1)*hd])
					roundF16Go(qh, qh)
					pad := max(32, (n+31)/32*32)
					e := make([]float32, pad)
					kr := make([]uint16, hd)
					mx := float32(math.Inf(-1))
					for j := range n {
						for d := range hd {
							kr[d] = cell(kv.K16, j, kh, d)
						}
						e[j] = ggmlDotF16(qh, kr, batched) * p.Scale
						mx = max(mx, e[j])
					}
					var sum float64
					for c := 0; c < pad; c += 16 {
						var lanes [16]float32
						for l := range 16 {
							if c+l < n {
								e[c+l] = expf(e[c+l] - mx)
								lanes[l] = e[c+l]
							}
						}
						sum += float64(hsum16(&lanes))
					}
					inv := float32(1 / sum)
					pr := make([]float32, pad)
					for j := range n {
						pr[j] = e[j] * inv
					}
					roundF16Go(pr, pr)
					col := make([]uint16, pad)
					for d := range hd {
						for j := range n {
							col[j] = cell(kv.V16, j, kh, d)
						}
						want[h*hd+d] = ggmlDotF16(pr, col, batched)
					}
				}
				for _, l := range Levels() {
					k := Detect().Limit(l)
					for _, size := range []int{n, AttendScratch(p)} {
						out := make([]float32, heads*hd)
						k.AttendHeads(out, q, kv, p, make([]float32, size), 0, heads)
						for i := range out {
							if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s hd=%d n=%d batched=%v scratch=%d: out[%d] = %v, ggml's order gives %v", l, hd, n, batched, size, i, out[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}
