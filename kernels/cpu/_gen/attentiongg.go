package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// attentiongg generates attentiongg_amd64.s: the half-precision attention
// kernels in ggml's summation orders, AVX-512 (see dotF16GG and attendV16
// in attention.go). Every product is of an f16 value and a float32 holding
// an f16 value, so it is exact and a fused multiply-add adds it with one
// rounding, as ggml's do. attentiongy.go has their AVX2 twins.
func attentiongg(a *asm) {
	a.dotRowsF16GGZ()
	a.axpyRotF16Z()
	a.axpyRowsF16DZ()
}

// hsum16z sums the 16 lanes of Z<z> into the low lane of X<z> in
// _mm512_reduce_add_ps's order: halves, quarters, then (t0+t2) + (t1+t3).
// Y<t> is scratch.
func (a *asm) hsum16z(z, t int) {
	a.VEXTRACTF64X4(operand.U8(1), zr[z], yr[t])
	a.VADDPS(yr[t], yr[z], yr[z])
	a.VEXTRACTF128(operand.U8(1), yr[z], xr[t])
	a.VADDPS(xr[t], xr[z], xr[z])
	a.VMOVHLPS(xr[z], xr[z], xr[t])
	a.VADDPS(xr[t], xr[z], xr[z])
	a.VMOVSHDUP(xr[z], xr[t])
	a.VADDSS(xr[t], xr[z], xr[z])
}

// kmem is byte AX of the row of halves at base, plus disp.
func kmem(base reg.Register, disp int) operand.Mem {
	return operand.Mem{Base: base, Index: reg.RAX, Scale: 1, Disp: disp}
}

// qmem is float32 AX/2 of q (SI), plus disp bytes: AX counts the bytes of
// halves.
func qmem(disp int) operand.Mem {
	return operand.Mem{Base: reg.RSI, Index: reg.RAX, Scale: 2, Disp: disp}
}

