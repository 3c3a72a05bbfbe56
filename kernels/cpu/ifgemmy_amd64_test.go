//go:build amd64 && !noasm

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
)

// TestInferflowGemmAVX2 checks the multi-token AVX2 kernels of Inferflow's
// formats (ifGemm below AVX512VNNI) bit for bit against kernels/quant's
// dot products for every row and token: rows 1 to 13, 16, 17, 23 and 40
// (8-row groups, rows left over by them and by the 16-row blocks, and
// fewer than eight), 1 to 9 tokens (groups of 4, 3 and 2 and a last
// single one), 36 (beyond ifgyTokens), several block counts, random bytes
// in every block (every code, bases and scales of both signs),
// activations with blocks at ±127 and -128, storing and accumulating.
func TestInferflowGemmAVX2(t *testing.T) {
	ks := avx2Kernels()
	if len(ks) == 0 {
		t.Skip("no AVX2 on this machine")
	}
	r := rand.New(rand.NewPCG(45, 46))
	for _, dt := range ifAVX2Types {
		kind, _, _ := ks[0].classify(dt)
		for _, k := range ks {
			if !k.hasIfGemm(kind) {
				t.Fatalf("%v %s: no multi-token kernel", k, dt)
			}
		}
		elems, bb := dt.BlockSize(), dt.TypeSize()
		for _, rows := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 23, 40} {
			for _, cols := range []int{64, 96, 128, 192, 1024, 2048 + 64} {
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
				for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 36} {
					if n == 36 && rows%8 != 7 && rows != 40 {
						continue
					}
					lda := cols/32*34 + 34*(n%2) // apart by more than a row for odd n
					a := make([]byte, n*lda)
					for tok := range n {
						quant.QuantizeActivationQ8_0(a[tok*lda:], randRow(r, cols, 1))
						for b := tok * lda; b < tok*lda+cols/32*34; b += 34 {
							switch (b/34 + rows + tok) % 4 {
							case 1:
								for j := 2; j < 34; j++ {
									a[b+j] = byte(r.Uint32())
								}
							case 2:
								for j := 2; j < 34; j++ {
									a[b+j] = []byte{0x80, 0x7f, 0x81}[(j+rows)%3]
								}
							}
						}
					}
					ldd := rows + 3
					for _, k := range ks {
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
										t.Fatalf("%v %s %dx%d n=%d acc=%v: token %d row %d = %v, want %v", k, dt, rows, cols, n, acc, tok, i, got, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkInferflowGemmAVX2 measures a 128-token product with a
// 5632×2048 matrix of each Inferflow format at the AVX2 level, on one
// thread: "gemm" through ifGemm (ifGemmAVX2) over all the rows, as kRows
// runs it, "gemv" token by token through kGemv over blocks of 16 rows
// (what kRows ran before), reporting GFLOP/s per CPU second of the thread
// (cpu-GFLOP/s, Linux: meaningful on a busy machine).
func BenchmarkInferflowGemmAVX2(b *testing.B) {
	const rows, cols, n = 5632, 2048, 128
	k := Detect().Limit(AVX2)
	if k.Level() != AVX2 {
		b.Skip("no AVX2 on this machine")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range ifAVX2Types {
		kind, _, _ := k.classify(dt)
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
