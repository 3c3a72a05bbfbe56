package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q6kMaxTokens is the most tokens one Q6_K tile takes.
const q6kMaxTokens = 4

// q6kTileY generates q6kTileY<nt>: Q6_K weights times nt tokens of Q8_K
// activations, in the order of gemvQ6_KAVX2 (kernels/quant's DotQ6_KQ8_K,
// ggml's x86 order): per super-block 8 exact integer lanes fused into 8
// float32 accumulators with d = yd·dw, then hsum_float_8. Each group of 32
// quants of a row (unsigned, 0..63) and its scales are unpacked once for
// the nt tokens; each token's lanes are maddubs(q, x) - maddubs(32, x), as
// in ggml (Q8_K quants reach -128, so the sign trick would not do).
//
// Registers: Y0..Y3 the tokens' accumulators, Y4..Y7 their integer lanes of
// a super-block, Y8 0x20 bytes, Y9 scratch, Y10 a group's quants, Y11
// scratch, Y12 the group's scales, Y13 a token's quants, Y14 and Y15 the
// super-block's scales 0-7 and 8-15 as int16 (each in both halves). SI
// walks the rows, R11 a row's super-blocks, DI the first token's (the
// others R12, 2·R12 and R13 = 3·R12 bytes on), CX counts the super-blocks,
// R14 the rows, DX the outputs of the row; the frame holds dw in 8 lanes.
func (a *asm) q6kTileY(nt int, g yGlobals, k yKGlobals) {
	a.text(fmt.Sprintf("q6kTileY%d", nt), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)",
		"For each of nrows rows of nb > 0 Q6_K blocks (ldw bytes apart) and the",
		fmt.Sprintf("%d tokens of Q8_K blocks at x (ldx bytes apart), dst[t·ldd/4+r] (+)= w_r·x_t", nt),
		"(ldd in bytes; with acc not 0 the old value is added after the sum).")
	a.AllocLocal(32)
	tok := a.kTileArgs()
	a.VMOVDQU(k.c20, reg.Y8)
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	a.Label("row")
	for t := range nt {
		a.VXORPS(yr[t], yr[t], yr[t])
	}
	a.MOVQ(reg.RSI, reg.R11)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)

	a.Label("blk")
	a.VMOVDQU(mem(reg.R11, 192), reg.X12)
	a.VPMOVSXBW(reg.X12, reg.Y12)
	a.VPERMQ(operand.U8(0x44), reg.Y12, reg.Y14)
	a.VPERMQ(operand.U8(0xee), reg.Y12, reg.Y15)
	a.VPBROADCASTW(mem(reg.R11, 208), reg.X12)
	a.VCVTPH2PS(reg.X12, reg.Y12)
	a.VMOVUPS(reg.Y12, sp(0))
	for h := range 2 {
		for kk := range 4 {
			grp := 4*h + kk
			a.VMOVDQU(mem(reg.R11, 64*h+32*(kk%2)), reg.Y10)
			if kk >= 2 {
				a.VPSRLW(operand.U8(4), reg.Y10, reg.Y10)
			}
			a.VPAND(g.nib, reg.Y10, reg.Y10)
			// High bits: qh bit pair kk to bits 4-5.
			a.VMOVDQU(mem(reg.R11, 128+32*h), reg.Y9)
			switch kk {
			case 0:
				a.VPSLLW(operand.U8(4), reg.Y9, reg.Y9)
			case 1:
				a.VPSLLW(operand.U8(2), reg.Y9, reg.Y9)
			case 3:
				a.VPSRLW(operand.U8(2), reg.Y9, reg.Y9)
			}
			a.VPAND(k.c30, reg.Y9, reg.Y9)
			a.VPOR(reg.Y9, reg.Y10, reg.Y10)
			a.VPSHUFB(k.q3.Offset(32*kk), []reg.VecPhysical{reg.Y14, reg.Y15}[h], reg.Y12)
			for t := range nt {
				a.VMOVDQU(tok(t, 4+128*h+32*kk), reg.Y13)
				a.VPMADDUBSW(reg.Y13, reg.Y10, reg.Y11)
				a.VPMADDUBSW(reg.Y13, reg.Y8, reg.Y13)
				a.VPSUBW(reg.Y13, reg.Y11, reg.Y11)
				if grp == 0 {
					a.VPMADDWD(reg.Y12, reg.Y11, yr[4+t])
				} else {
					a.VPMADDWD(reg.Y12, reg.Y11, reg.Y11)
					a.VPADDD(reg.Y11, yr[4+t], yr[4+t])
				}
			}
		}
	}
	for t := range nt {
		i := yr[4+t]
		a.VCVTDQ2PS(i, i)
		a.VBROADCASTSS(tok(t, 0), reg.Y13)
		a.VMULPS(sp(0), reg.Y13, reg.Y13)
		a.VFMADD231PS(reg.Y13, i, yr[t])
	}
	a.ADDQ(operand.U32(210), reg.R11)
	a.ADDQ(operand.U32(292), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	a.kTileStore(nt, -1, false)
}

