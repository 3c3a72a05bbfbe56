//go:build arm64 && !noasm

package cpu

// NEON kernels (rows_arm64.s).

//go:noescape
func sumSqLanesNEON(l *[8]float64, x *float32, n int)

//go:noescape
func scaleMulNEON(dst, x, w *float32, n int, a float32)

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

// The other row kernels are Go on arm64 for now.

func (k Kernels) scale(dst, x []float32, a float32)        { scaleGo(dst, x, a) }
func (k Kernels) max(x []float32) float32                  { return maxGo(x) }
func (k Kernels) expSum(x []float32, m float32) float32    { return expSumGo(x, m) }
func (k Kernels) silu(dst, x []float32)                    { siluGo(dst, x) }
func (k Kernels) geluTanh(dst, x []float32)                { geluTanhGo(dst, x) }
func (k Kernels) swiglu(dst, g, u []float32)               { swigluGo(dst, g, u) }
func (k Kernels) add(dst, a, b []float32)                  { addGo(dst, a, b) }
func (k Kernels) mul(dst, a, b []float32)                  { mulGo(dst, a, b) }
func (k Kernels) axpy(y, x []float32, a float32)           { axpyGo(y, x, a) }
func (k Kernels) dotRows(out, q, kr []float32, stride int) { dotRowsGo(out, q, kr, stride) }
func (k Kernels) axpyRows(o, p, v []float32, stride int)   { axpyRowsGo(o, p, v, stride) }

func (k Kernels) expSumGG(x []float32, m float32) float64 { return expSumGGGo(x, m) }
