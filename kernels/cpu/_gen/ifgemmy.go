package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ifgemmy generates ifgemmy_amd64.s: Inferflow's asymmetric formats
// (Q6_B64T1, Q5_B64T1, Q4_B32T1, Q4_B64T1, Q3H_B64T1, Q3_B32T1,
// Q2_B32T1) times eight (or four, two, one) tokens' Q8_0 activations,
// AVX2 + F16C, eight rows at a time in their file layout: the multi-token
// counterpart of ifavx2_amd64.s's gemv8<k>AVX2.
//
// Each block (each half of a 64-value block) of the eight rows is
// unpacked once, as gemv8<k>AVX2 unpacks it (ifyUnpack, ifyQ3HCodes: the
// quants in the order ifyPrep<k>AVX2 permutes the activations into), and
// its dwords transposed (ifgyTranspose), dword i of row r to lane r of
// vector i; it then meets every token's activations, which
// ifgyPrep<k>AVX2 prepared once per call (ifyPrep<k>AVX2's layout, the
// tokens interleaved per weight block). A token's S of the eight rows, in
// the eight lanes, is the sum over i of VPMADDUBSW of vector i with the
// token's activation dword i broadcast, added as int16s in groups that
// cannot overflow (ifgyGroup) and widened by VPMADDWD: no horizontal sums.
// Each (row, token) is one chain over the blocks with exactly
// gemv8<k>AVX2's arithmetic (and so kernels/quant's): per 32-value
// activation block with scale dy, the exact integer sums S = Σq·qy and
// Y = Σqy, then sum += (scale·dy)·S + base·(Y·dy), each operation rounded
// to float32, no FMA, in block order; the eight rows' chains of token t
// are the lanes of a 32-byte accumulator on the stack.
//
// Registers: SI the rows, R8 ldw, R9 3·ldw, DI the activations, AX the
// activations' bytes per block, CX nb, DX y, BX the groups of eight rows
// left, R11 (R14) the current blocks of rows 0-3 (4-7), R12 the
// activations', R13 the blocks left; Y0-Y7 the transposed quants
// (Q3H_B64T1: its codes' p div 11, their p mod 11 on the stack), Y8 Y11
// Y12 scratch of the unpacking (Y8 and Y12 the low bits' shifts and mask
// where no bits lie above them), Y9 Y10 Y11 Y13 (Q3H_B64T1: and Y8 Y12)
// a token's sums, Y14 and Y15 the rows' bases and scales.
func ifgemmy(a *asm) {
	g := a.ifyGlobals("ifgy")
	for _, k := range ifyKinds() {
		t := a.ifyTables(k, g)
		a.ifgyPrep(k, t, g)
		for _, n := range []int{8, 4, 2, 1} {
			a.ifgyGemm(k, t, g, n)
		}
	}
}

// ifgyPrep generates ifgyPrep<k>AVX2.
func (a *asm) ifgyPrep(k ifyKind, t *ifyTables, g *ifyGlobals) {
	a.text("ifgyPrep"+k.name+"AVX2", attr.NOSPLIT,
		"func(x unsafe.Pointer, nb int, xp unsafe.Pointer, stride uintptr)",
		"Prepares the Q8_0 blocks at x of nb > 0 "+k.name+" blocks as",
		"ifyPrep"+k.name+"AVX2 does, but the weight blocks' stride bytes apart.")
	a.load("x", reg.RSI)
	a.load("nb", reg.RCX)
	a.load("xp", reg.RDI)
	a.load("stride", reg.RDX)
	a.Label("blk")
	a.ifyPrepBlock(k, t, g, func(o int) { a.VMOVDQU(reg.Y4, mem(reg.RDI, ifyAct*o)) },
		func(b int) int { return ifyAct*b + 32 })
	a.ADDQ(operand.U32(34*k.halves), reg.RSI)
	a.ADDQ(reg.RDX, reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("blk"))
	a.VZEROUPPER()
	a.RET()
}

