package cpu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestLegacyGemm checks the SIMD Q5_0, Q4_1 and Q5_1 kernels, for 1 to 17
// tokens (every kernel width, and groups of 4 with the rest; Q4_1's and
// Q5_1's tiles on layout T, groups of 8), row by row
// against kernels/quant's dot products, to the last bit: random block
// bytes (every quant and fifth bit, f16 scales and minimums from
// subnormal to large), rows further apart than their length, activations
// at ±127 and 0, and acc set or not; outputs outside the rows and tokens
// stay untouched.
func TestLegacyGemm(t *testing.T) {
	k := Detect()
	if !k.hasLegacyQ() {
		t.Skip("no SIMD Q5_0, Q4_1 or Q5_1 kernels on this machine/build")
	}
	for _, dt := range []tensor.DType{tensor.Q5_0, tensor.Q4_1, tensor.Q5_1} {
		t.Run(dt.String(), func(t *testing.T) { testLegacyGemm(t, k, dt) })
	}
}

func testLegacyGemm(t *testing.T, k Kernels, dt tensor.DType) {
	kind, _, af := k.classify(dt)
	at := quant.ActivationType(dt)
	if want := map[tensor.DType]actFormat{tensor.Q8_0: afQ8_0, tensor.Q8_1: afQ8_1}[at]; af != want {
		t.Fatalf("%s: activation format %d, want %d (%s)", dt, af, want, at)
	}
	dot, _ := quant.DotFor(dt)
	bs := legacyBlockBytes(kind)
	hasMin := dt != tensor.Q5_0
	r := rand.New(rand.NewPCG(41, uint64(bs)))
	f16 := func() uint16 {
		// Finite f16s of either sign, subnormal to 2^8.
		return toF16(float32(r.NormFloat64() * math.Ldexp(1, r.IntN(30)-22)))
	}
	for _, sh := range []struct{ rows, nb, pad, n int }{
		{1, 1, 0, 1}, {4, 2, 0, 2}, {5, 3, 0, 3}, {13, 4, 0, 4}, {13, 5, 7, 5}, {8, 6, 0, 6},
		{7, 7, 0, 7}, {12, 9, 22, 8}, {13, 28, 0, 9}, {3, 64, 0, 1}, {16, 13, 3, 2},
		{40, 7, 9, 1}, {23, 64, 0, 1}, {6, 5, 1, 16}, {5, 3, 0, 17}, {4, 30, 0, 11},
	} {
		ldw := sh.nb*bs + sh.pad
		w := make([]byte, (sh.rows-1)*ldw+sh.nb*bs)
		for i := range w {
			w[i] = byte(r.Uint32())
		}
		for row := range sh.rows {
			for b := range sh.nb {
				blk := w[row*ldw+b*bs:]
				binary.LittleEndian.PutUint16(blk, f16())
				if hasMin {
					binary.LittleEndian.PutUint16(blk[2:], f16())
				}
			}
		}
		cols := 32 * sh.nb
		ab, _ := at.RowBytes(cols)
		lda := ab + 6 // tokens further apart than a row
		for _, big := range []bool{false, true} {
			a := make([]byte, sh.n*lda)
			// The same activations in layout T, for Q4_1's and Q5_1's
			// tiles.
			tiles := k.legacyTilesT(kind, 1<<20)
			ldt := lyTRowBytes(cols)
			at8 := make([]byte, (sh.n+7)/8*8*ldt)
			for tok := range sh.n {
				x := randRow(r, cols, float64(tok+1))
				if big {
					// Activations at ±127 and 0.
					for i := range x {
						x[i] = float32(r.IntN(3)-1) * 1e4
					}
				}
				if err := quant.QuantizeActivation(at, a[tok*lda:tok*lda+ab], x); err != nil {
					t.Fatal(err)
				}
				if tiles {
					k.packQ8T(at8[tok/8*8*ldt:], x, tok%8)
				}
			}
			for _, run := range []string{"gemm", "tiles"} {
				for _, acc := range []bool{false, true} {
					ldd := sh.rows + 3
					buf, check := guarded(sh.n*ldd, 0.5)
					if run == "gemm" {
						k.legacyGemm(kind, w, ldw, a, lda, sh.nb, sh.n, buf, ldd, sh.rows, acc)
					} else if tiles {
						k.legacyGemmT(kind, w, ldw, at8, ldt, sh.nb, sh.n, buf, ldd, sh.rows, acc)
					} else {
						continue
					}
					check(t)
					for tok := range sh.n {
						for i := range ldd {
							got := buf[tok*ldd+i]
							want := float32(0.5)
							if i < sh.rows {
								row := w[i*ldw : i*ldw+sh.nb*bs]
								want = dot(row, a[tok*lda:], cols)
								if acc {
									want += 0.5
								}
							}
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s %s %d rows × %d blocks (ldw %d), %d tokens, big %v, acc %v: token %d row %d = %v (%#x), want %v (%#x)",
									dt, run, sh.rows, sh.nb, ldw, sh.n, big, acc, tok, i, got, math.Float32bits(got), want, math.Float32bits(want))
							}
						}
					}
				}
			}
		}
	}
}

