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

// TestKQuantGemm checks the multi-token K-quant kernels (Q3_K's rows
// unpacked once for 16 tokens, pairs of rows unpacked once for 8 or 4
// tokens, the leftover tokens through kGemv and an odd last row through
// kernels/quant) against kernels/quant's dot product for every (row,
// token), to the last bit: 1 to 9, 16, 17 and 33 tokens, odd and even
// row counts, padded token and output strides, with and without
// accumulation, on quantized matrices and on blocks of random bytes
// (every scale, min and quant pattern; d and dmin of either sign) with
// activations at ±127 in some blocks. (Q3_K's 16-token kernel fails it
// with its lanes' final sum reordered.)
func TestKQuantGemm(t *testing.T) {
	k := Detect()
	r := rand.New(rand.NewPCG(31, 32))
	for _, c := range []struct {
		dt   tensor.DType
		dOff []int // offsets of the f16 scales in a block
	}{
		{tensor.Q4_K, []int{0, 2}},
		{tensor.Q6_K, []int{208}},
		{tensor.Q5_K, []int{0, 2}},
		{tensor.Q3_K, []int{108}},
		{tensor.Q2_K, []int{80, 82}},
	} {
		kind, _, _ := k.classify(c.dt)
		if !k.hasKQGemm(kind) {
			t.Logf("no multi-token kernel for %s on this machine/build", c.dt)
			continue
		}
		bb := c.dt.TypeSize()
		for _, sh := range []struct{ rows, cols int }{{2, 256}, {16, 512}, {7, 2048}, {13, 768}, {9, 4352}, {4, 1024}} {
			w := randomMatrix(t, r, c.dt, sh.rows, sh.cols)
			random := sh.rows == 9 || sh.rows == 4
			if random {
				for i := 0; i+bb <= len(w.Data); i += bb {
					for j := range bb {
						w.Data[i+j] = byte(r.Uint32())
					}
					for _, o := range c.dOff {
						h := quant.ToF16(float32(r.NormFloat64()) * 0.01)
						w.Data[i+o], w.Data[i+o+1] = byte(h), byte(h>>8)
					}
				}
			}
			nb := sh.cols / 256
			lda, ldd := nb*292+5, sh.rows+3
			for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 33} {
				a := make([]byte, n*lda)
				for tok := range n {
					x := randRow(r, sh.cols, 1)
					if random || tok%3 == 2 {
						for i := range x {
							if i/256%2 == tok%2 {
								x[i] = float32(r.IntN(3)-1) * 1e4
							}
						}
					}
					quant.QuantizeRowQ8_K(a[tok*lda:], x)
				}
				for _, acc := range []bool{false, true} {
					dst, check := guarded(n*ldd, 0.5)
					k.kqGemm(kind, w.Data, w.RowBytes(), a, lda, nb, n, dst, ldd, sh.rows, acc, nil)
					check(t)
					for tok := range n {
						for i := range ldd {
							got := dst[tok*ldd+i]
							want := float32(0.5)
							if i < sh.rows {
								want = quant.Dot(c.dt, w.Row(i), a[tok*lda:], sh.cols)
								if acc {
									want += 0.5
								}
							}
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s %dx%d n=%d acc=%v: token %d row %d = %v, want %v", c.dt, sh.rows, sh.cols, n, acc, tok, i, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkKQuantGemm measures a 128-token product with a 2048×5632
// matrix of each K-quant that has a multi-token kernel, on one thread,
// swept over blocks of 16 rows as kRows does: "gemm" through kqGemm,
// "gemv" token by token through kGemv (what kRows ran before), reporting
// GFLOP/s per CPU second of the thread (cpu-GFLOP/s, Linux: meaningful on
// a busy machine).
func BenchmarkKQuantGemm(b *testing.B) {
	const rows, cols, n = 2048, 5632, 128
	k := Detect()
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []tensor.DType{tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K} {
		kind, _, _ := k.classify(dt)
		if !k.hasKQGemm(kind) {
			continue
		}
		w := benchMatrix(b, dt, rows, cols)
		nb, rb := cols/256, w.RowBytes()
		lda := nb * 292
		a := make([]byte, n*lda)
		for tok := range n {
			quant.QuantizeRowQ8_K(a[tok*lda:], randRow(r, cols, 1))
		}
		dst := make([]float32, n*rows)
		for _, gemm := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/%s", dt, map[bool]string{true: "gemm", false: "gemv"}[gemm]), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var buf []byte // the pool thread's scratch
				c0 := threadCPUTime()
				for b.Loop() {
					for b0 := 0; b0 < rows; b0 += quantRows {
						b1 := min(b0+quantRows, rows)
						if gemm {
							k.kqGemm(kind, w.Data[b0*rb:b1*rb], rb, a, lda, nb, n, dst[b0:], rows, b1-b0, false, &buf)
							continue
						}
						for tok := range n {
							k.kGemv(kind, w.Data[b0*rb:b1*rb], rb, a[tok*lda:(tok+1)*lda], nb, dst[tok*rows+b0:tok*rows+b1], false, &buf)
						}
					}
				}
				if c0 >= 0 {
					flops := 2 * float64(n) * rows * cols
					b.ReportMetric(flops*float64(b.N)/float64(threadCPUTime()-c0), "cpu-GFLOP/s")
				}
			})
		}
	}
}
