//go:build arm64 && !noasm

package cpu

import "unsafe"

// Half-precision attention kernels (attention_arm64.s), in ggml's orders.

//go:noescape
func dotRowsF16GGNEON(out, q *float32, k *uint16, stride uintptr, n, hd, batched int)

//go:noescape
func axpyRotF16NEON(acc *float32, mask, j0 int, p *float32, v *uint16, stride uintptr, n, hd int)

//go:noescape
func axpyRowsF16DNEON(o *float64, p *float32, v *uint16, stride uintptr, n, hd int)

//go:noescape
func roundF16NEON(dst, src *float32, n int)

// dotRowsF16 sets out[r] = q·k[r*stride : r*stride+len(q)] for r <
// len(out), k in half precision (stride in halves), in ggml's order for a
// batch or a single query (dotF16GG): the kernel runs the lanes, Go adds a
// single query's values past the last multiple of 64 in float64.
func (k Kernels) dotRowsF16(out, q []float32, kr []uint16, stride int, batched bool) {
	n, hd := len(out), len(q)
	if n == 0 || hd == 0 {
		clear(out)
		return
	}
	_ = kr[(n-1)*stride+hd-1]
	if k.level < NEON {
		dotRowsF16Go(out, q, kr, stride, batched)
		return
	}
	if batched && hd%16 == 0 {
		dotRowsF16GGNEON(&out[0], &q[0], &kr[0], uintptr(2*stride), n, hd, 1)
		return
	}
	np := hd &^ 63
	if np == 0 {
		dotRowsF16Go(out, q, kr, stride, batched)
		return
	}
	dotRowsF16GGNEON(&out[0], &q[0], &kr[0], uintptr(2*stride), n, np, 0)
	if np == hd {
		return
	}
	for r := range out {
		s := float64(out[r])
		row := kr[r*stride : r*stride+hd]
		for i := np; i < hd; i++ {
			s += float64(q[i] * f16(row[i]))
		}
		out[r] = float32(s)
	}
}

// hasAxpyRot reports the SIMD kernels behind attendV16Lanes for rows of
// hd values.
func (k Kernels) hasAxpyRot(hd int) bool { return k.level >= NEON && hd%8 == 0 && hd > 0 }

// axpyRot adds p[r]·v[r] (f16 rows stride halves apart, hd values) to
// accumulator row (j0+r)&mask of acc (rows of hd floats), r in order.
func (k Kernels) axpyRot(acc []float32, mask, j0 int, p []float32, v []uint16, stride, hd int) {
	n := len(p)
	if n == 0 {
		return
	}
	_ = v[(n-1)*stride+hd-1]
	_ = acc[(mask+1)*hd-1]
	axpyRotF16NEON(&acc[0], mask, j0, &p[0], &v[0], uintptr(2*stride), n, hd)
}

// axpyRowsD adds float64(p[r]·v[r][i]) to o[i], r in order.
func (k Kernels) axpyRowsD(o []float64, p []float32, v []uint16, stride int) {
	n, hd := len(p), len(o)
	if n == 0 {
		return
	}
	_ = v[(n-1)*stride+hd-1]
	axpyRowsF16DNEON(&o[0], &p[0], &v[0], uintptr(2*stride), n, hd)
}

// axpyRowsF16 adds Σ_r p[r]·v[r*stride : r*stride+len(o)] to o, v in half
// precision; Go on arm64.
func (k Kernels) axpyRowsF16(o, p []float32, v []uint16, stride int) {
	axpyRowsF16Go(o, p, v, stride)
}

// roundF16 sets dst[i] to src[i] rounded to the nearest f16 value (ties to
// even); dst may be src.
func (k Kernels) roundF16(dst, src []float32) {
	if m := len(src) &^ 3; k.level >= NEON && m > 0 {
		_ = dst[len(src)-1]
		roundF16NEON(&dst[0], &src[0], m)
		dst, src = dst[m:], src[m:]
	}
	roundF16Go(dst, src)
}

// toF16Bits converts src to half-precision bits in dst (FCVTN over
// whole groups of 8).
func (k Kernels) toF16Bits(dst []uint16, src []float32) {
	if m := len(src) &^ 7; k.level >= NEON && m > 0 {
		_ = dst[len(src)-1]
		f32ToF16NEON((*byte)(unsafe.Pointer(&dst[0])), &src[0], m)
		dst, src = dst[m:], src[m:]
	}
	toF16BitsGo(dst, src)
}
