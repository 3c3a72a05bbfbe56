//go:build !amd64 || noasm

package cpu

func (k Kernels) hasAMX() bool { return false }

func (k Kernels) amxPackW(ft floatType, dst []uint16, src []byte, rb, nrow, n int) {
	panic("cpu: no AMX in this build")
}

func (k Kernels) amxPackX(dst []uint16, x []float32, ldx, ntok, n int) {
	panic("cpu: no AMX in this build")
}

func (k Kernels) amxTile(ft floatType, w []uint16, ws int, x []uint16, xs, nkb int, buf []float32, load bool, pf *prefetcher) {
	panic("cpu: no AMX in this build")
}
