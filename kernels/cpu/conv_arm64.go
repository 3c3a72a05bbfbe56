//go:build arm64 && !noasm

package cpu

// NEON conversions (float_arm64.s), over n rounded down to 8; Go converts
// the rest.

//go:noescape
func f16RowNEON(dst *float32, src *byte, n int)

//go:noescape
func bf16RowNEON(dst *float32, src *byte, n int)

//go:noescape
func f32ToF16NEON(dst *byte, src *float32, n int)

func (k Kernels) f16ToF32(dst []float32, src []byte) {
	if m := len(dst) &^ 7; k.level >= NEON && m > 0 {
		_ = src[2*len(dst)-1]
		f16RowNEON(&dst[0], &src[0], m)
		dst, src = dst[m:], src[2*m:]
	}
	f16RowGo(dst, src)
}

func (k Kernels) bf16ToF32(dst []float32, src []byte) {
	if m := len(dst) &^ 7; k.level >= NEON && m > 0 {
		_ = src[2*len(dst)-1]
		bf16RowNEON(&dst[0], &src[0], m)
		dst, src = dst[m:], src[2*m:]
	}
	bf16RowGo(dst, src)
}

func (k Kernels) f32ToF16(dst []byte, src []float32) {
	if m := len(src) &^ 7; k.level >= NEON && m > 0 {
		_ = dst[2*len(src)-1]
		f32ToF16NEON(&dst[0], &src[0], m)
		dst, src = dst[2*m:], src[m:]
	}
	toF16RowGo(dst, src)
}
