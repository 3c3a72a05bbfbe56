//go:build amd64 && !noasm

package cpu

import "unsafe"

// AVX-512 VNNI kernels (q8vnni_amd64.s).

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
		bb = 34
		if k.level < AVX512VNNI {
			ab = (nb + 1) / 2 * q8bPair
		}
	}
	_ = w[(rows-1)*ldw+nb*bb-1]
	_ = a[ab-1]
	ac := 0
	if acc {
		ac = 1
	}
	wp, ap := unsafe.Pointer(&w[0]), unsafe.Pointer(&a[0])
	if k.level >= AVX512VNNI {
		gemv4 := gemv4Q4_0VNNI
		if kind == wkQ8_0 {
			gemv4 = gemv4Q8_0VNNI
		}
		// Four streams of q rows read side by side, then the rest one
		// at a time (four copies of the row).
		q := rows / 4
		if q > 0 {
			gemv4(wp, uintptr(ldw), ap, nb, &dst[0], q, ac)
		}
		for r := 4 * q; r < rows; r++ {
			var y [4]float32
			gemv4(unsafe.Pointer(&w[r*ldw]), 0, ap, nb, &y[0], 1, 0)
			put(dst, r, y[0], acc)
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
func packQ8AY(dst *byte, src *float32, nb int, shift int)

//go:noescape
func packQ8PY(dst *byte, src *float32, nb int)

//go:noescape
func packQ8AZ(dst *byte, src *float32, nb int, shift int)

//go:noescape
func packQ8PZ(dst *byte, src *float32, nb int)

// packQ8A quantizes x (a multiple of 32 values) into layout A in dst.
func (k Kernels) packQ8A(dst []byte, x []float32) { k.packQ8AB(dst, x, 3) }

// packQ8B quantizes x (a multiple of 32 values) into layout B in dst.
func (k Kernels) packQ8B(dst []byte, x []float32) { k.packQ8AB(dst, x, 7) }

// packQ8AB quantizes x into layout A (shift 3: corrections -8·Σq) or B
// (shift 7: -128·Σq).
func (k Kernels) packQ8AB(dst []byte, x []float32, shift int) {
	nb := len(x) / 32
	if k.level < AVX2 || nb == 0 {
		packQ8Go(dst, x, -1<<shift)
		return
	}
	dst = dst[:q8aRowBytes(len(x))]
	clear(dst[nb/4*q8aGroup:])
	if k.level == AVX2 {
		packQ8AY(&dst[0], &x[0], nb, shift)
		return
	}
	packQ8AZ(&dst[0], &x[0], nb, shift)
}

// packQ8P quantizes x (a multiple of 32 values) into layout P in dst.
func (k Kernels) packQ8P(dst []byte, x []float32) {
	nb := len(x) / 32
	if k.level < AVX2 || nb == 0 {
		packQ8PGo(dst, x)
		return
	}
	dst = dst[:q8pRowBytes(len(x))]
	clear(dst[nb/2*q8bPair:])
	if k.level == AVX2 {
		packQ8PY(&dst[0], &x[0], nb)
		return
	}
	packQ8PZ(&dst[0], &x[0], nb)
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

// hasQ8Unpacked reports the prefill kernels on unpacked weight strips
// (layout C activations).
func (k Kernels) hasQ8Unpacked() bool { return k.level >= AVX512VNNI }

// Prefill on unpacked weight strips (q8ilv_amd64.s).

//go:noescape
func packQ8CZ(dst *byte, src *float32, nb int)

//go:noescape
func unpackS16Q4_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)

//go:noescape
func unpackS16Q8_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nrows, nb int)

// Whole strips of 16 rows, without gathers for the quants
// (q8unpack_amd64.s).

//go:noescape
func unpack16Q4_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nb int)

//go:noescape
func unpack16Q8_0Z(dst *byte, w unsafe.Pointer, ldw uintptr, nb int)

// Unpacking fused with the tiles' step, for up to 8 tokens
// (q8unpack_amd64.s).

//go:noescape
func fuse4Q4Z(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)

//go:noescape
func fuse8Q4Z(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)

//go:noescape
func fuse4Q8Z(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)

//go:noescape
func fuse8Q8Z(w unsafe.Pointer, ldw uintptr, x *byte, nb int, dst *float32, ldd uintptr, nt int, acc int)

//go:noescape
func tile16Q4Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)

//go:noescape
func tile8Q4Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)

//go:noescape
func tile4Q4Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)

//go:noescape
func tile16Q8Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)

//go:noescape
func tile8Q8Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)

//go:noescape
func tile4Q8Z(wu *byte, x *byte, nb int, dst *float32, ldd uintptr, rmask int, nt int, acc int)

