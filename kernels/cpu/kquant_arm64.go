//go:build arm64 && !noasm

package cpu

import "unsafe"

// K-quant kernels (kquant_arm64.s), with FEAT_DotProd.

//go:noescape
func gemvQ4_KDot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, rows int, acc int)

//go:noescape
func gemvQ3_KDot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, rows int, acc int)

//go:noescape
func gemvQ2_KDot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, rows int, acc int)

//go:noescape
func gemvQ5_KDot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, rows int, acc int)

//go:noescape
func gemvQ6_KDot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, rows int, acc int)

// hasKQuant reports SIMD kernels for K-quant weights of kind: Q4_K and
// Q6_K with dotprod (the others use kernels/quant on arm64).
func (k Kernels) hasKQuant(kind wkind) bool {
	switch kind {
	case wkQ2_K, wkQ3_K, wkQ4_K, wkQ5_K, wkQ6_K:
		return k.level >= DotProd
	}
	return false
}

// kGemv computes dst[r] (+)= w_r·a for len(dst) rows of nb K-quant blocks,
// ldw bytes apart; a is a row of Q8_K blocks; buf is unused (no kernel
// here needs scratch).
func (k Kernels) kGemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool, buf *[]byte) {
	rows := len(dst)
	if rows == 0 || nb == 0 {
		if !acc {
			clear(dst)
		}
		return
	}
	bb := 210
	switch kind {
	case wkQ4_K:
		bb = 144
	case wkQ5_K:
		bb = 176
	case wkQ3_K:
		bb = 110
	case wkQ2_K:
		bb = 84
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[nb*292-1]
	ac := 0
	if acc {
		ac = 1
	}
	wp, ap := unsafe.Pointer(&w[0]), unsafe.Pointer(&a[0])
	switch kind {
	case wkQ4_K:
		gemvQ4_KDot(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
	case wkQ3_K:
		gemvQ3_KDot(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
	case wkQ2_K:
		gemvQ2_KDot(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
	case wkQ5_K:
		gemvQ5_KDot(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
	case wkQ6_K:
		gemvQ6_KDot(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
	default:
		panic("cpu: no SIMD kernel for this K-quant on arm64")
	}
}
