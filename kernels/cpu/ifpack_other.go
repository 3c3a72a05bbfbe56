//go:build !amd64 || noasm

package cpu

func (k Kernels) hasIfPack() bool { return false }

func (k Kernels) ifStrips(kind wkind, w, a []byte, nb int, y []float32, strips int, acc bool) {
	ifStripsGo(kind, w, a, nb, y[:16*strips], acc)
}

func (k Kernels) packQ8I(dst []byte, x []float32) { packQ8IGo(dst, x) }

func (k Kernels) ifStrips4(kind wkind, w, a []byte, lda, nb int, y []float32, ldy, strips int, acc bool) {
	for t := range 4 {
		ifStripsGo(kind, w, a[t*lda:], nb, y[t*ldy:t*ldy+16*strips], acc)
	}
}
