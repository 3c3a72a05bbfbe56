//go:build !(amd64 || arm64) || noasm

package cpu

func (k Kernels) f16ToF32(dst []float32, src []byte)  { f16RowGo(dst, src) }
func (k Kernels) bf16ToF32(dst []float32, src []byte) { bf16RowGo(dst, src) }
func (k Kernels) f32ToF16(dst []byte, src []float32)  { toF16RowGo(dst, src) }
