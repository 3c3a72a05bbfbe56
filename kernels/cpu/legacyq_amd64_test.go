//go:build amd64 && !noasm

package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// BenchmarkLegacyPrefill runs one 2048×2048 Q4_1 or Q5_1 matmul of n
// tokens on one thread, on the decode kernels (gemv) and on the tiles of
// layout T (tile), reporting the thread's CPU µs per matmul (Linux).
func BenchmarkLegacyPrefill(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Q4_1, tensor.Q5_1} {
		r := rand.New(rand.NewPCG(1, 2))
		w := randomMatrix(b, r, dt, 2048, 2048)
		for _, n := range []int{2, 3, 4, 8, 16, 64} {
			x := randRow(r, n*w.Cols, 1)
			dst := make([]float32, n*w.Rows)
			for _, path := range []struct {
				name string
				min  int
			}{{"gemv", 1 << 30}, {"tile", 1}} {
				b.Run(fmt.Sprintf("%s/n%d/%s", dt, n, path.name), func(b *testing.B) {
					if !Detect().legacyTilesT(wkQ4_1, 1<<20) {
						b.Skip("no Q4_1/Q5_1 tiles on this machine")
					}
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					p := NewPoolKernels(1, Detect())
					defer p.Close()
					defer func(m int) { lyTMinTokens = m }(lyTMinTokens)
					lyTMinTokens = path.min
					c0 := threadCPUTime()
					for b.Loop() {
						must(b, MatMul(p, dst, w, x, n))
					}
					if c0 >= 0 {
						b.ReportMetric(float64(threadCPUTime()-c0)/1e3/float64(b.N), "cpu-us")
					}
				})
			}
		}
	}
}
