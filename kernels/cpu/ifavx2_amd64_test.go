//go:build amd64 && !noasm

package cpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// ifAVX2Types are the formats with AVX2 kernels (ifavx2_amd64.s).
var ifAVX2Types = []tensor.DType{tensor.Q6_B64T1, tensor.Q5_B64T1, tensor.Q4_B32T1, tensor.Q4_B64T1,
	tensor.Q3H_B64T1, tensor.Q3_B32T1, tensor.Q2_B32T1}

// TestQ3HDiv11 checks the division of Q3H_B64T1's kernel: for every 7-bit
// code p, (p·5984)>>16 is p/11 (p·187>>11).
func TestQ3HDiv11(t *testing.T) {
	for p := range 128 {
		if p*5984>>16 != p/11 || p*187>>11 != p/11 {
			t.Fatalf("code %d: %d, want %d", p, p*5984>>16, p/11)
		}
	}
}

// TestInferflowGemvAVX2 checks the AVX2 kernels of Inferflow's formats
// (the levels below AVX512VNNI) bit for bit against kernels/quant's dot
// products: blocks of random bytes (every code, Q3H_B64T1's codes 121..127
// included), f16 base and scale of either sign, activations with blocks at
// ±127 and -128, rows 1..13 (groups of four and the rows left), several
// block counts, storing and accumulating.
func TestInferflowGemvAVX2(t *testing.T) {
	ks := avx2Kernels()
	if len(ks) == 0 {
		t.Skip("no AVX2 on this machine")
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, dt := range ifAVX2Types {
		kind, _, _ := ks[0].classify(dt)
		if !ks[0].hasIfAVX2(kind) {
			t.Fatalf("%s: classified %v, no AVX2 kernel", dt, kind)
		}
		elems, bb := dt.BlockSize(), dt.TypeSize()
		for rows := 1; rows <= 13; rows++ {
			for _, cols := range []int{64, 128, 192, 1024, 2048 + 64} {
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
				x := randRow(r, cols, 1)
				act := make([]byte, cols/32*34)
				quant.QuantizeActivationQ8_0(act, x)
				for b := 0; b < len(act); b += 34 {
					switch (b/34 + rows) % 4 {
					case 1:
						for j := 2; j < 34; j++ {
							act[b+j] = byte(r.Uint32())
						}
					case 2:
						for j := 2; j < 34; j++ {
							act[b+j] = []byte{0x80, 0x7f, 0x81}[(j+rows)%3]
						}
					}
				}
				for _, k := range ks {
					for _, acc := range []bool{false, true} {
						dst, check := guarded(rows, 0.5)
						k.kGemv(kind, w.Data, w.RowBytes(), act, nb, dst, acc, nil)
						check(t)
						for i := range dst {
							want := quant.Dot(dt, w.Row(i), act, cols)
							if acc {
								want += 0.5
							}
							if math.Float32bits(dst[i]) != math.Float32bits(want) {
								t.Fatalf("%v %s %dx%d acc=%v: row %d = %v, want %v", k, dt, rows, cols, acc, i, dst[i], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestInferflowMatMulAVX2 checks MatMul and MatMulAcc at the AVX2 level
// (one and several tokens, two threads; Q4_B64T1 and Q3H_B64T1 stay in the
// file layout, not strips) against the Go reference at Generic, bit for
// bit, and that they allocate nothing once the buffers have grown.
func TestInferflowMatMulAVX2(t *testing.T) {
	if Detect().Limit(AVX2).Level() != AVX2 {
		t.Skip("no AVX2 on this machine")
	}
	if Detect().Limit(AVX2).hasIfPack() {
		t.Fatal("strips at the AVX2 level")
	}
	r := rand.New(rand.NewPCG(43, 44))
	simd := NewPoolKernels(2, Detect().Limit(AVX2))
	defer simd.Close()
	ref := NewPoolKernels(2, Detect().Limit(Generic))
	defer ref.Close()
	for _, dt := range ifAVX2Types {
		for _, sh := range []struct{ rows, cols, n int }{{37, 2048, 1}, {37, 2048, 3}, {22, 1088, 2}, {22, 1088, 5}, {5, 128, 4}} {
			w := randomMatrix(t, r, dt, sh.rows, sh.cols)
			simd.PackWeight(w) // a model's load: no strips at AVX2
			if simd.packFor(w) != nil {
				t.Fatalf("%s packed into strips at AVX2", dt)
			}
			x := randRow(r, sh.n*sh.cols, 1)
			for _, acc := range []bool{false, true} {
				mm, got := matMulSameBits(t, simd, ref, w, x, sh.n, acc)
				if a := testing.AllocsPerRun(5, func() { mm(simd, got, w, x, sh.n) }); a != 0 {
					t.Errorf("%s n=%d: %v allocations per call", dt, sh.n, a)
				}
			}
		}
	}
}

// BenchmarkInferflowMatVec is the one-token product (one thread, cpu-GB/s
// of weights per CPU second) for Inferflow's formats at the Generic (Go
// reference), AVX2 and machine levels.
func BenchmarkInferflowMatVec(b *testing.B) {
	const rows, cols = 5632, 2048
	for _, dt := range ifAVX2Types {
		w := benchMatrix(b, dt, rows, cols)
		x := randRow(rand.New(rand.NewPCG(1, 2)), cols, 1)
		dst := make([]float32, rows)
		for _, l := range []Level{Generic, AVX2, Detect().Level()} {
			if Detect().Limit(l).Level() != l {
				continue
			}
			b.Run(dt.String()+"/"+l.String(), func(b *testing.B) {
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