// dotRowsF16GGZ generates dotRowsF16GGZ.
func (a *asm) dotRowsF16GGZ() {
	a.text("dotRowsF16GGZ", attr.NOSPLIT,
		"func(out, q *float32, k *uint16, stride uintptr, n, hd, batched int)",
		"out[r] = q·k[r] (hd halves from k + r·stride bytes) for r < n. batched",
		"!= 0: llamafile's order, one 16-lane accumulator over the chunks, hd a",
		"multiple of 16; else ggml_vec_dot_f16's, four accumulators over 64-wide",
		"steps folded as (a0+a2)+(a1+a3), hd a multiple of 64.")
	a.load("out", reg.RDX)
	a.load("q", reg.RSI)
	a.load("k", reg.R8)
	a.load("stride", reg.RBX)
	a.load("n", reg.RCX)
	a.load("hd", reg.R10)
	a.load("batched", reg.R11)
	a.SHLQ(operand.U8(1), reg.R10) // bytes of halves per row
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	a.TESTQ(reg.R11, reg.R11)
	a.JZ(label("single2"))

	// next ends a row group of m rows: stores X0..X<m-1> at (DX), moves
	// DX and R8 (to the row after last) on and counts CX down, back to
	// loop.
	next := func(m int, last reg.Register, loop string) {
		for i := 0; i < m; i++ {
			a.VMOVSS(xr[i], mem(reg.RDX, 4*i))
		}
		a.ADDQ(operand.U8(4*m), reg.RDX)
		if m == 1 {
			a.ADDQ(reg.RBX, reg.R8)
			a.DECQ(reg.RCX)
		} else {
			a.LEAQ(operand.Mem{Base: last, Index: reg.RBX, Scale: 1}, reg.R8)
			a.SUBQ(operand.U8(m), reg.RCX)
		}
		a.JMP(label(loop))
	}
	zero := func(zs ...int) {
		for _, z := range zs {
			a.VPXORD(zr[z], zr[z], zr[z])
		}
		a.XORQ(reg.RAX, reg.RAX)
	}
	// step ends a chunk loop of n bytes of halves per row.
	step := func(n int, loop string) {
		a.ADDQ(imm(n), reg.RAX)
		a.CMPQ(reg.RAX, reg.R10)
		a.JB(label(loop))
	}

	rows := []reg.Register{reg.R8, reg.R9, reg.RDI, reg.R14}
	a.Comment("Four rows at a time (independent chains), then one by one.")
	a.Label("batch4")
	a.CMPQ(reg.RCX, operand.U8(4))
	a.JB(label("batch"))
	for i := 1; i < 4; i++ {
		a.LEAQ(operand.Mem{Base: rows[i-1], Index: reg.RBX, Scale: 1}, rows[i])
	}
	zero(0, 1, 2, 3)

	a.Label("b4chunk")
	a.VMOVUPS(qmem(0), reg.Z4)
	for i, r := range rows {
		a.VCVTPH2PS(kmem(r, 0), zr[5+i])
	}
	for i := range rows {
		a.VFMADD231PS(zr[5+i], reg.Z4, zr[i])
	}
	step(32, "b4chunk")
	for i := range rows {
		a.hsum16z(i, 12+i)
	}
	next(4, reg.R14, "batch4")

	a.Label("batch")
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	zero(0)

	a.Label("bchunk")
	a.VCVTPH2PS(kmem(reg.R8, 0), reg.Z5)
	a.VFMADD231PS(qmem(0), reg.Z5, reg.Z0)
	step(32, "bchunk")
	a.hsum16z(0, 15)
	next(1, nil, "batch")

	// fold4 folds the accumulators Z<z>..Z<z+3> as (a0+a2)+(a1+a3) into
	// Z<dst>.
	fold4 := func(z, dst int) {
		a.VADDPS(zr[z+2], zr[z], zr[z])
		a.VADDPS(zr[z+3], zr[z+1], zr[z+1])
		a.VADDPS(zr[z+1], zr[z], zr[dst])
	}

	a.Comment("ggml_vec_dot_f16: two rows at a time, then one.")
	a.Label("single2")
	a.CMPQ(reg.RCX, operand.U8(2))
	a.JB(label("single"))
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.RBX, Scale: 1}, reg.R9)
	zero(0, 1, 2, 3, 16, 17, 18, 19)

	a.Label("s2chunk")
	for i := 0; i < 4; i++ {
		a.VMOVUPS(qmem(64*i), zr[20+i])
	}
	for j, r := range rows[:2] {
		for i := 0; i < 4; i++ {
			a.VCVTPH2PS(kmem(r, 32*i), zr[5+i])
		}
		for i := 0; i < 4; i++ {
			a.VFMADD231PS(zr[20+i], zr[5+i], zr[16*j+i])
		}
	}
	step(128, "s2chunk")
	fold4(0, 0)
	fold4(16, 1)
	a.hsum16z(0, 14)
	a.hsum16z(1, 15)
	next(2, reg.R9, "single2")

	a.Label("single")
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	zero(0, 1, 2, 3)

	a.Label("schunk")
	for i := 0; i < 4; i++ {
		a.VCVTPH2PS(kmem(reg.R8, 32*i), zr[5+i])
	}
	for i := 0; i < 4; i++ {
		a.VFMADD231PS(qmem(64*i), zr[5+i], zr[i])
	}
	step(128, "schunk")
	fold4(0, 0)
	a.hsum16z(0, 15)
	next(1, nil, "single")

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// axpyRotF16Z generates axpyRotF16Z.
func (a *asm) axpyRotF16Z() {
	a.text("axpyRotF16Z", attr.NOSPLIT,
		"func(acc *float32, mask, j0 int, p *float32, v *uint16, stride uintptr, n, hd int)",
		"For r < n: acc[((j0+r)&mask)·hd + i] += p[r]·f32(v[r·stride/2 + i]),",
		"i < hd (a multiple of 16): cell j0+r of the sequence goes to the",
		"accumulator row of its lane, each row a chain in cell order.")
	a.load("acc", reg.RDI)
	a.load("mask", reg.R12)
	a.load("j0", reg.R13)
	a.load("p", reg.RSI)
	a.load("v", reg.R8)
	a.load("stride", reg.RBX)
	a.load("n", reg.RCX)
	a.load("hd", reg.R10)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("rdone"))
	// R14: the bytes per accumulator row. (R10*4) has no base register,
	// which avo's memory operands must have, so the instruction is spelled
	// out whole, its registers listed for avo's passes.
	a.Instruction(&ir.Instruction{
		Opcode:  "LEAQ (R10*4), R14",
		Inputs:  []operand.Op{reg.R10},
		Outputs: []operand.Op{reg.R14},
	})
	a.SHLQ(operand.U8(1), reg.R10) // bytes of halves per row

	a.Label("rrow")
	a.MOVQ(reg.R13, reg.RAX)
	a.ANDQ(reg.R12, reg.RAX)
	a.IMULQ(reg.R14, reg.RAX)
	a.LEAQ(operand.Mem{Base: reg.RDI, Index: reg.RAX, Scale: 1}, reg.R9) // this cell's accumulator row
	a.VBROADCASTSS(mem(reg.RSI, 0), reg.Z4)
	a.XORQ(reg.RAX, reg.RAX)

	a.Label("rchunk")
	acc := operand.Mem{Base: reg.R9, Index: reg.RAX, Scale: 2}
	a.VCVTPH2PS(kmem(reg.R8, 0), reg.Z5)
	a.VMOVUPS(acc, reg.Z6)
	a.VFMADD231PS(reg.Z5, reg.Z4, reg.Z6)
	a.VMOVUPS(reg.Z6, acc)
	a.ADDQ(operand.U8(32), reg.RAX)
	a.CMPQ(reg.RAX, reg.R10)
	a.JB(label("rchunk"))
	a.ADDQ(operand.U8(4), reg.RSI)
	a.ADDQ(reg.RBX, reg.R8)
	a.INCQ(reg.R13)
	a.DECQ(reg.RCX)
	a.JNZ(label("rrow"))

	a.Label("rdone")
	a.VZEROUPPER()
	a.RET()
}

