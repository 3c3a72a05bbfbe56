//go:build amd64 && !noasm

package cpu

import (
	"math"
	"runtime"
	"testing"

	"github.com/weftrun/weft/tensor"
	"golang.org/x/sys/cpu"
)

// BenchmarkPeak measures the multiply-add peak of one core per instruction
// kind, in G multiply-adds per second of the thread's CPU time (×2 for
// GFLOP/s; a VPDPBUSD
// multiply-add is one byte product, a VDPBF16PS one a bfloat16 product).
// These are the denominators of the prefill GEMM efficiencies in
// docs/performance.md:
//
//	go test ./kernels/cpu -run XXX -bench '^BenchmarkPeak$' -benchtime 2000x -count 3
func BenchmarkPeak(b *testing.B) {
	const iters = 1 << 16
	for _, l := range peakLoops() {
		b.Run(l.name, func(b *testing.B) {
			if !l.ok {
				b.Skip("not on this CPU")
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c0 := threadCPUTime()
			for b.Loop() {
				l.fn(iters)
			}
			macs := float64(b.N) * iters * peakChains * float64(l.macs)
			b.ReportMetric(macs/(float64(threadCPUTime()-c0)/1e9)/1e9, "Gmac/s")
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

// BenchmarkGEMMPeak measures the prefill GEMM of each weight type (128
// tokens, a 2048×2048 matrix, one thread) as a fraction of the core's
// multiply-add peak, both in the thread's CPU time in the same
// sub-benchmark: the float types
// against VFMADD231PS on zmm (their GEMMs multiply in float32) — BF16
// against VDPBF16PS where it runs on it (bf16dp.go) —, the integer
// types against VPDPBUSD (one byte product per multiply-add), Q4_K, Q6_K
// and IQ4_NL also on their Q8_0 copies (+repack, repack.go):
//
//	go test ./kernels/cpu -run XXX -bench GEMMPeak -benchtime 20x -count 3
func BenchmarkGEMMPeak(b *testing.B) {
	const n, rows, cols = 128, 2048, 2048
	k := Detect()
	if k.Level() < AVX512VNNI {
		b.Skip("needs AVX-512 VNNI")
	}
	loops := map[string]peakLoop{}
	for _, l := range peakLoops() {
		loops[l.name] = l
	}
	for _, c := range []struct {
		dt     tensor.DType
		peak   string
		repack bool // the Q8_0 copy (WithRepack)
	}{
		{tensor.F32, "fma-zmm", false}, {tensor.F16, "fma-zmm", false}, {tensor.BF16, "fma-zmm", false},
		{tensor.Q8_0, "vnni-zmm", false}, {tensor.Q4_0, "vnni-zmm", false},
		{tensor.Q4_K, "vnni-zmm", false}, {tensor.Q6_K, "vnni-zmm", false}, {tensor.IQ4_NL, "vnni-zmm", false},
		{tensor.Q4_K, "vnni-zmm", true}, {tensor.Q6_K, "vnni-zmm", true}, {tensor.IQ4_NL, "vnni-zmm", true},
	} {
		if c.dt == tensor.BF16 && k.hasBF16DP() {
			c.peak = "bf16-zmm" // bfloat16 activations on VDPBF16PS
		}
		name := c.dt.String()
		if c.repack {
			name += "+repack"
		}
		b.Run(name, func(b *testing.B) {
			w := benchMatrix(b, c.dt, rows, cols)
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			dst := make([]float32, n*rows)
			p := NewPoolKernels(1, k.WithRepack(c.repack)) // runs on this goroutine
			defer p.Close()
			p.PackWeight(w)
			// CPU time of this thread, not wall time: on a shared host
			// both loops lose the core to others alike, and what is
			// compared is the work per cycle the core gives them.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c0 := threadCPUTime()
			for b.Loop() {
				if err := MatMul(p, dst, w, x, n); err != nil {
					b.Fatal(err)
				}
			}
			gemm := float64(threadCPUTime()-c0) / 1e9
			macs := float64(n) * rows * cols * float64(b.N) / gemm
			l := loops[c.peak]
			const iters = 1 << 16
			calls := 0
			c0 = threadCPUTime()
			for calls < 64 || threadCPUTime()-c0 < 2e8 {
				l.fn(iters)
				calls++
			}
			peak := float64(calls) * iters * peakChains * float64(l.macs) / (float64(threadCPUTime()-c0) / 1e9)
			b.ReportMetric(2*macs/1e9, "GFLOP/s")
			b.ReportMetric(100*macs/peak, "%peak")
		})
	}
}
