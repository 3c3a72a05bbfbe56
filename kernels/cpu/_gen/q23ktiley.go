package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q23kMaxTokens is the most tokens one Q2_K or Q3_K tile takes.
const q23kMaxTokens = 4

// q23kTileY generates q2kTileY<nt> (q3 false) or q3kTileY<nt>: Q2_K or Q3_K
// weights times nt tokens of Q8_K activations, in the order of
// gemvQ2_KAVX2 and gemvQ3_KAVX2 (kernels/quant's, ggml's x86 order): per
// super-block, Q2_K first fuses its 8 min lanes into the accumulators
// with -yd·dmin; then 8 exact integer lanes are fused with d = yd·dw;
// hsum_float_8 at the end. Each group of 32 2-bit quants of a row (for
// Q3_K with the 4 its clear high bit subtracts, as maddubs(q, x) -
// maddubs(4, x)) and its scale is unpacked once for the nt tokens.
//
// Registers: Y0..Y3 the tokens' accumulators, Y4..Y7 their integer lanes
// of a super-block, Y8 a group's quants, Y9 (Q3_K) its 4s, Y10 its
// scales, Y11 the Q2_K mins as int16 or the Q3_K high bits, Y12 and Y13
// the scales 0-7 and 8-15 as int16 (each in both halves), Y14 and Y15
// scratch; general registers as kTileArgs and kTileStore have them. The
// frame holds dw and (Q2_K) dmin in 8 lanes.
func (a *asm) q23kTileY(nt int, g yGlobals, k yKGlobals, q3 bool) {
	name, bb, qs := "Q2_K", 84, 16
	if q3 {
		name, bb, qs = "Q3_K", 110, 32
	}
	a.text(fmt.Sprintf("q%ckTileY%d", name[1], nt), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)",
		"For each of nrows rows of nb > 0 "+name+" blocks (ldw bytes apart) and the",
		fmt.Sprintf("%d tokens of Q8_K blocks at x (ldx bytes apart), dst[t·ldd/4+r] (+)= w_r·x_t", nt),
		"(ldd in bytes; with acc not 0 the old value is added after the sum).")
	a.AllocLocal(64)
	tok := a.kTileArgs()
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
	if q3 {
		// Scales: low 4 bits from the first 8 bytes (then their high
		// nibbles), bits 4-5 from bit pair j/4 of byte 8 + j%4, less 32.
		a.VMOVQ(mem(reg.R11, 96), reg.X8)
		a.VPSRLW(operand.U8(4), reg.X8, reg.X9)
		a.VPUNPCKLQDQ(reg.X9, reg.X8, reg.X8)
		a.VPBROADCASTD(mem(reg.R11, 104), reg.X9)
		a.VPSRLVD(k.sh3, reg.X9, reg.X9)
		a.VPSLLD(operand.U8(4), reg.X9, reg.X9)
		a.VPAND(k.c30, reg.X9, reg.X9)
		a.VPAND(g.nib, reg.X8, reg.X8)
		a.VPOR(reg.X9, reg.X8, reg.X8)
		a.VPMOVZXBW(reg.X8, reg.Y8)
		a.VPSUBW(k.w32, reg.Y8, reg.Y8)
		a.VMOVDQU(mem(reg.R11, 0), reg.Y11)
		a.VPBROADCASTW(mem(reg.R11, 108), reg.X9)
		a.VCVTPH2PS(reg.X9, reg.Y9)
		a.VMOVUPS(reg.Y9, sp(0))
	} else {
		// Scales in the low nibbles, mins in the high.
		a.VMOVDQU(mem(reg.R11, 0), reg.X8)
		a.VPSRLW(operand.U8(4), reg.X8, reg.X9)
		a.VPAND(g.nib, reg.X9, reg.X9)
		a.VPMOVZXBW(reg.X9, reg.Y11)
		a.VPAND(g.nib, reg.X8, reg.X8)
		a.VPMOVZXBW(reg.X8, reg.Y8)
		a.MOVL(mem(reg.R11, 80), reg.EAX)
		a.VMOVD(reg.EAX, reg.X9)
		a.VCVTPH2PS(reg.X9, reg.X9)
		a.VBROADCASTSS(reg.X9, reg.Y10)
		a.VMOVUPS(reg.Y10, sp(0))
		a.VMOVSHDUP(reg.X9, reg.X9)
		a.VBROADCASTSS(reg.X9, reg.Y10)
		a.VMOVUPS(reg.Y10, sp(32))
	}
	a.VPERMQ(operand.U8(0x44), reg.Y8, reg.Y12)
	a.VPERMQ(operand.U8(0xee), reg.Y8, reg.Y13)
	for c := range 2 {
		for kk := range 4 {
			grp := 4*c + kk
			a.VMOVDQU(mem(reg.R11, qs+32*c), reg.Y8)
			if kk > 0 {
				a.VPSRLW(operand.U8(2*kk), reg.Y8, reg.Y8)
			}
			a.VPAND(k.c03, reg.Y8, reg.Y8)
			if q3 {
				// 4 where bit grp of hmask is clear: move it to bit 2.
				switch {
				case grp < 2:
					a.VPSLLW(operand.U8(2-grp), reg.Y11, reg.Y9)
					a.VPANDN(k.c04, reg.Y9, reg.Y9)
				case grp == 2:
					a.VPANDN(k.c04, reg.Y11, reg.Y9)
				default:
					a.VPSRLW(operand.U8(grp-2), reg.Y11, reg.Y9)
					a.VPANDN(k.c04, reg.Y9, reg.Y9)
				}
			}
			a.VPSHUFB(k.q3.Offset(32*kk), []reg.VecPhysical{reg.Y12, reg.Y13}[c], reg.Y10)
			for t := range nt {
				x := tok(t, 4+128*c+32*kk)
				a.VPMADDUBSW(x, reg.Y8, reg.Y14)
				if q3 {
					a.VPMADDUBSW(x, reg.Y9, reg.Y15)
					a.VPSUBW(reg.Y15, reg.Y14, reg.Y14)
				}
				if grp == 0 {
					a.VPMADDWD(reg.Y10, reg.Y14, yr[4+t])
				} else {
					a.VPMADDWD(reg.Y10, reg.Y14, reg.Y14)
					a.VPADDD(reg.Y14, yr[4+t], yr[4+t])
				}
			}
		}
	}
	for t := range nt {
		a.VBROADCASTSS(tok(t, 0), reg.Y14)
		if !q3 {
			a.VPMADDWD(tok(t, 260), reg.Y11, reg.Y15)
			a.VCVTDQ2PS(reg.Y15, reg.Y15)
			a.VMULPS(sp(32), reg.Y14, reg.Y10)
			a.VFNMADD231PS(reg.Y15, reg.Y10, yr[t])
		}
		i := yr[4+t]
		a.VCVTDQ2PS(i, i)
		a.VMULPS(sp(0), reg.Y14, reg.Y15)
		a.VFMADD231PS(reg.Y15, i, yr[t])
	}
	a.ADDQ(operand.U32(bb), reg.R11)
	a.ADDQ(operand.U32(292), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	a.kTileStore(nt, -1, false)
}
