//go:build amd64 && !noasm

package cpu

import "testing"

// BenchmarkPeak measures the multiply-add peak of one core per instruction
// kind, in G multiply-adds per second (×2 for GFLOP/s; a VPDPBUSD
// multiply-add is one byte product, a VDPBF16PS one a bfloat16 product).
// These are the denominators of the prefill GEMM efficiencies in
// docs/performance.md:
//
//	go test ./kernels/cpu -run XXX -bench Peak -count 5
func BenchmarkPeak(b *testing.B) {
	const iters = 1 << 16
	for _, l := range peakLoops() {
		b.Run(l.name, func(b *testing.B) {
			if !l.ok {
				b.Skip("not on this CPU")
			}
			for b.Loop() {
				l.fn(iters)
			}
			macs := float64(b.N) * iters * peakChains * float64(l.macs)
			b.ReportMetric(macs/b.Elapsed().Seconds()/1e9, "Gmac/s")
		})
	}
}
