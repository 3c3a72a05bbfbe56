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

// q5TileMinTokens and q5YMinTokens are the fewest tokens for which Q5_0
// matmuls run on the IQ4_NL tiles (legacyTiles) and on their AVX2 twins
// (legacyTilesY). One thread, 2048×2048, CPU µs per matmul: VNNI tiles
// against the two-row kernels 105.5 / 188.5 at 2 tokens; AVX2 tiles 264.9
// / 251.2 at 2 tokens, 314.6 / 346.1 at 3.
var (
	q5TileMinTokens = 2
	q5YMinTokens    = 3
)

// legacyRows computes rows [r0, r1) of a SIMD Q5_0, Q4_1 or Q5_1 job on
// pool thread w (whose scratch the tiles use): Q5_0 prefill on the IQ4_NL
// tiles where the level has them (AVX-512 VNNI, AVX2), Q4_1's and Q5_1's
// on their tiles at AVX-512 VNNI (legacyGemmT), otherwise
// legacyGemm, for several tokens swept over blocks of rows that stay in
// cache. Each output is kernels/quant's dot product, bit for bit.
func (t *mmTask) legacyRows(w int, j *mmJob, r0, r1 int) {
	n, ldd, rb := t.n, j.w.Rows, j.rb
	nb := j.w.Cols / 32
	if t.k.legacyTiles(j.kind, n) {
		t.k.legacyGemmTiles(j.w.Data[r0*rb:r1*rb], rb, j.act, j.ldx, nb, n, j.dst[r0:], ldd, r1-r0, t.acc,
			t.scratchFor(w, iq4nlScratch(r1-r0, nb)))
		return
	}
	if j.af == afQ8T {
		// Q4_1 and Q5_1 tiles, 16 rows at a time as below.
		for b0 := r0; b0 < r1; b0 += quantRows {
			b1 := min(b0+quantRows, r1)
			t.k.legacyGemmT(j.kind, j.w.Data[b0*rb:b1*rb], rb, j.act, j.ldx, nb, n, j.dst[b0:], ldd, b1-b0, t.acc)
		}
		return
	}
	if j.af == afQ8Y {
		// AVX2 tiles (legacyTilesY), 16 rows at a time so that they stay
		// in cache for all the tokens.
		for b0 := r0; b0 < r1; b0 += quantRows {
			b1 := min(b0+quantRows, r1)
			t.k.legacyGemmY(j.w.Data[b0*rb:b1*rb], rb, j.act, j.ldx, nb, n, j.dst[b0:], ldd, b1-b0, t.acc)
		}
		return
	}
	step := r1 - r0
	if n > 1 {
		step = quantRows
	}
	for b0 := r0; b0 < r1; b0 += step {
		b1 := min(b0+step, r1)
		t.k.legacyGemm(j.kind, j.w.Data[b0*rb:b1*rb], rb, j.act, j.ldx, nb, n, j.dst[b0:], ldd, b1-b0, t.acc)
	}
}
