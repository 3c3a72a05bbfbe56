//go:build !amd64 || noasm

package cpu

func (k Kernels) hasPanelGEMM() bool { return false }

const tileBufLen = 12 * 32

func (k Kernels) panelTile(w []float32, ldw int, xp []float32, n int, buf []float32, add bool, pf *prefetcher) {
	panic("cpu: no panel GEMM in this build")
}

func (k Kernels) unpanel(dst []float32, ldd int, src []float32, rows, ntok int, acc bool) {
	panic("cpu: no panel GEMM in this build")
}

func (k Kernels) packPanel(dst, x []float32, cols, ntok int) {
	panic("cpu: no panel GEMM in this build")
}
