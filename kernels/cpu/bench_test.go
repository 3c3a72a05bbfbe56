package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// benchMatrix builds a rows×cols matrix quickly: 64 random rows quantized
// once and repeated.
func benchMatrix(b testing.TB, dt tensor.DType, rows, cols int) Matrix {
	if b != nil {
		b.Helper()
	}
	r := rand.New(rand.NewPCG(9, 9))
	const uniq = 64
	f := make([]float32, uniq*cols)
	for i := range f {
		f[i] = float32(r.NormFloat64())
	}
	rb, _ := dt.RowBytes(cols)
	block := make([]byte, uniq*rb)
	if err := quant.Quantize(dt, block, f); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, rows*rb)
	for i := 0; i < len(data); i += len(block) {
		copy(data[i:], block)
	}
	return Matrix{DType: dt, Rows: rows, Cols: cols, Data: data}
}

var benchShapes = []struct{ rows, cols int }{
	{2048, 2048}, {5632, 2048}, {2048, 5632}, {32000, 2048},
}

// BenchmarkMatVec measures decode-shaped products (one token) per weight
// type and kernel level, reporting weight bytes read per second.
func BenchmarkMatVec(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0, tensor.Q4_K, tensor.Q6_K, tensor.IQ4_NL} {
		for _, sh := range benchShapes {
			w := benchMatrix(b, dt, sh.rows, sh.cols)
			x := make([]float32, sh.cols)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			dst := make([]float32, sh.rows)
			for _, l := range Levels() {
				if l == AVX512 && Detect().Level() > AVX512 {
					continue
				}
				b.Run(fmt.Sprintf("%s/%dx%d/%s", dt, sh.rows, sh.cols, l), func(b *testing.B) {
					p := NewPoolKernels(0, Detect().Limit(l))
					defer p.Close()
					b.SetBytes(int64(len(w.Data)))
					for b.Loop() {
						if err := MatMul(p, dst, w, x, 1); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkGEMM measures prefill-shaped products (128 tokens), reporting
// GFLOP/s (2 per multiply-add).
func BenchmarkGEMM(b *testing.B) {
	const n = 128
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0, tensor.Q4_K, tensor.Q6_K, tensor.IQ4_NL} {
		for _, sh := range benchShapes[:3] {
			w := benchMatrix(b, dt, sh.rows, sh.cols)
			x := make([]float32, n*sh.cols)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			dst := make([]float32, n*sh.rows)
			for _, l := range Levels() {
				if l == AVX512 && Detect().Level() > AVX512 || l == Generic {
					continue
				}
				b.Run(fmt.Sprintf("%s/%dx%d/%s", dt, sh.rows, sh.cols, l), func(b *testing.B) {
					p := NewPoolKernels(0, Detect().Limit(l))
					defer p.Close()
					for b.Loop() {
						if err := MatMul(p, dst, w, x, n); err != nil {
							b.Fatal(err)
						}
					}
					flops := 2 * float64(n) * float64(sh.rows) * float64(sh.cols)
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

type nopTask struct{}

func (nopTask) Run(lo, hi int) {}

// BenchmarkDispatch measures the cost of one pool dispatch that does no
// work: the per-op overhead that bounds tiny models.
func BenchmarkDispatch(b *testing.B) {
	p := NewPool(2)
	defer p.Close()
	var t nopTask
	for b.Loop() {
		p.Run(2, 1, t)
	}
}

// tinyLlama holds the matmul weights of a TinyLlama-1.1B-shaped model
// (hidden 2048, 22 layers, 32 heads of 64 with 4 KV heads, FFN 5632,
// vocab 32000).
type tinyLlama struct {
	qkv, o, gateUp, down [][]Matrix
	out                  Matrix
	bytes                int64
}

// pack hands every matrix of m to p.PackWeight.
func (m *tinyLlama) pack(p *Pool) {
	for l := range m.qkv {
		for _, ws := range [][]Matrix{m.qkv[l], m.o[l], m.gateUp[l], m.down[l]} {
			for _, w := range ws {
				p.PackWeight(w)
			}
		}
	}
	p.PackWeight(m.out)
}

func newTinyLlama(b testing.TB, dt tensor.DType) *tinyLlama {
	const hidden, layers, kv, ffn, vocab = 2048, 22, 256, 5632, 32000
	m := &tinyLlama{}
	add := func(rows, cols int) Matrix {
		w := benchMatrix(b, dt, rows, cols)
		m.bytes += int64(len(w.Data))
		return w
	}
	for range layers {
		m.qkv = append(m.qkv, []Matrix{add(hidden, hidden), add(kv, hidden), add(kv, hidden)})
		m.o = append(m.o, []Matrix{add(hidden, hidden)})
		m.gateUp = append(m.gateUp, []Matrix{add(ffn, hidden), add(ffn, hidden)})
		m.down = append(m.down, []Matrix{add(hidden, ffn)})
	}
	// llama.cpp's Q4_0 files keep the output matrix in Q6_K.
	outType := dt
	if dt == tensor.Q4_0 {
		outType = tensor.Q6_K
	}
	w := benchMatrix(b, outType, vocab, hidden)
	m.bytes += int64(len(w.Data))
	m.out = w
	return m
}

// BenchmarkDecodeTinyLlama runs the matmuls of one decode step of a
// TinyLlama-shaped model (weights far larger than the caches, read once
// per token), reporting tokens/s and the weight bytes read per second.
// It bounds the decode speed from above: norms and attention are left out.
// The Q4_0 model has a Q6_K output matrix, as llama.cpp writes it. On all
// threads ("all") the roofline metric is the weight bytes per second over
// MemBandwidth measured with the same pool right after the loop. On one
// thread ("t1") it reports the weight bytes read per CPU second of that
// thread (cpu-GB/s, Linux), which stays meaningful on a machine busy with
// other work: a kernel that reads far more than half the machine's
// bandwidth per CPU second keeps two threads at the roofline.
func BenchmarkDecodeTinyLlama(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.F16, tensor.BF16, tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q3_K, tensor.Q2_K, tensor.IQ4_NL, tensor.Q4_B64T1, tensor.Q3H_B64T1} {
		m := newTinyLlama(b, dt)
		for _, th := range []int{0, 1} {
			b.Run(fmt.Sprintf("%s/%s", dt, map[int]string{0: "all", 1: "t1"}[th]), func(b *testing.B) {
				if th == 1 {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
				}
				p := NewPool(th)
				defer p.Close()
				m.pack(p)
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
				el := b.Elapsed().Seconds()
				b.ReportMetric(float64(b.N)/el, "tok/s")
				if th == 1 {
					if c0 >= 0 {
						b.ReportMetric(float64(m.bytes)*float64(b.N)/float64(threadCPUTime()-c0), "cpu-GB/s")
					}
					return
				}
				b.ReportMetric(float64(m.bytes)*float64(b.N)/el/1e9/MemBandwidth(p, 1<<30), "roofline")
			})
		}
	}
}

// BenchmarkPrefillTinyLlama runs the matmuls of a 128-token prefill of a
// TinyLlama-shaped model (weights far larger than the caches, read once
// per pass), reporting tokens/s and GFLOP/s. The LM head, which a
// prefill runs for the last token only, is left out, as are norms and
// attention.
func BenchmarkPrefillTinyLlama(b *testing.B) {
	const n = 128
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16, tensor.F32, tensor.Q8_0, tensor.Q4_0, tensor.IQ4_NL, tensor.Q4_B64T1, tensor.Q3H_B64T1} {
		b.Run(dt.String(), func(b *testing.B) {
			m := newTinyLlama(b, dt)
			p := NewPool(0)
			defer p.Close()
			m.pack(p)
			x := make([]float32, n*5632)
			for i := range x {
				x[i] = float32(i%13)/4 - 1.5
			}
			q, k, v := make([]float32, n*2048), make([]float32, n*256), make([]float32, n*256)
			g, u := make([]float32, n*5632), make([]float32, n*5632)
			h := make([]float32, n*2048)
			var flop float64
			for b.Loop() {
				for l := range m.qkv {
					must(b, MatMulMulti(p, [][]float32{q, k, v}, m.qkv[l], x[:n*2048], n))
					must(b, MatMulAcc(p, h, m.o[l][0], q, n))
					must(b, MatMulMulti(p, [][]float32{g, u}, m.gateUp[l], x[:n*2048], n))
					must(b, MatMulAcc(p, h, m.down[l][0], x, n))
				}
			}
			for l := range m.qkv {
				for _, ws := range [][]Matrix{m.qkv[l], m.o[l], m.gateUp[l], m.down[l]} {
					for _, w := range ws {
						flop += 2 * n * float64(w.Rows) * float64(w.Cols)
					}
				}
			}
			b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func must(b *testing.B, err error) {
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSmallOps measures the per-call cost of the ops of a tiny model
// (stories260K: dim 64, hidden 172, vocab 512, F32), where overhead, not
// bandwidth, bounds the speed.
func BenchmarkSmallOps(b *testing.B) {
	p := NewPool(0)
	defer p.Close()
	wq := benchMatrix(b, tensor.F32, 64, 64)
	w1 := benchMatrix(b, tensor.F32, 172, 64)
	wout := benchMatrix(b, tensor.F32, 512, 64)
	x := make([]float32, 172)
	for i := range x {
		x[i] = float32(i%5) - 2
	}
	y := make([]float32, 512)
	b.Run("MatMul64x64", func(b *testing.B) {
		for b.Loop() {
			must(b, MatMul(p, y, wq, x[:64], 1))
		}
	})
	b.Run("MatMulMulti3x64x64", func(b *testing.B) {
		ws := []Matrix{wq, wq, wq}
		ds := [][]float32{y[:64], y[64:128], y[128:192]}
		for b.Loop() {
			must(b, MatMulMulti(p, ds, ws, x[:64], 1))
		}
	})
	b.Run("MatMul172x64", func(b *testing.B) {
		for b.Loop() {
			must(b, MatMul(p, y, w1, x[:64], 1))
		}
	})
	b.Run("MatMul512x64", func(b *testing.B) {
		for b.Loop() {
			must(b, MatMul(p, y, wout, x[:64], 1))
		}
	})
	b.Run("RMSNorm64", func(b *testing.B) {
		for b.Loop() {
			RMSNorm(y[:64], x[:64], x[64:128], 1e-5)
		}
	})
	b.Run("Attend8x8pos256", func(b *testing.B) {
		kv := &KV{K: [][]float32{make([]float32, 256*32)}, V: [][]float32{make([]float32, 256*32)}, Len: []int{256}}
		sc := make([]float32, 256)
		for b.Loop() {
			Attend(y[:64], x[:64], kv, AttendParams{Heads: 8, KVHeads: 4, HeadDim: 8, Scale: 0.35, N: 256}, sc)
		}
	})
}

// BenchmarkSmallBatch measures decode steps of a few sequences (n tokens)
// on Q4_0 and Q8_0 weights through each path, on one thread: per-token
// matrix-vector products over cached rows ("gemv") and the 16-row tiles on
// unpacked strips ("tile"). Besides wall time it reports the thread's CPU
// time per product (cpu-µs/op, Linux), which stays meaningful on a
// machine busy with other work.
func BenchmarkSmallBatch(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0} {
		w := benchMatrix(b, dt, 2048, 2048)
		for _, n := range []int{1, 2, 3, 4, 6, 8, 9, 12, 16} {
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
					old4, old8 := q4TileMinTokens, q8TileMinTokens
					q4TileMinTokens, q8TileMinTokens = path.min, path.min
					defer func() { q4TileMinTokens, q8TileMinTokens = old4, old8 }()
					p := NewPool(1)
					defer p.Close()
					b.SetBytes(int64(len(w.Data)))
					c0 := threadCPUTime()
					for b.Loop() {
						if err := MatMul(p, dst, w, x, n); err != nil {
							b.Fatal(err)
						}
					}
					if c0 >= 0 {
						b.ReportMetric(float64(threadCPUTime()-c0)/float64(b.N)/1e3, "cpu-µs/op")
					}
				})
			}
		}
	}
}
