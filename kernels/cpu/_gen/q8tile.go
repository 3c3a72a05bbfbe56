package main

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Shared by the Q4_0/Q8_0 tiles (q8ilv) and the fused small-batch kernels
// (q8unpack): Z16..Z23 hold a block's 8 weight vectors of 16 rows and Z24
// its 16 scales; DI points at the block's token records (layout C,
// q8pack.go: 48 bytes a token, 8 dwords of quants, then the Q4_0
// correction and the scale at 32, the Q8_0 correction and the scale at 40).

// tok runs one block of the chain of the token whose record is at o(DI):
// the integer sums from the correction at corr+o(DI), then
// acc = fma(float(sum), dw·dx, acc); ti, tm and tc are scratch.
//
// The correction and the scale dx follow each other in the record (one
// pair per weight format), so one 8-byte broadcast load brings both and
// VPSHUFD, which runs beside the multiply-adds, spreads each: 9 loads a
// token and block instead of 10, below the multiply-adds' bound (loads,
// two a cycle, bounded the tiles). The integer sums run as two chains of
// 4 VPDPBUSD, quants 0..15 into ti (from the correction) and 16..31 into
// tm (from zero), added at the end: one chain of 8 kept too few tokens in
// flight. Integer sums are exact, so their order is free.
func (a *asm) tok(o, corr int, acc, ti, tm, tc reg.VecPhysical) {
	a.VPBROADCASTQ(mem(reg.RDI, corr+o), tc)
	a.VPSHUFD(operand.U8(0x00), tc, ti)
	a.VPXORD(tm, tm, tm)
	for s := 0; s < 4; s++ {
		a.VPDPBUSD_BCST(mem(reg.RDI, o+4*s), zr[16+s], ti)
		a.VPDPBUSD_BCST(mem(reg.RDI, o+16+4*s), zr[20+s], tm)
	}
	a.VPADDD(tm, ti, ti)
	a.VCVTDQ2PS(ti, ti)
	a.VPSHUFD(operand.U8(0x55), tc, tm)
	a.VMULPS(reg.Z24, tm, tm)
	a.VFMADD231PS(tm, ti, acc)
}

// tokScratch is the scratch pair of the t-th token of a block: Z25/Z26,
// Z27/Z28 and (if pairs is 3) Z29/Z30 in turn, so consecutive tokens'
// chains overlap.
func tokScratch(t, pairs int) (ti, tm reg.VecPhysical) {
	i := t % pairs
	return zr[25+2*i], zr[26+2*i]
}

// qkind is a weight format of the tiles.
type qkind struct {
	name string // "Q4" or "Q8"
	long string // "Q4_0" or "Q8_0"
	corr int    // offset of the format's correction (and scale) in a token record
}

// ublock is the size of an unpacked block of 16 rows of k (q8ilv): Q4_0
// keeps its nibbles packed, 4 vectors, which the tiles split; Q8_0 has 8.
func (k qkind) ublock() int { return 64*k.uvecs() + 64 }

// uvecs is the quant vectors of an unpacked block of k.
func (k qkind) uvecs() int {
	if k == q4 {
		return 4
	}
	return 8
}

var (
	q4 = qkind{"Q4", "Q4_0", 32}
	q8 = qkind{"Q8", "Q8_0", 40}
)

// zero clears the vector registers z.
func (a *asm) zero(z ...reg.VecPhysical) {
	for _, r := range z {
		a.VPXORD(r, r, r)
	}
}

func label(s string) operand.LabelRef { return operand.LabelRef(s) }
