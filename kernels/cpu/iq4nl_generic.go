//go:build !amd64 || noasm

package cpu

// iq4nlGemm computes, for n tokens t (rows of Q8_0 blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb IQ4_NL blocks,
// token by token through kGemv (the multi-token kernel is amd64's).
func (k Kernels) iq4nlGemm(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, scratch []byte) {
	for t := range n {
		k.kGemv(wkIQ4NB, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc, nil)
	}
}

// iq4nlScratch is the scratch iq4nlGemm needs: none on this build.
func iq4nlScratch(rows, nb int) int { return 0 }
