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
	dpbf16(a)
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

// dpbf16 generates dpbf16Z, one VDPBF16PS on memory operands: the test of
// the instruction's byte encoding (peak_amd64_test.go).
func dpbf16(a *asm) {
	a.text("dpbf16Z", attr.NOSPLIT, "func(a, b *[32]uint16, acc *[16]float32)",
		"acc[i] += a[2i+1]·b[2i+1] + a[2i]·b[2i] (bfloat16 pairs), one VDPBF16PS.")
	a.load("a", reg.RSI)
	a.load("b", reg.RDI)
	a.load("acc", reg.RDX)
	a.VMOVDQU32(mem(reg.RSI, 0), reg.Z17)
	a.VMOVDQU32(mem(reg.RDI, 0), reg.Z9)
	a.VMOVUPS(mem(reg.RDX, 0), reg.Z24)
	a.VDPBF16PS(reg.Z9, reg.Z17, reg.Z24)
	a.VMOVUPS(reg.Z24, mem(reg.RDX, 0))
	a.VZEROUPPER()
	a.RET()
}
