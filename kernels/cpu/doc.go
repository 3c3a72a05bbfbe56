// Package cpu holds weft's CPU compute kernels: matrix products for every
// weight type, the row kernels of a transformer (norms, RoPE, softmax,
// activations, attention) and the worker pool that splits them across
// cores.
//
// Activations are float32, row-major: a batch of T tokens with d features is
// a []float32 of T*d. Weights are read in their stored type through Matrix.
package cpu
