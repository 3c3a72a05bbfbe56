package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ifgemmy generates ifgemmy_amd64.s: Inferflow's asymmetric formats
// (Q6_B64T1, Q5_B64T1, Q4_B32T1, Q4_B64T1, Q3H_B64T1, Q3_B32T1,
// Q2_B32T1) times four (or three, or two) tokens' Q8_0 activations, AVX2
// + F16C, eight rows at a time in their file layout: the multi-token
// counterpart of ifavx2_amd64.s's gemv8<k>AVX2.
//
// Each block of the eight rows is unpacked once, as gemv8<k>AVX2 unpacks
// it (ifyUnpack, ifyQ3HCodes: the quants in the order ifyPrep<k>AVX2
// permutes the activations into), onto the stack, and then meets every
// token's activations, which ifyPrep<k>AVX2 prepared once per call, one
// token's xs bytes after the other's. Each (row, token) is one chain over
// the blocks with exactly gemv8<k>AVX2's arithmetic (and so kernels/quant's):
// per 32-value activation block with scale dy, the exact integer sums
// S = Σq·qy and Y = Σqy, then sum += (scale·dy)·S + base·(Y·dy), each
// operation rounded to float32, no FMA, in block order; the eight rows'
// chains of token t are the lanes of a 32-byte accumulator on the stack.
// Q3H_B64T1's two code vectors (p mod 11, p div 11) are kept, and each
// token's int16 pair sums of both halves, as gemv8Q3H_B64T1AVX2 keeps them.
//
// Registers: SI the rows, R8 ldw, R9 3·ldw, DI the activations, AX xs, R10
// 3·xs, CX nb, DX y, BX the groups of eight rows left, R11 (R14) the
// current blocks of rows 0-3 (4-7), R12 the activations', R13 the blocks
// left; Y0-Y7 the eight rows' int32 lanes of the 32 values at hand, Y8 Y11
// Y12 scratch of the unpacking (Y8 and Y12 the low bits' shifts and mask
// where no bits lie above them), Y9 int16 ones (Q3H_B64T1: 0, 1 pairs and
// Y10 1, 0 pairs), Y10 a token's activations, Y14 and Y15 the rows' bases
// and scales.
func ifgemmy(a *asm) {
	g := a.ifyGlobals("ifgy")
	for _, k := range ifyKinds() {
		t := a.ifyTables(k, g)
		if k.q3h {
			for _, n := range []int{4, 3, 2} {
				a.ifgyGemm(k, t, g, n)
			}
			continue
		}
		a.ifgyPrep(k, t, g)
		for _, n := range []int{8, 4, 2, 1} {
			a.ifgyGemmT(k, t, g, n)
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
// 2·m·128 in magnitude for quants up to m) are added as int16s before
// they are widened: as many as stay within 32767.
func ifgyGroup(k ifyKind) int {
	m := 15
	switch k.name {
	case "Q6_B64T1":
		m = 63
	case "Q5_B64T1":
		m = 31
	}
	n := 8
	for n*2*m*128 > 32767 {
		n /= 2
	}
	return n
}

// ifgyGemmT generates gemm8x<n><k>AVX2 for the formats other than
// Q3H_B64T1: the eight rows' quants of each half of a block, unpacked into
// Y0-Y7, are transposed (ifgyTranspose), dword i of row r to dword r of
// Y<i>, so that a token's S of the eight rows, in the eight lanes, is the
// sum of eight VPMADDUBSW of Y<i> with the token's dword i in every lane,
// widened by VPMADDWD after ifgyGroup of them are added: no horizontal
// sums.
func (a *asm) ifgyGemmT(k ifyKind, t *ifyTables, g *ifyGlobals, n int) {
	name := fmt.Sprintf("gemm8x%d%sAVX2", n, k.name)
	blk := ifyAct * k.halves
	a.text(name, attr.NOSPLIT, ifgyGemmSig,
		fmt.Sprintf("For q groups of eight rows of nb > 0 %s blocks (ldw bytes apart) and", k.name),
		fmt.Sprintf("%d tokens t, y[t·ldy/4 + r] = w_r·x_t (or += when acc is not 0, one", n),
		"addition after the sum); the tokens' activations as ifgyPrep"+k.name+"AVX2",
		fmt.Sprintf("prepares them at xp, token t's at %d·t, xs bytes per block. Each", blk),
		"(row, token) sums as gemv8"+k.name+"AVX2 sums it, to the last bit.")
	a.AllocLocal(32 * n)
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
	if len(k.bits) == 0 && !k.q6 {
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
	for h := range k.halves {
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
			a.VCVTDQ2PS(reg.Y9, reg.Y9)
			dy := blk*tok + ifyAct*h + 32
			a.VBROADCASTSS(mem(reg.R12, dy), reg.Y10)
			a.VMULPS(reg.Y10, reg.Y15, reg.Y10) // scale·dy
			a.VMULPS(reg.Y9, reg.Y10, reg.Y10)  // ·S
			a.VBROADCASTSS(mem(reg.R12, dy+4), reg.Y11)
			a.VMULPS(reg.Y11, reg.Y14, reg.Y11) // base·(Y·dy)
			a.VADDPS(reg.Y11, reg.Y10, reg.Y10)
			a.VADDPS(ifgyAcc(tok), reg.Y10, reg.Y10)
			a.VMOVUPS(reg.Y10, ifgyAcc(tok))
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

// ifgyToken is disp bytes into token t's prepared activations (t < 4) of
// the current block.
func ifgyToken(t, disp int) operand.Mem {
	m := operand.Mem{Base: reg.R12, Disp: disp}
	switch t {
	case 1:
		m.Index, m.Scale = reg.RAX, 1
	case 2:
		m.Index, m.Scale = reg.RAX, 2
	case 3:
		m.Index, m.Scale = reg.R10, 1
	}
	return m
}

// ifgyOut is token t's eight outputs (t < 4): R12 holds ldy, R13 3·ldy.
func ifgyOut(t int) operand.Mem {
	m := operand.Mem{Base: reg.RDX}
	switch t {
	case 1:
		m.Index, m.Scale = reg.R12, 1
	case 2:
		m.Index, m.Scale = reg.R12, 2
	case 3:
		m.Index, m.Scale = reg.R13, 1
	}
	return m
}

const ifgyGemmSig = "func(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, xs uintptr, nb int, y *float32, ldy uintptr, q int, acc int)"

// ifgyGemm generates gemm8x<n><k>AVX2.
func (a *asm) ifgyGemm(k ifyKind, t *ifyTables, g *ifyGlobals, n int) {
	name := fmt.Sprintf("gemm8x%d%sAVX2", n, k.name)
	// The frame (up to 896 bytes) is over what NOSPLIT allows: the
	// kernels check the stack.
	a.text(name, 0, ifgyGemmSig,
		fmt.Sprintf("For q groups of eight rows of nb > 0 %s blocks (ldw bytes apart) and", k.name),
		fmt.Sprintf("%d tokens t, y[t·ldy/4 + r] = w_r·x_t (or += when acc is not 0, one", n),
		"addition after the sum); the tokens' activations as ifyPrep"+k.name+"AVX2",
		"prepares them at xp, xs bytes apart. Each (row, token) sums as",
		"gemv8"+k.name+"AVX2 sums it, to the last bit.")
	// The frame: the tokens' accumulators, then the unpacked rows (32
	// bytes per row and half; Q3H_B64T1: its mod and div vectors, then a
	// token's int16 pair sums).
	wOff := 32 * n
	frame := wOff + 32*8*k.halves
	if k.q3h {
		frame = wOff + 3*32*8
	}
	a.AllocLocal(frame)
	wRow := func(h, r int) operand.Mem { return mem(reg.SP, wOff+32*(8*h+r)) }

	a.load("w", reg.RSI)
	a.load("ldw", reg.R8)
	a.load("xp", reg.RDI)
	a.load("xs", reg.RAX)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("q", reg.RBX)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	if n > 3 {
		a.LEAQ(operand.Mem{Base: reg.RAX, Index: reg.RAX, Scale: 2}, reg.R10)
	}
	var sh, mask operand.Op = g.nibSh, g.c0f
	if k.pairs {
		sh, mask = g.pairSh, g.c03
	}
	if k.q3h {
		a.VMOVDQU(g.w01, reg.Y9)
		a.VMOVDQU(g.w10, reg.Y10)
	} else {
		a.VMOVDQU(g.ones16, reg.Y9)
	}
	if len(k.bits) == 0 && !k.q3h && !k.q6 {
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
		for r := range 8 {
			a.Comment(fmt.Sprintf("Row %d's codes.", r))
			a.ifyQ3HCodes(g, r)
			a.VMOVDQU(reg.Y11, wRow(0, r))
			a.VMOVDQU(reg.Y8, wRow(1, r))
		}
	} else {
		for h := range k.halves {
			for r := range 8 {
				a.Comment(fmt.Sprintf("Half %d, row %d's quants.", h, r))
				a.ifyUnpack(k, t, g, r, h, sh, mask)
				a.VMOVDQU(reg.Y11, wRow(h, r))
			}
		}
	}
	for tok := range n {
		for h := range k.halves {
			a.Comment(fmt.Sprintf("Token %d, half %d.", tok, h))
			for r := range 8 {
				switch {
				case k.q3h && h == 0:
					a.VMOVDQU(wRow(0, r), yr[r])
					a.VPMADDUBSW(ifgyToken(tok, 0), yr[r], yr[r])
					a.VMOVDQU(wRow(1, r), reg.Y8)
					a.VPMADDUBSW(ifgyToken(tok, ifyAct), reg.Y8, reg.Y8)
					a.VPADDW(reg.Y8, yr[r], yr[r])
					a.VMOVDQU(yr[r], wRow(2, r))
					a.VPMADDWD(reg.Y10, yr[r], yr[r])
				case k.q3h:
					a.VPMADDWD(wRow(2, r), reg.Y9, yr[r])
				default:
					if r == 0 {
						a.VMOVDQU(ifgyToken(tok, ifyAct*h), reg.Y10)
					}
					a.VMOVDQU(wRow(h, r), yr[r])
					a.VPMADDUBSW(reg.Y10, yr[r], yr[r])
					a.VPMADDWD(reg.Y9, yr[r], yr[r])
				}
			}
			a.ifySums()
			a.VBROADCASTSS(ifgyToken(tok, ifyAct*h+32), reg.Y2)
			a.VMULPS(reg.Y2, reg.Y15, reg.Y2) // scale·dy
			a.VMULPS(reg.Y1, reg.Y2, reg.Y2)  // ·S
			a.VBROADCASTSS(ifgyToken(tok, ifyAct*h+36), reg.Y3)
			a.VMULPS(reg.Y3, reg.Y14, reg.Y3) // base·(Y·dy)
			a.VADDPS(reg.Y3, reg.Y2, reg.Y2)
			a.VADDPS(ifgyAcc(tok), reg.Y2, reg.Y2)
			a.VMOVUPS(reg.Y2, ifgyAcc(tok))
		}
	}
	a.ADDQ(operand.U32(k.bb), reg.R11)
	a.ADDQ(operand.U32(k.bb), reg.R14)
	a.ADDQ(operand.U32(ifyAct*k.halves), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	a.Comment("The tokens' sums to y.")
	a.load("ldy", reg.R12)
	if n > 3 {
		a.LEAQ(operand.Mem{Base: reg.R12, Index: reg.R12, Scale: 2}, reg.R13)
	}
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("put"))
	for tok := range n {
		a.VMOVUPS(ifgyAcc(tok), reg.Y0)
		a.VADDPS(ifgyOut(tok), reg.Y0, reg.Y0)
		a.VMOVUPS(reg.Y0, ifgyOut(tok))
	}
	a.JMP(label("next"))
	a.Label("put")
	for tok := range n {
		a.VMOVUPS(ifgyAcc(tok), reg.Y0)
		a.VMOVUPS(reg.Y0, ifgyOut(tok))
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
