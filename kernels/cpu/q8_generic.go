//go:build !(amd64 || arm64) || noasm

package cpu

func (k Kernels) hasQ8() bool { return false }

func (k Kernels) q8Gemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool) {
	panic("cpu: no SIMD Q8 kernels in this build")
}

func (k Kernels) packQ8A(dst []byte, x []float32) { packQ8AGo(dst, x) }

func (k Kernels) packQ8B(dst []byte, x []float32) { packQ8BGo(dst, x) }

func (k Kernels) packQ8P(dst []byte, x []float32) { packQ8PGo(dst, x) }

func (k Kernels) quantizeQ8_0(dst []byte, x []float32) { quantizeQ8_0Go(dst, x) }

func (k Kernels) hasQ8Unpacked() bool { return false }

func (k Kernels) packQ8C(dst []byte, x []float32) { panic("cpu: no SIMD Q8 kernels in this build") }

func (k Kernels) q8UnpackStrip(kind wkind, dst []byte, w []byte, ldw, nrows, nb int) {
	panic("cpu: no SIMD Q8 kernels in this build")
}

func (k Kernels) q8Tile(kind wkind, wu, a []byte, nb int, dst []float32, ldd, nr, nt int, acc bool) {
	panic("cpu: no SIMD Q8 kernels in this build")
}

const q8FusedMaxTokens = 8

func (k Kernels) q8Fused(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, ldd, nt int, acc bool) {
	panic("cpu: no SIMD Q8 kernels in this build")
}
