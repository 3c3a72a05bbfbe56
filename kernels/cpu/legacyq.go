package cpu

import "github.com/weftrun/weft/tensor"

// legacyKind returns the SIMD kind of ggml's legacy Q5_0, Q4_1 and Q5_1
// weights.
func legacyKind(d tensor.DType) (wkind, bool) {
	switch d {
	case tensor.Q5_0:
		return wkQ5_0, true
	case tensor.Q4_1:
		return wkQ4_1, true
	case tensor.Q5_1:
		return wkQ5_1, true
	}
	return 0, false
}

// legacyBlockBytes is the size of a 32-value block of kind.
func legacyBlockBytes(kind wkind) int {
	switch kind {
	case wkQ5_0:
		return 22
	case wkQ4_1:
		return 20
	}
	return 24 // wkQ5_1
}

// legacyRows computes rows [r0, r1) of a SIMD Q5_0, Q4_1 or Q5_1 job:
// matrix-vector products (activations in layout A), for several tokens
// two at a time (legacyGemv2), swept over blocks of rows that stay in
// cache. Each output is the chain of
// kernels/quant's dot product, bit for bit.
func (t *mmTask) legacyRows(j *mmJob, r0, r1 int) {
	n, ldd, rb := t.n, j.w.Rows, j.rb
	nb := j.w.Cols / 32
	step := r1 - r0
	if n > 1 {
		step = quantRows
	}
	for b0 := r0; b0 < r1; b0 += step {
		b1 := min(b0+step, r1)
		w := j.w.Data[b0*rb : b1*rb]
		tok := 0
		for ; tok+2 <= n; tok += 2 {
			// Two tokens per pass: each weight group unpacked once.
			a0, a1 := j.act[tok*j.ldx:(tok+1)*j.ldx], j.act[(tok+1)*j.ldx:(tok+2)*j.ldx]
			t.k.legacyGemv2(j.kind, w, rb, a0, a1, nb, j.dst[tok*ldd+b0:tok*ldd+b1], j.dst[(tok+1)*ldd+b0:(tok+1)*ldd+b1], t.acc)
		}
		if tok < n {
			t.k.legacyGemv(j.kind, w, rb, j.act[tok*j.ldx:(tok+1)*j.ldx], nb, j.dst[tok*ldd+b0:tok*ldd+b1], t.acc)
		}
	}
}
