//go:build amd64 && !noasm

package cpu

import (
	"runtime"
	"testing"

	"github.com/weftrun/weft/tensor"
)

// BenchmarkPanelStream measures the float prefill GEMM (128 tokens, one
// thread) on weights streamed from memory: it goes through 16 matrices of
// 5632×2048, far more than the caches hold, as a prefill goes through a
// model's layers, and reports, like BenchmarkGEMMPeak, GFLOP/s and the
// fraction of the zmm multiply-add peak in the thread's CPU time. The
// difference from GEMMPeak (one 2048×2048 matrix, which stays in L3) is
// what waiting for the weights costs:
//
//	go test ./kernels/cpu -run XXX -bench PanelStream -benchtime 4x -count 3
func BenchmarkPanelStream(b *testing.B) {
	const n, rows, cols, mats = 128, 5632, 2048, 16
	k := Detect()
	if !k.hasPanelGEMM() {
		b.Skip("no panel GEMM at this level")
	}
	var fma peakLoop
	for _, l := range peakLoops() {
		if l.name == "fma-zmm" {
			fma = l
		}
	}
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
		b.Run(dt.String(), func(b *testing.B) {
			ws := make([]Matrix, mats)
			for i := range ws {
				ws[i] = benchMatrix(b, dt, rows, cols)
			}
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			dst := make([]float32, n*rows)
			p := NewPoolKernels(1, k) // runs on this goroutine
			defer p.Close()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c0 := threadCPUTime()
			for b.Loop() {
				for _, w := range ws {
					if err := MatMul(p, dst, w, x, n); err != nil {
						b.Fatal(err)
					}
				}
			}
			gemm := float64(threadCPUTime()-c0) / 1e9
			macs := float64(n) * rows * cols * mats * float64(b.N) / gemm
			const iters = 1 << 16
			calls := 0
			c0 = threadCPUTime()
			for calls < 64 || threadCPUTime()-c0 < 2e8 {
				fma.fn(iters)
				calls++
			}
			peak := float64(calls) * iters * peakChains * float64(fma.macs) / (float64(threadCPUTime()-c0) / 1e9)
			b.ReportMetric(2*macs/1e9, "GFLOP/s")
			b.ReportMetric(100*macs/peak, "%peak")
		})
	}
}
