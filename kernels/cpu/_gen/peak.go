package main

import (
	"strconv"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/reg"
)

// peak generates peak_amd64.s: loops of independent multiply-accumulate
// chains that measure the machine's arithmetic peak per instruction kind
// (the denominators of the GEMM efficiencies in docs/performance.md). Each
// loop iteration issues peakChains instructions, one per accumulator, so
// the latency of one is hidden behind the others.
func peak(a *asm) {
	kinds := []struct {
		name, doc string
		emit      func(src, acc reg.VecPhysical)
		ymm       bool
	}{
		{"peakFMAZ", "VFMADD231PS on zmm: 16 float32 multiply-adds each.",
			func(s, acc reg.VecPhysical) { a.VFMADD231PS(s, reg.Z31, acc) }, false},
		{"peakVNNIZ", "VPDPBUSD on zmm: 64 byte multiply-adds each.",
			func(s, acc reg.VecPhysical) { a.VPDPBUSD(s, reg.Z31, acc) }, false},
		{"peakBF16Z", "VDPBF16PS on zmm: 32 bfloat16 multiply-adds each.",
			func(s, acc reg.VecPhysical) { a.VDPBF16PS(s, reg.Z31, acc) }, false},
		{"peakFMAY", "VFMADD231PS on ymm: 8 float32 multiply-adds each.",
			func(s, acc reg.VecPhysical) { a.VFMADD231PS(s, reg.Y15, acc) }, true},
	}
	for _, k := range kinds {
		a.text(k.name, attr.NOSPLIT, "func(n int)",
			k.name+"(n) runs n iterations of "+strconv.Itoa(peakChains)+" independent "+k.doc)
		a.load("n", reg.RCX)
		regs := zr[:]
		if k.ymm {
			regs = yr[:]
		}
		nacc := peakChains
		for i := 0; i <= nacc; i++ {
			a.VPXORD(zr[i], zr[i], zr[i])
		}
		if k.ymm {
			a.VPXOR(reg.Y15, reg.Y15, reg.Y15)
		} else {
			a.VPXORD(reg.Z31, reg.Z31, reg.Z31)
		}
		a.TESTQ(reg.RCX, reg.RCX)
		a.JLE(label("done"))
		a.Label("loop")
		for i := 0; i < nacc; i++ {
			k.emit(regs[nacc], regs[i])
		}
		a.DECQ(reg.RCX)
		a.JNZ(label("loop"))
		a.Label("done")
		a.VZEROUPPER()
		a.RET()
	}
}

// peakChains is the accumulators of the peak loops: more than the
// latency × throughput of any of them on current cores (4-6 cycles × 2).
const peakChains = 12