// packQ8C quantizes one token's x (a multiple of 32 values) into its
// layout C records, the first at dst[0] and the others q8cBlock bytes
// apart.
func (k Kernels) packQ8C(dst []byte, x []float32) {
	nb := len(x) / 32
	if nb == 0 {
		return
	}
	_ = dst[(nb-1)*q8cBlock+q8cRecord-1]
	packQ8CZ(&dst[0], &x[0], nb)
}

// q8UnpackStrip unpacks nrows ≤ 16 rows of nb blocks at w (ldw bytes
// apart) into a strip of nb·q8uBlockOf(kind) bytes in dst.
func (k Kernels) q8UnpackStrip(kind wkind, dst []byte, w []byte, ldw, nrows, nb int) {
	if nrows <= 0 || nb == 0 {
		return
	}
	bb := 18
	if kind == wkQ8_0 {
		bb = 34
	}
	_ = w[(nrows-1)*ldw+nb*bb-1]
	_ = dst[nb*q8uBlockOf(kind)-1]
	if ldw > (1<<31-1)/q8Strip {
		panic("cpu: weight rows too long for the Q8 prefill gathers")
	}
	switch {
	case nrows == q8Strip && kind == wkQ8_0:
		unpack16Q8_0Z(&dst[0], unsafe.Pointer(&w[0]), uintptr(ldw), nb)
	case nrows == q8Strip:
		unpack16Q4_0Z(&dst[0], unsafe.Pointer(&w[0]), uintptr(ldw), nb)
	case kind == wkQ8_0:
		unpackS16Q8_0Z(&dst[0], unsafe.Pointer(&w[0]), uintptr(ldw), nrows, nb)
	default:
		unpackS16Q4_0Z(&dst[0], unsafe.Pointer(&w[0]), uintptr(ldw), nrows, nb)
	}
}

// q8FusedMaxTokens is the most tokens q8Fused takes.
const q8FusedMaxTokens = 8

// q8Fused computes dst[t*ldd+r] (+)= w_r·a_t for a whole strip of 16 rows
// of nb blocks at w (ldw bytes apart) and the first nt ≤ q8FusedMaxTokens
// tokens of a group in layout C, unpacking each block in registers: for a
// few tokens this beats unpacking the strip into memory first. The results
// are q8Tile's.
func (k Kernels) q8Fused(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, ldd, nt int, acc bool) {
	if nt <= 0 || nb == 0 {
		if nt > 0 && !acc {
			for t := range nt {
				clear(dst[t*ldd : t*ldd+q8Strip])
			}
		}
		return
	}
	bb := 18
	if kind == wkQ8_0 {
		bb = 34
	}
	_ = w[(q8Strip-1)*ldw+nb*bb-1]
	_ = dst[(nt-1)*ldd+q8Strip-1]
	_ = a[nb*q8cBlock-1]
	if ldw > (1<<31-1)/q8Strip {
		panic("cpu: weight rows too long for the Q8 scale gathers")
	}
	ac := 0
	if acc {
		ac = 1
	}
	f := fuse4Q4Z
	switch {
	case kind == wkQ8_0 && nt > 4:
		f = fuse8Q8Z
	case kind == wkQ8_0:
		f = fuse4Q8Z
	case nt > 4:
		f = fuse8Q4Z
	}
	f(unsafe.Pointer(&w[0]), uintptr(ldw), &a[0], nb, &dst[0], uintptr(4*ldd), nt, ac)
}

// q8Tile computes dst[t*ldd+r] (+)= w_r·a_t for nr ≤ 16 rows of a strip of
// nb unpacked blocks and the first nt ≤ 16 tokens of a group in layout C.
func (k Kernels) q8Tile(kind wkind, wu, a []byte, nb int, dst []float32, ldd, nr, nt int, acc bool) {
	if nr <= 0 || nt <= 0 {
		return
	}
	_ = dst[(nt-1)*ldd+nr-1]
	_ = wu[nb*q8uBlockOf(kind)-1]
	_ = a[nb*q8cBlock-1]
	ac := 0
	if acc {
		ac = 1
	}
	tile := tile16Q4Z
	switch {
	case kind == wkQ8_0 && nt > 8:
		tile = tile16Q8Z
	case kind == wkQ8_0 && nt > 4:
		tile = tile8Q8Z
	case kind == wkQ8_0:
		tile = tile4Q8Z
	case nt > 8:
	case nt > 4:
		tile = tile8Q4Z
	default:
		tile = tile4Q4Z
	}
	tile(&wu[0], &a[0], nb, &dst[0], uintptr(4*ldd), 1<<nr-1, nt, ac)
}
