package cpu

import (
	"flag"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

var exhaustive = flag.Bool("exhaustive", false, "compare expf on every level over every float32 in [-104, 89] (slow)")

// banded returns n floats starting off floats past a 64-byte boundary of
// their allocation, with 16 guard values on each side, and a check of the
// guards.
func banded(n, off int) ([]float32, func(t *testing.T)) {
	const guard = float32(-31415.5)
	buf := make([]float32, n+off+48)
	for i := range buf {
		buf[i] = guard
	}
	s := buf[16+off : 16+off+n]
	return s, func(t *testing.T) {
		t.Helper()
		for i, v := range buf {
			if (i < 16+off || i >= 16+off+n) && v != guard {
				t.Fatalf("guard [%d] of %d (row at %d..%d) overwritten: %v", i, len(buf), 16+off, 16+off+n, v)
			}
		}
	}
}

// expEdges returns inputs where expf's branches meet: n = round(x·log2e)
// crossing ±126 (normal or subnormal 2^n), 127 and 128 (overflow), ±149
// and ±150 (the last subnormals), ±192 (the cut to 0 or +Inf), and the
// float32 edges: ±0, subnormals, huge values, infinities, NaN.
func expEdges() []float32 {
	inf := float32(math.Inf(1))
	xs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-40, -1e-40, 0x1p-126, -0x1p-126,
		88.72, 88.73, 88.7228, 88.7229, -87.33, -87.34, -103.27, -103.28, -103.97, -103.98, -104,
		1e10, -1e10, 1e30, -1e30, math.MaxFloat32, -math.MaxFloat32,
		inf, -inf, float32(math.NaN()), -float32(math.NaN()),
	}
	for _, n := range []int{-194, -193, -192, -191, -151, -150, -149, -148, -127, -126, -125, -124,
		124, 125, 126, 127, 128, 129, 130, 191, 192, 193, 194} {
		for _, f := range []float64{-0.5, -0.4999, 0, 0.4999, 0.5} {
			x := float32((float64(n) + f) * math.Ln2)
			xs = append(xs, math.Nextafter32(x, -inf), x, math.Nextafter32(x, inf))
		}
	}
	return xs
}

// edgeRow returns n inputs: Gaussian values of the given scale with, now
// and then, one of expEdges.
func edgeRow(r *rand.Rand, n int, scale float64) []float32 {
	edges := expEdges()
	x := randRow(r, n, scale)
	for i := range x {
		if r.IntN(4) == 0 {
			x[i] = edges[r.IntN(len(edges))]
		}
	}
	return x
}

var ggSizes = []int{1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 47, 48, 63, 64, 65, 100, 255, 257, 1000, 5632}

// sameBits reports whether a and b are the same float32, bit for bit, or
// both NaN: the sign and payload of a NaN made inside a fused
// multiply-add depend on which operand the compiler put where, in ggml's
// C as in Go.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// TestRowsGGExact checks SiLU, SwiGLU and the softmax exponentials of
// every level bit for bit against the scalar definitions of ggmlmath.go.
func TestRowsGGExact(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	inf := float32(math.Inf(1))
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for _, n := range ggSizes {
			for _, off := range []int{0, 1, 3} {
				for _, scale := range []float64{1, 30, 300} {
					g, u := edgeRow(r, n, scale), edgeRow(r, n, 1)
					name := fmt.Sprintf("%s n=%d off=%d scale=%v", l, n, off, scale)

					dst, check := banded(n, off)
					k.silu(dst, g)
					check(t)
					for i, v := range g {
						if want := siluf(v); !sameBits(dst[i], want) {
							t.Fatalf("%s: silu(%v [%#08x]) = %v [%#08x], want %v [%#08x]", name, v,
								math.Float32bits(v), dst[i], math.Float32bits(dst[i]), want, math.Float32bits(want))
						}
					}

					dst, check = banded(n, off)
					k.swiglu(dst, g, u)
					check(t)
					for i, v := range g {
						if want := siluf(v) * u[i]; !sameBits(dst[i], want) {
							t.Fatalf("%s: swiglu(%v, %v) = %v [%#08x], want %v [%#08x]", name, v, u[i],
								dst[i], math.Float32bits(dst[i]), want, math.Float32bits(want))
						}
					}

					// In place, as SiLU runs.
					dst, check = banded(n, off)
					copy(dst, g)
					k.silu(dst, dst)
					check(t)
					for i, v := range g {
						if want := siluf(v); !sameBits(dst[i], want) {
							t.Fatalf("%s: in-place silu(%v) = %v, want %v", name, v, dst[i], want)
						}
					}

					// Softmax rows: scores minus their maximum, with masked
					// cells; also minus 0, -Inf, +Inf, NaN.
					x := randRow(r, n, scale)
					for i := range x {
						if r.IntN(3) == 0 {
							x[i] = -inf
						}
					}
					for _, m := range []float32{maxGo(x), 0, 1e-3, -50, 100, -inf, inf, float32(math.NaN())} {
						for _, row := range [][]float32{x, g} {
							want := append([]float32(nil), row...)
							wantSum := expSumGGGo(want, m)
							buf, check := banded(n, off)
							copy(buf, row)
							sum := k.expSumGG(buf, m)
							check(t)
							for i, v := range row {
								if !sameBits(buf[i], want[i]) {
									t.Fatalf("%s m=%v: expf(%v - m) = %v [%#08x], want %v [%#08x]", name, m, v,
										buf[i], math.Float32bits(buf[i]), want[i], math.Float32bits(want[i]))
								}
								if v == -inf && !math.IsInf(float64(m), 0) && !math.IsNaN(float64(m)) && math.Float32bits(buf[i]) != 0 {
									t.Fatalf("%s m=%v: masked cell gave %v, want +0", name, m, buf[i])
								}
							}
							if math.Float64bits(sum) != math.Float64bits(wantSum) && !(math.IsNaN(sum) && math.IsNaN(wantSum)) {
								t.Fatalf("%s m=%v: sum = %v [%#016x], want %v [%#016x]", name, m,
									sum, math.Float64bits(sum), wantSum, math.Float64bits(wantSum))
							}
						}
					}
				}
			}
		}
	}
}

