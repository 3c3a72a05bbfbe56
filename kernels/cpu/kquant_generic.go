//go:build !(amd64 || arm64) || noasm

package cpu

func (k Kernels) hasKQuant(kind wkind) bool { return false }

func (k Kernels) kGemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool, buf *[]byte) {
	panic("cpu: no SIMD K-quant kernels in this build")
}
