// Package quant is weft's pure-Go reference for ggml's element formats: the
// f16 and bf16 conversions and the block-quantized types Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, Q8_1, Q8_K, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K.
//
// Block layouts are bit-exact with ggml (ggml-common.h): every multi-byte
// field is little-endian, scales are IEEE half floats (Q8_K's is a float32),
// and the quant packing, including the 6-bit packed scales of the K-quants,
// is ggml's. Quantizers follow ggml's reference quantizers
// (quantize_row_*_ref), so a weight quantized here is the weight llama.cpp's
// quantize tool writes without an importance matrix. Dequantizers follow
// the arithmetic order of ggml's generic (non-SIMD) code, which llama.cpp
// builds without fused multiply-adds. Dot products follow ggml's x86 CPU
// kernels: Q4_0 and Q8_0 as one fused chain over blocks, the K-quants,
// IQ4_NL, Q5_0, Q4_1 and Q5_1 in the eight float lanes of ggml's AVX2
// kernels (see kdot.go), so that a
// matmul's output is llama.cpp's bit for bit.
//
// Dot products multiply a weight row by an activation row quantized to
// ActivationType(w): Q8_K rows by QuantizeRowQ8_K, Q8_0 rows by
// QuantizeActivationQ8_0, which rounds as ggml's x86 CPU backend does
// rather than as its reference quantizer; as in ggml, Q4_1 and Q5_1
// weights pair with Q8_1 rows (QuantizeActivationQ8_1), whose f16 block
// sum s = d·Σq carries the minimums' term.
//
// The per-type functions (QuantizeRowQ4_0, DequantizeRowQ4_0,
// DotQ4_0Q8_0, ...) do not allocate. They take rows whose lengths the caller
// has already checked: the float side holds whole blocks (values past the
// last whole block are ignored) and a byte side shorter than those blocks
// makes them panic, like slice indexing. The generic Quantize and
// Dequantize check their arguments and return errors; Dot checks and
// panics with a message.
package quant

const (
	qk  = 32  // elements per block of the 32-element formats
	qkK = 256 // elements per K-quant super-block
)
