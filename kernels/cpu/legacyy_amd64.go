//go:build amd64 && !noasm

package cpu

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// AVX2 and AVX-512 VNNI kernels for Q5_0, Q4_1 and Q5_1 weights
// (legacyy_amd64.s), one to four tokens at a time; one token at AVX-512
// VNNI takes the 512-bit kernels of two rows per register (gemv*r4t1Z).

//go:noescape
func gemvQ5_0r4t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r2t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r4t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r2t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r4t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t1AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r2t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t2AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t3AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t4AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r2t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r2t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r2t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r1t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r2t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r2t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r2t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r1t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r2t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t2VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r2t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t3VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r2t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r1t4VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_0r4t1Z(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ4_1r4t1Z(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func gemvQ5_1r4t1Z(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

// legacyKernel is the signature of the kernels.
type legacyKernel func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)

// legacyShape is the kernels of a kind for a number of tokens: rows takes
// nr rows at a time (nil: none), one one.
type legacyShape struct {
	rows legacyKernel
	nr   int
	one  legacyKernel
}

// legacyKernels are the kernels of wkQ5_0, wkQ4_1 and wkQ5_1 by level
// (AVX2, AVX-512 VNNI) and number of tokens less one.
var legacyKernels = [2][3][4]legacyShape{{
	{
		{gemvQ5_0r4t1AVX2, 4, gemvQ5_0r1t1AVX2},
		{gemvQ5_0r2t2AVX2, 2, gemvQ5_0r1t2AVX2},
		{nil, 0, gemvQ5_0r1t3AVX2},
		{nil, 0, gemvQ5_0r1t4AVX2},
	},
	{
		{gemvQ4_1r4t1AVX2, 4, gemvQ4_1r1t1AVX2},
		{gemvQ4_1r2t2AVX2, 2, gemvQ4_1r1t2AVX2},
		{nil, 0, gemvQ4_1r1t3AVX2},
		{nil, 0, gemvQ4_1r1t4AVX2},
	},
	{
		{gemvQ5_1r4t1AVX2, 4, gemvQ5_1r1t1AVX2},
		{gemvQ5_1r2t2AVX2, 2, gemvQ5_1r1t2AVX2},
		{nil, 0, gemvQ5_1r1t3AVX2},
		{nil, 0, gemvQ5_1r1t4AVX2},
	},
}, {
	{
		{gemvQ5_0r4t1Z, 4, gemvQ5_0r1t1VNNI},
		{gemvQ5_0r2t2VNNI, 2, gemvQ5_0r1t2VNNI},
		{gemvQ5_0r2t3VNNI, 2, gemvQ5_0r1t3VNNI},
		{gemvQ5_0r2t4VNNI, 2, gemvQ5_0r1t4VNNI},
	},
	{
		{gemvQ4_1r4t1Z, 4, gemvQ4_1r1t1VNNI},
		{gemvQ4_1r2t2VNNI, 2, gemvQ4_1r1t2VNNI},
		{gemvQ4_1r2t3VNNI, 2, gemvQ4_1r1t3VNNI},
		{gemvQ4_1r2t4VNNI, 2, gemvQ4_1r1t4VNNI},
	},
	{
		{gemvQ5_1r4t1Z, 4, gemvQ5_1r1t1VNNI},
		{gemvQ5_1r2t2VNNI, 2, gemvQ5_1r1t2VNNI},
		{gemvQ5_1r2t3VNNI, 2, gemvQ5_1r1t3VNNI},
		{gemvQ5_1r2t4VNNI, 2, gemvQ5_1r1t4VNNI},
	},
}}

// hasLegacyQ reports SIMD kernels for Q5_0, Q4_1 and Q5_1 weights.
func (k Kernels) hasLegacyQ() bool { return k.level >= AVX2 }

// legacyGemm computes, for n tokens t (rows of nb activation blocks in a,
// lda bytes apart: Q8_0 for wkQ5_0, Q8_1 for wkQ4_1 and wkQ5_1),
// dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb blocks of kind, ldw bytes
// apart: kernels/quant's dot products to the last bit, each weight block
// unpacked once for up to four tokens.
func (k Kernels) legacyGemm(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	if rows == 0 || n == 0 {
		return
	}
	if nb == 0 {
		if !acc {
			for t := range n {
				clear(dst[t*ldd : t*ldd+rows])
			}
		}
		return
	}
	ab := 36
	if kind == wkQ5_0 {
		ab = 34
	}
	_ = w[(rows-1)*ldw+nb*legacyBlockBytes(kind)-1]
	_ = a[(n-1)*lda+nb*ab-1]
	_ = dst[(n-1)*ldd+rows-1]
	ac := 0
	if acc {
		ac = 1
	}
	lv := 0
	if k.level >= AVX512VNNI {
		lv = 1
	}
	ks := &legacyKernels[lv][kind-wkQ5_0]
	for t := 0; t < n; t += 4 {
		// Groups of up to 4 tokens, each run over the rows nr at a time
		// (in nr streams), then one at a time.
		sh := &ks[min(4, n-t)-1]
		x := unsafe.Pointer(&a[t*lda])
		r := 0
		if sh.rows != nil {
			if r = rows / sh.nr * sh.nr; r > 0 {
				sh.rows(unsafe.Pointer(&w[0]), uintptr(ldw), x, uintptr(lda), nb, &dst[t*ldd], uintptr(4*ldd), r, ac)
			}
		}
		if r < rows {
			sh.one(unsafe.Pointer(&w[r*ldw]), uintptr(ldw), x, uintptr(lda), nb, &dst[t*ldd+r], uintptr(4*ldd), rows-r, ac)
		}
	}
}

// Q5_0 prefill on the IQ4_NL tiles (iq4nl_amd64.go), which sum in
// tinyBLAS's order, Q5_0's as well.

//go:noescape
func unpackQ5_0S16(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)

// legacyTiles reports whether a Q5_0, Q4_1 or Q5_1 matmul of n tokens
// runs on the tiles (legacyGemmTiles): Q5_0 on AVX-512 VNNI, from
// q5TileMinTokens tokens.
func (k Kernels) legacyTiles(kind wkind, n int) bool {
	return kind == wkQ5_0 && n >= q5TileMinTokens && k.level >= AVX512VNNI
}

// legacyGemmTiles is legacyGemm on the IQ4_NL tiles (legacyTiles), with
// scratch as iq4nlGemm's.
func (k Kernels) legacyGemmTiles(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, scratch []byte) {
	iq4Strips(unpackQ5_0S16, 22, w, ldw, a, lda, nb, n, dst, ldd, rows, acc, scratch)
}

// Q5_0 prefill at the AVX2 level: IQ4_NL's AVX2 tiles for Q5_0 blocks
// (legacyy_amd64.s), on layout Y activations.

//go:noescape
func q5_0TileY1(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5_0TileY2(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5_0TileY3(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5_0TileY4(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5_0TileY5(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5_0TileY6(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5_0TileY7(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5_0TileY8(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

var q5TilesY = [iq4YMaxTokens + 1]iq4TileYFunc{nil, q5_0TileY1, q5_0TileY2, q5_0TileY3, q5_0TileY4, q5_0TileY5, q5_0TileY6, q5_0TileY7, q5_0TileY8}

// legacyTilesY reports whether a Q5_0, Q4_1 or Q5_1 matmul of n tokens
// runs on the AVX2 tiles (legacyGemmY, layout Y activations): Q5_0 where
// the AVX2 prefill tiles run (hasQ8Y), from q5YMinTokens tokens.
func (k Kernels) legacyTilesY(kind wkind, n int) bool {
	return kind == wkQ5_0 && n >= q5YMinTokens && k.hasQ8Y()
}

// legacyGemmY computes, for n tokens t (rows of layout Y in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb Q5_0 blocks, ldw
// bytes apart, with DotQ5_0Q8_0's bits: each weight block unpacked once
// for up to 8 tokens.
func (k Kernels) legacyGemmY(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	tilesY(&q5TilesY, 22, w, ldw, a, lda, nb, n, dst, ldd, rows, acc)
}

// The Q8_1 activation quantizer (q8quanty_amd64.s).

//go:noescape
func quantQ8_1Y(dst *byte, src *float32, nb int)

// quantizeQ8_1 quantizes x (a multiple of 32 values) into Q8_1 blocks in
// dst, as quant.QuantizeActivationQ8_1.
func (k Kernels) quantizeQ8_1(dst []byte, x []float32) {
	nb := len(x) / 32
	if k.level < AVX2 || nb == 0 {
		quant.QuantizeActivationQ8_1(dst, x)
		return
	}
	_ = dst[nb*36-1]
	quantQ8_1Y(&dst[0], &x[0], nb)
}

// Q4_1 and Q5_1 prefill at AVX-512 VNNI: tiles of one or two rows times
// up to lyTileTokens tokens (legacyy_amd64.s) on activations in layout T:
// per group of lyTileTokens tokens and per block, the tokens' Q8_1 scales
// d and s as float32s (lyTileTokens each), then their 32 quants each
// (lyTRecord bytes a token). Each output is DotQ4_1Q8_1's or
// DotQ5_1Q8_1's, bit for bit: ggml sums these types token by token, in
// its dot product's order, for any number of tokens.

//go:noescape
func tileQ4_1r1t1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r1t2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r1t3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r1t4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r1t5(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r1t6(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r1t7(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r1t8(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r2t1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r2t2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r2t3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r2t4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r2t5(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r2t6(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r2t7(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ4_1r2t8(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r1t1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r1t2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r1t3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r1t4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r1t5(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r1t6(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r1t7(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r1t8(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r2t1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r2t2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r2t3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r2t4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r2t5(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r2t6(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r2t7(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

//go:noescape
func tileQ5_1r2t8(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

// lyTileTokens is the tokens of a group of layout T, lyTRecord the bytes
// of one token's block.
const (
	lyTileTokens = 8
	lyTRecord    = 40
)

// lyTMinTokens is the fewest tokens for which Q4_1 and Q5_1 matmuls take
// layout T and the tiles (legacyTilesT). One thread, 2048×2048, CPU µs per
// matmul, decode kernels against tiles: 2 tokens 138/131 (Q4_1) and
// 165/149 (Q5_1), 8 tokens 521/282 and 575/301.
var lyTMinTokens = 2

// lyTile is the signature of the tiles.
type lyTile func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, ldy uintptr, nrows int, acc int)

// lyTiles are the tiles of wkQ4_1 and wkQ5_1 by rows less one and tokens.
var lyTiles = [2][2][lyTileTokens + 1]lyTile{
	{{nil, tileQ4_1r1t1, tileQ4_1r1t2, tileQ4_1r1t3, tileQ4_1r1t4, tileQ4_1r1t5, tileQ4_1r1t6, tileQ4_1r1t7, tileQ4_1r1t8}, {nil, tileQ4_1r2t1, tileQ4_1r2t2, tileQ4_1r2t3, tileQ4_1r2t4, tileQ4_1r2t5, tileQ4_1r2t6, tileQ4_1r2t7, tileQ4_1r2t8}},
	{{nil, tileQ5_1r1t1, tileQ5_1r1t2, tileQ5_1r1t3, tileQ5_1r1t4, tileQ5_1r1t5, tileQ5_1r1t6, tileQ5_1r1t7, tileQ5_1r1t8}, {nil, tileQ5_1r2t1, tileQ5_1r2t2, tileQ5_1r2t3, tileQ5_1r2t4, tileQ5_1r2t5, tileQ5_1r2t6, tileQ5_1r2t7, tileQ5_1r2t8}},
}

// legacyTilesT reports whether a Q5_0, Q4_1 or Q5_1 matmul of n tokens
// runs on layout T and the tiles (legacyGemmT): Q4_1 and Q5_1 on AVX-512
// VNNI, from lyTMinTokens tokens.
func (k Kernels) legacyTilesT(kind wkind, n int) bool {
	return (kind == wkQ4_1 || kind == wkQ5_1) && n >= lyTMinTokens && k.level >= AVX512VNNI
}

// lyTRowBytes is a token's share of layout T for cols values.
func lyTRowBytes(cols int) int { return cols / 32 * lyTRecord }

// packQ8T quantizes x (a multiple of 32 values) as quantizeQ8_1 does into
// token pos of the layout T group at dst.
func (k Kernels) packQ8T(dst []byte, x []float32, pos int) {
	nb := len(x) / 32
	const chunk = 8
	var q [chunk * 36]byte
	blk := lyTileTokens * lyTRecord
	_ = dst[(nb-1)*blk+blk-1]
	for b := 0; b < nb; b += chunk {
		c := min(chunk, nb-b)
		k.quantizeQ8_1(q[:c*36], x[b*32:(b+c)*32])
		for i := range c {
			src := q[i*36 : i*36+36]
			rec := dst[(b+i)*blk : (b+i+1)*blk]
			binary.LittleEndian.PutUint32(rec[4*pos:], math.Float32bits(f16(binary.LittleEndian.Uint16(src))))
			binary.LittleEndian.PutUint32(rec[4*lyTileTokens+4*pos:], math.Float32bits(f16(binary.LittleEndian.Uint16(src[2:]))))
			copy(rec[8*lyTileTokens+32*pos:8*lyTileTokens+32*pos+32], src[4:])
		}
	}
}

// legacyGemmT computes, for n tokens t (in layout T groups at a, lda bytes
// a token), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb Q4_1 or Q5_1
// blocks (kind), ldw bytes apart: each weight block unpacked once for up
// to lyTileTokens tokens.
func (k Kernels) legacyGemmT(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	if rows == 0 || n == 0 {
		return
	}
	if nb == 0 {
		if !acc {
			for t := range n {
				clear(dst[t*ldd : t*ldd+rows])
			}
		}
		return
	}
	_ = w[(rows-1)*ldw+nb*legacyBlockBytes(kind)-1]
	_ = a[(n-1)/lyTileTokens*lyTileTokens*lda+nb*lyTileTokens*lyTRecord-1]
	_ = dst[(n-1)*ldd+rows-1]
	ac := 0
	if acc {
		ac = 1
	}
	ts := &lyTiles[kind-wkQ4_1]
	for t := 0; t < n; t += lyTileTokens {
		nt := min(lyTileTokens, n-t)
		x := unsafe.Pointer(&a[t*lda])
		r := rows &^ 1
		if r > 0 {
			ts[1][nt](unsafe.Pointer(&w[0]), uintptr(ldw), x, nb, &dst[t*ldd], uintptr(4*ldd), r, ac)
		}
		if r < rows {
			ts[0][nt](unsafe.Pointer(&w[r*ldw]), uintptr(ldw), x, nb, &dst[t*ldd+r], uintptr(4*ldd), 1, ac)
		}
	}
}
