//go:build arm64 && !noasm

package cpu

// NEON kernels (rows_arm64.s).

//go:noescape
func sumSqLanesNEON(l *[8]float64, x *float32, n int)

//go:noescape
func scaleMulNEON(dst, x, w *float32, n int, a float32)

// siluNEON, swigluNEON and expSumGGNEON are siluGo, swigluGo and
// expSumGGGo (over whole groups of 16) bit for bit: ggml's expf on 4
// lanes.
//
//go:noescape
func siluNEON(dst, x *float32, n int)

//go:noescape
func swigluNEON(dst, gate, up *float32, n int)

//go:noescape
func expSumGGNEON(x *float32, n int, m float32) float64

//go:noescape
func scaleNEON(dst, x *float32, n int, a float32)

//go:noescape
func axpyNEON(y, x *float32, n int, a float32)

//go:noescape
func addNEON(dst, a, b *float32, n int)

//go:noescape
func mulNEON(dst, a, b *float32, n int)

//go:noescape
func maxNEON(x *float32, n int) float32

// dotRowsNEON and axpyRowsNEON are dotRowsGo and axpyRowsGo as Go compiles
// them for arm64 (fusing s += a*b into one FMADD), for rows of a multiple
// of 4 values.
//
//go:noescape
func dotRowsNEON(out, q, k *float32, stride uintptr, n, hd int)

//go:noescape
func axpyRowsNEON(o, p, v *float32, stride uintptr, n, hd int)

// sumSq is sumSqGo: the kernel fills the lanes over whole groups of 8,
// Go adds the tail and the lanes.
func (k Kernels) sumSq(x []float32) float64 {
	m := len(x) &^ 7
	if k.level < NEON || m == 0 {
		return sumSqGo(x)
	}
	var l [8]float64
	sumSqLanesNEON(&l, &x[0], m)
	addSquares(&l, x, m)
	return sumLanes(&l)
}

// scaleMul sets dst[i] = x[i]·a·w[i].
func (k Kernels) scaleMul(dst, x, w []float32, a float32) {
	m := len(x) &^ 3
	if k.level < NEON || m == 0 {
		scaleMulGo(dst, x, w, a)
		return
	}
	_, _ = dst[len(x)-1], w[len(x)-1]
	scaleMulNEON(&dst[0], &x[0], &w[0], m, a)
	scaleMulGo(dst[m:], x[m:], w[m:], a)
}

// The kernels below run whole vectors (of 4, or 16 values for
// expSumGG) in NEON and the rest in Go.

func (k Kernels) scale(dst, x []float32, a float32) {
	if m := len(x) &^ 3; k.level >= NEON && m > 0 {
		_ = dst[len(x)-1]
		scaleNEON(&dst[0], &x[0], m, a)
		dst, x = dst[m:], x[m:]
	}
	scaleGo(dst, x, a)
}

func (k Kernels) max(x []float32) float32 {
	m := len(x) &^ 3
	if k.level < NEON || m == 0 {
		return maxGo(x)
	}
	v := maxNEON(&x[0], m)
	for _, u := range x[m:] {
		if u > v {
			v = u
		}
	}
	return v
}

func (k Kernels) silu(dst, x []float32) {
	if m := len(x) &^ 3; k.level >= NEON && m > 0 {
		_ = dst[len(x)-1]
		siluNEON(&dst[0], &x[0], m)
		dst, x = dst[m:], x[m:]
	}
	siluGo(dst, x)
}

func (k Kernels) swiglu(dst, g, u []float32) {
	if m := len(g) &^ 3; k.level >= NEON && m > 0 {
		_, _ = dst[len(g)-1], u[len(g)-1]
		swigluNEON(&dst[0], &g[0], &u[0], m)
		dst, g, u = dst[m:], g[m:], u[m:]
	}
	swigluGo(dst, g, u)
}

func (k Kernels) add(dst, a, b []float32) {
	if m := len(a) &^ 3; k.level >= NEON && m > 0 {
		_, _ = dst[len(a)-1], b[len(a)-1]
		addNEON(&dst[0], &a[0], &b[0], m)
		dst, a, b = dst[m:], a[m:], b[m:]
	}
	addGo(dst, a, b)
}

func (k Kernels) mul(dst, a, b []float32) {
	if m := len(a) &^ 3; k.level >= NEON && m > 0 {
		_, _ = dst[len(a)-1], b[len(a)-1]
		mulNEON(&dst[0], &a[0], &b[0], m)
		dst, a, b = dst[m:], a[m:], b[m:]
	}
	mulGo(dst, a, b)
}

func (k Kernels) axpy(y, x []float32, a float32) {
	if m := len(x) &^ 3; k.level >= NEON && m > 0 {
		_ = y[len(x)-1]
		axpyNEON(&y[0], &x[0], m, a)
		y, x = y[m:], x[m:]
	}
	axpyGo(y, x, a)
}

// expSumGG is expSumGGGo: the kernel covers whole groups of 16 values,
// Go the last group (its hsum16 added last, as in expSumGGGo).
func (k Kernels) expSumGG(x []float32, m float32) float64 {
	n := len(x) &^ 15
	if k.level < NEON || n == 0 {
		return expSumGGGo(x, m)
	}
	s := expSumGGNEON(&x[0], n, m)
	if n < len(x) {
		s += expSumGGGo(x[n:], m)
	}
	return s
}

// dotRows and axpyRows (the f32 attention) are dotRowsGo and axpyRowsGo as
// compiled for arm64, bit for bit, for head sizes that are multiples of 4.
func (k Kernels) dotRows(out, q, kr []float32, stride int) {
	n, hd := len(out), len(q)
	if k.level < NEON || n == 0 || hd == 0 || hd%4 != 0 {
		dotRowsGo(out, q, kr, stride)
		return
	}
	_ = kr[(n-1)*stride+hd-1]
	dotRowsNEON(&out[0], &q[0], &kr[0], uintptr(4*stride), n, hd)
}

func (k Kernels) axpyRows(o, p, v []float32, stride int) {
	n, hd := len(p), len(o)
	if k.level < NEON || n == 0 || hd == 0 || hd%4 != 0 {
		axpyRowsGo(o, p, v, stride)
		return
	}
	_ = v[(n-1)*stride+hd-1]
	axpyRowsNEON(&o[0], &p[0], &v[0], uintptr(4*stride), n, hd)
}

// The other row kernels are Go on arm64 for now.

func (k Kernels) expSum(x []float32, m float32) float32 { return expSumGo(x, m) }
func (k Kernels) geluTanh(dst, x []float32)             { geluTanhGo(dst, x) }
