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

// Direct calls (not through function values) keep the assembly's
// noescape annotations visible to escape analysis.

func dotZ(dt floatType, w unsafe.Pointer, x *float32, k int) float32 {
	switch dt {
	case ftF16:
		return dotF16Z(w, x, k)
	case ftBF16:
		return dotBF16Z(w, x, k)
	}
	return dotF32Z(w, x, k)
}

func dotY(dt floatType, w unsafe.Pointer, x *float32, k int) float32 {
	switch dt {
	case ftF16:
		return dotF16Y(w, x, k)
	case ftBF16:
		return dotBF16Y(w, x, k)
	}
	return dotF32Y(w, x, k)
}

func gemvZ(dt floatType, w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32) {
	switch dt {
	case ftF16:
		gemvF16Z(w, ldw, x, k, y)
	case ftBF16:
		gemvBF16Z(w, ldw, x, k, y)
	default:
		gemvF32Z(w, ldw, x, k, y)
	}
}

func gemvY(dt floatType, w unsafe.Pointer, ldw uintptr, x *float32, k int, y *[4]float32) {
	switch dt {
	case ftF16:
		gemvF16Y(w, ldw, x, k, y)
	case ftBF16:
		gemvBF16Y(w, ldw, x, k, y)
	default:
		gemvF32Y(w, ldw, x, k, y)
	}
}

func gemmZ(dt floatType, w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int) {
	switch dt {
	case ftF16:
		gemmF16Z(w, ldw, x, ldx, k, dst, ldd, acc)
	case ftBF16:
		gemmBF16Z(w, ldw, x, ldx, k, dst, ldd, acc)
	default:
		gemmF32Z(w, ldw, x, ldx, k, dst, ldd, acc)
	}
}

func gemmY(dt floatType, w unsafe.Pointer, ldw uintptr, x *float32, ldx uintptr, k int, dst *float32, ldd uintptr, acc int) {
	switch dt {
	case ftF16:
		gemmF16Y(w, ldw, x, ldx, k, dst, ldd, acc)
	case ftBF16:
		gemmBF16Y(w, ldw, x, ldx, k, dst, ldd, acc)
	default:
		gemmF32Y(w, ldw, x, ldx, k, dst, ldd, acc)
	}
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
		return dotZ(dt, unsafe.Pointer(&w[0]), &x[0], n)
	case k.level >= AVX2:
		s := dotY(dt, unsafe.Pointer(&w[0]), &x[0], n)
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
		gemvZ(dt, unsafe.Pointer(&w[0]), uintptr(ldw), &x[0], n, y)
	case k.level >= AVX2:
		gemvY(dt, unsafe.Pointer(&w[0]), uintptr(ldw), &x[0], n, y)
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
		gemmZ(dt, unsafe.Pointer(&w[0]), uintptr(ldw), &x[0], uintptr(4*ldx), n, &dst[0], uintptr(4*ldd), ac)
	case k.level >= AVX2:
		gemmY(dt, unsafe.Pointer(&w[0]), uintptr(ldw), &x[0], uintptr(4*ldx), n, &dst[0], uintptr(4*ldd), ac)
		gemmY(dt, unsafe.Pointer(&w[0]), uintptr(ldw), &x[2*ldx], uintptr(4*ldx), n, &dst[2*ldd], uintptr(4*ldd), ac)
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
