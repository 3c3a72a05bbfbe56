//go:build arm64 && !noasm

package cpu

import "github.com/weftrun/weft/kernels/quant"

// NEON activation quantizers (q8quant_arm64.s): quantBlockQ8 and
// quant.QuantizeRowQ8_K bit for bit.

//go:noescape
func packQ8NEON(dst *byte, x *float32, nb int, b int)

//go:noescape
func quantizeQ8_0NEON(dst *byte, x *float32, nb int)

//go:noescape
func quantizeQ8_KNEON(dst *byte, x *float32, nb int)

// packQ8 quantizes x into layout A (b = 0) or B (b = 1), as packQ8Go.
func (k Kernels) packQ8(dst []byte, x []float32, b int) {
	nb := len(x) / 32
	if k.level < NEON || nb == 0 {
		if b == 0 {
			packQ8AGo(dst, x)
		} else {
			packQ8BGo(dst, x)
		}
		return
	}
	dst = dst[:q8aRowBytes(len(x))]
	clear(dst[nb/4*q8aGroup:])
	packQ8NEON(&dst[0], &x[0], nb, b)
}

func (k Kernels) packQ8A(dst []byte, x []float32) { k.packQ8(dst, x, 0) }

func (k Kernels) packQ8B(dst []byte, x []float32) { k.packQ8(dst, x, 1) }

func (k Kernels) quantizeQ8_0(dst []byte, x []float32) {
	nb := len(x) / 32
	if k.level < NEON || nb == 0 {
		quantizeQ8_0Go(dst, x)
		return
	}
	_ = dst[nb*34-1]
	quantizeQ8_0NEON(&dst[0], &x[0], nb)
}

// quantizeQ8_K quantizes x (a multiple of 256 values) into Q8_K blocks in
// dst, as quant.QuantizeRowQ8_K.
func (k Kernels) quantizeQ8_K(dst []byte, x []float32) {
	nb := len(x) / 256
	if k.level < NEON || nb == 0 {
		quant.QuantizeRowQ8_K(dst, x)
		return
	}
	_ = dst[nb*292-1]
	quantizeQ8_KNEON(&dst[0], &x[0], nb)
}
