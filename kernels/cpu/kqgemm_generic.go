//go:build !amd64 || noasm

package cpu

// hasKQGemm reports a multi-token kernel for K-quant weights of kind:
// only amd64 has them.
func (k Kernels) hasKQGemm(kind wkind) bool { return false }

// kqGemm computes, for n tokens t (rows of Q8_K blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t token by token through kGemv (the
// multi-token kernels are amd64's).
func (k Kernels) kqGemm(kind wkind, w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, buf *[]byte) {
	for t := range n {
		k.kGemv(kind, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc, buf)
	}
}
