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
