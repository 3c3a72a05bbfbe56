//go:build amd64 && !noasm

package cpu

import "unsafe"

//go:noescape
func f16ToF32Z(dst *float32, src *uint16, n int)

//go:noescape
func bf16ToF32Z(dst *float32, src *uint16, n int)

//go:noescape
func f32ToF16Z(dst *uint16, src *float32, n int)

// AVX2 versions (rowsy_amd64.s), for n rounded down to 8.

//go:noescape
func f16ToF32Y(dst *float32, src *uint16, n int)

//go:noescape
func bf16ToF32Y(dst *float32, src *uint16, n int)

//go:noescape
func f32ToF16Y(dst *uint16, src *float32, n int)

func (k Kernels) f16ToF32(dst []float32, src []byte) {
	if k.level >= AVX512 && len(dst) > 0 {
		_ = src[2*len(dst)-1]
		f16ToF32Z(&dst[0], (*uint16)(unsafe.Pointer(&src[0])), len(dst))
		return
	}
	if m := len(dst) &^ 7; k.level >= AVX2 && m > 0 {
		_ = src[2*len(dst)-1]
		f16ToF32Y(&dst[0], (*uint16)(unsafe.Pointer(&src[0])), m)
		dst, src = dst[m:], src[2*m:]
	}
	f16RowGo(dst, src)
}

func (k Kernels) bf16ToF32(dst []float32, src []byte) {
	if k.level >= AVX512 && len(dst) > 0 {
		_ = src[2*len(dst)-1]
		bf16ToF32Z(&dst[0], (*uint16)(unsafe.Pointer(&src[0])), len(dst))
		return
	}
	if m := len(dst) &^ 7; k.level >= AVX2 && m > 0 {
		_ = src[2*len(dst)-1]
		bf16ToF32Y(&dst[0], (*uint16)(unsafe.Pointer(&src[0])), m)
		dst, src = dst[m:], src[2*m:]
	}
	bf16RowGo(dst, src)
}

func (k Kernels) f32ToF16(dst []byte, src []float32) {
	if k.level >= AVX512 && len(src) > 0 {
		_ = dst[2*len(src)-1]
		f32ToF16Z((*uint16)(unsafe.Pointer(&dst[0])), &src[0], len(src))
		return
	}
	if m := len(src) &^ 7; k.level >= AVX2 && m > 0 {
		_ = dst[2*len(src)-1]
		f32ToF16Y((*uint16)(unsafe.Pointer(&dst[0])), &src[0], m)
		dst, src = dst[2*m:], src[m:]
	}
	toF16RowGo(dst, src)
}
