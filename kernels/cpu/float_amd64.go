//go:build amd64 && !noasm

package cpu

import "unsafe"

// AVX-512 kernels for F32, F16 and BF16 weights times float32 activations
// (floatz_amd64.s). k may be any length: tails use masked loads.
//
//go:noescape
func dotF32Z(w unsafe.Pointer, x *float32, k int) float32

//go:noescape
func gemvF32Z(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)

//go:noescape
func gemmF32Z(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)

//go:noescape
func dotF16Z(w unsafe.Pointer, x *float32, k int) float32

//go:noescape
func gemvF16Z(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)

//go:noescape
func gemmF16Z(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)

//go:noescape
func dotBF16Z(w unsafe.Pointer, x *float32, k int) float32

//go:noescape
func gemvBF16Z(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)

//go:noescape
func gemmBF16Z(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)

// AVX2 kernels (floaty_amd64.s): they cover k rounded down to a multiple
// of 8; the callers add the rest.
//
//go:noescape
func dotF32Y(w unsafe.Pointer, x *float32, k int) float32

//go:noescape
func gemvF32Y(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)

//go:noescape
func gemmF32Y(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)

//go:noescape
func dotF16Y(w unsafe.Pointer, x *float32, k int) float32

//go:noescape
func gemvF16Y(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)

//go:noescape
func gemmF16Y(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)

//go:noescape
func dotBF16Y(w unsafe.Pointer, x *float32, k int) float32

//go:noescape
func gemvBF16Y(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)

//go:noescape
func gemmBF16Y(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)

type floatAsm struct {
	dot  func(w unsafe.Pointer, x *float32, k int) float32
	gemv func(w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32)
	gemm func(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)
	// AVX2 variants cover k rounded down to 8 and 2 tokens per tile.
	gemm2 func(w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int)
}

var floatZ = [3]floatAsm{
	ftF32:  {dot: dotF32Z, gemv: gemvF32Z, gemm: gemmF32Z},
	ftF16:  {dot: dotF16Z, gemv: gemvF16Z, gemm: gemmF16Z},
	ftBF16: {dot: dotBF16Z, gemv: gemvBF16Z, gemm: gemmBF16Z},
}

var floatY = [3]floatAsm{
	ftF32:  {dot: dotF32Y, gemv: gemvF32Y, gemm2: gemmF32Y},
	ftF16:  {dot: dotF16Y, gemv: gemvF16Y, gemm2: gemmF16Y},
	ftBF16: {dot: dotBF16Y, gemv: gemvBF16Y, gemm2: gemmBF16Y},
}

// floatDot returns the dot product of a weight row of type dt (len(x)
// elements) with x.
func (k Kernels) floatDot(dt floatType, w []byte, x []float32) float32 {
	n := len(x)
	if n == 0 {
		return 0
	}
	_ = w[n*dt.size()-1]
	switch {
	case k.level >= AVX512:
		return floatZ[dt].dot(unsafe.Pointer(&w[0]), &x[0], n)
	case k.level >= AVX2:
		s := floatY[dt].dot(unsafe.Pointer(&w[0]), &x[0], n)
		if m := n &^ 7; m < n {
			s += floatDotGo(dt, w[m*dt.size():], x[m:])
		}
		return s
	}
	return floatDotGo(dt, w, x)
}

// floatGemv4 computes y[r] = w_r·x for the 4 rows starting at w, ldw
// bytes apart.
func (k Kernels) floatGemv4(dt floatType, w []byte, ldw int, x []float32, y *[4]float32) {
	n := len(x)
	if n == 0 {
		*y = [4]float32{}
		return
	}
	es := dt.size()
	_ = w[3*ldw+n*es-1]
	switch {
	case k.level >= AVX512:
		floatZ[dt].gemv(unsafe.Pointer(&w[0]), uintptr(ldw), &x[0], n, y)
	case k.level >= AVX2:
		floatY[dt].gemv(unsafe.Pointer(&w[0]), uintptr(ldw), &x[0], n, y)
		if m := n &^ 7; m < n {
			for r := range 4 {
				y[r] += floatDotGo(dt, w[r*ldw+m*es:], x[m:])
			}
		}
	default:
		for r := range 4 {
			y[r] = floatDotGo(dt, w[r*ldw:], x)
		}
	}
}

// floatTile computes dst[t*ldd+r] (+)= w_r·x_t for 4 rows of w (ldw bytes
// apart) and 4 tokens of x (ldx floats apart), each of n elements; the sums
// are added to dst when acc is set.
func (k Kernels) floatTile(dt floatType, w []byte, ldw int, x []float32, ldx, n int, dst []float32, ldd int, acc bool) {
	es := dt.size()
	_ = dst[3*ldd+3]
	if n == 0 {
		if !acc {
			for t := range 4 {
				clear(dst[t*ldd : t*ldd+4])
			}
		}
		return
	}
	_ = w[3*ldw+n*es-1]
	_ = x[3*ldx+n-1]
	ac := 0
	if acc {
		ac = 1
	}
	switch {
	case k.level >= AVX512:
		floatZ[dt].gemm(unsafe.Pointer(&w[0]), uintptr(ldw), &x[0], uintptr(4*ldx), n, &dst[0], uintptr(4*ldd), ac)
	case k.level >= AVX2:
		f := floatY[dt].gemm2
		f(unsafe.Pointer(&w[0]), uintptr(ldw), &x[0], uintptr(4*ldx), n, &dst[0], uintptr(4*ldd), ac)
		f(unsafe.Pointer(&w[0]), uintptr(ldw), &x[2*ldx], uintptr(4*ldx), n, &dst[2*ldd], uintptr(4*ldd), ac)
		if m := n &^ 7; m < n {
			for t := range 4 {
				for r := range 4 {
					dst[t*ldd+r] += floatDotGo(dt, w[r*ldw+m*es:], x[t*ldx+m:t*ldx+n])
				}
			}
		}
	default:
		floatTileGo(dt, w, ldw, x, ldx, n, dst, ldd, acc)
	}
}
