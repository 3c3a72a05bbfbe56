//go:build amd64 && !noasm

package cpu

import "unsafe"

// AVX-512 row kernels (rowsz_amd64.s).

//go:noescape
func expSumZ(x *float32, n int, m float32) float32

//go:noescape
func maxZ(x *float32, n int) float32

//go:noescape
func scaleZ(dst, x *float32, n int, a float32)

//go:noescape
func scaleMulZ(dst, x, w *float32, n int, a float32)

// sumSqLanesZ sets l[j] to Σ x[i]² over i < n, i%8 = j, in sumSqGo's
// order; n is a multiple of 8.
//
//go:noescape
func sumSqLanesZ(l *[8]float64, x *float32, n int)

//go:noescape
func addZ(dst, a, b *float32, n int)

//go:noescape
func mulZ(dst, a, b *float32, n int)

//go:noescape
func axpyZ(y, x *float32, n int, a float32)

// siluZ sets dst[i] = siluf(x[i]) for i < n, bit for bit.
//
//go:noescape
func siluZ(dst, x *float32, n int)

// swigluZ sets dst[i] = siluf(gate[i])·up[i] for i < n, bit for bit.
//
//go:noescape
func swigluZ(dst, gate, up *float32, n int)

// expSumGGZ is expSumGGGo for x[0:n] (n ≥ 1), bit for bit.
//
//go:noescape
func expSumGGZ(x *float32, n int, m float32) float64

//go:noescape
func geluTanhZ(dst, x *float32, n int)

//go:noescape
func dotRowsZ(out, q, k *float32, stride uintptr, n, hd int)

//go:noescape
func axpyRowsZ(o, p, v *float32, stride uintptr, n, hd int)

// AVX2 row kernels (rowsy_amd64.s): they cover n rounded down to 8.

//go:noescape
func expSumY(x *float32, n int, m float32) float32

//go:noescape
func maxY(x *float32, n int) float32

//go:noescape
func scaleY(dst, x *float32, n int, a float32)

//go:noescape
func scaleMulY(dst, x, w *float32, n int, a float32)

// sumSqLanesY is sumSqLanesZ for AVX2.
//
//go:noescape
func sumSqLanesY(l *[8]float64, x *float32, n int)

//go:noescape
func addY(dst, a, b *float32, n int)

//go:noescape
func mulY(dst, a, b *float32, n int)

//go:noescape
func axpyY(y, x *float32, n int, a float32)

// siluY sets dst[i] = siluf(x[i]) for i < n&^7, bit for bit.
//
//go:noescape
func siluY(dst, x *float32, n int)

// swigluY sets dst[i] = siluf(gate[i])·up[i] for i < n&^7, bit for bit.
//
//go:noescape
func swigluY(dst, gate, up *float32, n int)

// expSumGGY is expSumGGGo for x[0:n] (n ≥ 1), bit for bit.
//
//go:noescape
func expSumGGY(x *float32, n int, m float32) float64

//go:noescape
func geluTanhY(dst, x *float32, n int)

//go:noescape
func axpyRowsY(o, p, v *float32, stride uintptr, n, hd int)

// The dispatchers below take slices whose lengths the callers have
// matched; an empty input does nothing.

// sumSq is sumSqGo: the kernels fill the lanes over whole vectors of 8,
// the last x[i] are added in Go.
func (k Kernels) sumSq(x []float32) float64 {
	var l [8]float64
	m := len(x) &^ 7
	switch {
	case m == 0:
	case k.level >= AVX512:
		sumSqLanesZ(&l, &x[0], m)
	case k.level >= AVX2:
		sumSqLanesY(&l, &x[0], m)
	default:
		m = 0
	}
	addSquares(&l, x, m)
	return sumLanes(&l)
}

func (k Kernels) scale(dst, x []float32, a float32) {
	if k.level >= AVX512 && len(x) > 0 {
		_ = dst[len(x)-1]
		scaleZ(&dst[0], &x[0], len(x), a)
		return
	}
	if m := len(x) &^ 7; k.level >= AVX2 && m > 0 {
		_ = dst[len(x)-1]
		scaleY(&dst[0], &x[0], m, a)
		dst, x = dst[m:], x[m:]
	}
	scaleGo(dst, x, a)
}

func (k Kernels) scaleMul(dst, x, w []float32, a float32) {
	if k.level >= AVX512 && len(x) > 0 {
		_, _ = dst[len(x)-1], w[len(x)-1]
		scaleMulZ(&dst[0], &x[0], &w[0], len(x), a)
		return
	}
	if m := len(x) &^ 7; k.level >= AVX2 && m > 0 {
		_, _ = dst[len(x)-1], w[len(x)-1]
		scaleMulY(&dst[0], &x[0], &w[0], m, a)
		dst, x, w = dst[m:], x[m:], w[m:]
	}
	scaleMulGo(dst, x, w, a)
}

func (k Kernels) max(x []float32) float32 {
	if k.level >= AVX512 {
		return maxZ(&x[0], len(x))
	}
	if m := len(x) &^ 7; k.level >= AVX2 && m > 0 {
		v := maxY(&x[0], m)
		if m < len(x) {
			v = max(v, maxGo(x[m:]))
		}
		return v
	}
	return maxGo(x)
}

func (k Kernels) expSum(x []float32, m float32) float32 {
	if k.level >= AVX512 && len(x) > 0 {
		return expSumZ(&x[0], len(x), m)
	}
	if n := len(x) &^ 7; k.level >= AVX2 && n > 0 {
		return expSumY(&x[0], n, m) + expSumGo(x[n:], m)
	}
	return expSumGo(x, m)
}