// ifgyTranspose transposes the dwords of the eight rows in Y0-Y7: dword j
// of Y<i> becomes dword i of Y<j> (Y9 Y10 Y11 Y13 scratch).
func (a *asm) ifgyTranspose() {
	for _, r0 := range []int{0, 4} {
		a.VPUNPCKLDQ(yr[r0+1], yr[r0], reg.Y9)
		a.VPUNPCKHDQ(yr[r0+1], yr[r0], reg.Y10)
		a.VPUNPCKLDQ(yr[r0+3], yr[r0+2], reg.Y11)
		a.VPUNPCKHDQ(yr[r0+3], yr[r0+2], reg.Y13)
		a.VPUNPCKLQDQ(reg.Y11, reg.Y9, yr[r0])
		a.VPUNPCKHQDQ(reg.Y11, reg.Y9, yr[r0+1])
		a.VPUNPCKLQDQ(reg.Y13, reg.Y10, yr[r0+2])
		a.VPUNPCKHQDQ(reg.Y13, reg.Y10, yr[r0+3])
	}
	for i := range 4 {
		a.VPERM2I128(operand.U8(0x20), yr[4+i], yr[i], reg.Y9)
		a.VPERM2I128(operand.U8(0x31), yr[4+i], yr[i], yr[4+i])
		a.VMOVDQU(reg.Y9, yr[i])
	}
}

// ifgyGroup is how many VPMADDUBSW products of k's quants (at most
// 2·m·128 in magnitude for quants up to m = ifgyMax(k)) are added as
// int16s before they are widened: as many as stay within 32767.
func ifgyGroup(k ifyKind) int {
	m := ifgyMax(k)
	n := 8
	for n*2*m*128 > 32767 {
		n /= 2
	}
	return n
}

// ifgyMax is the largest quant of k as ifyUnpack unpacks it: the low bits
// (nibbles or pairs) and the bits above them; Q6_B64T1's nibbles and
// pairs make 6 bits. Q3H_B64T1's products come in pairs, p mod 11 (at
// most 10) and p div 11 (at most 11, p < 128) times the values 2c and
// 2c+1, so its bound is their sum.
func ifgyMax(k ifyKind) int {
	switch {
	case k.q6:
		return 63
	case k.q3h:
		return 10 + 11
	}
	m := 15
	if k.pairs {
		m = 3
	}
	for _, bs := range k.bits {
		for _, b := range bs.bits {
			m |= int(b.val)
		}
	}
	return m
}

