//go:build arm64 && !noasm

package cpu

import "unsafe"

// NEON kernels (q8_arm64.s): the Dot ones need FEAT_DotProd.

//go:noescape
func gemvQ4_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, groups int, acc int)

//go:noescape
func gemvQ4_0NEON(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, groups int, acc int)

//go:noescape
func gemvQ8_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, groups int, acc int)

//go:noescape
func gemvQ8_0NEON(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, groups int, acc int)

//go:noescape
func gemv4x2Q4_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)

//go:noescape
func gemv4x2Q8_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)

//go:noescape
func gemv4x4Q4_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)

//go:noescape
func gemv4x4Q8_0Dot(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)

// The MM kernels need FEAT_I8MM (SMMLA).

//go:noescape
func gemv4x4Q4_0MM(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)

//go:noescape
func gemv4x4Q8_0MM(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups int, acc int)

// hasQ8 reports SIMD kernels for Q4_0 and Q8_0 weights. On arm64 they read
// activation layouts A (Q4_0) and B (Q8_0), as classify picks for levels
// above AVX512VNNI.
func (k Kernels) hasQ8() bool { return k.level >= NEON }

// q8Gemv computes dst[r] (+)= w_r·a for len(dst) rows of nb blocks, ldw
// bytes apart, starting at w; a is in layout A (Q4_0) or B (Q8_0).
func (k Kernels) q8Gemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool) {
	rows := len(dst)
	if rows == 0 || nb == 0 {
		if !acc {
			clear(dst)
		}
		return
	}
	bb := 18
	if kind == wkQ8_0 {
		bb = 34
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[(nb+3)/4*q8aGroup-1]
	ac := 0
	if acc {
		ac = 1
	}
	ap := unsafe.Pointer(&a[0])
	// Four rows side by side, then the rest one at a time (four copies
	// of the row).
	g := rows / 4
	if g > 0 {
		k.gemv4(kind, unsafe.Pointer(&w[0]), uintptr(ldw), ap, nb, &dst[0], g, ac)
	}
	for r := 4 * g; r < rows; r++ {
		var y [4]float32
		k.gemv4(kind, unsafe.Pointer(&w[r*ldw]), 0, ap, nb, &y[0], 1, 0)
		put(dst, r, y[0], acc)
	}
}

// gemv4 calls the set's kernel for kind directly: through a func value,
// y would escape (and allocate).
func (k Kernels) gemv4(kind wkind, w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, groups, acc int) {
	switch {
	case kind == wkQ8_0 && k.level >= DotProd:
		gemvQ8_0Dot(w, ldw, x, nb, y, groups, acc)
	case kind == wkQ8_0:
		gemvQ8_0NEON(w, ldw, x, nb, y, groups, acc)
	case k.level >= DotProd:
		gemvQ4_0Dot(w, ldw, x, nb, y, groups, acc)
	default:
		gemvQ4_0NEON(w, ldw, x, nb, y, groups, acc)
	}
}

// q8GemvN computes dst[t·ldd+r] (+)= w_r·a_t for rows rows and nt tokens,
// their activations lda bytes apart. With dotprod, four tokens (then two)
// share each load of the weights: 4-row × 4-token tiles (gemv4x4, SDOT,
// or SMMLA with i8mm) and 4 × 2 (gemv4x2); each output is the same chain
// as q8Gemv's.
func (k Kernels) q8GemvN(kind wkind, w []byte, ldw int, a []byte, lda, nb int, dst []float32, ldd, rows, nt int, acc bool) {
	t := 0
	if g := rows / 4; k.level >= DotProd && g > 0 && nb > 0 {
		bb := 18
		if kind == wkQ8_0 {
			bb = 34
		}
		_ = w[(rows-1)*ldw+nb*bb-1]
		ac := 0
		if acc {
			ac = 1
		}
		wp := unsafe.Pointer(&w[0])
		for ; t+4 <= nt; t += 4 {
			_ = a[(t+3)*lda+(nb+3)/4*q8aGroup-1]
			_ = dst[(t+3)*ldd+rows-1]
			k.gemv4x4(kind, wp, uintptr(ldw), unsafe.Pointer(&a[t*lda]), uintptr(lda), nb, &dst[t*ldd], uintptr(4*ldd), g, ac)
			for u := t; u < t+4; u++ {
				k.q8Gemv(kind, w[4*g*ldw:], ldw, a[u*lda:(u+1)*lda], nb, dst[u*ldd+4*g:u*ldd+rows], acc)
			}
		}
		for ; t+2 <= nt; t += 2 {
			_ = a[(t+1)*lda+(nb+3)/4*q8aGroup-1]
			_ = dst[(t+1)*ldd+rows-1]
			ap, yp := unsafe.Pointer(&a[t*lda]), &dst[t*ldd]
			if kind == wkQ8_0 {
				gemv4x2Q8_0Dot(wp, uintptr(ldw), ap, uintptr(lda), nb, yp, uintptr(4*ldd), g, ac)
			} else {
				gemv4x2Q4_0Dot(wp, uintptr(ldw), ap, uintptr(lda), nb, yp, uintptr(4*ldd), g, ac)
			}
			for u := t; u < t+2; u++ {
				k.q8Gemv(kind, w[4*g*ldw:], ldw, a[u*lda:(u+1)*lda], nb, dst[u*ldd+4*g:u*ldd+rows], acc)
			}
		}
	}
	for ; t < nt; t++ {
		k.q8Gemv(kind, w, ldw, a[t*lda:(t+1)*lda], nb, dst[t*ldd:t*ldd+rows], acc)
	}
}

// gemv4x4 calls the set's 4-row × 4-token kernel for kind (dotprod or
// better) directly, as gemv4 does.
func (k Kernels) gemv4x4(kind wkind, w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, groups, acc int) {
	switch {
	case kind == wkQ8_0 && k.level >= I8MM:
		gemv4x4Q8_0MM(w, ldw, x, ldx, nb, y, ldy, groups, acc)
	case kind == wkQ8_0:
		gemv4x4Q8_0Dot(w, ldw, x, ldx, nb, y, ldy, groups, acc)
	case k.level >= I8MM:
		gemv4x4Q4_0MM(w, ldw, x, ldx, nb, y, ldy, groups, acc)
	default:
		gemv4x4Q4_0Dot(w, ldw, x, ldx, nb, y, ldy, groups, acc)
	}
}

func (k Kernels) packQ8P(dst []byte, x []float32) { packQ8PGo(dst, x) }

func (k Kernels) hasQ8Unpacked() bool { return false }

func (k Kernels) packQ8C(dst []byte, x []float32) { panic("cpu: no layout C kernels on arm64") }

func (k Kernels) q8UnpackStrip(kind wkind, dst []byte, w []byte, ldw, nrows, nb int) {
	panic("cpu: no layout C kernels on arm64")
}

func (k Kernels) q8Tile(kind wkind, wu, a []byte, nb int, dst []float32, ldd, nr, nt int, acc bool) {
	panic("cpu: no layout C kernels on arm64")
}

const q8FusedMaxTokens = 8

func (k Kernels) q8Fused(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, ldd, nt int, acc bool) {
	panic("cpu: no layout C kernels on arm64")
}
