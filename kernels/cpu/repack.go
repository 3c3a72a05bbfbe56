package cpu

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
	"github.com/weftrun/weft/tensor"
)

// Prefill on Q8_0 copies of K-quant, IQ4_NL, Q5_0, Q4_1 and Q5_1 weights
// (opt-in).
//
// A K-quant's prefill GEMM keeps ggml's arithmetic: each 16- or 32-value
// sub-block's 6- or 8-bit scale multiplies its integer sum before the
// super-block's sums meet, so every 64 byte products cost a second
// multiply (VPMADDUBSW, then VPMADDWD by the scales) and the kernels
// (kqgemm) stay under half the VPDPBUSD peak. IQ4_NL's batched order
// (llamafile's eight float lanes per block) spends as much again in float
// work. The Q8_0 prefill tiles run at about 70% of the peak.
//
// With a kernel set made by WithRepack, Pool.PackWeight also keeps a Q8_0
// copy of every Q2_K..Q6_K and IQ4_NL matrix (and Q5_0, Q4_1 and Q5_1,
// whose prefill has no tiles wider than two tokens), and a matmul of at
// least repackMinTokens tokens reads the copy through the Q8_0 kernels; smaller
// ones (decode, small batches) read the file's weights as before. This is
// what ik_llama.cpp does by default for batches (it converts such rows to
// 8-bit blocks on the fly). The trade:
//
//   - Memory: the copy is 34 bytes per 32 weights, on top of the file's
//     (a Q4_K_M model's resident memory grows about 2.6 times).
//   - Bits: prefill no longer reproduces llama.cpp's logits. IQ4_NL's and
//     Q5_0's copies are lossless (a Q8_0 block of the same scale holding
//     the levels' int8 values), only the float summation order changes.
//     Other weights are re-quantized from their float values to 255
//     levels per 32 values, an added error of at most 1/254 of the block's largest
//     magnitude (Q4_K's own steps are about 1/15 of it); its activations
//     are then quantized per 32 values (Q8_0) instead of per 256 (Q8_K).
//   - Load time: one pass over those weights, kernels/quant's dequantizer
//     then the activations' SIMD Q8_0 quantizer (about 1 ns a weight on
//     one thread, BenchmarkRepackLoad).
//
// TestRepackCopy bounds each copied weight's error and checks which
// matmuls read the copy; convert's TestRepackPrefillLogits measures the
// logits against llama.cpp's of the unquantized model.

// repackMinTokens is the fewest tokens a matmul needs to read the Q8_0
// copy: below it the file's narrower weights cost less memory traffic.
// On TinyLlama-shaped Q4_K_M, 2 threads (weft bench -p N -n 0 -r 5
// --repack), prefill with and without the copy: pp2 62 and 74 tok/s, pp3
// 100 and 88, pp4 131 and 110, pp8 264 and 182.
var repackMinTokens = 4

// WithRepack returns the set with the Q8_0 prefill copies of K-quant,
// IQ4_NL, Q5_0, Q4_1 and Q5_1 weights on or off (see repack.go).
func (k Kernels) WithRepack(on bool) Kernels {
	k.repack = on
	return k
}

// Repack reports whether the set keeps Q8_0 prefill copies (WithRepack).
func (k Kernels) Repack() bool { return k.repack }

// repacks reports whether the set copies weights of type d to Q8_0 for
// prefill: with WithRepack, K-quant, IQ4_NL, Q5_0, Q4_1 and Q5_1 weights,
// where the Q8_0 kernels run.
func (k Kernels) repacks(d tensor.DType) bool {
	if !k.repack || !k.hasQ8() {
		return false
	}
	switch d {
	case tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_NL,
		tensor.Q5_0, tensor.Q4_1, tensor.Q5_1:
		return true
	}
	return false
}

// lossless reports the types whose 32-value blocks start with an f16
// scale d and hold values d·level with integer levels in [−127, 127]:
// their Q8_0 copy keeps d and the levels, exactly.
func lossless(d tensor.DType) bool { return d == tensor.IQ4_NL || d == tensor.Q5_0 }

// q8Copy is a Q8_0 copy of a weight matrix (PackWeight).
type q8Copy struct {
	dtype      tensor.DType // of the original
	rows, cols int
	m          Matrix // the copy, Q8_0
}

// packQ8 stores a Q8_0 copy of w, made on p's threads.
func (p *Pool) packQ8(w Matrix) {
	if p.q8CopyFor(w) != nil {
		return
	}
	rb, cb := w.RowBytes(), w.Cols/32*34
	c := &q8Copy{dtype: w.DType, rows: w.Rows, cols: w.Cols}
	c.m = Matrix{DType: tensor.Q8_0, Rows: w.Rows, Cols: w.Cols, Data: make([]byte, w.Rows*cb)}
	var failed atomic.Bool
	p.Parallel(w.Rows, 16, func(lo, hi int) {
		buf := make([]float32, w.Cols)
		for r := lo; r < hi; r++ {
			row, dst := w.Data[r*rb:(r+1)*rb], c.m.Data[r*cb:(r+1)*cb]
			if err := quant.Dequantize(w.DType, buf, row); err != nil {
				// Not expected (repacks admits only types quant
				// dequantizes); then there is no copy, and matmuls
				// read w as without WithRepack.
				failed.Store(true)
				return
			}
			if lossless(w.DType) {
				levelsToQ8_0(dst, row, rb/(w.Cols/32), buf)
				continue
			}
			p.k.quantizeQ8_0(dst, buf) // the activations' SIMD quantizer
		}
	})
	if !failed.Load() {
		p.q8s.Store(unsafe.SliceData(w.Data), c)
	}
}

// levelsToQ8_0 writes the row w of a lossless type, bb bytes a block,
// whose values (dequantized) are v, as Q8_0 blocks of the same scales:
// each value d·level is exact in float32 (an 11-bit scale times an 8-bit
// level), so level = value/d.
func levelsToQ8_0(dst, w []byte, bb int, v []float32) {
	for b := range len(v) / 32 {
		h := binary.LittleEndian.Uint16(w[bb*b:])
		o := dst[34*b : 34*b+34]
		binary.LittleEndian.PutUint16(o, h)
		d := quant.FromF16(h)
		for i := range 32 {
			q := float32(0)
			if d != 0 {
				q = v[32*b+i] / d
			}
			o[2+i] = byte(int8(q))
		}
	}
}

// q8CopyFor returns the Q8_0 copy PackWeight made of w, or nil.
func (p *Pool) q8CopyFor(w Matrix) *Matrix {
	if p == nil || len(w.Data) == 0 {
		return nil
	}
	v, ok := p.q8s.Load(unsafe.SliceData(w.Data))
	if !ok {
		return nil
	}
	c := v.(*q8Copy)
	if c.dtype != w.DType || c.rows != w.Rows || c.cols != w.Cols {
		return nil
	}
	return &c.m
}
