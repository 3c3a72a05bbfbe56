//go:build !amd64 || noasm

package cpu

import "github.com/weftrun/weft/kernels/quant"

func (k Kernels) hasLegacyQ() bool { return false }

func (k Kernels) legacyGemm(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	panic("cpu: no SIMD Q5_0, Q4_1 or Q5_1 kernels in this build")
}

func (k Kernels) quantizeQ8_1(dst []byte, x []float32) { quant.QuantizeActivationQ8_1(dst, x) }

func (k Kernels) legacyTiles(kind wkind, n int) bool { return false }

func (k Kernels) legacyGemmTiles(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, scratch []byte) {
	panic("cpu: no SIMD Q5_0 tiles in this build")
}

func (k Kernels) legacyTilesY(kind wkind, n int) bool { return false }

func (k Kernels) legacyGemmY(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	panic("cpu: no SIMD Q5_0 tiles in this build")
}

func (k Kernels) legacyTilesT(kind wkind, n int) bool { return false }

func lyTRowBytes(cols int) int { return cols / 32 * 40 }

func (k Kernels) packQ8T(dst []byte, x []float32, pos int) {
	panic("cpu: no SIMD Q4_1 or Q5_1 tiles in this build")
}

func (k Kernels) legacyGemmT(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	panic("cpu: no SIMD Q4_1 or Q5_1 tiles in this build")
}
