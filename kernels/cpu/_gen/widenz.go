package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// widenz generates widenz_amd64.s: widening of F32, F16 and BF16 weights
// into the GEMM tile layout (gemmz_amd64.s), AVX-512.
func widenz(a *asm) {
	for _, t := range floatTypes {
		a.widenZ(t)
	}
}

// skipIf emits the conditional jump j over the instructions body emits.
func (a *asm) skipIf(j func(operand.Op), body func()) {
	a.nlabel++
	skip := fmt.Sprintf("skip%d", a.nlabel)
	j(label(skip))
	body()
	a.Label(skip)
}

// widenZ generates widenTile<t>Z.
func (a *asm) widenZ(t floatType) {
	a.text("widenTile"+t.name+"Z", attr.NOSPLIT, "func(dst *float32, src *byte, rb uintptr, nrow, n int)",
		"Writes rows r < nrow (≤ 12) of n weights, rows rb bytes apart at src,",
		"as float32 in tile layout: element (r, i) at dst[96·(i/8) + 8r + i%8];",
		"the rest of each group of 16 elements (rows nrow..11, elements past n)",
		"is zero. Two rows at a time: 16 elements of each, and their low and high",
		"halves side by side into each of 2 blocks.")
	a.load("dst", reg.RDI)
	a.load("src", reg.RSI)
	a.load("rb", reg.RBX)
	a.load("nrow", reg.R8)
	a.load("n", reg.RCX)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JEQ(label("wdone"))
	// K2: all 16 elements; K3: those of the last group of 16.
	a.MOVL(operand.U32(0xffff), reg.R10L)
	a.KMOVW(reg.R10L, reg.K2)
	a.MOVQ(reg.RCX, reg.R9)
	a.ANDQ(operand.U8(15), reg.R9)
	a.BZHIQ(reg.R9, reg.R10, reg.R11)
	a.TESTQ(reg.R9, reg.R9)
	a.skipIf(a.JNE, func() { a.MOVL(reg.R10L, reg.R11L) })
	a.KMOVW(reg.R11L, reg.K3)
	a.ADDQ(operand.U8(15), reg.RCX)
	a.SHRQ(operand.U8(4), reg.RCX)  // groups of 16 elements
	a.MOVQ(operand.U32(6), reg.R11) // pairs of rows

	a.Label("wpair")
	a.MOVQ(reg.RSI, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)

	a.Label("wchunk")
	a.KMOVW(reg.K2, reg.K1)
	a.CMPQ(reg.R13, operand.U8(1))
	a.skipIf(a.JNE, func() { a.KMOVW(reg.K3, reg.K1) })
	a.zero(reg.Z0, reg.Z1)
	a.CMPQ(reg.R8, operand.U8(1))
	a.JLT(label("wtr"))
	a.ldmz(t, mem(reg.RAX, 0), 0)
	a.CMPQ(reg.R8, operand.U8(2))
	a.JLT(label("wtr"))
	a.ldmz(t, operand.Mem{Base: reg.RAX, Index: reg.RBX, Scale: 1}, 1)

	a.Label("wtr")
	a.VSHUFF64X2(operand.U8(0x44), reg.Z1, reg.Z0, reg.Z2) // elements 0-7 of both rows
	a.VSHUFF64X2(operand.U8(0xee), reg.Z1, reg.Z0, reg.Z3) // elements 8-15
	a.VMOVUPS(reg.Z2, mem(reg.R12, 0))
	a.VMOVUPS(reg.Z3, mem(reg.R12, 384))
	a.ADDQ(operand.U8(16*t.es), reg.RAX)
	a.ADDQ(operand.U32(768), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("wchunk"))

	a.SUBQ(operand.U8(2), reg.R8)
	a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.RBX, Scale: 2}, reg.RSI)
	a.ADDQ(operand.U8(64), reg.RDI)
	a.DECQ(reg.R11)
	a.JNZ(label("wpair"))

	a.Label("wdone")
	a.VZEROUPPER()
	a.RET()
}
