package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/weftrun/weft/tensor"
)

// Traits are what weft knows of an element type beyond its layout (the
// name, block size, type size and GGUF file type in tensor's table): its
// reference quantizer and dequantizer, the type activations take before a
// dot product with a weight row of this type, and that dot product. A new
// type is its layout in tensor, one entry here, and its kernels.
type Traits struct {
	DType tensor.DType
	// Quantize encodes whole blocks of src into dst; Dequantize decodes
	// len(dst) values. Neither checks lengths (see Quantize, Dequantize).
	Quantize   func(dst []byte, src []float32)
	Dequantize func(dst []float32, src []byte)
	// Activation is the type an activation row is encoded as for Dot
	// (F32 for float weights and for types without a dot product).
	Activation tensor.DType
	// Dot multiplies n values of a weight row by an activation row of
	// type Activation; nil when the type has none (Q8_1, Q8_K: activation
	// types only).
	Dot DotFunc
}

// traits is the table of every type Quantize and Dequantize handle.
// As in ggml, Q4_1 and Q5_1 weights pair with Q8_1 activations and the
// other 32-element formats with Q8_0; Inferflow's formats pair with Q8_0
// too (Inferflow's integer path).
var traits = map[tensor.DType]Traits{
	tensor.F32:  {tensor.F32, quantizeF32, dequantizeF32, tensor.F32, DotF32},
	tensor.F16:  {tensor.F16, F32ToF16, F16ToF32, tensor.F32, DotF16F32},
	tensor.BF16: {tensor.BF16, F32ToBF16, BF16ToF32, tensor.F32, DotBF16F32},
	tensor.Q4_0: {tensor.Q4_0, QuantizeRowQ4_0, DequantizeRowQ4_0, tensor.Q8_0, DotQ4_0Q8_0},
	tensor.Q4_1: {tensor.Q4_1, QuantizeRowQ4_1, DequantizeRowQ4_1, tensor.Q8_1, DotQ4_1Q8_1},
	tensor.Q5_0: {tensor.Q5_0, QuantizeRowQ5_0, DequantizeRowQ5_0, tensor.Q8_0, DotQ5_0Q8_0},
	tensor.Q5_1: {tensor.Q5_1, QuantizeRowQ5_1, DequantizeRowQ5_1, tensor.Q8_1, DotQ5_1Q8_1},
	tensor.Q8_0: {tensor.Q8_0, QuantizeRowQ8_0, DequantizeRowQ8_0, tensor.Q8_0, DotQ8_0Q8_0},
	tensor.Q8_1: {tensor.Q8_1, QuantizeRowQ8_1, DequantizeRowQ8_1, tensor.F32, nil},
	tensor.Q8_K: {tensor.Q8_K, QuantizeRowQ8_K, DequantizeRowQ8_K, tensor.F32, nil},
	tensor.Q2_K: {tensor.Q2_K, QuantizeRowQ2_K, DequantizeRowQ2_K, tensor.Q8_K, DotQ2_KQ8_K},
	tensor.Q3_K: {tensor.Q3_K, QuantizeRowQ3_K, DequantizeRowQ3_K, tensor.Q8_K, DotQ3_KQ8_K},
	tensor.Q4_K: {tensor.Q4_K, QuantizeRowQ4_K, DequantizeRowQ4_K, tensor.Q8_K, DotQ4_KQ8_K},
	tensor.Q5_K: {tensor.Q5_K, QuantizeRowQ5_K, DequantizeRowQ5_K, tensor.Q8_K, DotQ5_KQ8_K},
	tensor.Q6_K: {tensor.Q6_K, QuantizeRowQ6_K, DequantizeRowQ6_K, tensor.Q8_K, DotQ6_KQ8_K},

	tensor.IQ4_NL: {tensor.IQ4_NL, QuantizeRowIQ4_NL, DequantizeRowIQ4_NL, tensor.Q8_0, DotIQ4_NLQ8_0},

	tensor.Q8_B32T2:  {tensor.Q8_B32T2, QuantizeRowQ8_B32T2, DequantizeRowQ8_B32T2, tensor.Q8_0, DotQ8_B32T2Q8_0},
	tensor.Q6_B64T1:  {tensor.Q6_B64T1, QuantizeRowQ6_B64T1, DequantizeRowQ6_B64T1, tensor.Q8_0, DotQ6_B64T1Q8_0},
	tensor.Q5_B64T1:  {tensor.Q5_B64T1, QuantizeRowQ5_B64T1, DequantizeRowQ5_B64T1, tensor.Q8_0, DotQ5_B64T1Q8_0},
	tensor.Q4_B32T1:  {tensor.Q4_B32T1, QuantizeRowQ4_B32T1, DequantizeRowQ4_B32T1, tensor.Q8_0, DotQ4_B32T1Q8_0},
	tensor.Q4_B64T1:  {tensor.Q4_B64T1, QuantizeRowQ4_B64T1, DequantizeRowQ4_B64T1, tensor.Q8_0, DotQ4_B64T1Q8_0},
	tensor.Q3H_B64T1: {tensor.Q3H_B64T1, QuantizeRowQ3H_B64T1, DequantizeRowQ3H_B64T1, tensor.Q8_0, DotQ3H_B64T1Q8_0},
	tensor.Q3_B32T1:  {tensor.Q3_B32T1, QuantizeRowQ3_B32T1, DequantizeRowQ3_B32T1, tensor.Q8_0, DotQ3_B32T1Q8_0},
	tensor.Q2_B32T1:  {tensor.Q2_B32T1, QuantizeRowQ2_B32T1, DequantizeRowQ2_B32T1, tensor.Q8_0, DotQ2_B32T1Q8_0},
}

