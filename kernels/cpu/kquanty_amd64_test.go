//go:build amd64 && !noasm

package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// TestKQuantGemvAVX2 checks the AVX2 K-quant kernels (the levels below
// AVX512VNNI) bit for bit against kernels/quant's dot products: quantized
// matrices, blocks of random bytes (every scale, min, high-bit and quant
// pattern, d and dmin of either sign), and activations whose quants
// include -128 and ±127 runs, for odd row counts and several block counts.
func TestKQuantGemvAVX2(t *testing.T) {
	ks := avx2Kernels()
	if len(ks) == 0 {
		t.Skip("no AVX2 on this machine")
	}
	r := rand.New(rand.NewPCG(31, 32))
	type kdesc struct {
		dt   tensor.DType
		kind wkind
		bb   int
		half []int // offsets of the block's f16 scales
	}
	for _, kd := range []kdesc{
		{tensor.Q6_K, wkQ6_K, 210, []int{208}},
		{tensor.Q5_K, wkQ5_K, 176, []int{0, 2}},
		{tensor.Q4_K, wkQ4_K, 144, []int{0, 2}},
		{tensor.Q3_K, wkQ3_K, 110, []int{108}},
		{tensor.Q2_K, wkQ2_K, 84, []int{80, 82}},
	} {
		for _, sh := range []struct {
			rows, cols int
			random     bool
		}{{1, 256, false}, {3, 512, false}, {5, 768, true}, {13, 2048, false}, {9, 4352, true}, {7, 1024, true}} {
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
			act := make([]byte, sh.cols/256*292)
			quant.QuantizeRowQ8_K(act, randRow(r, sh.cols, 1))
			if sh.random {
				randQ8K(r, act)
			}
			for _, k := range ks {
				for _, acc := range []bool{false, true} {
					dst, check := guarded(sh.rows, 0.5)
					k.kGemv(kd.kind, w.Data, w.RowBytes(), act, sh.cols/256, dst, acc, nil)
					check(t)
					for i := range dst {
						want := quant.Dot(kd.dt, w.Row(i), act, sh.cols)
						if acc {
							want += 0.5
						}
						if math.Float32bits(dst[i]) != math.Float32bits(want) {
							t.Fatalf("%v %s %dx%d acc=%v: row %d = %v, want %v", k, kd.dt, sh.rows, sh.cols, acc, i, dst[i], want)
						}
					}
				}
			}
		}
	}
}

// randQ8K rewrites the quants of the odd Q8_K blocks of act: random bytes
// (-128 included) in one, -128 and 127 runs in the next, and so on, with
// their true block sums.
func randQ8K(r *rand.Rand, act []byte) {
	for b := 0; b+292 <= len(act); b += 292 {
		if b/292%2 == 0 {
			continue
		}
		q := act[b+4 : b+260]
		for i := range q {
			if b/292%4 == 1 {
				q[i] = byte(r.Uint32())
			} else {
				q[i] = []byte{0x80, 0x7f}[i/16%2]
			}
		}
		for j := range 16 {
			s := 0
			for _, v := range q[16*j : 16*j+16] {
				s += int(int8(v))
			}
			binary.LittleEndian.PutUint16(act[b+260+2*j:], uint16(int16(s)))
		}
	}
}

// avx2Kernels returns the kernel sets below AVX512VNNI this machine runs
// (avx2, avx512), whose K-quant and IQ4_NL products are the AVX2 kernels'.
func avx2Kernels() []Kernels {
	var ks []Kernels
	for _, l := range []Level{AVX2, AVX512} {
		if k := Detect().Limit(l); k.Level() == l {
			ks = append(ks, k)
		}
	}
	return ks
}

