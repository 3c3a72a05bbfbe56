//go:build amd64 && !noasm

package cpu

// gemm12x32Z computes a 12-row × 32-token tile of float32 weights in tile
// layout times a transposed activation panel over one reduction chunk
// into buf, prefetching lines of a strided region (gemmz_amd64.s).
//
//go:noescape
func gemm12x32Z(w, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)

// widenTile*Z write up to 12 rows of weights as float32 in tile layout
// (widenz_amd64.s).
//
//go:noescape
func widenTileF32Z(dst *float32, src *byte, rb uintptr, nrow, n int)

//go:noescape
func widenTileF16Z(dst *float32, src *byte, rb uintptr, nrow, n int)

//go:noescape
func widenTileBF16Z(dst *float32, src *byte, rb uintptr, nrow, n int)

// unpanelZ writes tile sums (rows of 32 tokens) to token-major dst
// (gemmz_amd64.s).
//
//go:noescape
func unpanelZ(dst *float32, ldd uintptr, src *float32, rows, ntok, acc int)

// packPanelZ transposes up to 32 tokens of x, ld elements apart, into a
// panel (gemmz_amd64.s).
//
//go:noescape
func packPanelZ(dst, x *float32, ld, cols, ntok int)

// packPanel16Z is packPanelZ for 32 tokens and 16·groups elements, by
// 16×16 transposes (gemmz_amd64.s).
//
//go:noescape
func packPanel16Z(dst, x *float32, ld uintptr, groups int)

// unpanel16Z is unpanelZ for 32 tokens and 16·groups rows, by 16×16
// transposes (gemmz_amd64.s).
//
//go:noescape
func unpanel16Z(dst *float32, ldd uintptr, src *float32, groups, acc int)

// packPanel writes panel dst (32·cols floats) from ntok tokens of x.
func (k Kernels) packPanel(dst, x []float32, cols, ntok int) {
	if cols == 0 {
		return
	}
	_ = dst[32*cols-1]
	_ = x[(ntok-1)*cols+cols-1]
	c := 0
	if ntok == 32 && cols >= 16 {
		packPanel16Z(&dst[0], &x[0], uintptr(4*cols), cols/16)
		c = cols &^ 15
	}
	if c < cols {
		packPanelZ(&dst[32*c], &x[c], cols, cols-c, ntok)
	}
}

// hasPanelGEMM reports the 12×32 float GEMM tile.
func (k Kernels) hasPanelGEMM() bool { return k.level >= AVX512 }

// tileBufLen is the size in floats of one tile's sums.
const tileBufLen = 12 * 32

// tileLen returns the size in floats of 12 rows of n weights in tile
// layout: blocks of 8 elements, each holding the 12 rows' 8 values in
// turn, written 16 elements at a time.
func tileLen(n int) int { return (n + 15) / 16 * 192 }

// widenTile writes rows r < nrow (≤ 12) of n weights of type ft, rows rb
// bytes apart in src, to dst in tile layout: element (r, i) at
// dst[96*(i/8)+8*r+i%8], zero past row nrow and element n (to a multiple
// of 16).
func (k Kernels) widenTile(ft floatType, dst []float32, src []byte, rb, nrow, n int) {
	if n == 0 {
		return
	}
	_ = dst[tileLen(n)-1]
	if nrow > 0 {
		_ = src[(nrow-1)*rb+n*ft.size()-1]
	}
	nrow = min(nrow, 12)
	switch ft {
	case ftF16:
		widenTileF16Z(&dst[0], &src[0], uintptr(rb), nrow, n)
	case ftBF16:
		widenTileBF16Z(&dst[0], &src[0], uintptr(rb), nrow, n)
	default:
		widenTileF32Z(&dst[0], &src[0], uintptr(rb), nrow, n)
	}
}

// panelTile computes, for r < 12 rows of w (n elements in tile layout)
// and t < 32 tokens of the panel xp (32 floats per element), the sums
// s[r][t] = w_r·xp_t over one reduction chunk into buf[32r+t] (added to
// what buf holds if add). Meanwhile it prefetches the next lines of pf
// into L2.
func (k Kernels) panelTile(w []float32, xp []float32, n int, buf []float32, add bool, pf *prefetcher) {
	_ = w[tileLen(n)-1]
	_ = xp[32*n-1]
	_ = buf[tileBufLen-1]
	a := 0
	if add {
		a = 1
	}
	p, off, stride, seg, lines := pf.kernelArgs()
	gemm12x32Z(&w[0], &xp[0], n, &buf[0], a, p, off, stride, seg, lines)
}

// unpanel writes dst[t*ldd+r] = src[32r+t] (added to dst if acc) for r <
// rows and t < ntok.
func (k Kernels) unpanel(dst []float32, ldd int, src []float32, rows, ntok int, acc bool) {
	if rows <= 0 || ntok <= 0 {
		return
	}
	_ = src[32*(rows-1)+ntok-1]
	_ = dst[(ntok-1)*ldd+rows-1]
	a := 0
	if acc {
		a = 1
	}
	if ntok == 32 && rows >= 16 {
		unpanel16Z(&dst[0], uintptr(4*ldd), &src[0], rows/16, a)
		r := rows &^ 15
		if r == rows {
			return
		}
		dst, src, rows = dst[r:], src[32*r:], rows-r
	}
	unpanelZ(&dst[0], uintptr(4*ldd), &src[0], rows, ntok, a)
}

// gemm12x32ZW* are gemm12x32Z for k a positive multiple of 8 that first
// write the tile at w from 12 rows of weights rb bytes apart at src, as
// widenTile*Z does, a block ahead of the multiply-adds (gemmz_amd64.s).
//
//go:noescape
func gemm12x32ZWF16(w *float32, src *byte, rb uintptr, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)

//go:noescape
func gemm12x32ZWBF16(w *float32, src *byte, rb uintptr, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)

//go:noescape
func gemm12x32ZWF32(w *float32, src *byte, rb uintptr, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)

// widenPanelTile is widenTile of 12 whole rows followed by panelTile, in
// one pass: it needs n, the elements per row, to be a positive multiple
// of 8. Its results, the tile in w included, are those of the two calls.
// widenPanelTile is panelTile for a tile not yet widened: it widens the
// 12 rows of n elements of ft at src (rb bytes apart) into w while it
// multiplies them.
func (k Kernels) widenPanelTile(ft floatType, w []float32, src []byte, rb int, xp []float32, n int, buf []float32, add bool, pf *prefetcher) {
	if n <= 0 || n%8 != 0 {
		panic("cpu: widenPanelTile needs a positive multiple of 8 elements")
	}
	_ = w[tileLen(n)-1]
	_ = src[11*rb+n*ft.size()-1]
	_ = xp[32*n-1]
	_ = buf[tileBufLen-1]
	a := 0
	if add {
		a = 1
	}
	p, off, stride, seg, lines := pf.kernelArgs()
	switch ft {
	case ftF16:
		gemm12x32ZWF16(&w[0], &src[0], uintptr(rb), &xp[0], n, &buf[0], a, p, off, stride, seg, lines)
	case ftBF16:
		gemm12x32ZWBF16(&w[0], &src[0], uintptr(rb), &xp[0], n, &buf[0], a, p, off, stride, seg, lines)
	default:
		gemm12x32ZWF32(&w[0], &src[0], uintptr(rb), &xp[0], n, &buf[0], a, p, off, stride, seg, lines)
	}
}