// TestRowsGGEmpty checks that empty rows are accepted.
func TestRowsGGEmpty(t *testing.T) {
	for _, l := range Levels() {
		k := Detect().Limit(l)
		k.silu(nil, nil)
		k.swiglu(nil, nil, nil)
		if s := k.expSumGG(nil, 0); s != 0 {
			t.Errorf("%s: expSumGG(empty) = %v", l, s)
		}
	}
}

// fmafExact is fmaf with a single rounding (big.Float), to tell a double
// rounding of fmaf's float64 path from a kernel's error.
func fmafExact(a, b, c float32) float32 {
	p := new(big.Float).SetPrec(512).SetFloat64(float64(a))
	p.Mul(p, new(big.Float).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetFloat64(float64(c)))
	f, _ := p.Float32()
	return f
}

// expfExact is expf with fmafExact for every fused multiply-add.
func expfExact(x float32) float32 {
	z := fmafExact(x, 0x1.715476p+0, 0x1.8p23)
	n := z - 0x1.8p23
	b := fmafExact(-n, 0x1.7f7d1cp-20, fmafExact(-n, 0x1.62e4p-1, x))
	u := b * b
	j := fmafExact(fmafExact(fmafExact(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fmafExact(0x1.555e66p-3, b, 0x1.fffdb6p-2)),
		u, fmafExact(0x1.ffffecp-1, b, 1))
	if n > 192 || n < -192 {
		if n <= 0 {
			return 0
		}
		return float32(math.Inf(1))
	}
	return float32(math.Ldexp(float64(j), int(n)))
}

// TestExpfSweep compares the kernels' expf with the scalar one over every
// 256th float32 in [-104, 89] (with -exhaustive, every one, on all CPUs),
// where the result goes from 0 through subnormals to +Inf.
func TestExpfSweep(t *testing.T) {
	step, workers := uint64(1)<<8, 1
	if *exhaustive {
		step, workers = 1, runtime.GOMAXPROCS(0)
	}
	var levels []Level
	for _, l := range Levels() {
		if l != Generic {
			levels = append(levels, l)
		}
	}
	if len(levels) == 0 {
		t.Skip("no SIMD level on this machine")
	}
	// Blocks of 1<<24 bit patterns, handed to the workers in turn.
	type block struct{ lo, hi uint64 }
	var blocks []block
	for _, r := range [][2]uint64{{0, uint64(math.Float32bits(89))}, {0x80000000, uint64(math.Float32bits(-104))}} {
		for lo := r[0]; lo <= r[1]; lo += 1 << 24 {
			blocks = append(blocks, block{lo, min(lo+1<<24-1, r[1])})
		}
	}
	var (
		mu               sync.Mutex
		checked, doubles int
		failures         []string
	)
	next := make(chan block)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			const chunk = 4099 // not a multiple of 16: every call ends in a tail
			in := make([]float32, 0, chunk)
			want := make([]float32, chunk)
			out := make([]float32, chunk)
			var fails []string
			nChecked, nDoubles := 0, 0
			flush := func() {
				for i, x := range in {
					want[i] = expf(x)
				}
				for _, l := range levels {
					copy(out, in)
					Detect().Limit(l).expSumGG(out[:len(in)], 0)
					for i, x := range in {
						if sameBits(out[i], want[i]) {
							continue
						}
						msg := fmt.Sprintf("%s: expf(%v [%#08x]) = %v [%#08x], want %v [%#08x]", l, x,
							math.Float32bits(x), out[i], math.Float32bits(out[i]), want[i], math.Float32bits(want[i]))
						if sameBits(out[i], expfExact(x)) {
							// fmaf's float64 path rounded twice.
							nDoubles++
							msg += ": a double rounding in fmaf's float64 path"
						}
						if len(fails) < 20 {
							fails = append(fails, msg)
						}
					}
				}
				nChecked += len(in)
				in = in[:0]
			}
			for b := range next {
				for v := b.lo; v <= b.hi; v += step {
					in = append(in, math.Float32frombits(uint32(v)))
					if len(in) == chunk {
						flush()
					}
				}
			}
			flush()
			mu.Lock()
			checked += nChecked
			doubles += nDoubles
			failures = append(failures, fails...)
			mu.Unlock()
		}()
	}
	for _, b := range blocks {
		next <- b
	}
	close(next)
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("%d inputs on %v; %d double roundings in fmaf", checked, levels, doubles)
}