// ifgyGemm generates gemm8x<n><k>AVX2.
func (a *asm) ifgyGemm(k ifyKind, t *ifyTables, g *ifyGlobals, n int) {
	name := fmt.Sprintf("gemm8x%d%sAVX2", n, k.name)
	blk := ifyAct * k.halves
	a.text(name, attr.NOSPLIT, ifgyGemmSig,
		fmt.Sprintf("For q groups of eight rows of nb > 0 %s blocks (ldw bytes apart) and", k.name),
		fmt.Sprintf("%d tokens t, y[t·ldy/4 + r] = w_r·x_t (or += when acc is not 0, one", n),
		"addition after the sum); the tokens' activations as ifgyPrep"+k.name+"AVX2",
		fmt.Sprintf("prepares them at xp, token t's at %d·t, xs bytes per block. Each", blk),
		"(row, token) sums as gemv8"+k.name+"AVX2 sums it, to the last bit.")
	// The frame: the tokens' accumulators, then for Q3H_B64T1 the
	// transposed p mod 11.
	mt := 32 * n
	if k.q3h {
		a.AllocLocal(mt + 8*32)
	} else {
		a.AllocLocal(mt)
	}
	a.load("w", reg.RSI)
	a.load("ldw", reg.R8)
	a.load("xp", reg.RDI)
	a.load("xs", reg.RAX)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("q", reg.RBX)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	var sh, mask operand.Op = g.nibSh, g.c0f
	if k.pairs {
		sh, mask = g.pairSh, g.c03
	}
	if len(k.bits) == 0 && !k.q6 && !k.q3h {
		a.VMOVDQU(sh.(operand.Mem), reg.Y8)
		a.VMOVDQU(mask.(operand.Mem), reg.Y12)
		sh, mask = reg.Y8, reg.Y12
	}
	a.TESTQ(reg.RBX, reg.RBX)
	a.JZ(label("done"))

	a.Label("group")
	a.VXORPS(reg.Y0, reg.Y0, reg.Y0)
	for tok := range n {
		a.VMOVUPS(reg.Y0, ifgyAcc(tok))
	}
	a.MOVQ(reg.RSI, reg.R11)
	a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.R8, Scale: 4}, reg.R14)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)

	a.Label("blk")
	a.ifyHeaders(g)
	if k.q3h {
		a.ifgyQ3H(g, n, mt)
	}
	for h := range k.halves {
		if k.q3h {
			break // both halves in ifgyQ3H
		}
		for r := range 8 {
			a.Comment(fmt.Sprintf("Half %d, row %d's quants.", h, r))
			a.ifyUnpack(k, t, g, r, h, sh, mask)
			a.VMOVDQU(reg.Y11, yr[r])
		}
		a.ifgyTranspose()
		for tok := range n {
			a.Comment(fmt.Sprintf("Half %d, token %d.", h, tok))
			gs := ifgyGroup(k)
			for i := range 8 {
				// Group i/gs sums in Y9 (the first), Y10 or Y13.
				acc := []reg.VecPhysical{reg.Y9, reg.Y10, reg.Y13, reg.Y10}[i/gs]
				d := acc
				if i%gs != 0 {
					d = reg.Y11
				}
				a.VPBROADCASTD(mem(reg.R12, blk*tok+ifyAct*h+4*i), d)
				a.VPMADDUBSW(d, yr[i], d)
				if d != acc {
					a.VPADDW(d, acc, acc)
				}
				if i%gs == gs-1 {
					a.VPMADDWD(g.ones16, acc, acc)
					if acc != reg.Y9 {
						a.VPADDD(acc, reg.Y9, reg.Y9)
					}
				}
			}
			a.ifgyStep(reg.Y9, blk*tok+ifyAct*h+32, tok)
		}
	}
	a.ADDQ(operand.U32(k.bb), reg.R11)
	a.ADDQ(operand.U32(k.bb), reg.R14)
	a.ADDQ(reg.RAX, reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	a.Comment("The tokens' sums to y.")
	a.load("ldy", reg.R12)
	a.MOVQ(reg.RDX, reg.R13)
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("put"))
	for tok := range n {
		a.VMOVUPS(ifgyAcc(tok), reg.Y0)
		a.VADDPS(mem(reg.R13, 0), reg.Y0, reg.Y0)
		a.VMOVUPS(reg.Y0, mem(reg.R13, 0))
		if tok < n-1 {
			a.ADDQ(reg.R12, reg.R13)
		}
	}
	a.JMP(label("next"))
	a.Label("put")
	for tok := range n {
		a.VMOVUPS(ifgyAcc(tok), reg.Y0)
		a.VMOVUPS(reg.Y0, mem(reg.R13, 0))
		if tok < n-1 {
			a.ADDQ(reg.R12, reg.R13)
		}
	}
	a.Label("next")
	a.ADDQ(operand.U32(32), reg.RDX)
	a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.R8, Scale: 8}, reg.RSI)
	a.DECQ(reg.RBX)
	a.JNZ(label("group"))
	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// ifgyAcc is token t's accumulator: eight rows' float32 sums.
func ifgyAcc(t int) operand.Mem { return mem(reg.SP, 32*t) }

const ifgyGemmSig = "func(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, xs uintptr, nb int, y *float32, ldy uintptr, q int, acc int)"

