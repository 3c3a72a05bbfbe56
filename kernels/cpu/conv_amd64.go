//go:build amd64 && !noasm

package cpu

import "unsafe"

//go:noescape
func f16ToF32Z(dst *float32, src *uint16, n int)

//go:noescape
func bf16ToF32Z(dst *float32, src *uint16, n int)

//go:noescape
func f32ToF16Z(dst *uint16, src *float32, n int)

func (k Kernels) f16ToF32(dst []float32, src []byte) {
	if k.level >= AVX512 && len(dst) > 0 {
		_ = src[2*len(dst)-1]
		f16ToF32Z(&dst[0], (*uint16)(unsafe.Pointer(&src[0])), len(dst))
		return
	}
	f16RowGo(dst, src)
}

func (k Kernels) bf16ToF32(dst []float32, src []byte) {
	if k.level >= AVX512 && len(dst) > 0 {
		_ = src[2*len(dst)-1]
		bf16ToF32Z(&dst[0], (*uint16)(unsafe.Pointer(&src[0])), len(dst))
		return
	}
	bf16RowGo(dst, src)
}

func (k Kernels) f32ToF16(dst []byte, src []float32) {
	if k.level >= AVX512 && len(src) > 0 {
		_ = dst[2*len(src)-1]
		f32ToF16Z((*uint16)(unsafe.Pointer(&dst[0])), &src[0], len(src))
		return
	}
	toF16RowGo(dst, src)
}
