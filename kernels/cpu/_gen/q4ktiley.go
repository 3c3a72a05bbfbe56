package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q4kMaxTokens is the most tokens one Q4_K tile takes.
const q4kMaxTokens = 4

// Frame of the Q4_K tiles: a super-block's mins and scales.
const (
	q4kMins  = 0  // the 8 mins as int16
	q4kD     = 16 // f16(d) in 8 lanes
	q4kDmin  = 48 // f16(dmin) in 8 lanes
	q4kFrame = 80
)

// q4kTileY generates q4kTileY<nt>: Q4_K weights times nt tokens of Q8_K
// activations, in the order of gemvQ4_KAVX2 (kernels/quant's DotQ4_KQ8_K,
// ggml's x86 order): per super-block 8 exact integer lanes fused into 8
// float32 accumulators with d = yd·dw, the four min products into four
// with -yd·dmin, then hsum_float_8 plus (m0+m2)+(m1+m3). Each group of 32
// quants of a row, and its scale, is unpacked once for the nt tokens.
//
// Registers: Y0..Y3 the tokens' accumulators, X4..X7 their min
// accumulators, Y8..Y11 their integer lanes of a super-block, Y12 a
// group's quants, Y13 its scales, Y14 scratch, Y15 the super-block's 8
// scales as int16. SI walks the rows, R11 a row's super-blocks, DI the
// first token's (the others R12, 2·R12 and R13 = 3·R12 bytes on), CX
// counts the super-blocks, R14 the rows, DX the outputs of the row; AX,
// BX, R8..R10 decode the scales.
//
// With q5 it generates q5kTileY<nt> for Q5_K weights: the fifth bits (at
// 16, 32 bytes) join the nibbles (at 48), and the min products, summed as
// (p0+p1)+(p2+p3), go into one scalar chain, added after hsum_float_8, as
// gemvQ5_KAVX2 does.
func (a *asm) q4kTileY(nt int, g yGlobals, k yKGlobals, q5 bool) {
	name, qs, bb := "Q4_K", 16, 144
	if q5 {
		name, qs, bb = "Q5_K", 48, 176
	}
	a.text(fmt.Sprintf("q%ckTileY%d", name[1], nt), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)",
		"For each of nrows rows of nb > 0 "+name+" blocks (ldw bytes apart) and the",
		fmt.Sprintf("%d tokens of Q8_K blocks at x (ldx bytes apart), dst[t·ldd/4+r] (+)= w_r·x_t", nt),
		"(ldd in bytes; with acc not 0 the old value is added after the sum).")
	a.AllocLocal(q4kFrame)
	tok := a.kTileArgs()
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	a.Label("row")
	for t := range nt {
		a.VXORPS(yr[t], yr[t], yr[t])
		a.VXORPS(xr[4+t], xr[4+t], xr[4+t])
	}
	a.MOVQ(reg.RSI, reg.R11)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)

	a.Label("blk")
	a.q4kScales()
	for grp := range 8 {
		a.VMOVDQU(mem(reg.R11, qs+32*(grp/2)), reg.Y12)
		if grp%2 == 1 {
			a.VPSRLW(operand.U8(4), reg.Y12, reg.Y12)
		}
		a.VPAND(g.nib, reg.Y12, reg.Y12)
		if q5 {
			// Bit grp of the qh bytes to 16 (bit 4 of each byte).
			a.VMOVDQU(mem(reg.R11, 16), reg.Y14)
			switch {
			case grp < 4:
				a.VPSLLW(operand.U8(4-grp), reg.Y14, reg.Y14)
			case grp > 4:
				a.VPSRLW(operand.U8(grp-4), reg.Y14, reg.Y14)
			}
			a.VPAND(k.c10, reg.Y14, reg.Y14)
			a.VPOR(reg.Y14, reg.Y12, reg.Y12)
		}
		a.VPSHUFB(k.k4.Offset(32*grp), reg.Y15, reg.Y13)
		for t := range nt {
			a.VPMADDUBSW(tok(t, 4+32*grp), reg.Y12, reg.Y14)
			if grp == 0 {
				a.VPMADDWD(reg.Y13, reg.Y14, yr[8+t])
			} else {
				a.VPMADDWD(reg.Y13, reg.Y14, reg.Y14)
				a.VPADDD(reg.Y14, yr[8+t], yr[8+t])
			}
		}
	}
	for t := range nt {
		i := yr[8+t]
		a.VCVTDQ2PS(i, i)
		a.VBROADCASTSS(tok(t, 0), reg.Y14)
		a.VMULPS(sp(q4kD), reg.Y14, reg.Y13)
		a.VFMADD231PS(reg.Y13, i, yr[t])
		// The min products: the mins times sums of pairs of bsums.
		a.VMOVDQU(tok(t, 260), reg.Y12)
		a.VEXTRACTI128(operand.U8(1), reg.Y12, reg.X13)
		a.VPHADDW(reg.X13, reg.X12, reg.X12)
		a.VPMADDWD(sp(q4kMins), reg.X12, reg.X12)
		if q5 {
			a.VPHADDD(reg.X12, reg.X12, reg.X12)
			a.VPHADDD(reg.X12, reg.X12, reg.X12)
			a.VCVTDQ2PS(reg.X12, reg.X12)
			a.VMULSS(sp(q4kDmin), reg.X14, reg.X13)
			a.VFNMADD231SS(reg.X13, reg.X12, xr[4+t])
			continue
		}
		a.VCVTDQ2PS(reg.X12, reg.X12)
		a.VMULPS(sp(q4kDmin), reg.X14, reg.X13)
		a.VFNMADD231PS(reg.X13, reg.X12, xr[4+t])
	}
	a.ADDQ(operand.U32(bb), reg.R11)
	a.ADDQ(operand.U32(292), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	a.kTileStore(nt, 4, q5)
}

// q4kScales decodes the scales and mins of the Q4_K super-block at R11 as
// ggml's utmp shuffle does: the 8 scales as int16 into Y15 (both halves),
// the mins into the frame, and its two f16 scales as float32 in 8 lanes
// into the frame (X12, X13, AX, BX, R8..R10 scratch).
func (a *asm) q4kScales() {
	a.k4ScaleBytes()
	a.VMOVQ(reg.RAX, reg.X12)
	a.VPINSRQ(operand.U8(1), reg.R9, reg.X12, reg.X12)
	a.VPMOVZXBW(reg.X12, reg.Y12)
	a.VEXTRACTI128(operand.U8(1), reg.Y12, reg.X13)
	a.VMOVDQU(reg.X13, sp(q4kMins))
	a.VPERMQ(operand.U8(0x44), reg.Y12, reg.Y15)
	a.MOVL(mem(reg.R11, 0), reg.EAX)
	a.VMOVD(reg.EAX, reg.X12)
	a.VCVTPH2PS(reg.X12, reg.X12)
	a.VBROADCASTSS(reg.X12, reg.Y13)
	a.VMOVUPS(reg.Y13, sp(q4kD))
	a.VMOVSHDUP(reg.X12, reg.X13)
	a.VBROADCASTSS(reg.X13, reg.Y13)
	a.VMOVUPS(reg.Y13, sp(q4kDmin))
}
