package quant

import (
	"encoding/binary"
	"math"
)

// FromF16 converts IEEE 754 half-precision bits to a float32. The conversion
// is exact for every value, subnormals, infinities and NaNs included.
func FromF16(h uint16) float32 {
	// Placed 13 bits up, a half's exponent and mantissa read as a float32
	// 2¹¹² times too small (2^(127-15)); for half subnormals that float32
	// is subnormal too, so one exact multiplication rescales every finite
	// value. Inf and NaN (exponent 31) only need the exponent filled in.
	b := math.Float32bits(math.Float32frombits(uint32(h&0x7fff)<<13) * 0x1p112)
	if h&0x7c00 == 0x7c00 {
		b |= 0x7f800000
	}
	return math.Float32frombits(b | uint32(h&0x8000)<<16)
}

// ToF16 converts a float32 to IEEE 754 half-precision bits, rounding to the
// nearest value with ties to even, as ggml's GGML_FP32_TO_FP16 does. Values
// too large become ±Inf; every NaN becomes the quiet NaN 0x7e00 with the
// input's sign.
func ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	switch {
	case e >= 0x1f:
		return sign | 0x7c00
	case e <= 0:
		// Half subnormal (or zero): man' = m × 2^(e-14), m the 24-bit
		// significand. Below 2⁻²⁵ everything rounds to zero.
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && h&1 == 1 {
			h++ // may carry into the smallest normal, which is right
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // may carry into the exponent, up to Inf, which is right
	}
	return sign | uint16(h)
}

// FromBF16 converts bfloat16 bits to a float32 (exact).
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// ToBF16 converts a float32 to bfloat16 bits, rounding to nearest with ties
// to even as ggml does. NaNs stay NaN (quieted); subnormals are kept.
func ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// F16ToF32 converts len(dst) little-endian f16 values from src to float32.
// src must hold at least 2·len(dst) bytes.
func F16ToF32(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = FromF16(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// F32ToF16 converts src to little-endian f16 values in dst, which must hold
// at least 2·len(src) bytes.
func F32ToF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], ToF16(v))
	}
}

// BF16ToF32 converts len(dst) little-endian bf16 values from src to float32.
// src must hold at least 2·len(dst) bytes.
func BF16ToF32(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = FromBF16(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// F32ToBF16 converts src to little-endian bf16 values in dst, which must
// hold at least 2·len(src) bytes.
func F32ToBF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], ToBF16(v))
	}
}

// f16 reads the half float at b[0:2].
func f16(b []byte) float32 { return FromF16(uint16(b[0]) | uint16(b[1])<<8) }

// putF16 stores f as a half float at b[0:2].
func putF16(b []byte, f float32) {
	h := ToF16(f)
	b[0] = byte(h)
	b[1] = byte(h >> 8)
}

// nearestInt rounds to the nearest integer, ties to even, with ggml's
// trick of adding 1.5·2²³ (valid for |f| < 2²²; larger inputs give the same
// meaningless but harmless result as ggml's).
func nearestInt(f float32) int {
	v := float32(f) + 12582912
	return int(math.Float32bits(v)&0x7fffff) - 0x400000
}
