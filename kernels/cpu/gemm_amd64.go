//go:build amd64 && !noasm

package cpu

// gemm12x32Z computes a 12-row × 32-token tile of float32 weights (rows ldw
// bytes apart) times a transposed activation panel (gemmz_amd64.s).
//
//go:noescape
func gemm12x32Z(w *float32, ldw uintptr, xp *float32, k int, dst *float32, ldd uintptr, acc, ntok int)

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

// panelTile computes dst[t*ldd+r] (+)= w_r·xp_t for r < 12 rows of w (ldw
// floats apart, n elements each) and t < ntok tokens of the panel xp (32
// floats per element).
func (k Kernels) panelTile(w []float32, ldw int, xp []float32, n int, dst []float32, ldd, ntok int, acc bool) {
	if n == 0 || ntok == 0 {
		if !acc {
			for t := range ntok {
				clear(dst[t*ldd : t*ldd+12])
			}
		}
		return
	}
	_ = w[11*ldw+n-1]
	_ = xp[32*n-1]
	_ = dst[(ntok-1)*ldd+11]
	ac := 0
	if acc {
		ac = 1
	}
	gemm12x32Z(&w[0], uintptr(4*ldw), &xp[0], n, &dst[0], uintptr(4*ldd), ac, ntok)
}
