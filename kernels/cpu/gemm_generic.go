//go:build !amd64 || noasm

package cpu

func (k Kernels) hasPanelGEMM() bool { return false }

func (k Kernels) panelTile(w []float32, ldw int, xp []float32, n int, dst []float32, ldd, ntok int, acc bool) {
	panic("cpu: no panel GEMM in this build")
}

func (k Kernels) packPanel(dst, x []float32, cols, ntok int) {
	panic("cpu: no panel GEMM in this build")
}
