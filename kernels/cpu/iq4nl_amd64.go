//go:build amd64 && !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// IQ4_NL kernel (iq4nl_amd64.s).

//go:noescape
func gemv4IQ4_NLVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4IQ4_NLBVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

// iq4nlGemv computes dst[r] (+)= w_r·a for len(dst) rows of nb IQ4_NL
// blocks, ldw bytes apart; a is a row of Q8_0 blocks. The results are
// kernels/quant's to the last bit: DotIQ4_NLQ8_0's, or with batch (a
// matmul of two or more tokens) DotIQ4_NLQ8_0Batch's. The kernels take
// blocks in pairs: a row of an odd number of blocks (no model shape seen
// so far) runs on the Go reference.
func (k Kernels) iq4nlGemv(w []byte, ldw int, a []byte, nb int, dst []float32, acc, batch bool) {
	rows := len(dst)
	if rows == 0 {
		return
	}
	_ = w[(rows-1)*ldw+nb*18-1]
	_ = a[nb*34-1]
	q := rows / 4
	if nb%2 != 0 {
		q = 0
	}
	if q > 0 && nb > 0 {
		ac := 0
		if acc {
			ac = 1
		}
		if batch {
			gemv4IQ4_NLBVNNI(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[0]), nb, &dst[0], q, ac)
		} else {
			gemv4IQ4_NLVNNI(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[0]), nb, &dst[0], q, ac)
		}
	}
	dot := quant.DotIQ4_NLQ8_0
	if batch {
		dot = quant.DotIQ4_NLQ8_0Batch
	}
	for r := 4 * q; r < rows; r++ {
		put(dst, r, dot(w[r*ldw:], a, nb*32), acc)
	}
}

//go:noescape
func gemm4x4IQ4_NLBVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

//go:noescape
func gemm4x6IQ4_NLBVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)

// iq4nlGemm computes, for n tokens t (rows of Q8_0 blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb IQ4_NL blocks,
// ldw bytes apart, as iq4nlGemv with batch does token by token, to the
// last bit: 6 tokens at a time (4 for the last 4 or 5) share each
// unpacked weight block, the tokens left over go through iq4nlGemv.
func (k Kernels) iq4nlGemm(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool) {
	if k.level < AVX512VNNI {
		for t := range n { // the AVX2 kernel, token by token
			k.kGemvAVX2(wkIQ4NB, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc)
		}
		return
	}
	if rows == 0 || n == 0 {
		return
	}
	t := 0
	if q := rows / 4; q > 0 && nb > 0 && n >= 4 {
		_ = w[(rows-1)*ldw+nb*18-1]
		ac := 0
		if acc {
			ac = 1
		}
		for t+4 <= n {
			g, gemm := 6, gemm4x6IQ4_NLBVNNI
			if t+6 > n {
				g, gemm = 4, gemm4x4IQ4_NLBVNNI
			}
			_ = a[(t+g-1)*lda+nb*34-1]
			_ = dst[(t+g-1)*ldd+rows-1]
			gemm(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[t*lda]), uintptr(lda), nb,
				&dst[t*ldd], uintptr(ldd*4), q, ac)
			for r := 4 * q; r < rows; r++ {
				for u := t; u < t+g; u++ {
					put(dst, u*ldd+r, quant.DotIQ4_NLQ8_0Batch(w[r*ldw:], a[u*lda:], nb*32), acc)
				}
			}
			t += g
		}
	}
	for ; t < n; t++ {
		k.iq4nlGemv(w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc, true)
	}
}
