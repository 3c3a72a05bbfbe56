//go:build amd64 && !noasm

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

// TestQ8YTiles checks the AVX2 prefill tiles of Q4_0 and Q8_0 weights bit
// for bit against the written-out chain, for 1..9 tokens (every tile width
// and a second tile), ragged strips and MatMulAcc.
func TestQ8YTiles(t *testing.T) {
	k := Detect().Limit(AVX2)
	if !k.hasQ8Y() {
		t.Skip("no AVX2")
	}
	p := NewPoolKernels(1, k)
	defer p.Close()
	r := rand.New(rand.NewPCG(3, 5))
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0} {
		for _, sh := range []struct{ rows, cols int }{{1, 32}, {7, 64}, {8, 96}, {9, 256}, {15, 160}, {23, 2048}} {
			w := exactWeights(r, dt, sh.rows, sh.cols)
			for n := 1; n <= 9; n++ {
				x := exactActivations(r, n, sh.cols)
				want := exactRef(t, w, x, n)
				name := fmt.Sprintf("%s/%dx%d/n%d", dt, sh.rows, sh.cols, n)
				dst, check := guarded(len(want), 0.25)
				if err := MatMul(p, dst, w, x, n); err != nil {
					t.Fatal(err)
				}
				check(t)
				checkExact(t, name, dst, want, w.Rows)

				old := make([]float32, len(want))
				for i := range old {
					old[i] = float32(r.NormFloat64())
				}
				dst, check = guarded(len(want), 0)
				copy(dst, old)
				if err := MatMulAcc(p, dst, w, x, n); err != nil {
					t.Fatal(err)
				}
				check(t)
				for i := range old {
					old[i] += want[i]
				}
				checkExact(t, name+"/acc", dst, old, w.Rows)
			}
		}
	}
}

// TestIQ4NLTilesY checks IQ4_NL matmuls at the AVX2 level, whose tiles
// take up to 8 tokens, bit for bit against kernels/quant's dot products
// (the batched order for two or more tokens), for 1..9 and 17 tokens, odd
// and even block counts, activations at ±127 and MatMulAcc.
func TestIQ4NLTilesY(t *testing.T) {
	k := Detect().Limit(AVX2)
	if !k.hasQ8Y() {
		t.Skip("no AVX2")
	}
	p := NewPoolKernels(2, k)
	defer p.Close()
	r := rand.New(rand.NewPCG(21, 22))
	for _, sh := range []struct{ rows, cols int }{{3, 32}, {16, 96}, {7, 288}, {13, 2048}, {9, 544}} {
		w := randomMatrix(t, r, tensor.IQ4_NL, sh.rows, sh.cols)
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 17} {
			x := make([]float32, n*sh.cols)
			for tok := range n {
				copy(x[tok*sh.cols:], randRow(r, sh.cols, 1))
				if tok%3 == 2 {
					for i := range sh.cols {
						x[tok*sh.cols+i] = float32(r.IntN(3)-1) * 1e4
					}
				}
			}
			act := make([]byte, sh.cols/32*34)
			want := make([]float32, n*sh.rows)
			old := make([]float32, n*sh.rows)
			dot := quant.DotIQ4_NLQ8_0Batch
			if n == 1 {
				dot = quant.DotIQ4_NLQ8_0
			}
			for tok := range n {
				quant.QuantizeActivationQ8_0(act, x[tok*sh.cols:(tok+1)*sh.cols])
				for i := range sh.rows {
					want[tok*sh.rows+i] = dot(w.Row(i), act, sh.cols)
					old[tok*sh.rows+i] = float32(r.NormFloat64())
				}
			}
			name := fmt.Sprintf("%dx%d/n%d", sh.rows, sh.cols, n)
			dst, check := guarded(len(want), 0.25)
			if err := MatMul(p, dst, w, x, n); err != nil {
				t.Fatal(err)
			}
			check(t)
			checkExact(t, name, dst, want, sh.rows)
			dst, check = guarded(len(want), 0)
			copy(dst, old)
			if err := MatMulAcc(p, dst, w, x, n); err != nil {
				t.Fatal(err)
			}
			check(t)
			for i := range old {
				old[i] += want[i]
			}
			checkExact(t, name+"/acc", dst, old, sh.rows)
		}
	}
}

