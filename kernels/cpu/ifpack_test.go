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

// ifTestMatrix returns a Q3H_B64T1 or Q4_B64T1 matrix; with wild set its
// quant bytes are random (every Q3H code 0..127, every nibble).
func ifTestMatrix(t testing.TB, r *rand.Rand, dt tensor.DType, rows, cols int, wild bool) Matrix {
	w := randomMatrix(t, r, dt, rows, cols)
	if wild {
		bb := dt.TypeSize()
		for i := 0; i < len(w.Data); i += bb {
			for j := 4; j < bb; j++ {
				w.Data[i+j] = byte(r.Uint32())
			}
		}
	}
	return w
}

// TestIfStrips checks the 16-row strip kernels of Q4_B64T1 and Q3H_B64T1
// (the SIMD ones where the machine has them, and the Go form) against
// kernels/quant's dot products to the last bit, on strips cut from random
// matrices of row counts that leave tails.
func TestIfStrips(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	k := Detect()
	for _, dt := range []tensor.DType{tensor.Q4_B64T1, tensor.Q3H_B64T1} {
		kind := wkIfQ4
		if dt == tensor.Q3H_B64T1 {
			kind = wkIfQ3H
		}
		for _, sh := range []struct{ rows, cols int }{{1, 64}, {16, 64}, {17, 128}, {45, 2048}, {32, 5632}, {7, 4352}} {
			for _, wild := range []bool{false, true} {
				w := ifTestMatrix(t, r, dt, sh.rows, sh.cols, wild)
				p := NewPoolKernels(1, k)
				pk := packIf(p, kind, w)
				p.Close()
				x := randRow(r, sh.cols, 1)
				if wild {
					for i := range x {
						x[i] = float32(r.IntN(3)-1) * 1e4 // blocks at ±127
					}
				}
				act := make([]byte, sh.cols/32*34)
				quant.QuantizeActivationQ8_0(act, x)
				ai := make([]byte, ifActBytes(sh.cols))
				k.packQ8I(ai, x)
				aiGo := make([]byte, len(ai))
				packQ8IGo(aiGo, x)
				if string(ai) != string(aiGo) {
					t.Fatalf("%s: packQ8I differs from packQ8IGo", dt)
				}
				strips, nb := (sh.rows+15)/16, sh.cols/64
				for _, acc := range []bool{false, true} {
					for _, impl := range []string{"simd", "go"} {
						dst, check := guarded(16*strips, 0.5)
						if impl == "go" {
							ifStripsGo(kind, pk.data, ai, nb, dst, acc)
						} else {
							k.ifStrips(kind, pk.data, ai, nb, dst, strips, acc)
						}
						check(t)
						for i := range sh.rows {
							want := quant.Dot(dt, w.Row(i), act, sh.cols)
							if acc {
								want += 0.5
							}
							if math.Float32bits(dst[i]) != math.Float32bits(want) {
								t.Fatalf("%s %s %dx%d wild=%v acc=%v: row %d = %v, want %v", impl, dt, sh.rows, sh.cols, wild, acc, i, dst[i], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestIfPackedMatMul checks MatMul, MatMulAcc and MatMulMulti on weights
// a pool has packed into strips (row counts that leave tails, jobs that
// start off a multiple of 16, several tokens) against kernels/quant.
func TestIfPackedMatMul(t *testing.T) {
	if !Detect().hasIfPack() {
		t.Skip("no strip kernels on this machine/build")
	}
	r := rand.New(rand.NewPCG(23, 24))
	for _, dt := range []tensor.DType{tensor.Q4_B64T1, tensor.Q3H_B64T1} {
		const cols = 1024
		ws := []Matrix{
			ifTestMatrix(t, r, dt, 37, cols, true),
			ifTestMatrix(t, r, dt, 300, cols, false),
			ifTestMatrix(t, r, dt, 6, cols, false),
		}
		for _, threads := range []int{1, 2, 3} {
			p := NewPool(threads)
			for _, w := range ws {
				p.PackWeight(w)
				if p.packFor(w) == nil {
					t.Fatalf("%s: not packed", dt)
				}
			}
			for _, n := range []int{1, 3, 6} {
				x := randRow(r, n*cols, 2)
				acts := make([][]byte, n)
				for tok := range n {
					acts[tok] = make([]byte, cols/32*34)
					quant.QuantizeActivationQ8_0(acts[tok], x[tok*cols:(tok+1)*cols])
				}
				dsts := make([][]float32, len(ws))
				for i, w := range ws {
					dsts[i] = make([]float32, n*w.Rows)
					for j := range dsts[i] {
						dsts[i][j] = 0.25
					}
				}
				name := fmt.Sprintf("%s/threads=%d/n=%d", dt, threads, n)
				if err := MatMulAcc(p, dsts[1], ws[1], x, n); err != nil {
					t.Fatal(err)
				}
				compareIf(t, name+"/acc", dsts[1], ws[1], acts, 0.25)
				if err := MatMulMulti(p, dsts, ws, x, n); err != nil {
					t.Fatal(err)
				}
				for i, w := range ws {
					compareIf(t, fmt.Sprintf("%s/multi%d", name, i), dsts[i], w, acts, 0)
				}
			}
			p.Close()
		}
	}
}

func compareIf(t *testing.T, name string, dst []float32, w Matrix, acts [][]byte, add float32) {
	t.Helper()
	for tok, a := range acts {
		for r := range w.Rows {
			want := quant.Dot(w.DType, w.Row(r), a, w.Cols)
			if add != 0 {
				want += add
			}
			if got := dst[tok*w.Rows+r]; math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%s: token %d row %d = %v, want %v", name, tok, r, got, want)
			}
		}
	}
}

// BenchmarkIfStrips measures the strip kernels on one thread: "l2" on a
// 256×2048 matrix that stays in L2 (the kernel's instruction bound),
// "l2x4" the same with 4 tokens at a time, "mem" on 5632×2048 ones far
// larger than the caches. It reports weight bytes (times the tokens) per
// CPU second of the thread (cpu-GB/s, Linux).
func BenchmarkIfStrips(b *testing.B) {
	k := Detect()
	if !k.hasIfPack() {
		b.Skip("no strip kernels")
	}
	const cols = 2048
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range []tensor.DType{tensor.Q4_B64T1, tensor.Q3H_B64T1} {
		kind, _, _ := k.classify(dt)
		for _, sz := range []struct {
			name       string
			rows, mats int
			tokens     int
		}{{"l2", 256, 1, 1}, {"l2x4", 256, 1, 4}, {"mem", 5632, 16, 1}} {
			b.Run(fmt.Sprintf("%s/%s", dt, sz.name), func(b *testing.B) {
				p := NewPoolKernels(1, k)
				defer p.Close()
				var pks []*ifPacked
				for range sz.mats {
					pks = append(pks, packIf(p, kind, benchMatrix(b, dt, sz.rows, cols)))
				}
				lda := ifActBytes(cols)
				ai := make([]byte, 4*lda)
				for tok := range 4 {
					k.packQ8I(ai[tok*lda:], randRow(r, cols, 1))
				}
				y := make([]float32, 4*sz.rows)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				bytes := int64(sz.tokens * len(pks[0].data)) // per token
				b.SetBytes(bytes)
				c0 := threadCPUTime()
				i := 0
				for b.Loop() {
					if sz.tokens == 4 {
						k.ifStrips4(kind, pks[0].data, ai, lda, cols/64, y, sz.rows, sz.rows/16, false)
					} else {
						k.ifStrips(kind, pks[i%len(pks)].data, ai, cols/64, y, sz.rows/16, false)
					}
					i++
				}
				if c0 >= 0 {
					b.ReportMetric(float64(bytes)*float64(b.N)/float64(threadCPUTime()-c0), "cpu-GB/s")
				}
			})
		}
	}
}
