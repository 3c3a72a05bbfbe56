package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// legacyy generates legacyy_amd64.s: Q5_0 weights times Q8_0 activations,
// Q4_1 and Q5_1 weights times Q8_1 activations (f16 d, f16 s = d·Σq, 32
// int8 quants), AVX2 + FMA + F16C, one row at a time for 1 to 4 tokens.
//
// They sum in the order of kernels/quant's DotQ5_0Q8_0, DotQ4_1Q8_1 and
// DotQ5_1Q8_1 (ggml's AVX2 ggml_vec_dot_q5_0_q8_0, _q4_1_q8_1 and
// _q5_1_q8_1, and tinyBLAS's Q5_0 for several tokens, which sums alike):
// per block the values are unpacked to 32 bytes (element e at byte e: the
// low nibbles, then the high ones, each or'ed with its fifth bit from qh),
// VPMADDUBSW and VPMADDWD (by int16 ones) sum their products with the
// quants exactly into int32 lane e/4, and the row's eight float32
// accumulators of a token gain dx·dy·lane in one VFMADD231PS; the
// accumulators are reduced as hsum_float_8. Q5_0's values q-16 are
// signed, so they go through VPABSB and VPSIGNB, as in ggml (exact for
// activation quants in [-127, 127], all Q8_0 quantizing writes); Q4_1's
// and Q5_1's are unsigned and multiply the quants directly. No int16 pair
// can saturate (at most 2·31·127).
//
// Q4_1 and Q5_1 add the minimums' term summs = m·s + summs beside the
// lanes, ggml's scalar fused multiply-add: m·s, a product of two f16s, is
// exact in float32, so the kernels add it with VADDPS. One VCVTPH2PS
// turns a weight block's [d, m] into floats and another an activation
// block's [d, s]; their product [dx·dy, m·s] is both the broadcast scale
// (lane 0) and the term added to lane 1 of the token's summs register.
//
// Registers: SI the row, DI token 0's activations, BX ldx, R9 3·ldx, CX
// nb, DX y, R10 ldy, AX 3·ldy, R8 ldw, R14 the rows left, R11 and R12 the
// current weight and activation blocks, R13 the blocks left; Y0..Y3 the
// tokens' accumulators, X4..X7 their summs, Y8 a token's scale, X9 the
// weight block's [d, m], Y10 int16 ones, Y11 scratch, Y12 |values|
// (Q5_0), Y13 the values, Y14 scratch, Y15 0x0f bytes.
func legacyy(a *asm) {
	g := lyGlobals{
		shr:  a.global("lyshr", 0, 0, 0x0000000400000004, 0x0000000400000004),
		shuf: a.global("lyshuf", 0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303),
		sel:  a.global("lysel", 0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201),
		f0:   a.global("lyf0", 0xf0f0f0f0f0f0f0f0, 0xf0f0f0f0f0f0f0f0, 0xf0f0f0f0f0f0f0f0, 0xf0f0f0f0f0f0f0f0),
		b10:  a.global("ly10", 0x1010101010101010, 0x1010101010101010, 0x1010101010101010, 0x1010101010101010),
	}
	for _, k := range []lyKind{
		{"Q5_0", 22, 2, 6, false, true},
		{"Q4_1", 20, -1, 4, true, false},
		{"Q5_1", 24, 4, 8, true, false},
	} {
		for nt := 1; nt <= 4; nt++ {
			g.gemv(a, k, nt)
		}
	}
}

// lyGlobals are the kernels' read-only tables: the dword shifts 0 (low
// half) and 4 (high half) that take the nibbles of elements 0-15 and 16-31
// from one broadcast 16-byte load; the VPSHUFB mask that spreads byte i/8
// of qh to byte i; the bit of each byte; 0xf0 and 0x10 bytes.
type lyGlobals struct {
	shr, shuf, sel, f0, b10 operand.Mem
}

// lyKind is a weight type: block bytes, the offsets of qh (-1: none) and
// of the nibbles, whether it has a minimum (and Q8_1 activations), and
// whether its values are signed (q-16).
type lyKind struct {
	name        string
	bs, qh, qs  int
	min, signed bool
}

