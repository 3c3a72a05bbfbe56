//go:build !amd64 || noasm

package cpu

func (k Kernels) hasLegacyQ() bool { return false }

func (k Kernels) legacyGemv(kind wkind, w []byte, ldw int, a []byte, nb int, dst []float32, acc bool) {
	panic("cpu: no SIMD Q5_0, Q4_1 or Q5_1 kernels in this build")
}

func (k Kernels) legacyGemv2(kind wkind, w []byte, ldw int, a0, a1 []byte, nb int, dst0, dst1 []float32, acc bool) {
	panic("cpu: no SIMD Q5_0, Q4_1 or Q5_1 kernels in this build")
}