// TestKGemmY checks the AVX2 K-quant tiles bit for bit against kernels/quant
// (the AVX2 matrix-vector kernels' order) for 1..9 tokens (every tile width
// and a second tile), random block bytes and activations, padded strides
// and accumulation.
func TestKGemmY(t *testing.T) {
	k := Detect().Limit(AVX2)
	if !k.hasQ8Y() {
		t.Skip("no AVX2")
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, kd := range []struct {
		dt   tensor.DType
		kind wkind
		bb   int
		half []int // offsets of the block's f16 scales
	}{
		{tensor.Q2_K, wkQ2_K, 84, []int{80, 82}},
		{tensor.Q3_K, wkQ3_K, 110, []int{108}},
		{tensor.Q4_K, wkQ4_K, 144, []int{0, 2}},
		{tensor.Q5_K, wkQ5_K, 176, []int{0, 2}},
		{tensor.Q6_K, wkQ6_K, 210, []int{208}},
	} {
		if !k.hasKGemmY(kd.kind) {
			t.Fatalf("%s: no tiles", kd.dt)
		}
		for _, sh := range []struct {
			rows, cols int
			random     bool
		}{{1, 256, false}, {3, 512, true}, {13, 2048, false}, {9, 768, true}} {
			w := randomMatrix(t, r, kd.dt, sh.rows, sh.cols)
			if sh.random {
				for i := 0; i+kd.bb <= len(w.Data); i += kd.bb {
					for j := range kd.bb {
						w.Data[i+j] = byte(r.Uint32())
					}
					for _, o := range kd.half {
						h := quant.ToF16(float32(r.NormFloat64()) * 0.01)
						w.Data[i+o], w.Data[i+o+1] = byte(h), byte(h>>8)
					}
				}
			}
			nb := sh.cols / 256
			lda, ldd := nb*292+12, sh.rows+3
			for n := 1; n <= 9; n++ {
				a := make([]byte, n*lda)
				for tok := range n {
					quant.QuantizeRowQ8_K(a[tok*lda:], randRow(r, sh.cols, 1))
					if sh.random {
						randQ8K(r, a[tok*lda:tok*lda+nb*292])
					}
				}
				for _, acc := range []bool{false, true} {
					dst, check := guarded(n*ldd, 0.5)
					k.kGemmY(kd.kind, w.Data, w.RowBytes(), a, lda, nb, n, dst, ldd, sh.rows, acc)
					check(t)
					for tok := range n {
						for i := range ldd {
							got, want := dst[tok*ldd+i], float32(0.5)
							if i < sh.rows {
								want = quant.Dot(kd.dt, w.Row(i), a[tok*lda:], sh.cols)
								if acc {
									want += 0.5
								}
							}
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s %dx%d n=%d acc=%v: token %d row %d = %v, want %v", kd.dt, sh.rows, sh.cols, n, acc, tok, i, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkQ8YPrefill measures Q4_0, Q8_0, IQ4_NL and K-quant matmuls of a few to many
// tokens at the AVX2 level, with the matrix-vector kernels token by token
// (gemv) and with the tiles (tile), in thread CPU time.
func BenchmarkQ8YPrefill(b *testing.B) {
	k := Detect().Limit(AVX2)
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.IQ4_NL, tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K} {
		w := benchMatrix(b, dt, 2048, 2048)
		for _, n := range []int{1, 2, 3, 4, 6, 8, 16, 128} {
			x := make([]float32, n*w.Cols)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			dst := make([]float32, n*w.Rows)
			for _, path := range []struct {
				name string
				min  int
			}{{"gemv", 1 << 30}, {"tile", 1}} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", dt, n, path.name), func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					old := q8YMinTokens
					q8YMinTokens = path.min
					defer func() { q8YMinTokens = old }()
					p := NewPoolKernels(1, k)
					defer p.Close()
					b.SetBytes(int64(len(w.Data)))
					c0 := threadCPUTime()
					for b.Loop() {
						if err := MatMul(p, dst, w, x, n); err != nil {
							b.Fatal(err)
						}
					}
					if c0 >= 0 {
						b.ReportMetric(float64(threadCPUTime()-c0)/float64(b.N)/1e3/float64(n), "cpu-µs/tok")
					}
				})
			}
		}
	}
}

func TestSumInt8x32(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	q := make([]byte, 32)
	for i := range 1000 {
		for j := range q {
			switch i % 3 {
			case 0:
				q[j] = byte(r.Uint32())
			case 1:
				q[j] = 0x80
			case 2:
				q[j] = 0x7f
			}
		}
		var want int32
		for _, v := range q {
			want += int32(int8(v))
		}
		if got := sumInt8x32(q); got != want {
			t.Fatalf("sumInt8x32(%x) = %d, want %d", q, got, want)
		}
	}
}
