//go:build !amd64 || noasm

package cpu

// hasBF16DP reports the VDPBF16PS kernels for BF16 weights (amd64's).
func (k Kernels) hasBF16DP() bool { return false }

func (k Kernels) toBF16Row(dst []uint16, src []float32) { toBF16RowGo(dst, src) }

func (k Kernels) bf16dpGemv4(w []byte, ldw int, x []uint16, nb int, y *[8]float32) {
	bf16dpGemv4Go(w, ldw, x, nb, y)
}

func (k Kernels) bf16dpTile(nt int, w []byte, ldw int, x []uint16, ldx, nb int, dst []float32, ldd int, acc bool, buf []float32, mode int) {
	bf16dpTileGo(nt, w, ldw, x, ldx, nb, dst, ldd, acc, buf, mode)
}
