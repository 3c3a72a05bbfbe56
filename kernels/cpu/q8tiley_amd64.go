//go:build amd64 && !noasm

package cpu

import "unsafe"

// AVX2 prefill of Q4_0 and Q8_0 weights (q8tiley_amd64.s): strips of 8
// rows unpacked side by side, tiles of 8 rows by up to 6 tokens whose
// lanes run the chains of gemvQ4_0AVX2 and gemvQ8_0AVX2.

//go:noescape
func unpackY8Q4_0(dst *byte, rows *[8]unsafe.Pointer, nb int)

//go:noescape
func unpackY8Q8_0(dst *byte, rows *[8]unsafe.Pointer, nb int)

//go:noescape
func tileY1Q4(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY2Q4(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY3Q4(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY4Q4(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY5Q4(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY6Q4(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY1Q8(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY2Q8(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY3Q8(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY4Q8(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY5Q8(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

//go:noescape
func tileY6Q8(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

type tileYFunc func(ws *byte, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nr int, acc int)

var (
	tilesYQ4 = [yMaxTokens + 1]tileYFunc{nil, tileY1Q4, tileY2Q4, tileY3Q4, tileY4Q4, tileY5Q4, tileY6Q4}
	tilesYQ8 = [yMaxTokens + 1]tileYFunc{nil, tileY1Q8, tileY2Q8, tileY3Q8, tileY4Q8, tileY5Q8, tileY6Q8}
)

const (
	yMaxTokens  = 6   // tokens a tile takes at most
	yStripBlock = 288 // bytes per unpacked block of a strip of 8 rows
)

// hasQ8Y reports the AVX2 prefill of Q4_0 and Q8_0 weights: the levels
// that multiply them with the AVX2 matrix-vector kernels.
func (k Kernels) hasQ8Y() bool { return k.hasQ8() && !k.hasQ8Unpacked() }

// q8YUnpack unpacks nr ≤ 8 rows of nb blocks at w (ldw bytes apart) into a
// strip of nb·yStripBlock bytes in dst; the lanes of missing rows repeat
// the last row.
func (k Kernels) q8YUnpack(kind wkind, dst, w []byte, ldw, nr, nb int) {
	if nr <= 0 || nb == 0 {
		return
	}
	bb := 18
	if kind == wkQ8_0 {
		bb = 34
	}
	_ = w[(nr-1)*ldw+nb*bb-1]
	_ = dst[nb*yStripBlock-1]
	var rows [yStrip]unsafe.Pointer
	for r := range rows {
		rows[r] = unsafe.Pointer(&w[min(r, nr-1)*ldw])
	}
	if kind == wkQ8_0 {
		unpackY8Q8_0(&dst[0], &rows, nb)
	} else {
		unpackY8Q4_0(&dst[0], &rows, nb)
	}
}

// q8YTile computes dst[t*ldd+r] (+)= w_r·a_t for the first nr ≤ 8 rows of
// a strip of nb unpacked blocks and 1 ≤ nt ≤ yMaxTokens tokens in layout
// Y, lda bytes apart.
func (k Kernels) q8YTile(kind wkind, ws, a []byte, lda, nb int, dst []float32, ldd, nr, nt int, acc bool) {
	if nr <= 0 || nt <= 0 {
		return
	}
	if nb == 0 {
		if !acc {
			for t := range nt {
				clear(dst[t*ldd : t*ldd+nr])
			}
		}
		return
	}
	_ = dst[(nt-1)*ldd+nr-1]
	_ = ws[nb*yStripBlock-1]
	_ = a[(nt-1)*lda+nb*yTokBlock-1]
	ac := 0
	if acc {
		ac = 1
	}
	tile := tilesYQ4[nt]
	if kind == wkQ8_0 {
		tile = tilesYQ8[nt]
	}
	tile(&ws[0], &a[0], uintptr(lda), nb, &dst[0], uintptr(4*ldd), nr, ac)
}

// IQ4_NL prefill at the AVX2 level (q8tiley_amd64.s): each weight block is
// unpacked once for up to iq4YMaxTokens tokens in layout Y, summed in
// gemvIQ4_NLBAVX2's order.

//go:noescape
func iq4TileY1(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func iq4TileY2(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func iq4TileY3(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func iq4TileY4(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func iq4TileY5(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func iq4TileY6(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func iq4TileY7(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func iq4TileY8(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

type iq4TileYFunc func(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

var iq4TilesY = [iq4YMaxTokens + 1]iq4TileYFunc{nil, iq4TileY1, iq4TileY2, iq4TileY3, iq4TileY4, iq4TileY5, iq4TileY6, iq4TileY7, iq4TileY8}

// iq4YMaxTokens is the most tokens an IQ4_NL tile takes.
const iq4YMaxTokens = 8

// iq4nlGemmY computes, for n tokens t (rows of layout Y in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb IQ4_NL blocks,
// ldw bytes apart, with DotIQ4_NLQ8_0Batch's bits.
func (k Kernels) iq4nlGemmY(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	tilesY(&iq4TilesY, 18, w, ldw, a, lda, nb, n, dst, ldd, rows, acc)
}

// tilesY runs the tiles of a 32-value block type of bb bytes a block
// (IQ4_NL's, or Q5_0's on IQ4_NL's arithmetic) over n tokens, up to
// iq4YMaxTokens at a time: dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb
// blocks, ldw bytes apart, and tokens of layout Y in a, lda bytes apart.
func tilesY(tiles *[iq4YMaxTokens + 1]iq4TileYFunc, bb int, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
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
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[(n-1)*lda+nb*yTokBlock-1]
	_ = dst[(n-1)*ldd+rows-1]
	ac := 0
	if acc {
		ac = 1
	}
	for t := 0; t < n; t += iq4YMaxTokens {
		nt := min(iq4YMaxTokens, n-t)
		tiles[nt](unsafe.Pointer(&w[0]), uintptr(ldw), &a[t*lda], uintptr(lda), nb, &dst[t*ldd], uintptr(4*ldd), rows, ac)
	}
}

// Q4_K prefill at the AVX2 level (q8tiley_amd64.s): each super-block of a
// row is unpacked once for up to q4kYMaxTokens tokens of Q8_K blocks,
// summed in gemvQ4_KAVX2's order.

//go:noescape
func q4kTileY1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q4kTileY2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q4kTileY3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q4kTileY4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

var q4kTilesY = [q4kYMaxTokens + 1]func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int){
	nil, q4kTileY1, q4kTileY2, q4kTileY3, q4kTileY4,
}

// q4kYMaxTokens is the most tokens a Q4_K tile takes.
const q4kYMaxTokens = 4

// Q5_K prefill at the AVX2 level, in gemvQ5_KAVX2's order (as many tokens
// as Q4_K's).

//go:noescape
func q5kTileY1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5kTileY2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5kTileY3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q5kTileY4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

var q5kTilesY = [q4kYMaxTokens + 1]func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int){
	nil, q5kTileY1, q5kTileY2, q5kTileY3, q5kTileY4,
}

// Q2_K and Q3_K prefill at the AVX2 level, in gemvQ2_KAVX2's and
// gemvQ3_KAVX2's orders (as many tokens as Q4_K's).

//go:noescape
func q2kTileY1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q2kTileY2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q2kTileY3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q2kTileY4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q3kTileY1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q3kTileY2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q3kTileY3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q3kTileY4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

var (
	q2kTilesY = [q4kYMaxTokens + 1]func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int){
		nil, q2kTileY1, q2kTileY2, q2kTileY3, q2kTileY4,
	}
	q3kTilesY = [q4kYMaxTokens + 1]func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int){
		nil, q3kTileY1, q3kTileY2, q3kTileY3, q3kTileY4,
	}
)

// Q6_K prefill at the AVX2 level, in gemvQ6_KAVX2's order.

//go:noescape
func q6kTileY1(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q6kTileY2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q6kTileY3(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

//go:noescape
func q6kTileY4(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)

var q6kTilesY = [q6kYMaxTokens + 1]func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int){
	nil, q6kTileY1, q6kTileY2, q6kTileY3, q6kTileY4,
}

// q6kYMaxTokens is the most tokens a Q6_K tile takes.
const q6kYMaxTokens = 4

// hasKGemmY reports AVX2 tiles for several tokens of K-quant weights of
// kind.
func (k Kernels) hasKGemmY(kind wkind) bool {
	switch kind {
	case wkQ2_K, wkQ3_K, wkQ4_K, wkQ5_K, wkQ6_K:
		return k.hasQ8Y()
	}
	return false
}

// kGemmY computes, for n tokens t (rows of Q8_K blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb blocks of kind
// (one hasKGemmY reports), ldw bytes apart, with kGemvAVX2's bits.
func (k Kernels) kGemmY(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
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
	bb, g, tiles := 144, q4kYMaxTokens, q4kTilesY[:]
	switch kind {
	case wkQ2_K:
		bb, tiles = 84, q2kTilesY[:]
	case wkQ3_K:
		bb, tiles = 110, q3kTilesY[:]
	case wkQ5_K:
		bb, tiles = 176, q5kTilesY[:]
	case wkQ6_K:
		bb, g, tiles = 210, q6kYMaxTokens, q6kTilesY[:]
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[(n-1)*lda+nb*292-1]
	_ = dst[(n-1)*ldd+rows-1]
	ac := 0
	if acc {
		ac = 1
	}
	for t := 0; t < n; t += g {
		nt := min(g, n-t)
		tiles[nt](unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[t*lda]), uintptr(lda), nb, &dst[t*ldd], uintptr(4*ldd), rows, ac)
	}
}
