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
func unpackIQ4S16(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)

//go:noescape
func tile16x2IQ4_NL(s *byte, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, rmask int, acc int, tab *float32, p *byte)

//go:noescape
func tile16x1IQ4_NL(s *byte, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, rmask int, acc int, tab *float32, p *byte)

//go:noescape
func prepIQ4(dst *byte, x unsafe.Pointer, ldx uintptr, nb int, nt int)

// The IQ4_NL tiles' shape: strips of iq4Rows rows, iq4Strip bytes a
// block (unpackIQ4S16), times up to iq4Tokens tokens, prepared in
// iq4Prep bytes a block (prepIQ4). iq4nlGemm unpacks iq4Block rows at a
// time.
const (
	iq4Rows   = 16
	iq4Tokens = 2
	iq4Strip  = iq4Rows*32 + iq4Rows*4
	iq4Prep   = iq4Tokens * (64 + 4)
	iq4Block  = 64
)

// iq4Tiles are the tiles by their number of tokens less one.
var iq4Tiles = [iq4Tokens]func(s *byte, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, rmask int, acc int, tab *float32, p *byte){
	tile16x1IQ4_NL, tile16x2IQ4_NL,
}

// iq4nlScratch is the scratch iq4nlGemm needs for rows rows of nb blocks:
// the strips and the tiles' scale table.
func iq4nlScratch(rows, nb int) int {
	return (min(rows, iq4Block)+iq4Rows-1)/iq4Rows*nb*iq4Strip + nb*iq4Rows*iq4Tokens*4 + nb*iq4Prep + 64
}

// iq4nlGemm computes, for n tokens t (rows of Q8_0 blocks in a, lda bytes
// apart), dst[t·ldd+r] (+)= w_r·a_t for rows rows of nb IQ4_NL blocks,
// ldw bytes apart, as iq4nlGemv with batch does token by token, to the
// last bit. With AVX-512 VNNI, iq4Block rows at a time are unpacked into
// scratch (at least iq4nlScratch(rows, nb) bytes), 16 to a strip, and
// each pair of tokens (or the last one) is prepared (prepIQ4) and run over
// the block's strips: the preparation is repeated for every iq4Block
// rows. Below AVX-512 VNNI (reached only when q8YMinTokens keeps the AVX2
// tiles away, as tests do) the AVX2 matrix-vector kernel runs token by
// token over all the rows.
func (k Kernels) iq4nlGemm(w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, scratch []byte) {
	if k.level < AVX512VNNI {
		for t := range n { // the AVX2 kernel, token by token
			k.kGemvAVX2(wkIQ4NB, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc)
		}
		return
	}
	iq4Strips(unpackIQ4S16, 18, w, ldw, a, lda, nb, n, dst, ldd, rows, acc, scratch)
}

// iq4Strips is iq4nlGemm's AVX-512 VNNI path for weights of bs bytes a
// block that unpack (unpackIQ4S16, unpackQ5_0S16) turns into its strips.
func iq4Strips(unpack func(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int), bs int,
	w []byte, ldw int, a []byte, lda, nb, n int, dst []float32, ldd, rows int, acc bool, scratch []byte) {
	if rows == 0 || n == 0 || nb == 0 {
		if nb == 0 && !acc {
			for t := range n {
				clear(dst[t*ldd : t*ldd+rows])
			}
		}
		return
	}
	_ = w[(rows-1)*ldw+nb*bs-1]
	_ = a[(n-1)*lda+nb*34-1]
	_ = dst[(n-1)*ldd+rows-1]
	ac := 0
	if acc {
		ac = 1
	}
	sb := nb * iq4Strip
	ns := (min(rows, iq4Block) + iq4Rows - 1) / iq4Rows
	need := iq4nlScratch(rows, nb)
	if len(scratch) < need {
		scratch = make([]byte, need) // callers that pass enough allocate nothing
	}
	scratch = alignedBytes(scratch, need-64)
	s, tb, p := scratch[:ns*sb], scratch[ns*sb:], scratch[ns*sb+nb*iq4Rows*iq4Tokens*4:]
	tab := bytesAsF32(tb[:nb*iq4Rows*iq4Tokens*4])
	for r0 := 0; r0 < rows; r0 += iq4Block {
		nr := min(iq4Block, rows-r0)
		ns := (nr + iq4Rows - 1) / iq4Rows
		for i := range ns {
			r := r0 + iq4Rows*i
			unpack(&s[i*sb], unsafe.Pointer(&w[r*ldw]), uintptr(ldw), min(iq4Rows, rows-r), nb)
		}
		for t := 0; t < n; t += iq4Tokens {
			g := min(iq4Tokens, n-t)
			prepIQ4(&p[0], unsafe.Pointer(&a[t*lda]), uintptr(lda), nb, g)
			for i := range ns {
				r := r0 + iq4Rows*i
				iq4Tiles[g-1](&s[i*sb], unsafe.Pointer(&a[t*lda]), uintptr(lda), nb, &dst[t*ldd+r], uintptr(4*ldd),
					1<<min(iq4Rows, rows-r)-1, ac, &tab[0], &p[0])
			}
		}
	}
}
