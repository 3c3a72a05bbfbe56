//go:build amd64 && !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// The Q2_K and Q3_K matrix-vector kernels read the activations regrouped
// once per call (kqxBlock bytes per Q8_K block, built by the kernel
// itself) instead of once per block of every 4 rows. Q2_K: 8 × 64 bytes,
// each 32 activations broadcast to both 256-bit halves, the block sums
// twice and [dx, −dx] twice. Q3_K: 8 × 64 bytes as Q2_K's, their
// 4·pair sums as words (8 × 64 bytes), dx ×16.
const (
	kqxBlock  = 640  // Q2_K
	kqxBlock3 = 1088 // Q3_K
)

// kGemvX is kGemv for Q2_K and Q3_K weights; it regroups the activations
// in *buf (growScratch).
func (k Kernels) kGemvX(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool, buf *[]byte) {
	rows := len(dst)
	if rows == 0 {
		return
	}
	bb, xb, gemv, dot := 84, kqxBlock, gemv4Q2_KVNNI, quant.DotQ2_KQ8_K
	if kind == wkQ3_K {
		bb, xb, gemv, dot = 110, kqxBlock3, gemv4Q3_KVNNI, quant.DotQ3_KQ8_K
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[nb*292-1]
	q := rows / 4
	if q > 0 && nb > 0 {
		ac := 0
		if acc {
			ac = 1
		}
		xr := alignedBytes(growScratch(buf, nb*xb+64), nb*xb)
		gemv(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[0]), nb, &dst[0], q, ac, unsafe.Pointer(&xr[0]))
	}
	for r := 4 * q; r < rows; r++ {
		put(dst, r, dot(w[r*ldw:], a, nb*256), acc)
	}
}
