// Package cpu holds weft's CPU compute kernels: matrix products for every
// weight type, the row kernels of a transformer (norms, RoPE, softmax,
// activations, attention) and the worker pool that splits them across
// cores.
//
// Activations are float32, row-major: a batch of T tokens with d features is
// a []float32 of T*d. Weights are read in their stored type through Matrix.
//
// # Code paths
//
// The kernels are Go assembly with pure-Go fallbacks. A Kernels value names
// the paths a process uses; Detect picks the best one once at start-up from
// golang.org/x/sys/cpu (and CPUID for F16C): Generic, AVX2 (AVX2+FMA+F16C),
// AVX512 (F/BW/DQ/VL) or AVX512VNNI (plus VNNI, VBMI and GFNI); on arm64
// NEON, DotProd (SDOT) or I8MM. Pools carry a Kernels (NewPoolKernels);
// Kernels.Limit gives a weaker set, which is how the tests run every path
// on one machine. Builds for other architectures, and builds with the
// noasm tag, have only the Generic path.
//
// # Matrix products
//
// MatMul, MatMulAcc and MatMulMulti multiply float32 activations by weights
// of any type SupportsMatMul accepts. F32, F16 and BF16 weights meet the
// activations in float32. Q4_0 and Q8_0 weights meet activations quantized
// as ggml's Q8_0 (per 32 values, to 8 bits) and laid out for the integer
// dot-product instructions; the K-quants (Q2_K..Q6_K) meet Q8_K
// activations, IQ4_NL and Inferflow's formats meet Q8_0 blocks, in SIMD
// kernels that sum in ggml's x86 order (IQ4_NL in its one-token or its
// batched order, as ggml does) or, for Inferflow's formats, in
// kernels/quant's: AVX-512 VNNI and AVX2 for all of them. The other block
// types go through the pure-Go dot products of kernels/quant. One token
// takes matrix-vector kernels that read several rows side by side to keep
// memory busy; several tokens take blocked GEMM kernels that reuse each
// unpacked block of weights for every token (at the AVX2 level, for Q4_0,
// Q8_0, IQ4_NL and the K-quants, tiles whose outputs keep the AVX2
// matrix-vector kernels' order: q8tiley.go).
//
// Pool.PackWeight copies a weight, at load time, into a layout of the
// pool's own where its kernels gain from one: Inferflow's Q4_B64T1 and
// Q3H_B64T1 go into strips of 16 interleaved rows (ifpack.go), as many
// bytes per block as the file, that later matmuls of the same matrix read.
//
// A Pool owns the reusable buffers of its matmuls, so that after the first
// call of a shape nothing is allocated.
package cpu
