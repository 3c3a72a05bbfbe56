//go:build arm64 && !noasm

package cpu

import "unsafe"

// NEON kernels (float_arm64.s).

//go:noescape
func gemv4F32NEON(w *byte, ldw uintptr, x *float32, n int, y *[4]float32)

//go:noescape
func gemv4F16NEON(w *byte, ldw uintptr, x *float32, n int, y *[4]float32)

//go:noescape
func gemv4x2F32NEON(w *byte, ldw uintptr, x *float32, ldx uintptr, n int, y *[8]float32)

//go:noescape
func gemv4BF16NEON(w *byte, ldw uintptr, x *float32, n int, y *[4]float32)

// floatDot returns the dot product of a row of F32, F16 or BF16 weights
// with x.
func (k Kernels) floatDot(dt floatType, w []byte, x []float32) float32 {
	if k.level < NEON || len(x) < 8 {
		return floatDotGo(dt, w, x)
	}
	// Four copies of the row, read from cache.
	var y [4]float32
	k.floatGemv4(dt, w, 0, x, &y)
	return y[0]
}

// floatGemv4 sets y[r] to the dot product of row r (of 4, ldw bytes
// apart from w) with x.
func (k Kernels) floatGemv4(dt floatType, w []byte, ldw int, x []float32, y *[4]float32) {
	n := len(x)
	m := n &^ 7
	if k.level < NEON || m == 0 {
		for r := range 4 {
			y[r] = floatDotGo(dt, w[r*ldw:], x)
		}
		return
	}
	es := dt.size()
	_ = w[3*ldw+n*es-1]
	// Direct calls: through a func value, y would escape (and allocate).
	wp := (*byte)(unsafe.Pointer(&w[0]))
	switch dt {
	case ftF16:
		gemv4F16NEON(wp, uintptr(ldw), &x[0], m, y)
	case ftBF16:
		gemv4BF16NEON(wp, uintptr(ldw), &x[0], m, y)
	default:
		gemv4F32NEON(wp, uintptr(ldw), &x[0], m, y)
	}
	if m < n {
		for r := range 4 {
			y[r] += floatDotGo(dt, w[r*ldw+m*es:], x[m:])
		}
	}
}

// floatTile computes a 4-row × 4-token tile: dst[t·ldd+r] (+)= w_r·x_t
// over n values, tokens ldx values apart. For F32 weights (the F16 and BF16
// ones arrive widened, floatRowsTiles) pairs of tokens share each load of
// the weights (gemv4x2F32NEON); every output is floatGemv4's sum, bit for
// bit.
func (k Kernels) floatTile(dt floatType, w []byte, ldw int, x []float32, ldx, n int, dst []float32, ldd int, acc bool) {
	if k.level < NEON {
		floatTileGo(dt, w, ldw, x, ldx, n, dst, ldd, acc)
		return
	}
	m := n &^ 7
	if dt != ftF32 || m == 0 {
		var y [4]float32
		for t := range 4 {
			k.floatGemv4(dt, w, ldw, x[t*ldx:t*ldx+n], &y)
			for r, v := range y {
				put(dst, t*ldd+r, v, acc)
			}
		}
		return
	}
	_ = w[3*ldw+4*n-1]
	_ = x[3*ldx+n-1]
	var y [8]float32
	for t := 0; t < 4; t += 2 {
		gemv4x2F32NEON(&w[0], uintptr(ldw), &x[t*ldx], uintptr(4*ldx), m, &y)
		for i, v := range y {
			tk, r := t+i/4, i%4
			if m < n {
				v += floatDotGo(dt, w[r*ldw+4*m:], x[tk*ldx+m:tk*ldx+n])
			}
			put(dst, tk*ldd+r, v, acc)
		}
	}
}
