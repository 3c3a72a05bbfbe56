//go:build amd64 && !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// Inferflow's Q6_B64T1, Q5_B64T1, Q4_B32T1, Q3_B32T1 and Q2_B32T1
// formats (ifmore_amd64.s).

//go:noescape
func gemv4Q6_B64VNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q5_B64VNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q4SVNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q3SVNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q2SVNNI(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func ifmPrep(x unsafe.Pointer, n int, xp unsafe.Pointer)

// ifMoreGemv computes dst[r] (+)= w_r·a for len(dst) rows of nb blocks of
// the Inferflow format of kind (wkIfQ6, wkIfQ5, wkIfQ4S, wkIfQ3 or
// wkIfQ2), ldw bytes apart; a is a row of Q8_0 blocks. The results are
// kernels/quant's to the last bit. The activations that ifmPrep prepares
// (128 bytes per 64 values) go in *buf (growScratch).
func (k Kernels) ifMoreGemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool, buf *[]byte) {
	rows := len(dst)
	if rows == 0 {
		return
	}
	var (
		bb, elems int
		gemv      func(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)
		dot       quant.DotFunc
	)
	switch kind {
	case wkIfQ6:
		bb, elems, gemv, dot = 52, 64, gemv4Q6_B64VNNI, quant.DotQ6_B64T1Q8_0
	case wkIfQ5:
		bb, elems, gemv, dot = 44, 64, gemv4Q5_B64VNNI, quant.DotQ5_B64T1Q8_0
	case wkIfQ4S:
		bb, elems, gemv, dot = 20, 32, gemv4Q4SVNNI, quant.DotQ4_B32T1Q8_0
	case wkIfQ3:
		bb, elems, gemv, dot = 16, 32, gemv4Q3SVNNI, quant.DotQ3_B32T1Q8_0
	case wkIfQ2:
		bb, elems, gemv, dot = 12, 32, gemv4Q2SVNNI, quant.DotQ2_B32T1Q8_0
	default:
		panic("cpu: ifMoreGemv: not an Inferflow kind")
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[nb*elems/32*34-1]
	q := rows / 4
	if q > 0 && nb > 0 {
		ac := 0
		if acc {
			ac = 1
		}
		// The activations of each 64 values, de-interleaved, with their
		// scales and sums, once for all the rows; an odd last block of a
		// 32-value format is read in place.
		np := nb * elems / 64
		xp := alignedBytes(growScratch(buf, np*128+64), np*128+1)
		xt := unsafe.Pointer(&a[0])
		if nb*elems%64 != 0 {
			xt = unsafe.Pointer(&a[(nb-1)*34])
		}
		ifmPrep(unsafe.Pointer(&a[0]), np, unsafe.Pointer(&xp[0]))
		gemv(unsafe.Pointer(&w[0]), uintptr(ldw), xt, unsafe.Pointer(&xp[0]), nb, &dst[0], q, ac)
	}
	for r := 4 * q; r < rows; r++ {
		put(dst, r, dot(w[r*ldw:], a, nb*elems), acc)
	}
}