// TestExpfAccuracy checks the scalar expf against math.Exp: within 2.5
// ulp of e^x wherever e^x is a normal float32 (ggml's polynomial and
// two-part ln2 reduction reach 2.2 ulp near x = -48.2226), and a few
// values written out (ulps: the bits it may be off by).
func TestExpfAccuracy(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		x, want float32
		ulps    int64
	}{
		{0, 1, 0}, {float32(math.Copysign(0, -1)), 1, 0},
		{-inf, 0, 0}, {inf, inf, 0},
		{89, inf, 0},             // e^89 > MaxFloat32
		{-104, 0, 0},             // e^-104 < 2^-150: rounds to 0
		{-1000, 0, 0},            // n < -192
		{1000, inf, 0},           // n > 192
		{-103, 0x1p-149, 0},      // e^-103 = 0x1.525be5p-149
		{-88, 0x1.07b71p-127, 1}, // subnormal: e^-88 = 0x1.07b7112cp-127
		{1, 0x1.5bf0a8p+1, 1},    // e = 0x1.5bf0a8b1p+1
		{-1, 0x1.78b564p-2, 1},   // 1/e = 0x1.78b56363p-2
		{10, 0x1.5829dcp+14, 2},  // e^10 = 0x1.5829dcf9p+14
		{0x1.62e43p-1, 2, 1},     // float32(ln 2)
		{0x1.62e43p+0, 4, 1},     // float32(ln 4)
	} {
		got := expf(c.x)
		if d := int64(math.Float32bits(got)) - int64(math.Float32bits(c.want)); d < -c.ulps || d > c.ulps {
			t.Errorf("expf(%v) = %v [%#08x], want %v [%#08x]", c.x, got, math.Float32bits(got), c.want, math.Float32bits(c.want))
		}
	}
	if v := expf(float32(math.NaN())); !math.IsNaN(float64(v)) {
		t.Errorf("expf(NaN) = %v", v)
	}
	worst, worstX := 0.0, float32(0)
	for _, r := range [][2]uint32{{0, math.Float32bits(88.72)}, {0x80000000, math.Float32bits(-87.33)}} {
		for b := uint64(r[0]); b <= uint64(r[1]); b += 1 << 10 {
			x := math.Float32frombits(uint32(b))
			e := math.Exp(float64(x))
			if e < 0x1p-126 || e > math.MaxFloat32 {
				continue
			}
			ulp := math.Ldexp(1, math.Ilogb(e)-23)
			d := math.Abs(float64(expf(x))-e) / ulp
			if d > worst {
				worst, worstX = d, x
			}
			if d > 2.5 {
				t.Fatalf("expf(%v) = %v, e^x = %v: %.2f ulp", x, expf(x), e, d)
			}
		}
	}
	t.Logf("largest error %.3f ulp at x = %v", worst, worstX)
}

// BenchmarkRowsGG measures the kernels in ggml's arithmetic on every
// level (Generic is the pure-Go loop): SiLU and SwiGLU over a TinyLlama
// FFN row, the softmax exponentials over rows of attention scores.
func BenchmarkRowsGG(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, l := range Levels() {
		k := Detect().Limit(l)
		for _, n := range []int{5632} {
			g, u := randRow(r, n, 3), randRow(r, n, 1)
			dst := make([]float32, n)
			b.Run(fmt.Sprintf("SiLU/%s/%d", l, n), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					k.silu(dst, g)
				}
			})
			b.Run(fmt.Sprintf("SwiGLU/%s/%d", l, n), func(b *testing.B) {
				b.SetBytes(int64(12 * n))
				for b.Loop() {
					k.swiglu(dst, g, u)
				}
			})
		}
		for _, n := range []int{32, 100, 512} {
			x := randRow(r, n, 2)
			buf := make([]float32, n)
			b.Run(fmt.Sprintf("ExpSumGG/%s/%d", l, n), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					copy(buf, x)
					k.expSumGG(buf, 4)
				}
			})
		}
	}
}