// ifgyStep adds the eight rows' S of one activation block of token tok,
// int32s in s (Y10 and Y11 then free), to the token's chains: the block's
// dy at disp(R12) and float32(Y)·dy at disp+4.
func (a *asm) ifgyStep(s reg.VecPhysical, disp, tok int) {
	a.VCVTDQ2PS(s, s)
	a.VBROADCASTSS(mem(reg.R12, disp), reg.Y10)
	a.VMULPS(reg.Y10, reg.Y15, reg.Y10) // scale·dy
	a.VMULPS(s, reg.Y10, reg.Y10)       // ·S
	a.VBROADCASTSS(mem(reg.R12, disp+4), reg.Y11)
	a.VMULPS(reg.Y11, reg.Y14, reg.Y11) // base·(Y·dy)
	a.VADDPS(reg.Y11, reg.Y10, reg.Y10)
	a.VADDPS(ifgyAcc(tok), reg.Y10, reg.Y10)
	a.VMOVUPS(reg.Y10, ifgyAcc(tok))
}

// ifgyQ3H is a block of Q3H_B64T1 for the n tokens: the eight rows'
// codes split (ifyQ3HCodes) and transposed, p mod 11 onto the stack at
// mt(SP) and p div 11 in Y0-Y7; a token's dword i of its two prepared
// vectors (the values 2c, 2c+1) meets vector i of each, and the int16
// pairs of the products sum the first half in word 0 of each dword and
// the second in word 1, which VPMADDWD with 1, 0 (0, 1) pairs widens.
func (a *asm) ifgyQ3H(g *ifyGlobals, n, mt int) {
	for r := range 8 {
		a.Comment(fmt.Sprintf("Row %d's codes.", r))
		a.ifyQ3HCodes(g, r)
		a.VMOVDQU(reg.Y11, yr[r])
		a.VMOVDQU(reg.Y8, mem(reg.SP, mt+32*r))
	}
	a.ifgyTranspose()
	for i := range 8 {
		a.VMOVDQU(mem(reg.SP, mt+32*i), reg.Y9)
		a.VMOVDQU(yr[i], mem(reg.SP, mt+32*i))
		a.VMOVDQU(reg.Y9, yr[i])
	}
	a.ifgyTranspose()
	gs := ifgyGroup(ifyKind{q3h: true})
	blk := 2 * ifyAct
	for tok := range n {
		a.Comment(fmt.Sprintf("Token %d.", tok))
		for i := range 8 {
			// Group i/gs sums in Y11; both halves' S in Y9 and Y10.
			d := reg.Y11
			if i%gs != 0 {
				d = reg.Y13
			}
			a.VPBROADCASTD(mem(reg.R12, blk*tok+4*i), reg.Y12)
			a.VMOVDQU(mem(reg.SP, mt+32*i), d)
			a.VPMADDUBSW(reg.Y12, d, d)
			a.VPBROADCASTD(mem(reg.R12, blk*tok+ifyAct+4*i), reg.Y12)
			a.VPMADDUBSW(reg.Y12, yr[i], reg.Y12)
			a.VPADDW(reg.Y12, d, d)
			if d != reg.Y11 {
				a.VPADDW(d, reg.Y11, reg.Y11)
			}
			if i%gs == gs-1 {
				if i/gs == 0 {
					a.VPMADDWD(g.w10, reg.Y11, reg.Y9)
					a.VPMADDWD(g.w01, reg.Y11, reg.Y10)
					continue
				}
				a.VPMADDWD(g.w10, reg.Y11, reg.Y8)
				a.VPADDD(reg.Y8, reg.Y9, reg.Y9)
				a.VPMADDWD(g.w01, reg.Y11, reg.Y8)
				a.VPADDD(reg.Y8, reg.Y10, reg.Y10)
			}
		}
		a.VMOVDQU(reg.Y10, reg.Y13)
		a.ifgyStep(reg.Y9, blk*tok+32, tok)
		a.ifgyStep(reg.Y13, blk*tok+ifyAct+32, tok)
	}
}