// TestLegacyMatMul checks MatMul on Q5_0, Q4_1 and Q5_1 weights at every
// kernel level against kernels/quant's dot products, bit for bit, for one
// token and several.
func TestLegacyMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, dt := range []tensor.DType{tensor.Q5_0, tensor.Q4_1, tensor.Q5_1} {
		for _, sh := range []struct{ rows, cols, n int }{{13, 96, 1}, {37, 896, 3}, {20, 160, 2}, {64, 2048, 5}, {7, 224, 4}, {33, 256, 11}, {16, 64, 8}} {
			w := randomMatrix(t, r, dt, sh.rows, sh.cols)
			x := randRow(r, sh.n*sh.cols, 1)
			dot, _ := quant.DotFor(dt)
			at := quant.ActivationType(dt)
			ab, _ := at.RowBytes(sh.cols)
			act := make([]byte, ab)
			for _, level := range Levels() {
				pool := NewPoolKernels(2, Detect().Limit(level))
				for _, acc := range []bool{false, true} {
					got := make([]float32, sh.n*sh.rows)
					for i := range got {
						got[i] = 0.25
					}
					var err error
					if acc {
						err = MatMulAcc(pool, got, w, x, sh.n)
					} else {
						err = MatMul(pool, got, w, x, sh.n)
					}
					if err != nil {
						t.Fatal(err)
					}
					for tok := range sh.n {
						if err := quant.QuantizeActivation(at, act, x[tok*sh.cols:(tok+1)*sh.cols]); err != nil {
							t.Fatal(err)
						}
						for row := range sh.rows {
							want := dot(w.Row(row), act, sh.cols)
							if acc {
								want += 0.25
							}
							if g := got[tok*sh.rows+row]; math.Float32bits(g) != math.Float32bits(want) {
								t.Fatalf("%s %v at %s, acc %v: token %d row %d = %v, want %v", dt, sh, level, acc, tok, row, g, want)
							}
						}
					}
				}
				pool.Close()
			}
		}
	}
}

// BenchmarkLegacyDecode runs the matmuls of one decode step of a
// TinyLlama-shaped Q5_0, Q4_1 or Q5_1 model (BenchmarkDecodeTinyLlama's)
// on one thread at the AVX2 and AVX-512 VNNI levels, reporting the weight
// bytes read per CPU second of that thread (cpu-GB/s, Linux), which stays
// meaningful on a busy machine.
func BenchmarkLegacyDecode(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Q5_0, tensor.Q4_1, tensor.Q5_1} {
		m := newTinyLlama(b, dt)
		for _, lv := range []Level{AVX2, AVX512VNNI} {
			b.Run(dt.String()+"/"+lv.String(), func(b *testing.B) {
				if Detect().Limit(lv).Level() != lv {
					b.Skip("level not available")
				}
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				p := NewPoolKernels(1, Detect().Limit(lv))
				defer p.Close()
				x := make([]float32, 5632)
				for i := range x {
					x[i] = float32(i%13) - 6
				}
				q, k, v := make([]float32, 2048), make([]float32, 256), make([]float32, 256)
				g, u := make([]float32, 5632), make([]float32, 5632)
				h := make([]float32, 2048)
				logits := make([]float32, 32000)
				b.SetBytes(m.bytes)
				c0 := threadCPUTime()
				for b.Loop() {
					for l := range m.qkv {
						must(b, MatMulMulti(p, [][]float32{q, k, v}, m.qkv[l], x[:2048], 1))
						must(b, MatMulAcc(p, h, m.o[l][0], q, 1))
						must(b, MatMulMulti(p, [][]float32{g, u}, m.gateUp[l], x[:2048], 1))
						must(b, MatMulAcc(p, h, m.down[l][0], x, 1))
					}
					must(b, MatMul(p, logits, m.out, x[:2048], 1))
				}
				if c0 >= 0 {
					b.ReportMetric(float64(m.bytes)*float64(b.N)/float64(threadCPUTime()-c0), "cpu-GB/s")
				}
			})
		}
	}
}
