//go:build !arm64 || noasm

package cpu

// q8GemvN computes dst[t·ldd+r] (+)= w_r·a_t for rows rows and nt tokens,
// their activations lda bytes apart: q8Gemv token by token.
func (k Kernels) q8GemvN(kind wkind, w []byte, ldw int, a []byte, lda, nb int, dst []float32, ldd, rows, nt int, acc bool) {
	for t := range nt {
		k.q8Gemv(kind, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc)
	}
}
