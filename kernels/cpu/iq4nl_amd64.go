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

// Multi-token IQ4_NL tiles (iq4tile_amd64.s).

//go:noescape
func unpackIQ4S8(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)

//go:noescape
func tile8x4IQ4_NL(s *byte, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, rmask int, acc int)

//go:noescape
func tile8x3IQ4_NL(s *byte, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, rmask int, acc int)

//go:noescape
func tile8x2IQ4_NL(s *byte, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, rmask int, acc int)

//go:noescape
func tile8x1IQ4_NL(s *byte, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, rmask int, acc int)

// iq4Strip is the size of one block of an unpacked 8-row IQ4_NL strip
// (unpackIQ4S8).
const iq4Strip = 4*64 + 32

// iq4nlScratch is the scratch iq4nlGemm needs for rows rows of nb blocks.
func iq4nlScratch(rows, nb int) int { return (rows + 7) / 8 * nb * iq4Strip }

// iq4nlGemm computes, for n tokens t (rows of Q8_0 blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb IQ4_NL blocks,
// ldw bytes apart, as iq4nlGemv with batch does token by token, to the
// last bit. With AVX-512 VNNI the rows are unpacked into scratch (at
// least iq4nlScratch(rows, nb) bytes), 8 to a strip, and every 4 tokens
// (1 to 3 for the last) run over each strip.
func (k Kernels) iq4nlGemm(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, scratch []byte) {
	if k.level < AVX512VNNI {
		for t := range n { // the AVX2 kernel, token by token
			k.kGemvAVX2(wkIQ4NB, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc)
		}
		return
	}
	if rows == 0 || n == 0 || nb == 0 {
		if nb == 0 && !acc {
			for t := range n {
				clear(dst[t*ldd : t*ldd+rows])
			}
		}
		return
	}
	_ = w[(rows-1)*ldw+nb*18-1]
	_ = a[(n-1)*lda+nb*34-1]
	_ = dst[(n-1)*ldd+rows-1]
	sb := nb * iq4Strip
	ns := (rows + 7) / 8
	s := scratch[:ns*sb]
	for i := range ns {
		unpackIQ4S8(&s[i*sb], unsafe.Pointer(&w[8*i*ldw]), uintptr(ldw), min(8, rows-8*i), nb)
	}
	ac := 0
	if acc {
		ac = 1
	}
	for t := 0; t < n; t += 4 {
		g := min(4, n-t)
		tile := [...]func(*byte, unsafe.Pointer, uintptr, int, *float32, uintptr, int, int){
			tile8x1IQ4_NL, tile8x2IQ4_NL, tile8x3IQ4_NL, tile8x4IQ4_NL}[g-1]
		for i := range ns {
			tile(&s[i*sb], unsafe.Pointer(&a[t*lda]), uintptr(lda), nb, &dst[t*ldd+8*i], uintptr(4*ldd),
				1<<min(8, rows-8*i)-1, ac)
		}
	}
}