// axpyRowsF16DZ generates axpyRowsF16DZ.
func (a *asm) axpyRowsF16DZ() {
	a.text("axpyRowsF16DZ", attr.NOSPLIT,
		"func(o *float64, p *float32, v *uint16, stride uintptr, n, hd int)",
		"o[i] += float64(p[r]·f32(v[r·stride/2 + i])) for r < n in order, i < hd",
		"(a multiple of 16): ggml_vec_dot_f16's leftover, summed in double.")
	a.load("o", reg.RDI)
	a.load("p", reg.RSI)
	a.load("v", reg.R8)
	a.load("stride", reg.RBX)
	a.load("n", reg.RCX)
	a.load("hd", reg.R10)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("ddone"))
	a.SHLQ(operand.U8(1), reg.R10)
	a.XORQ(reg.RAX, reg.RAX) // the byte offset of the chunk in a row of halves

	a.Label("dchunk")
	a.VMOVUPD(xmem(reg.RDI, 0), reg.Z0)
	a.VMOVUPD(xmem(reg.RDI, 64), reg.Z1)
	a.LEAQ(kmem(reg.R8, 0), reg.R9)
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RCX, reg.R13)

	a.Label("drow")
	a.VCVTPH2PS(mem(reg.R9, 0), reg.Z5)
	a.VMULPS_BCST(mem(reg.R11, 0), reg.Z5, reg.Z5)
	a.VCVTPS2PD(reg.Y5, reg.Z6)
	a.VEXTRACTF64X4(operand.U8(1), reg.Z5, reg.Y7)
	a.VCVTPS2PD(reg.Y7, reg.Z7)
	a.VADDPD(reg.Z6, reg.Z0, reg.Z0)
	a.VADDPD(reg.Z7, reg.Z1, reg.Z1)
	a.ADDQ(operand.U8(4), reg.R11)
	a.ADDQ(reg.RBX, reg.R9)
	a.DECQ(reg.R13)
	a.JNZ(label("drow"))
	a.VMOVUPD(reg.Z0, xmem(reg.RDI, 0))
	a.VMOVUPD(reg.Z1, xmem(reg.RDI, 64))
	a.ADDQ(operand.U8(32), reg.RAX)
	a.CMPQ(reg.RAX, reg.R10)
	a.JB(label("dchunk"))

	a.Label("ddone")
	a.VZEROUPPER()
	a.RET()
}
