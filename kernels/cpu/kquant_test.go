package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestKQuantGemv checks the SIMD K-quant matrix-vector kernels row by row
// against kernels/quant, including the rows left over by the 4 streams:
// both sum in ggml's x86 order, so they agree to the last bit.
func TestKQuantGemv(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, dt := range []tensor.DType{tensor.Q6_K, tensor.Q5_K, tensor.Q4_K, tensor.Q3_K, tensor.Q2_K} {
		kind, _, _ := Detect().classify(dt)
		if !Detect().hasKQuant(kind) {
			t.Logf("no SIMD kernel for %s on this machine/build", dt)
			continue
		}
		for _, sh := range []struct{ rows, cols int }{{1, 256}, {4, 256}, {7, 512}, {13, 2048}, {9, 4352}} {
			w := randomMatrix(t, r, dt, sh.rows, sh.cols)
			x := randRow(r, sh.cols, 1)
			act := make([]byte, sh.cols/256*292)
			quant.QuantizeRowQ8_K(act, x)
			checkKGemv(t, dt, kind, w, act)
		}
	}
}

// TestKQuantGemvRandomBytes checks the Q3_K and Q2_K kernels bit for bit
// on blocks of random bytes (every scale and min nibble, every 6-bit
// scale, every hmask and quant pattern) with random block scales, d and
// dmin of either sign, and activations at ±127 in some blocks: the per-row
// float sequence (Q2_K's min term before its lane term, the scales'
// products, hsum) must be kernels/quant's.
func TestKQuantGemvRandomBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []tensor.DType{tensor.Q3_K, tensor.Q2_K} {
		kind, _, _ := Detect().classify(dt)
		if !Detect().hasKQuant(kind) {
			t.Logf("no SIMD kernel for %s on this machine/build", dt)
			continue
		}
		bb, dOff := 110, 108
		if dt == tensor.Q2_K {
			bb, dOff = 84, 80
		}
		// 44 blocks after 17: the regrouped activations' buffer grows.
		for _, sh := range []struct{ rows, cols int }{{4, 256}, {8, 1024}, {11, 4352}, {6, 11264}} {
			w := randomMatrix(t, r, dt, sh.rows, sh.cols)
			for i := 0; i+bb <= len(w.Data); i += bb {
				for j := range bb {
					w.Data[i+j] = byte(r.Uint32())
				}
				for j := dOff; j < bb; j += 2 {
					h := quant.ToF16(float32(r.NormFloat64()) * 0.01)
					w.Data[i+j], w.Data[i+j+1] = byte(h), byte(h>>8)
				}
			}
			x := randRow(r, sh.cols, 1)
			for i := range x {
				if i/256%2 == 1 {
					x[i] = float32(r.IntN(3)-1) * 1e4
				}
			}
			act := make([]byte, sh.cols/256*292)
			quant.QuantizeRowQ8_K(act, x)
			checkKGemv(t, dt, kind, w, act)
		}
	}
}

// TestInferflowGemv checks the SIMD Q4_B64T1 and Q3H_B64T1 matrix-vector
// kernels row by row against kernels/quant's dot products, to the last
// bit, including the rows left over by the 4 streams; one matrix holds
// every Q3H code (0..127, 121..127 included, which the quantizer never
// writes) and extreme activations.
func TestInferflowGemv(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, dt := range []tensor.DType{tensor.Q4_B64T1, tensor.Q3H_B64T1} {
		kind, _, _ := Detect().classify(dt)
		if !Detect().hasKQuant(kind) {
			t.Skipf("no SIMD kernel for %s on this machine/build", dt)
		}
		for _, sh := range []struct{ rows, cols int }{{1, 64}, {4, 64}, {7, 512}, {13, 2048}, {9, 4352}, {8, 5632}} {
			w := randomMatrix(t, r, dt, sh.rows, sh.cols)
			if sh.rows == 8 {
				// Random bytes after each header: every code, every nibble.
				bb := dt.TypeSize()
				for i := 0; i < len(w.Data); i += bb {
					for j := 4; j < bb; j++ {
						w.Data[i+j] = byte(r.Uint32())
					}
				}
			}
			x := randRow(r, sh.cols, 1)
			if sh.rows == 8 {
				for i := range x {
					x[i] = float32(r.IntN(3)-1) * 1e4 // blocks at ±127
				}
			}
			act := make([]byte, sh.cols/32*34)
			quant.QuantizeActivationQ8_0(act, x)
			for _, acc := range []bool{false, true} {
				dst, check := guarded(sh.rows, 0.5)
				Detect().kGemv(kind, w.Data, w.RowBytes(), act, sh.cols/64, dst, acc, nil)
				check(t)
				for i := range dst {
					want := quant.Dot(dt, w.Row(i), act, sh.cols)
					if acc {
						want += 0.5
					}
					if math.Float32bits(dst[i]) != math.Float32bits(want) {
						t.Fatalf("%s %dx%d acc=%v: row %d = %v, want %v", dt, sh.rows, sh.cols, acc, i, dst[i], want)
					}
				}
			}
		}
	}
}

// BenchmarkKQuantMatVec measures one-token products with a 5632×2048
// matrix of each K-quant and Inferflow type that has a SIMD kernel here,
// on one thread at the machine's level and at Generic (the Go reference),
// reporting weight bytes read per second, and per CPU second of the
// thread (cpu-GB/s, Linux: meaningful on a busy machine).
func BenchmarkKQuantMatVec(b *testing.B) {
	const rows, cols = 5632, 2048
	for _, dt := range []tensor.DType{tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL, tensor.Q4_B64T1, tensor.Q3H_B64T1, tensor.Q6_B64T1, tensor.Q5_B64T1, tensor.Q4_B32T1, tensor.Q3_B32T1, tensor.Q2_B32T1} {
		w := benchMatrix(b, dt, rows, cols)
		x := randRow(rand.New(rand.NewPCG(1, 2)), cols, 1)
		dst := make([]float32, rows)
		for _, l := range []Level{Generic, Detect().Level()} {
			b.Run(fmt.Sprintf("%s/%s", dt, l), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				p := NewPoolKernels(1, Detect().Limit(l))
				defer p.Close()
				b.SetBytes(int64(len(w.Data)))
				c0 := threadCPUTime()
				for b.Loop() {
					if err := MatMul(p, dst, w, x, 1); err != nil {
						b.Fatal(err)
					}
				}
				if c0 >= 0 {
					b.ReportMetric(float64(len(w.Data))*float64(b.N)/float64(threadCPUTime()-c0), "cpu-GB/s")
				}
			})
		}
	}
}

// checkKGemv runs kGemv on every row of w, storing and accumulating onto
// 0.5, and checks each result bit for bit against kernels/quant's dot
// product.
func checkKGemv(t *testing.T, dt tensor.DType, kind wkind, w Matrix, act []byte) {
	t.Helper()
	for _, acc := range []bool{false, true} {
		dst, check := guarded(w.Rows, 0.5)
		Detect().kGemv(kind, w.Data, w.RowBytes(), act, w.Cols/256, dst, acc, nil)
		check(t)
		for i := range dst {
			want := quant.Dot(dt, w.Row(i), act, w.Cols)
			if acc {
				want += 0.5
			}
			if math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Fatalf("%s %dx%d acc=%v: row %d = %v, want %v", dt, w.Rows, w.Cols, acc, i, dst[i], want)
			}
		}
	}
}