// TraitsOf returns the traits of dt, or false for a type this package does
// not encode.
func TraitsOf(dt tensor.DType) (Traits, bool) { t, ok := traits[dt]; return t, ok }

func quantizeF32(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func dequantizeF32(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

// Supported reports whether Quantize and Dequantize handle dt.
func Supported(dt tensor.DType) bool { _, ok := traits[dt]; return ok }

func sizes(op string, dt tensor.DType, n, nbytes int) (Traits, error) {
	f, ok := traits[dt]
	if !ok {
		return f, fmt.Errorf("quant: %s: unsupported type %s", op, dt)
	}
	want, err := dt.RowBytes(n)
	if err != nil {
		return f, fmt.Errorf("quant: %s: %w", op, err)
	}
	if nbytes != want {
		return f, fmt.Errorf("quant: %s: %d %s values take %d bytes, have %d", op, n, dt, want, nbytes)
	}
	return f, nil
}

// Quantize encodes src as dt into dst, whose length must be exactly
// dt.RowBytes(len(src)). Blocks never straddle rows, so src may hold any
// number of whole rows. dt may be any type listed in the package comment
// or F32.
func Quantize(dt tensor.DType, dst []byte, src []float32) error {
	f, err := sizes("quantize", dt, len(src), len(dst))
	if err != nil {
		return err
	}
	f.Quantize(dst, src)
	return nil
}

// Dequantize decodes len(dst) values of type dt from src, whose length must
// be exactly dt.RowBytes(len(dst)).
func Dequantize(dt tensor.DType, dst []float32, src []byte) error {
	f, err := sizes("dequantize", dt, len(dst), len(src))
	if err != nil {
		return err
	}
	f.Dequantize(dst, src)
	return nil
}

// QuantizeActivation encodes an activation row as dt, one of the types
// ActivationType returns, the way a dot product expects it: Q8_0 by
// QuantizeActivationQ8_0 and Q8_1 by QuantizeActivationQ8_1 (ggml's
// runtime rounding, not the reference quantizer that Quantize uses for
// weights), any other type as Quantize does. dst must be exactly dt.RowBytes(len(src)) long.
func QuantizeActivation(dt tensor.DType, dst []byte, src []float32) error {
	f, err := sizes("quantize activation", dt, len(src), len(dst))
	if err != nil {
		return err
	}
	switch dt {
	case tensor.Q8_0:
		QuantizeActivationQ8_0(dst, src)
		return nil
	case tensor.Q8_1:
		QuantizeActivationQ8_1(dst, src)
		return nil
	}
	f.Quantize(dst, src)
	return nil
}

// ActivationType returns the type an activation row is quantized to before
// a dot product with a weight row of type w: Q8_1 for Q4_1 and Q5_1, Q8_0
// for the other 32-element formats, Q8_K
// for the K-quants, and F32 for F32, F16, BF16 and any type without a dot
// product (DotFor reports which have one).
func ActivationType(w tensor.DType) tensor.DType {
	if t, ok := traits[w]; ok {
		return t.Activation
	}
	return tensor.F32
}

// DotFunc is the signature of the per-type dot products: the dot product of
// n values of a weight row and an activation row in its ActivationType.
type DotFunc func(wrow, act []byte, n int) float32

// DotFor returns the dot product for weights of type w, or false if there
// is none.
func DotFor(w tensor.DType) (DotFunc, bool) {
	t, ok := traits[w]
	if !ok || t.Dot == nil {
		return nil, false
	}
	return t.Dot, true
}

// Dot returns the dot product of n values of a weight row of type w and an
// activation row already encoded as ActivationType(w). It is the reference
// the SIMD kernels are tested against. Shapes are the caller's to check
// once, when it builds a matmul: Dot panics with a message naming the
// problem if w has no dot product, n is not a whole number of blocks, or a
// row is shorter than n values.
func Dot(w tensor.DType, wrow, act []byte, n int) float32 {
	f, ok := DotFor(w)
	if !ok {
		panic(fmt.Sprintf("quant.Dot: no dot product for weight type %s", w))
	}
	at := ActivationType(w)
	wb, err := w.RowBytes(n)
	if err != nil || n < 0 {
		panic(fmt.Sprintf("quant.Dot: %d values of %s: %v", n, w, err))
	}
	ab, _ := at.RowBytes(n)
	if len(wrow) < wb || len(act) < ab {
		panic(fmt.Sprintf("quant.Dot: %d values need %d bytes of %s weights and %d bytes of %s activations, have %d and %d",
			n, wb, w, ab, at, len(wrow), len(act)))
	}
	return f(wrow, act, n)
}

// DotF32 returns the dot product of n float32 values of two little-endian
// F32 rows, accumulated in float64 as ggml's generic code does.
func DotF32(w, act []byte, n int) float32 {
	w, act = w[:4*n], act[:4*n]
	var sum float64
	for i := 0; i < 4*n; i += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(w[i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(act[i:]))
		sum += float64(x * y)
	}
	return float32(sum)
}

// DotF16F32 returns the dot product of n values of an F16 weight row and an
// F32 activation row, each product rounded to float32 and accumulated in
// float64.
func DotF16F32(w, act []byte, n int) float32 {
	w, act = w[:2*n], act[:4*n]
	var sum float64
	for i := range n {
		x := f16(w[2*i:])
		y := math.Float32frombits(binary.LittleEndian.Uint32(act[4*i:]))
		sum += float64(x * y)
	}
	return float32(sum)
}

// DotF16F16 returns the dot product of n values of two F16 rows, each
// product rounded to float32 and accumulated in float64. ggml rounds
// activations to F16 before an F16-weight matmul; this is that pairing.
func DotF16F16(w, act []byte, n int) float32 {
	w, act = w[:2*n], act[:2*n]
	var sum float64
	for i := 0; i < 2*n; i += 2 {
		sum += float64(f16(w[i:]) * f16(act[i:]))
	}
	return float32(sum)
}

// DotBF16F32 returns the dot product of n values of a BF16 weight row and
// an F32 activation row, accumulated in float64.
func DotBF16F32(w, act []byte, n int) float32 {
	w, act = w[:2*n], act[:4*n]
	var sum float64
	for i := range n {
		x := FromBF16(binary.LittleEndian.Uint16(w[2*i:]))
		y := math.Float32frombits(binary.LittleEndian.Uint32(act[4*i:]))
		sum += float64(x * y)
	}
	return float32(sum)
}