// TestIQ4_NLGemvAVX2 checks the AVX2 IQ4_NL kernels bit for bit against
// kernels/quant's dot products, ggml's one-token order and its batched
// one: odd row and block counts (the one-token order's last-block path),
// every index in every nibble and activations at ±127, and the matmul of
// several tokens through iq4nlGemm.
func TestIQ4_NLGemvAVX2(t *testing.T) {
	ks := avx2Kernels()
	if len(ks) == 0 {
		t.Skip("no AVX2 on this machine")
	}
	r := rand.New(rand.NewPCG(33, 34))
	for _, sh := range []struct{ rows, cols int }{{1, 32}, {3, 64}, {5, 96}, {7, 288}, {13, 2048}, {9, 5632}, {8, 4096}} {
		w := randomMatrix(t, r, tensor.IQ4_NL, sh.rows, sh.cols)
		x := randRow(r, sh.cols, 1)
		if sh.rows == 8 || sh.rows == 5 {
			for i := 0; i < len(w.Data); i += 18 {
				for j := 2; j < 18; j++ {
					w.Data[i+j] = byte(r.Uint32())
				}
			}
			for i := range x {
				x[i] = float32(r.IntN(3)-1) * 1e4
			}
		}
		act := make([]byte, sh.cols/32*34)
		quant.QuantizeActivationQ8_0(act, x)
		for _, k := range ks {
			for _, kd := range []struct {
				kind wkind
				dot  quant.DotFunc
			}{{wkIQ4NL, quant.DotIQ4_NLQ8_0}, {wkIQ4NB, quant.DotIQ4_NLQ8_0Batch}} {
				for _, acc := range []bool{false, true} {
					dst, check := guarded(sh.rows, 0.5)
					k.kGemv(kd.kind, w.Data, w.RowBytes(), act, sh.cols/32, dst, acc, nil)
					check(t)
					for i := range dst {
						want := kd.dot(w.Row(i), act, sh.cols)
						if acc {
							want += 0.5
						}
						if math.Float32bits(dst[i]) != math.Float32bits(want) {
							t.Fatalf("%v kind %d %dx%d acc=%v: row %d = %v, want %v", k, kd.kind, sh.rows, sh.cols, acc, i, dst[i], want)
						}
					}
				}
			}
			// Three tokens through iq4nlGemm, in the batched order.
			const n = 3
			acts := make([]byte, n*len(act))
			for tk := range n {
				quant.QuantizeActivationQ8_0(acts[tk*len(act):], randRow(r, sh.cols, 1))
			}
			dst := make([]float32, n*sh.rows)
			k.iq4nlGemm(w.Data, w.RowBytes(), acts, len(act), sh.cols/32, n, dst, sh.rows, sh.rows, false, nil)
			for tk := range n {
				for i := range sh.rows {
					want := quant.DotIQ4_NLQ8_0Batch(w.Row(i), acts[tk*len(act):], sh.cols)
					if math.Float32bits(dst[tk*sh.rows+i]) != math.Float32bits(want) {
						t.Fatalf("%v gemm %dx%d token %d row %d = %v, want %v", k, sh.rows, sh.cols, tk, i, dst[tk*sh.rows+i], want)
					}
				}
			}
		}
	}
}

// BenchmarkKQuantMatVecAVX2 is BenchmarkKQuantMatVec's one-token product
// for the K-quants and IQ4_NL on the AVX2 kernels (the level limited to avx2).
func BenchmarkKQuantMatVecAVX2(b *testing.B) {
	if Detect().Limit(AVX2).Level() != AVX2 {
		b.Skip("no AVX2 on this machine")
	}
	const rows, cols = 5632, 2048
	for _, dt := range []tensor.DType{tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL} {
		w := benchMatrix(b, dt, rows, cols)
		x := randRow(rand.New(rand.NewPCG(1, 2)), cols, 1)
		dst := make([]float32, rows)
		b.Run(dt.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			p := NewPoolKernels(1, Detect().Limit(AVX2))
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

// BenchmarkDecodeTinyLlamaAVX2 is BenchmarkDecodeTinyLlama's one-thread
// decode step (t1: weights from memory, cpu-GB/s per CPU second of the
// thread) for the K-quants and IQ4_NL, on the AVX2 kernels and on the
// machine's level, alternately.
func BenchmarkDecodeTinyLlamaAVX2(b *testing.B) {
	if Detect().Limit(AVX2).Level() != AVX2 {
		b.Skip("no AVX2 on this machine")
	}
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q3_K, tensor.Q2_K, tensor.IQ4_NL} {
		m := newTinyLlama(b, dt)
		for _, l := range []Level{AVX2, Detect().Level()} {
			b.Run(fmt.Sprintf("%s/%s", dt, l), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				p := NewPoolKernels(1, Detect().Limit(l))
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
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
				if c0 >= 0 {
					b.ReportMetric(float64(m.bytes)*float64(b.N)/float64(threadCPUTime()-c0), "cpu-GB/s")
				}
			})
		}
	}
}
