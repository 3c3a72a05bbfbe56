//go:build !(amd64 || arm64) || noasm

package cpu

func (k Kernels) dotRowsF16(out, q []float32, kr []uint16, stride int, batched bool) {
	dotRowsF16Go(out, q, kr, stride, batched)
}

func (k Kernels) axpyRowsF16(o, p []float32, v []uint16, stride int) {
	axpyRowsF16Go(o, p, v, stride)
}

func (k Kernels) roundF16(dst, src []float32)           { roundF16Go(dst, src) }
func (k Kernels) toF16Bits(dst []uint16, src []float32) { toF16BitsGo(dst, src) }

func (k Kernels) hasAxpyRot(hd int) bool { return false }

func (k Kernels) axpyRot(acc []float32, mask, j0 int, p []float32, v []uint16, stride, hd int) {
	panic("cpu: no SIMD attention kernels in this build")
}

func (k Kernels) axpyRowsD(o []float64, p []float32, v []uint16, stride int) {
	panic("cpu: no SIMD attention kernels in this build")
}