// gemv emits gemv<name>x<nt>AVX2.
func (g lyGlobals) gemv(a *asm, k lyKind, nt int) {
	act := "Q8_0"
	ab, aq := 34, 2 // activation block bytes, offset of its quants
	if k.min {
		act, ab, aq = "Q8_1", 36, 4
	}
	a.text(fmt.Sprintf("gemv%sx%dAVX2", k.name, nt), attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, nrows int, acc int)",
		fmt.Sprintf("For each of nrows rows r of nb %s blocks (ldw bytes apart) and each of", k.name),
		fmt.Sprintf("%d tokens t (rows of nb %s blocks at x, ldx bytes apart),", nt, act),
		"y[t·ldy/4 + r] = w_r·x_t (or += when acc is not 0, one addition after the",
		"sum); nb > 0.")
	a.load("w", reg.RSI)
	a.load("ldw", reg.R8)
	a.load("x", reg.RDI)
	a.load("ldx", reg.RBX)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("ldy", reg.R10)
	a.load("nrows", reg.R14)
	a.bconst(0x0f, 15) // AX scratch
	a.VPCMPEQW(reg.Y10, reg.Y10, reg.Y10)
	a.VPSRLW(operand.U8(15), reg.Y10, reg.Y10)
	a.LEAQ(operand.Mem{Base: reg.RBX, Index: reg.RBX, Scale: 2}, reg.R9)
	a.LEAQ(operand.Mem{Base: reg.R10, Index: reg.R10, Scale: 2}, reg.RAX)
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	// tok is disp bytes into token t's current activation block.
	tok := func(t, disp int) operand.Mem {
		switch t {
		case 1:
			return operand.Mem{Base: reg.R12, Index: reg.RBX, Scale: 1, Disp: disp}
		case 2:
			return operand.Mem{Base: reg.R12, Index: reg.RBX, Scale: 2, Disp: disp}
		case 3:
			return operand.Mem{Base: reg.R12, Index: reg.R9, Scale: 1, Disp: disp}
		}
		return mem(reg.R12, disp)
	}
	// out is token t's output of the current row.
	out := func(t int) operand.Mem {
		switch t {
		case 1:
			return operand.Mem{Base: reg.RDX, Index: reg.R10, Scale: 1}
		case 2:
			return operand.Mem{Base: reg.RDX, Index: reg.R10, Scale: 2}
		case 3:
			return operand.Mem{Base: reg.RDX, Index: reg.RAX, Scale: 1}
		}
		return mem(reg.RDX, 0)
	}

	a.Label("row")
	for t := range nt {
		a.VXORPS(yr[t], yr[t], yr[t])
		if k.min {
			a.VXORPS(xr[4+t], xr[4+t], xr[4+t])
		}
	}
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)

	a.Label("blk")
	// The block's values in Y13.
	a.VBROADCASTI128(mem(reg.R11, k.qs), reg.Y13)
	a.VPSRLVD(g.shr, reg.Y13, reg.Y13)
	a.VPAND(reg.Y15, reg.Y13, reg.Y13)
	if k.qh >= 0 {
		// Byte e 0xff where bit e of qh is set (ggml's bytes_from_bits_32),
		// then Q5_0's 0xf0 where it is not (q-16 < 0), Q5_1's 0x10 where
		// it is.
		a.VPBROADCASTD(mem(reg.R11, k.qh), reg.Y11)
		a.VPSHUFB(g.shuf, reg.Y11, reg.Y11)
		a.VPAND(g.sel, reg.Y11, reg.Y11)
		a.VPCMPEQB(g.sel, reg.Y11, reg.Y11)
		if k.signed {
			a.VPANDN(g.f0, reg.Y11, reg.Y11)
		} else {
			a.VPAND(g.b10, reg.Y11, reg.Y11)
		}
		a.VPOR(reg.Y11, reg.Y13, reg.Y13)
	}
	if k.signed {
		a.VPABSB(reg.Y13, reg.Y12)
	}
	a.VCVTPH2PS(mem(reg.R11, 0), reg.X9)
	for t := range nt {
		a.VCVTPH2PS(tok(t, 0), reg.X8)
		if k.min {
			a.VMULPS(reg.X9, reg.X8, reg.X8)
			a.VADDPS(reg.X8, xr[4+t], xr[4+t])
		} else {
			a.VMULSS(reg.X9, reg.X8, reg.X8)
		}
		a.VBROADCASTSS(reg.X8, reg.Y8)
		if k.signed {
			a.VMOVDQU(tok(t, aq), reg.Y14)
			a.VPSIGNB(reg.Y13, reg.Y14, reg.Y14)
			a.VPMADDUBSW(reg.Y14, reg.Y12, reg.Y14)
		} else {
			a.VPMADDUBSW(tok(t, aq), reg.Y13, reg.Y14)
		}
		a.VPMADDWD(reg.Y10, reg.Y14, reg.Y14)
		a.VCVTDQ2PS(reg.Y14, reg.Y14)
		a.VFMADD231PS(reg.Y14, reg.Y8, yr[t])
	}
	a.ADDQ(operand.U8(k.bs), reg.R11)
	a.ADDQ(operand.U8(ab), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	for t := range nt {
		a.hsum8y(t, 14, false)
		if k.min {
			a.VMOVSHDUP(xr[4+t], reg.X14)
			a.VADDSS(reg.X14, xr[t], xr[t])
		}
	}
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("store"))
	for t := range nt {
		a.VADDSS(out(t), xr[t], xr[t])
	}
	a.Label("store")
	for t := range nt {
		a.VMOVSS(xr[t], out(t))
	}
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(reg.R8, reg.RSI)
	a.DECQ(reg.R14)
	a.JNZ(label("row"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}