// yKGlobals are the K-quant tiles' read-only tables.
type yKGlobals struct {
	k4  operand.Mem // 8 masks spreading int16 word i (Q4_K scales)
	q3  operand.Mem // 4 masks: word 2i in the low half, 2i+1 in the high (Q6_K)
	c30 operand.Mem // 0x30 bytes
	c20 operand.Mem // 0x20 bytes
	c10 operand.Mem // 0x10 bytes
	c03 operand.Mem // 0x03 bytes
	c04 operand.Mem // 0x04 bytes
	w32 operand.Mem // int16 32s
	sh3 operand.Mem // dword shift counts 0, 2, 4, 6 (Q3_K scales)
}

// kTileArgs loads the arguments of a K-quant tile (w to SI, ldx to R12, dst
// to DX, nrows to R14, 3·ldx to R13) and returns the address of disp bytes
// into token t's current block.
func (a *asm) kTileArgs() func(t, disp int) operand.Mem {
	a.load("w", reg.RSI)
	a.load("ldx", reg.R12)
	a.load("dst", reg.RDX)
	a.load("nrows", reg.R14)
	a.LEAQ(operand.Mem{Base: reg.R12, Index: reg.R12, Scale: 2}, reg.R13)
	return func(t, disp int) operand.Mem {
		switch t {
		case 0:
			return mem(reg.RDI, disp)
		case 1:
			return operand.Mem{Base: reg.RDI, Index: reg.R12, Scale: 1, Disp: disp}
		case 2:
			return operand.Mem{Base: reg.RDI, Index: reg.R12, Scale: 2, Disp: disp}
		case 3:
			return operand.Mem{Base: reg.RDI, Index: reg.R13, Scale: 1, Disp: disp}
		}
		return operand.Mem{Base: reg.RDI, Index: reg.R12, Scale: 4, Disp: disp}
	}
}

// kTileStore ends a K-quant tile's row: hsum_float_8 of the accumulators
// Y0..Y<nt-1>, plus (m0+m2)+(m1+m3) of X<mins+t> when mins >= 0 (with
// sum, plus the sum in its lane 0), plus the
// old output when acc is set, stored nt·ldd bytes apart from DX; then the
// next row (X12, X13 scratch).
func (a *asm) kTileStore(nt, mins int, sum bool) {
	a.MOVQ(reg.RDX, reg.RAX)
	a.load("ldd", reg.RBX)
	a.load("acc", reg.RCX)
	for t := range nt {
		a.hsum8y(t, 12, false)
		if mins >= 0 && sum {
			a.VADDSS(xr[mins+t], xr[t], xr[t])
		} else if mins >= 0 {
			m := xr[mins+t]
			a.VMOVHLPS(m, m, reg.X13)
			a.VADDPS(reg.X13, m, m)
			a.VMOVSHDUP(m, reg.X13)
			a.VADDSS(reg.X13, m, m)
			a.VADDSS(m, xr[t], xr[t])
		}
		skip := fmt.Sprintf("st%d", t)
		a.TESTQ(reg.RCX, reg.RCX)
		a.JZ(label(skip))
		a.VADDSS(mem(reg.RAX, 0), xr[t], xr[t])
		a.Label(skip)
		a.VMOVSS(xr[t], mem(reg.RAX, 0))
		a.ADDQ(reg.RBX, reg.RAX)
	}
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(a.arg("ldw"), reg.RSI)
	a.DECQ(reg.R14)
	a.JNZ(label("row"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}
