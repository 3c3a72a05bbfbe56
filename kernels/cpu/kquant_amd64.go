//go:build amd64 && !noasm

package cpu

import (
	"unsafe"

	"github.com/weftrun/weft/kernels/quant"
)

// K-quant kernels (kquantz_amd64.s).

//go:noescape
func gemv4Q6_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q3_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int, xr unsafe.Pointer)

//go:noescape
func gemv4Q2_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int, xr unsafe.Pointer)

//go:noescape
func gemv4Q5_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q4_KVNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

// hasKQuant reports SIMD kernels for K-quant (or Inferflow Q4_B64T1 and
// Q3H_B64T1, or IQ4_NL) weights of kind.
func (k Kernels) hasKQuant(kind wkind) bool {
	switch kind {
	case wkQ6_K, wkQ5_K, wkQ4_K, wkQ3_K, wkQ2_K, wkIQ4NL, wkIQ4NB:
		return k.level >= AVX512VNNI || k.hasKQuantAVX2(kind)
	case wkIfQ6, wkIfQ5, wkIfQ4S, wkIfQ4, wkIfQ3H, wkIfQ3, wkIfQ2:
		return k.level >= AVX512VNNI || k.hasIfAVX2(kind)
	}
	return false
}

// kGemv computes dst[r] (+)= w_r·a for len(dst) rows of nb K-quant blocks,
// ldw bytes apart; a is a row of Q8_K blocks (for Inferflow's kinds, of
// Q8_0 blocks: see ifGemv). The kernels that prepare the activations
// first (Inferflow's formats but Q4_B64T1 and Q3H_B64T1 at AVX-512 VNNI,
// Q2_K and Q3_K) do it in *buf, grown as needed (growScratch).
func (k Kernels) kGemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool, buf *[]byte) {
	if k.level < AVX512VNNI {
		if k.hasIfAVX2(kind) {
			k.ifGemvAVX2(kind, w, ldw, a, nb, dst, acc, buf)
			return
		}
		k.kGemvAVX2(kind, w, ldw, a, nb, dst, acc)
		return
	}
	switch kind {
	case wkIfQ4, wkIfQ3H:
		k.ifGemv(kind, w, ldw, a, nb, dst, acc)
		return
	case wkIfQ6, wkIfQ5, wkIfQ4S, wkIfQ3, wkIfQ2:
		k.ifMoreGemv(kind, w, ldw, a, nb, dst, acc, buf)
		return
	case wkIQ4NL, wkIQ4NB:
		k.iq4nlGemv(w, ldw, a, nb, dst, acc, kind == wkIQ4NB)
		return
	case wkQ2_K, wkQ3_K:
		k.kGemvX(kind, w, ldw, a, nb, dst, acc, buf)
		return
	}
	rows := len(dst)
	if rows == 0 {
		return
	}
	bb, gemv, dot := 210, gemv4Q6_KVNNI, quant.DotQ6_KQ8_K
	switch kind {
	case wkQ5_K:
		bb, gemv, dot = 176, gemv4Q5_KVNNI, quant.DotQ5_KQ8_K
	case wkQ4_K:
		bb, gemv, dot = 144, gemv4Q4_KVNNI, quant.DotQ4_KQ8_K
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[nb*292-1]
	q := rows / 4
	if q > 0 && nb > 0 {
		ac := 0
		if acc {
			ac = 1
		}
		gemv(unsafe.Pointer(&w[0]), uintptr(ldw), unsafe.Pointer(&a[0]), nb, &dst[0], q, ac)
	}
	for r := 4 * q; r < rows; r++ {
		put(dst, r, dot(w[r*ldw:], a, nb*256), acc)
	}
}
