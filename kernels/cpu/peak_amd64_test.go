//go:build amd64 && !noasm

package cpu

import (
	"math"
	"testing"

	"golang.org/x/sys/cpu"
)

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

// TestVDPBF16PS runs the generator's byte encoding of VDPBF16PS (neither
// avo nor the Go assembler has the instruction) against the instruction's
// definition in Intel's SDM: per float32 lane, the odd pair's product is
// added first, then the even one's, each sum rounded to nearest even (the
// products of two bfloat16s are exact). Random operands over a wide
// exponent range make the two orders and a single rounding differ in most
// lanes, so a wrong register field, operand order or opcode fails.
func TestVDPBF16PS(t *testing.T) {
	if !cpu.X86.HasAVX512BF16 || detectLevel() < AVX512 {
		t.Skip("no AVX512_BF16")
	}
	r := newTestRand()
	bf := func() uint16 {
		f := float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
		return uint16(math.Float32bits(f) >> 16)
	}
	val := func(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
	differ := 0
	for trial := range 200 {
		var a, b [32]uint16
		var acc [16]float32
		for i := range a {
			a[i], b[i] = bf(), bf()
		}
		for i := range acc {
			acc[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
		}
		var want, other [16]float32
		for i := range acc {
			p1, p0 := val(a[2*i+1])*val(b[2*i+1]), val(a[2*i])*val(b[2*i])
			want[i] = float32(float32(acc[i]+p1) + p0)
			other[i] = float32(float32(acc[i]+p0) + p1)
			if want[i] != other[i] {
				differ++
			}
		}
		got := acc
		dpbf16Z(&a, &b, &got)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("trial %d lane %d: %v + %v·%v + %v·%v = %v, want %v (even pair first: %v)",
					trial, i, acc[i], val(a[2*i+1]), val(b[2*i+1]), val(a[2*i]), val(b[2*i]), got[i], want[i], other[i])
			}
		}
	}
	if differ < 100 {
		t.Fatalf("only %d lanes tell the orders apart", differ)
	}
}