func (k Kernels) silu(dst, x []float32) {
	if k.level >= AVX512 && len(x) > 0 {
		_ = dst[len(x)-1]
		siluZ(&dst[0], &x[0], len(x))
		return
	}
	if m := len(x) &^ 7; k.level >= AVX2 && m > 0 {
		_ = dst[len(x)-1]
		siluY(&dst[0], &x[0], m)
		dst, x = dst[m:], x[m:]
	}
	siluGo(dst, x)
}

func (k Kernels) geluTanh(dst, x []float32) {
	if k.level >= AVX512 && len(x) > 0 {
		_ = dst[len(x)-1]
		geluTanhZ(&dst[0], &x[0], len(x))
		return
	}
	if m := len(x) &^ 7; k.level >= AVX2 && m > 0 {
		_ = dst[len(x)-1]
		geluTanhY(&dst[0], &x[0], m)
		dst, x = dst[m:], x[m:]
	}
	geluTanhGo(dst, x)
}

func (k Kernels) swiglu(dst, g, u []float32) {
	if k.level >= AVX512 && len(g) > 0 {
		_, _ = dst[len(g)-1], u[len(g)-1]
		swigluZ(&dst[0], &g[0], &u[0], len(g))
		return
	}
	if m := len(g) &^ 7; k.level >= AVX2 && m > 0 {
		_, _ = dst[len(g)-1], u[len(g)-1]
		swigluY(&dst[0], &g[0], &u[0], m)
		dst, g, u = dst[m:], g[m:], u[m:]
	}
	swigluGo(dst, g, u)
}

func (k Kernels) add(dst, a, b []float32) {
	if k.level >= AVX512 && len(a) > 0 {
		_, _ = dst[len(a)-1], b[len(a)-1]
		addZ(&dst[0], &a[0], &b[0], len(a))
		return
	}
	if m := len(a) &^ 7; k.level >= AVX2 && m > 0 {
		_, _ = dst[len(a)-1], b[len(a)-1]
		addY(&dst[0], &a[0], &b[0], m)
		dst, a, b = dst[m:], a[m:], b[m:]
	}
	addGo(dst, a, b)
}

func (k Kernels) mul(dst, a, b []float32) {
	if k.level >= AVX512 && len(a) > 0 {
		_, _ = dst[len(a)-1], b[len(a)-1]
		mulZ(&dst[0], &a[0], &b[0], len(a))
		return
	}
	if m := len(a) &^ 7; k.level >= AVX2 && m > 0 {
		_, _ = dst[len(a)-1], b[len(a)-1]
		mulY(&dst[0], &a[0], &b[0], m)
		dst, a, b = dst[m:], a[m:], b[m:]
	}
	mulGo(dst, a, b)
}

func (k Kernels) axpy(y, x []float32, a float32) {
	if k.level >= AVX512 && len(x) > 0 {
		_ = y[len(x)-1]
		axpyZ(&y[0], &x[0], len(x), a)
		return
	}
	if m := len(x) &^ 7; k.level >= AVX2 && m > 0 {
		_ = y[len(x)-1]
		axpyY(&y[0], &x[0], m, a)
		y, x = y[m:], x[m:]
	}
	axpyGo(y, x, a)
}

// dotRows sets out[r] = q·k[r*stride : r*stride+len(q)] for r < len(out).
func (k Kernels) dotRows(out, q, kr []float32, stride int) {
	n, hd := len(out), len(q)
	if n == 0 || hd == 0 {
		clear(out)
		return
	}
	_ = kr[(n-1)*stride+hd-1]
	switch {
	case k.level >= AVX512:
		dotRowsZ(&out[0], &q[0], &kr[0], uintptr(4*stride), n, hd)
	case k.level >= AVX2:
		for r := range out {
			out[r] = k.floatDot(ftF32, unsafe.Slice((*byte)(unsafe.Pointer(&kr[r*stride])), 4*hd), q)
		}
	default:
		dotRowsGo(out, q, kr, stride)
	}
}

// axpyRows adds Σ_r p[r]·v[r*stride : r*stride+len(o)] to o.
func (k Kernels) axpyRows(o, p, v []float32, stride int) {
	n, hd := len(p), len(o)
	if n == 0 || hd == 0 {
		return
	}
	_ = v[(n-1)*stride+hd-1]
	if k.level >= AVX512 {
		axpyRowsZ(&o[0], &p[0], &v[0], uintptr(4*stride), n, hd)
		return
	}
	if m := hd &^ 7; k.level >= AVX2 && m > 0 {
		axpyRowsY(&o[0], &p[0], &v[0], uintptr(4*stride), n, hd)
		if m < hd {
			axpyRowsGo(o[m:], p, v[m:], stride)
		}
		return
	}
	axpyRowsGo(o, p, v, stride)
}

// expSumGG sets x[i] = expf(x[i] - m) and returns their sum in ggml's
// soft_max order (see expSumGGGo), bit for bit on every level (a NaN
// may differ in sign or payload).
func (k Kernels) expSumGG(x []float32, m float32) float64 {
	switch {
	case len(x) == 0:
		return 0
	case k.level >= AVX512:
		return expSumGGZ(&x[0], len(x), m)
	case k.level >= AVX2:
		return expSumGGY(&x[0], len(x), m)
	}
	return expSumGGGo(x, m)
}
