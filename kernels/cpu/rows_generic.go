//go:build !(amd64 || arm64) || noasm

package cpu

func (k Kernels) sumSq(x []float32) float64                { return sumSqGo(x) }
func (k Kernels) scale(dst, x []float32, a float32)        { scaleGo(dst, x, a) }
func (k Kernels) scaleMul(dst, x, w []float32, a float32)  { scaleMulGo(dst, x, w, a) }
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
