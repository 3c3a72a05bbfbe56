package cpu

import "fmt"

// F16ToF32 converts the IEEE half-precision values in src (2 bytes each,
// little-endian) to float32s in dst, exactly; it converts len(dst) values.
func F16ToF32(dst []float32, src []byte) error {
	if len(src) < 2*len(dst) {
		return fmt.Errorf("f16 to f32: %d bytes for %d values", len(src), len(dst))
	}
	detected.f16ToF32(dst, src)
	return nil
}

// F32ToF16 converts src to IEEE half-precision values in dst (2 bytes
// each, little-endian), rounding to nearest even; values beyond the f16
// range become ±Inf.
func F32ToF16(dst []byte, src []float32) error {
	if len(dst) < 2*len(src) {
		return fmt.Errorf("f32 to f16: %d bytes for %d values", len(dst), len(src))
	}
	detected.f32ToF16(dst, src)
	return nil
}

func bf16RowGo(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = bf16(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
	}
}

// toFloatRow converts len(dst) weights of type dt to float32.
func (k Kernels) toFloatRow(dt floatType, dst []float32, src []byte) {
	switch dt {
	case ftF16:
		k.f16ToF32(dst, src)
	case ftBF16:
		k.bf16ToF32(dst, src)
	default:
		copy(f32AsBytes(dst), src[:4*len(dst)])
	}
}
