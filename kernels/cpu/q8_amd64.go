//go:build amd64 && !noasm

package cpu

import "unsafe"

// AVX-512 VNNI kernels (q8vnni_amd64.s).

//go:noescape
func gemvQ4_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)

//go:noescape
func gemvQ8_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)

//go:noescape
func gemv4Q4_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

//go:noescape
func gemv4Q8_0VNNI(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)

// AVX2 kernels (q8avx2_amd64.s), also used on AVX-512 without VNNI.

//go:noescape
func gemvQ4_0AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)

//go:noescape
func gemvQ8_0AVX2(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)

// hasQ8 reports SIMD kernels for Q4_0 and Q8_0 weights.
func (k Kernels) hasQ8() bool { return k.level >= AVX2 }

// q8Gemv computes dst[r] (+)= w_r·a for len(dst) rows of nb blocks, ldw
// bytes apart, starting at w; a is in the job's activation layout.
func (k Kernels) q8Gemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool) {
	rows := len(dst)
	if rows == 0 || nb == 0 {
		if !acc {
			clear(dst)
		}
		return
	}
	bb, ab := 18, (nb+3)/4*q8aGroup
	if kind == wkQ8_0 {
		bb, ab = 34, (nb+1)/2*q8bPair
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[ab-1]
	ac := 0
	if acc {
		ac = 1
	}
	wp, ap := unsafe.Pointer(&w[0]), unsafe.Pointer(&a[0])
	if k.level >= AVX512VNNI {
		// Four streams of q rows read side by side, then the rest.
		if q := rows / 4; q > 0 {
			if kind == wkQ8_0 {
				gemv4Q8_0VNNI(wp, uintptr(ldw), ap, nb, &dst[0], q, ac)
			} else {
				gemv4Q4_0VNNI(wp, uintptr(ldw), ap, nb, &dst[0], q, ac)
			}
			if rows == 4*q {
				return
			}
			wp, dst, rows = unsafe.Pointer(&w[4*q*ldw]), dst[4*q:], rows-4*q
		}
		if kind == wkQ8_0 {
			gemvQ8_0VNNI(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
		} else {
			gemvQ4_0VNNI(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
		}
		return
	}
	if kind == wkQ8_0 {
		gemvQ8_0AVX2(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
	} else {
		gemvQ4_0AVX2(wp, uintptr(ldw), ap, nb, &dst[0], rows, ac)
	}
}

// Activation quantizers (q8quantz_amd64.s).

//go:noescape
func quantQ8_0Z(dst *byte, src *float32, nb int)

//go:noescape
func quantQ8_0Y(dst *byte, src *float32, nb int)

//go:noescape
func packQ8AY(dst *byte, src *float32, nb int)

//go:noescape
func packQ8BY(dst *byte, src *float32, nb int)

//go:noescape
func packQ8AZ(dst *byte, src *float32, nb int)

//go:noescape
func packQ8BZ(dst *byte, src *float32, nb int)

// packQ8A quantizes x (a multiple of 32 values) into layout A in dst.
func (k Kernels) packQ8A(dst []byte, x []float32) {
	nb := len(x) / 32
	if k.level < AVX2 || nb == 0 {
		packQ8AGo(dst, x)
		return
	}
	dst = dst[:q8aRowBytes(len(x))]
	clear(dst[nb/4*q8aGroup:])
	if k.level == AVX2 {
		packQ8AY(&dst[0], &x[0], nb)
		return
	}
	packQ8AZ(&dst[0], &x[0], nb)
}

// packQ8B quantizes x (a multiple of 32 values) into layout B in dst.
func (k Kernels) packQ8B(dst []byte, x []float32) {
	nb := len(x) / 32
	if k.level < AVX2 || nb == 0 {
		packQ8BGo(dst, x)
		return
	}
	dst = dst[:q8bRowBytes(len(x))]
	clear(dst[nb/2*q8bPair:])
	if k.level == AVX2 {
		packQ8BY(&dst[0], &x[0], nb)
		return
	}
	packQ8BZ(&dst[0], &x[0], nb)
}

// quantizeQ8_0 quantizes x (a multiple of 32 values) into ggml Q8_0
// blocks in dst.
func (k Kernels) quantizeQ8_0(dst []byte, x []float32) {
	nb := len(x) / 32
	if k.level < AVX2 || nb == 0 {
		quantizeQ8_0Go(dst, x)
		return
	}
	_ = dst[nb*34-1]
	if k.level == AVX2 {
		quantQ8_0Y(&dst[0], &x[0], nb)
		return
	}
	quantQ8_0Z(&dst[0], &x[0], nb)
}

// hasQ8Unpacked reports the prefill kernels on block-interleaved weights.
func (k Kernels) hasQ8Unpacked() bool { return k.level >= AVX512VNNI }

// Prefill on block-interleaved data (q8ilv_amd64.s).

//go:noescape
func interleaveQ8Z(dst, src *byte, nb int)

//go:noescape
func unpackU16Q4_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)

//go:noescape
func unpackU16Q8_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)

//go:noescape
func tileC4Z(wu unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, ng int, dst *float32, ldd uintptr, acc int)

//go:noescape
func tileC8Z(wu unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, ng int, dst *float32, ldd uintptr, acc int)

// packQ8C quantizes x (a multiple of 32 values) into layout C in dst,
// through ggml Q8_0 blocks, 16 at a time.
func (k Kernels) packQ8C(dst []byte, x []float32) {
	nb := len(x) / 32
	dst = dst[:q8cRowBytes(len(x))]
	var blk [16 * 34]byte
	for j := 0; j < nb; j += 16 {
		m := min(16, nb-j)
		quantQ8_0Z(&blk[0], &x[32*j], m)
		interleaveQ8Z(&dst[j/16*q8cGroup], &blk[0], m)
	}
}

// q8UnpackC unpacks nrows rows of nb blocks at w (ldw bytes apart) into
// U16 groups in dst, q8uRowBytes(nb) apart.
func (k Kernels) q8UnpackC(kind wkind, dst []byte, w []byte, ldw, nrows, nb int) {
	if nrows == 0 || nb == 0 {
		return
	}
	bb := 18
	if kind == wkQ8_0 {
		bb = 34
	}
	_ = w[(nrows-1)*ldw+nb*bb-1]
	_ = dst[nrows*q8uRowBytes(nb)-1]
	if kind == wkQ8_0 {
		unpackU16Q8_0Z(&dst[0], unsafe.Pointer(&w[0]), uintptr(ldw), nrows, nb)
	} else {
		unpackU16Q4_0Z(&dst[0], unsafe.Pointer(&w[0]), uintptr(ldw), nrows, nb)
	}
}

// q8TileC computes dst[t*ldd+r] (+)= w_r·a_t for 2 unpacked rows (ldw
// bytes apart) and 4 tokens in layout C (lda bytes apart) of nb blocks.
func (k Kernels) q8TileC(kind wkind, wu []byte, ldw int, a []byte, lda, nb int, dst []float32, ldd int, acc bool) {
	_ = dst[3*ldd+1]
	ng := (nb + 15) / 16
	_ = wu[ldw+ng*q8uGroup-1]
	_ = a[3*lda+ng*q8cGroup-1]
	ac := 0
	if acc {
		ac = 1
	}
	if kind == wkQ8_0 {
		tileC8Z(unsafe.Pointer(&wu[0]), uintptr(ldw), unsafe.Pointer(&a[0]), uintptr(lda), ng, &dst[0], uintptr(4*ldd), ac)
	} else {
		tileC4Z(unsafe.Pointer(&wu[0]), uintptr(ldw), unsafe.Pointer(&a[0]), uintptr(lda), ng, &dst[0], uintptr(4*ldd), ac)
	}
}
