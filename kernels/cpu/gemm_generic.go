//go:build !amd64 || noasm

package cpu

func (k Kernels) hasPanelGEMM() bool { return false }

const tileBufLen = 12 * 32

func tileLen(n int) int { return (n + 15) / 16 * 192 }

func (k Kernels) widenTile(ft floatType, dst []float32, src []byte, rb, nrow, n int) {
	panic("cpu: no panel GEMM in this build")
}

func (k Kernels) panelTile(w []float32, xp []float32, n int, buf []float32, add bool, pf *prefetcher) {
	panic("cpu: no panel GEMM in this build")
}

func (k Kernels) unpanel(dst []float32, ldd int, src []float32, rows, ntok int, acc bool) {
	panic("cpu: no panel GEMM in this build")
}

func (k Kernels) packPanel(dst, x []float32, cols, ntok int) {
	panic("cpu: no panel GEMM in this build")
}

func (k Kernels) widenPanelTile(ft floatType, w []float32, src []byte, rb int, xp []float32, n int, buf []float32, add bool, pf *prefetcher) {
	panic("cpu: no panel GEMM in this build")
}
