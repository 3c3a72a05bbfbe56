//go:build amd64 && !noasm

package cpu

// gemm12x32Z computes a 12-row × 32-token tile of float32 weights (rows ldw
// bytes apart) times a transposed activation panel over one reduction
// chunk into buf, prefetching lines of a strided region (gemmz_amd64.s).
//
//go:noescape
func gemm12x32Z(w *float32, ldw uintptr, xp *float32, k int, buf *float32, add int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)

// unpanelZ writes tile sums (rows of 32 tokens) to token-major dst
// (gemmz_amd64.s).
//
//go:noescape
func unpanelZ(dst *float32, ldd uintptr, src *float32, rows, ntok, acc int)

// packPanelZ transposes up to 32 tokens of x into a panel (gemmz_amd64.s).
//
//go:noescape
func packPanelZ(dst, x *float32, cols, ntok int)

// packPanel writes panel dst (32·cols floats) from ntok tokens of x.
func (k Kernels) packPanel(dst, x []float32, cols, ntok int) {
	if cols == 0 {
		return
	}
	_ = dst[32*cols-1]
	_ = x[(ntok-1)*cols+cols-1]
	packPanelZ(&dst[0], &x[0], cols, ntok)
}

// hasPanelGEMM reports the 12×32 float GEMM tile.
func (k Kernels) hasPanelGEMM() bool { return k.level >= AVX512 }

// tileBufLen is the size in floats of one tile's sums.
const tileBufLen = 12 * 32

// panelTile computes, for r < 12 rows of w (ldw floats apart, n elements
// each) and t < 32 tokens of the panel xp (32 floats per element), the
// sums s[r][t] = w_r·xp_t over one reduction chunk into buf[32r+t] (added
// to what buf holds if add). Meanwhile it prefetches the next lines of pf
// into L2.
func (k Kernels) panelTile(w []float32, ldw int, xp []float32, n int, buf []float32, add bool, pf *prefetcher) {
	_ = w[11*ldw+n-1]
	_ = xp[32*n-1]
	_ = buf[tileBufLen-1]
	a := 0
	if add {
		a = 1
	}
	var p *byte
	var off, lines, stride, seg int
	if pf != nil {
		p, off, lines = pf.take()
		stride, seg = pf.rb, pf.seg
	}
	gemm12x32Z(&w[0], uintptr(4*ldw), &xp[0], n, &buf[0], a, p, uintptr(off), uintptr(stride), uintptr(seg), lines)
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
	unpanelZ(&dst[0], uintptr(4*ldd), &src[0], rows, ntok, a)
}
