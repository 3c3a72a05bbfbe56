//go:build amd64 && !noasm

package cpu

import "unsafe"

// AVX-512 VNNI kernels for Q5_0, Q4_1 and Q5_1 weights (legacyq_amd64.s).

//go:noescape
func gemv4Q5_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q4_1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q5_1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4x2Q5_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, dx uintptr, nb int, y *float32, dy uintptr, q int, acc int)

//go:noescape
func gemv4x2Q4_1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, dx uintptr, nb int, y *float32, dy uintptr, q int, acc int)

//go:noescape
func gemv4x2Q5_1VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, dx uintptr, nb int, y *float32, dy uintptr, q int, acc int)

// hasLegacyQ reports SIMD kernels for Q5_0, Q4_1 and Q5_1 weights.
func (k Kernels) hasLegacyQ() bool { return false }

// legacyGemv computes dst[r] (+)= w_r·a for len(dst) rows of nb blocks of
// kind (wkQ5_0, wkQ4_1 or wkQ5_1), ldw bytes apart, starting at w; a is in
// layout A.
func (k Kernels) legacyGemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool) {
	rows := len(dst)
	if rows == 0 || nb == 0 {
		if !acc {
			clear(dst)
		}
		return
	}
	_ = w[(rows-1)*ldw+nb*legacyBlockBytes(kind)-1]
	_ = a[(nb+3)/4*q8aGroup-1]
	ac := 0
	if acc {
		ac = 1
	}
	gemv4 := gemv4Q5_0VNNI
	switch kind {
	case wkQ4_1:
		gemv4 = gemv4Q4_1VNNI
	case wkQ5_1:
		gemv4 = gemv4Q5_1VNNI
	}
	ap := unsafe.Pointer(&a[0])
	// Four streams of q rows read side by side, then the rest one at a
	// time (four copies of the row).
	q := rows / 4
	if q > 0 {
		gemv4(unsafe.Pointer(&w[0]), uintptr(ldw), ap, nb, &dst[0], q, ac)
	}
	for r := 4 * q; r < rows; r++ {
		var y [4]float32
		gemv4(unsafe.Pointer(&w[r*ldw]), 0, ap, nb, &y[0], 1, 0)
		put(dst, r, y[0], acc)
	}
}

// legacyGemv2 is legacyGemv for two tokens: dst0[r] (+)= w_r·a0 and
// dst1[r] (+)= w_r·a1, each weight group unpacked once for both.
func (k Kernels) legacyGemv2(kind wkind, w []byte, ldw int, a0, a1 []byte, nb int, dst0, dst1 []float32, acc bool) {
	rows := len(dst0)
	if rows == 0 || nb == 0 || len(dst1) != rows {
		k.legacyGemv(kind, w, ldw, a0, nb, dst0, acc)
		k.legacyGemv(kind, w, ldw, a1, nb, dst1, acc)
		return
	}
	_ = w[(rows-1)*ldw+nb*legacyBlockBytes(kind)-1]
	ab := (nb + 3) / 4 * q8aGroup
	_, _ = a0[ab-1], a1[ab-1]
	ac := 0
	if acc {
		ac = 1
	}
	gemv4 := gemv4x2Q5_0VNNI
	switch kind {
	case wkQ4_1:
		gemv4 = gemv4x2Q4_1VNNI
	case wkQ5_1:
		gemv4 = gemv4x2Q5_1VNNI
	}
	ap := unsafe.Pointer(&a0[0])
	dx := uintptr(unsafe.Pointer(&a1[0])) - uintptr(ap)
	q := rows / 4
	if q > 0 {
		dy := uintptr(unsafe.Pointer(&dst1[0])) - uintptr(unsafe.Pointer(&dst0[0]))
		gemv4(unsafe.Pointer(&w[0]), uintptr(ldw), ap, dx, nb, &dst0[0], dy, q, ac)
	}
	for r := 4 * q; r < rows; r++ {
		var y [8]float32
		gemv4(unsafe.Pointer(&w[r*ldw]), 0, ap, dx, nb, &y[0], 16, 1, 0)
		put(dst0, r, y[0], acc)
		put(dst1, r, y[4], acc)
	}
}
