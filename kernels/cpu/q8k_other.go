//go:build !arm64 || noasm

package cpu

import "github.com/weftrun/weft/kernels/quant"

// quantizeQ8_K quantizes x (a multiple of 256 values) into Q8_K blocks in
// dst: kernels/quant's quantizer.
func (k Kernels) quantizeQ8_K(dst []byte, x []float32) { quant.QuantizeRowQ8_K(dst, x) }
