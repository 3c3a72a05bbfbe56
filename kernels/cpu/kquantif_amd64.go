//go:build amd64 && !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// Inferflow's 64-value formats (kquantif_amd64.s).

//go:noescape
func gemv4Q4_B64VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q3HVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

// ifGemv computes dst[r] (+)= w_r·a for len(dst) rows of nb 64-value
// Q4_B64T1 or Q3H_B64T1 blocks, ldw bytes apart; a is a row of Q8_0
// blocks. The results are kernels/quant's to the last bit.
func (k Kernels) ifGemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool) {
	rows := len(dst)
	if rows == 0 {
		return
	}
	bb, dot := 36, quant.DotQ4_B64T1Q8_0
	if kind == wkIfQ3H {
		bb, dot = 32, quant.DotQ3H_B64T1Q8_0
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[nb*68-1]
	q := rows / 4
	if q > 0 && nb > 0 {
		ac := 0
		if acc {
			ac = 1
		}
		if kind == wkIfQ3H {
			gemv4Q3HVNNI(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[0]), nb, &dst[0], q, ac)
		} else {
			gemv4Q4_B64VNNI(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[0]), nb, &dst[0], q, ac)
		}
	}
	for r := 4 * q; r < rows; r++ {
		put(dst, r, dot(w[r*ldw:], a, nb*64), acc)
	}
}
