//go:build !amd64 || noasm

package cpu

const (
	yMaxTokens  = 6
	yStripBlock = 288
)

func (k Kernels) hasQ8Y() bool { return false }

func (k Kernels) q8YUnpack(kind wkind, dst, w []byte, ldw, nr, nb int) {
	panic("cpu: no AVX2 Q8 prefill in this build")
}

func (k Kernels) q8YTile(kind wkind, ws, a []byte, lda, nb int, dst []float32, ldd, nr, nt int, acc bool) {
	panic("cpu: no AVX2 Q8 prefill in this build")
}

func (k Kernels) iq4nlGemmY(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	panic("cpu: no AVX2 IQ4_NL prefill in this build")
}

func (k Kernels) hasKGemmY(kind wkind) bool { return false }

func (k Kernels) kGemmY(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	panic("cpu: no AVX2 K-quant prefill in this build")
}
