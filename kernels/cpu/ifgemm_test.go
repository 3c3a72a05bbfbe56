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

var ifMoreTypes = []tensor.DType{tensor.Q6_B64T1, tensor.Q5_B64T1, tensor.Q4_B32T1, tensor.Q3_B32T1, tensor.Q2_B32T1}

// TestInferflowGemm checks ifGemm for Q6_B64T1, Q5_B64T1, Q4_B32T1,
// Q3_B32T1 and Q2_B32T1 weights against kernels/quant's dot products for
// every row and token, to the last bit: 1 to 13 rows and 40 (rows left
// over by the 4-row groups and the 16-row blocks), 1 to 9, 16 and 17
// tokens, odd and even block counts, random bytes in every block (bases
// and scales of both signs), storing and accumulating.
func TestInferflowGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, dt := range ifMoreTypes {
		t.Run(dt.String(), func(t *testing.T) { testInferflowGemm(t, r, dt) })
	}
}

func testInferflowGemm(t *testing.T, r *rand.Rand, dt tensor.DType) {
	k := Detect()
	kind, _, _ := k.classify(dt)
	if !k.hasIfGemm(kind) {
		t.Skipf("no multi-token kernel for %s on this machine/build", dt)
	}
	elems, bb := dt.BlockSize(), dt.TypeSize()
	rowsList := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 40}
	for _, rows := range rowsList {
		for _, cols := range []int{64, 96, 128, 192, 1024, 2080} {
			if cols%elems != 0 {
				continue
			}
			nb := cols / elems
			w := randomMatrix(t, r, dt, rows, cols)
			for i := 0; i < len(w.Data); i += bb {
				for h := 0; h < 4; h += 2 {
					v := r.Uint32()&0x8000 | (5+r.Uint32()%16)<<10 | r.Uint32()&0x3ff
					w.Data[i+h], w.Data[i+h+1] = byte(v), byte(v>>8)
				}
				for j := 4; j < bb; j++ {
					w.Data[i+j] = byte(r.Uint32())
				}
			}
			for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17} {
				lda := cols/32*34 + 34*(n%2) // rows of blocks, apart by more than their length for odd n
				a := make([]byte, n*lda)
				for tok := range n {
					x := randRow(r, cols, 1)
					if (rows+tok)%5 == 0 {
						for i := range x {
							x[i] = float32(r.IntN(3)-1) * 1e4 // blocks at ±127
						}
					}
					quant.QuantizeActivationQ8_0(a[tok*lda:], x)
				}
				ldd := rows + 3
				for _, acc := range []bool{false, true} {
					dst, check := guarded(n*ldd, 0.5)
					k.ifGemm(kind, w.Data, w.RowBytes(), a, lda, nb, n, dst, ldd, rows, acc, nil)
					check(t)
					for tok := range n {
						for i := range ldd {
							want := float32(0.5)
							if i < rows {
								want = quant.Dot(dt, w.Row(i), a[tok*lda:], cols)
								if acc {
									want += 0.5
								}
							}
							if got := dst[tok*ldd+i]; math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s %dx%d n=%d acc=%v: token %d row %d = %v, want %v", dt, rows, cols, n, acc, tok, i, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestInferflowGemmMatMul checks MatMul and MatMulAcc with several tokens
// and the Inferflow multi-token kernels (two threads, rows in 16-row
// blocks, 4-row groups and left over, tokens in groups of 8, 4 and 2,
// left over, and beyond ifgTokens) against the Go reference at Generic,
// bit for bit.
func TestInferflowGemmMatMul(t *testing.T) {
	if Detect().Level() == Generic {
		t.Skip("no SIMD level")
	}
	r := rand.New(rand.NewPCG(33, 34))
	simd := NewPoolKernels(2, Detect())
	defer simd.Close()
	ref := NewPoolKernels(2, Detect().Limit(Generic))
	defer ref.Close()
	for _, dt := range ifMoreTypes {
		for _, sh := range []struct{ rows, cols, n int }{{77, 2048, 4}, {77, 2048, 11}, {38, 1088, 8}, {38, 1088, 6}, {5, 96, 9}, {64, 2080, 17}, {21, 512, 70}, {9, 2048, 75}} {
			if sh.cols%dt.BlockSize() != 0 {
				continue
			}
			w := randomMatrix(t, r, dt, sh.rows, sh.cols)
			x := randRow(r, sh.n*sh.cols, 1)
			for _, acc := range []bool{false, true} {
				matMulSameBits(t, simd, ref, w, x, sh.n, acc)
			}
		}
	}
}

// BenchmarkInferflowGemm measures a 128-token product with a 5632×2048
// matrix of each Inferflow format that has a multi-token kernel, on one
// thread: "gemm" through ifGemm over the thread's rows, as kRows runs it,
// "gemv" token by token through kGemv over blocks of 16 rows (what kRows
// ran before), reporting GFLOP/s per CPU second of the thread
// (cpu-GFLOP/s, Linux: meaningful on a busy machine).
func BenchmarkInferflowGemm(b *testing.B) {
	const rows, cols, n = 5632, 2048, 128
	k := Detect()
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range ifMoreTypes {
		kind, _, _ := k.classify(dt)
		if !k.hasIfGemm(kind) {
			continue
		}
		w := benchMatrix(b, dt, rows, cols)
		nb, rb := cols/dt.BlockSize(), w.RowBytes()
		lda := cols / 32 * 34
		a := make([]byte, n*lda)
		for tok := range n {
			quant.QuantizeActivationQ8_0(a[tok*lda:], randRow(r, cols, 1))
		}
		dst := make([]float32, n*rows)
		for _, gemm := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/%s", dt, map[bool]string{true: "gemm", false: "gemv"}[gemm]), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var buf []byte // the pool thread's scratch
				c0 := threadCPUTime()
				for b.Loop() {
					if gemm {
						k.ifGemm(kind, w.Data, rb, a, lda, nb, n, dst, rows, rows, false, &buf)
						continue
					}
					for b0 := 0; b0 < rows; b0 += quantRows {
						b1 := min(b0+quantRows, rows)
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
