//go:build !(amd64 || arm64) || noasm

package cpu

func (k Kernels) floatDot(dt floatType, w []byte, x []float32) float32 {
	return floatDotGo(dt, w, x)
}

func (k Kernels) floatGemv4(dt floatType, w []byte, ldw int, x []float32, y *[4]float32) {
	for r := range 4 {
		y[r] = floatDotGo(dt, w[r*ldw:], x)
	}
}

func (k Kernels) floatTile(dt floatType, w []byte, ldw int, x []float32, ldx, n int, dst []float32, ldd int, acc bool) {
	floatTileGo(dt, w, ldw, x, ldx, n, dst, ldd, acc)
}
