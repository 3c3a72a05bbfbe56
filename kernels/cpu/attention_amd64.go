//go:build amd64 && !noasm

package cpu

import "unsafe"

// Half-precision attention kernels (attentionz_amd64.s, AVX-512).

//go:noescape
func dotRowsF16Z(out, q *float32, k *uint16, stride uintptr, n, hd int)

//go:noescape
func axpyRowsF16Z(o, p *float32, v *uint16, stride uintptr, n, hd int)

//go:noescape
func roundF16Z(dst, src *float32, n int)

// ggml-order kernels (attentiongg_amd64.s).

//go:noescape
func dotRowsF16GGZ(out, q *float32, k *uint16, stride uintptr, n, hd, batched int)

//go:noescape
func axpyRotF16Z(acc *float32, mask, j0 int, p *float32, v *uint16, stride uintptr, n, hd int)

//go:noescape
func axpyRowsF16DZ(o *float64, p *float32, v *uint16, stride uintptr, n, hd int)

// AVX2 + F16C versions (attentiony_amd64.s): they cover hd (n for
// roundF16Y) rounded down to 8.

//go:noescape
func axpyRowsF16Y(o, p *float32, v *uint16, stride uintptr, n, hd int)

//go:noescape
func roundF16Y(dst, src *float32, n int)

// dotRowsF16 sets out[r] = q·k[r*stride : r*stride+len(q)] for r <
// len(out), k in half precision (stride in halves), in ggml's order for a
// batch or a single query (dotF16GG).
func (k Kernels) dotRowsF16(out, q []float32, kr []uint16, stride int, batched bool) {
	n, hd := len(out), len(q)
	if n == 0 || hd == 0 {
		clear(out)
		return
	}
	_ = kr[(n-1)*stride+hd-1]
	if k.level >= AVX512 {
		if batched && hd%16 == 0 {
			dotRowsF16GGZ(&out[0], &q[0], &kr[0], uintptr(2*stride), n, hd, 1)
			return
		}
		if hd%64 == 0 {
			dotRowsF16GGZ(&out[0], &q[0], &kr[0], uintptr(2*stride), n, hd, 0)
			return
		}
	}
	dotRowsF16Go(out, q, kr, stride, batched)
}

// hasAxpyRot reports the SIMD kernels behind attendV16Lanes for rows of
// hd values.
func (k Kernels) hasAxpyRot(hd int) bool { return k.level >= AVX512 && hd%16 == 0 }

// axpyRot adds p[r]·v[r] (f16 rows stride halves apart, hd values) to
// accumulator row (j0+r)&mask of acc (rows of hd floats), r in order.
func (k Kernels) axpyRot(acc []float32, mask, j0 int, p []float32, v []uint16, stride, hd int) {
	n := len(p)
	if n == 0 {
		return
	}
	_ = v[(n-1)*stride+hd-1]
	_ = acc[(mask+1)*hd-1]
	axpyRotF16Z(&acc[0], mask, j0, &p[0], &v[0], uintptr(2*stride), n, hd)
}

// axpyRowsD adds float64(p[r]·v[r][i]) to o[i], r in order.
func (k Kernels) axpyRowsD(o []float64, p []float32, v []uint16, stride int) {
	n, hd := len(p), len(o)
	if n == 0 {
		return
	}
	_ = v[(n-1)*stride+hd-1]
	axpyRowsF16DZ(&o[0], &p[0], &v[0], uintptr(2*stride), n, hd)
}

// axpyRowsF16 adds Σ_r p[r]·v[r*stride : r*stride+len(o)] to o, v in half
// precision (stride in halves).
func (k Kernels) axpyRowsF16(o, p []float32, v []uint16, stride int) {
	n, hd := len(p), len(o)
	if n == 0 || hd == 0 {
		return
	}
	_ = v[(n-1)*stride+hd-1]
	if k.level >= AVX512 {
		axpyRowsF16Z(&o[0], &p[0], &v[0], uintptr(2*stride), n, hd)
		return
	}
	if m := hd &^ 7; k.level >= AVX2 && m > 0 {
		axpyRowsF16Y(&o[0], &p[0], &v[0], uintptr(2*stride), n, hd)
		if m < hd {
			axpyRowsF16Go(o[m:], p, v[m:], stride)
		}
		return
	}
	axpyRowsF16Go(o, p, v, stride)
}

// roundF16 sets dst[i] to src[i] rounded to the nearest f16 value (ties to
// even); dst may be src.
func (k Kernels) roundF16(dst, src []float32) {
	if len(src) == 0 {
		return
	}
	_ = dst[len(src)-1]
	if k.level >= AVX512 {
		roundF16Z(&dst[0], &src[0], len(src))
		return
	}
	if m := len(src) &^ 7; k.level >= AVX2 && m > 0 {
		roundF16Y(&dst[0], &src[0], m)
		dst, src = dst[m:], src[m:]
	}
	roundF16Go(dst, src)
}

// toF16Bits converts src to half-precision bits in dst (len(src) values).
func (k Kernels) toF16Bits(dst []uint16, src []float32) {
	if len(src) == 0 {
		return
	}
	k.f32ToF16(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 2*len(src)), src)
}
