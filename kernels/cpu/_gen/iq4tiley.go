package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// iq4MaxTokens is the most tokens one IQ4_NL tile takes.
const iq4MaxTokens = 8

// iq4TileY generates iq4TileY<nt>: IQ4_NL weights times nt tokens in layout
// Y, in the order of kernels/quant's DotIQ4_NLQ8_0Batch (ggml's for two or
// more tokens), which gemvIQ4_NLBAVX2 runs token by token: each block's 8
// exact integer lanes (lane e/4 for element e) fused into 8 float32
// accumulators with d = dw·dx, every block in turn, then hsum_float_8.
// Each weight block is unpacked once for the nt tokens.
//
// Registers: Y0..Y7 the tokens' accumulators, Y8 the block's values, Y9
// their magnitudes, Y10 dw, Y11..Y14 scratch, Y15 the 16 values in both
// halves. SI walks the rows, R13 a row's blocks, DI the first token's
// blocks (the others R8, 2·R8, R9 = 3·R8, 4·R8, R10 = 5·R8, 2·R9 and
// R11 = 7·R8 bytes on), R12 the tokens' start, R14 ldw, BX the rows left,
// DX the outputs of the row.
func (a *asm) iq4TileY(nt int, vals, shifts operand.Mem, g yGlobals) {
	a.stripTileY(nt, vals, shifts, g, nil)
}

// q5TileY are the tables of stripTileY's Q5_0 tiles (legacyy.go's): the
// VPSHUFB mask that spreads byte i/8 of qh to byte i, the bit of each
// byte, 0xf0 bytes.
type q5TileY struct{ shuf, sel, f0 operand.Mem }

// stripTileY emits iq4TileY<nt> or, with q5, q5_0TileY<nt>: the same
// tiles for Q5_0 blocks (22 bytes: f16 d, qh, 16 bytes of low nibbles),
// whose values q-16 are built as ggml's AVX2 kernel builds them (the
// nibbles or'ed with 0xf0 where the fifth bit is clear); tinyBLAS sums
// Q5_0 in IQ4_NL's order. Y15 is unused for Q5_0.
func (a *asm) stripTileY(nt int, vals, shifts operand.Mem, g yGlobals, q5 *q5TileY) {
	name, typ, bs, qs := "iq4TileY", "IQ4_NL", 18, 2
	if q5 != nil {
		name, typ, bs, qs = "q5_0TileY", "Q5_0", 22, 6
	}
	a.text(fmt.Sprintf("%s%d", name, nt), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x *byte, ldx uintptr, nb int, dst *float32, ldd uintptr, nrows int, acc int)",
		fmt.Sprintf("For each of nrows rows of nb > 0 %s blocks (ldw bytes apart) and the", typ),
		fmt.Sprintf("%d tokens at x (layout Y, ldx bytes apart), dst[t·ldd/4+r] (+)= w_r·x_t", nt),
		"(ldd in bytes; with acc not 0 the old value is added after the sum).")
	a.load("w", reg.RSI)
	a.load("ldw", reg.R14)
	a.load("x", reg.R12)
	a.load("ldx", reg.R8)
	a.load("dst", reg.RDX)
	a.load("nrows", reg.RBX)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 4}, reg.R10)
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.R8, Scale: 4}, reg.R11)
	tok := func(t, disp int) operand.Mem {
		switch t {
		case 0:
			return mem(reg.RDI, disp)
		case 1:
			return operand.Mem{Base: reg.RDI, Index: reg.R8, Scale: 1, Disp: disp}
		case 2:
			return operand.Mem{Base: reg.RDI, Index: reg.R8, Scale: 2, Disp: disp}
		case 3:
			return operand.Mem{Base: reg.RDI, Index: reg.R9, Scale: 1, Disp: disp}
		case 4:
			return operand.Mem{Base: reg.RDI, Index: reg.R8, Scale: 4, Disp: disp}
		case 5:
			return operand.Mem{Base: reg.RDI, Index: reg.R10, Scale: 1, Disp: disp}
		case 6:
			return operand.Mem{Base: reg.RDI, Index: reg.R9, Scale: 2, Disp: disp}
		}
		return operand.Mem{Base: reg.RDI, Index: reg.R11, Scale: 1, Disp: disp}
	}
	if q5 == nil {
		a.VBROADCASTI128(vals, reg.Y15)
	}
	a.TESTQ(reg.RBX, reg.RBX)
	a.JZ(label("done"))

	a.Label("row")
	for t := range nt {
		a.VXORPS(yr[t], yr[t], yr[t])
	}
	a.MOVQ(reg.RSI, reg.R13)
	a.MOVQ(reg.R12, reg.RDI)
	a.load("nb", reg.RCX)

	a.Label("blk")
	a.VBROADCASTI128(mem(reg.R13, qs), reg.Y8)
	a.VPSRLVD(shifts, reg.Y8, reg.Y8)
	a.VPAND(g.nib, reg.Y8, reg.Y8)
	if q5 != nil {
		a.VPBROADCASTD(mem(reg.R13, 2), reg.Y11)
		a.VPSHUFB(q5.shuf, reg.Y11, reg.Y11)
		a.VPAND(q5.sel, reg.Y11, reg.Y11)
		a.VPCMPEQB(q5.sel, reg.Y11, reg.Y11)
		a.VPANDN(q5.f0, reg.Y11, reg.Y11)
		a.VPOR(reg.Y11, reg.Y8, reg.Y8)
	} else {
		a.VPSHUFB(reg.Y8, reg.Y15, reg.Y8)
	}
	a.VPABSB(reg.Y8, reg.Y9)
	a.VPBROADCASTW(mem(reg.R13, 0), reg.X10)
	a.VCVTPH2PS(reg.X10, reg.Y10)
	for t := range nt {
		x, s := yr[11+2*(t%2)], yr[12+2*(t%2)]
		a.VMOVDQU(tok(t, 0), x)
		a.VPSIGNB(reg.Y8, x, x)
		a.VPMADDUBSW(x, reg.Y9, x)
		a.VPMADDWD(g.ones, x, x)
		a.VCVTDQ2PS(x, x)
		a.VBROADCASTSS(tok(t, 32), s)
		a.VMULPS(reg.Y10, s, s)
		a.VFMADD231PS(s, x, yr[t])
	}
	a.ADDQ(operand.U8(bs), reg.R13)
	a.ADDQ(operand.U8(yTokBlock), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))

	// hsum_float_8 of each token, plus the old output when acc is set.
	a.MOVQ(reg.RDX, reg.RAX)
	a.load("ldd", reg.R13)
	a.load("acc", reg.RCX)
	for t := range nt {
		a.hsum8y(t, 11, false)
		skip := fmt.Sprintf("st%d", t)
		a.TESTQ(reg.RCX, reg.RCX)
		a.JZ(label(skip))
		a.VADDSS(mem(reg.RAX, 0), xr[t], xr[t])
		a.Label(skip)
		a.VMOVSS(xr[t], mem(reg.RAX, 0))
		a.ADDQ(reg.R13, reg.RAX)
	}
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(reg.R14, reg.RSI)
	a.DECQ(reg.RBX)
	a.JNZ(label("row"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}
