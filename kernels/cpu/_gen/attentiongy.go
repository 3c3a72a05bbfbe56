package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// attentiongy generates attentiongy_amd64.s: the half-precision attention
// kernels in ggml's AVX-512 summation orders (those of dotF16GG and
// attentiongg_amd64.s), on AVX2 + F16C, so that an AVX2-only machine gives
// the same bits as the AVX-512 ones. A 16-lane accumulator is a pair of
// ymm registers (lanes 0-7, 8-15); every product is of an f16 value and a
// float32 holding an f16 value, exact, so VFMADD231PS adds it with the
// one rounding ggml's does.
func attentiongy(a *asm) {
	a.dotRowsF16GGY()
	a.axpyRotF16Y()
	a.axpyRowsF16DY()
}

// hsum16y sums the 16 lanes held in Y<lo> (0-7) and Y<hi> (8-15) into the
// low lane of X<lo> in hsum16's order (_mm512_reduce_add_ps's): lane i +
// lane i+8, then the halves of those 8, then (t0+t2) + (t1+t3). X<t> is
// scratch.
func (a *asm) hsum16y(lo, hi, t int) {
	a.VADDPS(yr[hi], yr[lo], yr[lo])
	a.VEXTRACTF128(operand.U8(1), yr[lo], xr[t])
	a.VADDPS(xr[t], xr[lo], xr[lo])
	a.VMOVHLPS(xr[lo], xr[lo], xr[t])
	a.VADDPS(xr[t], xr[lo], xr[lo])
	a.VMOVSHDUP(xr[lo], xr[t])
	a.VADDSS(xr[t], xr[lo], xr[lo])
}

// dotRowsF16GGY generates dotRowsF16GGY, dotRowsF16GGZ's AVX2 twin.
func (a *asm) dotRowsF16GGY() {
	a.text("dotRowsF16GGY", attr.NOSPLIT,
		"func(out, q *float32, k *uint16, stride uintptr, n, hd, batched int)",
		"out[r] = q·k[r] (hd halves from k + r·stride bytes) for r < n. batched",
		"≠ 0: llamafile's order, one 16-lane accumulator over the chunks, hd a",
		"multiple of 16; else ggml_vec_dot_f16's, four 16-lane accumulators over",
		"64-wide steps folded as (a0+a2)+(a1+a3), hd a multiple of 64.")
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
	a.JZ(label("single"))

	// llamafile: lanes i mod 16, in order.
	a.Label("batch")
	a.VXORPS(reg.Y0, reg.Y0, reg.Y0)
	a.VXORPS(reg.Y1, reg.Y1, reg.Y1)
	a.XORQ(reg.RAX, reg.RAX)
	a.Label("bchunk")
	a.VCVTPH2PS(operand.Mem{Base: reg.R8, Index: reg.RAX, Scale: 1}, reg.Y4)
	a.VCVTPH2PS(operand.Mem{Base: reg.R8, Index: reg.RAX, Scale: 1, Disp: 16}, reg.Y5)
	a.VFMADD231PS(operand.Mem{Base: reg.RSI, Index: reg.RAX, Scale: 2}, reg.Y4, reg.Y0)
	a.VFMADD231PS(operand.Mem{Base: reg.RSI, Index: reg.RAX, Scale: 2, Disp: 32}, reg.Y5, reg.Y1)
	a.ADDQ(operand.U8(32), reg.RAX)
	a.CMPQ(reg.RAX, reg.R10)
	a.JB(label("bchunk"))
	a.hsum16y(0, 1, 2)
	a.VMOVSS(reg.X0, mem(reg.RDX, 0))
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(reg.RBX, reg.R8)
	a.DECQ(reg.RCX)
	a.JNZ(label("batch"))
	a.JMP(label("done"))

	// ggml_vec_dot_f16: accumulator j (lanes Y<2j>, Y<2j+1>) takes
	// elements 16j..16j+15 of each 64.
	a.Label("single")
	for i := 0; i < 8; i++ {
		a.VXORPS(yr[i], yr[i], yr[i])
	}
	a.XORQ(reg.RAX, reg.RAX)
	a.Label("schunk")
	for i := 0; i < 8; i++ {
		a.VCVTPH2PS(operand.Mem{Base: reg.R8, Index: reg.RAX, Scale: 1, Disp: 16 * i}, yr[8+i])
	}
	for i := 0; i < 8; i++ {
		a.VFMADD231PS(operand.Mem{Base: reg.RSI, Index: reg.RAX, Scale: 2, Disp: 32 * i}, yr[8+i], yr[i])
	}
	a.SUBQ(operand.I8(-128), reg.RAX)
	a.CMPQ(reg.RAX, reg.R10)
	a.JB(label("schunk"))
	// (a0 + a2) + (a1 + a3), lane-wise, then hsum16.
	for h := 0; h < 2; h++ {
		a.VADDPS(yr[4+h], yr[h], yr[h])
		a.VADDPS(yr[6+h], yr[2+h], yr[2+h])
		a.VADDPS(yr[2+h], yr[h], yr[h])
	}
	a.hsum16y(0, 1, 2)
	a.VMOVSS(reg.X0, mem(reg.RDX, 0))
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(reg.RBX, reg.R8)
	a.DECQ(reg.RCX)
	a.JNZ(label("single"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// axpyRotF16Y generates axpyRotF16Y, axpyRotF16Z's AVX2 twin: for r < n in
// order, acc row (j0+r)&mask (hd floats) += p[r]·v[r] (hd halves, rows
// stride bytes apart), hd a multiple of 8.
func (a *asm) axpyRotF16Y() {
	a.text("axpyRotF16Y", attr.NOSPLIT,
		"func(acc *float32, mask, j0 int, p *float32, v *uint16, stride uintptr, n, hd int)",
		"For r < n in order: accumulator row (j0+r)&mask of acc (hd floats each)",
		"+= p[r]·v[r] (hd halves from v + r·stride bytes); hd a multiple of 8.")
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
	a.MOVQ(reg.R10, reg.R14)
	a.SHLQ(operand.U8(2), reg.R14) // bytes per accumulator row
	a.SHLQ(operand.U8(1), reg.R10) // bytes of halves per row

	a.Label("rrow")
	a.MOVQ(reg.R13, reg.RAX)
	a.ANDQ(reg.R12, reg.RAX)
	a.IMULQ(reg.R14, reg.RAX)
	a.LEAQ(operand.Mem{Base: reg.RDI, Index: reg.RAX, Scale: 1}, reg.R9) // this cell's accumulator row
	a.VBROADCASTSS(mem(reg.RSI, 0), reg.Y4)
	a.XORQ(reg.RAX, reg.RAX)
	a.Label("rchunk")
	a.VCVTPH2PS(operand.Mem{Base: reg.R8, Index: reg.RAX, Scale: 1}, reg.Y5)
	a.VMOVUPS(operand.Mem{Base: reg.R9, Index: reg.RAX, Scale: 2}, reg.Y6)
	a.VFMADD231PS(reg.Y5, reg.Y4, reg.Y6)
	a.VMOVUPS(reg.Y6, operand.Mem{Base: reg.R9, Index: reg.RAX, Scale: 2})
	a.ADDQ(operand.U8(16), reg.RAX)
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

// axpyRowsF16DY generates axpyRowsF16DY, axpyRowsF16DZ's AVX2 twin:
// ggml_vec_dot_f16's leftover cells, summed in float64.
func (a *asm) axpyRowsF16DY() {
	a.text("axpyRowsF16DY", attr.NOSPLIT,
		"func(o *float64, p *float32, v *uint16, stride uintptr, n, hd int)",
		"o[i] += float64(p[r]·f32(v[r·stride/2 + i])) for r < n in order, i < hd",
		"(a multiple of 8).")
	a.load("o", reg.RDI)
	a.load("p", reg.RSI)
	a.load("v", reg.R8)
	a.load("stride", reg.RBX)
	a.load("n", reg.RCX)
	a.load("hd", reg.R10)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("ddone"))
	a.SHLQ(operand.U8(1), reg.R10)
	a.XORQ(reg.RAX, reg.RAX) // byte offset of the chunk in a row of halves

	a.Label("dchunk")
	a.VMOVUPD(operand.Mem{Base: reg.RDI, Index: reg.RAX, Scale: 4}, reg.Y0)
	a.VMOVUPD(operand.Mem{Base: reg.RDI, Index: reg.RAX, Scale: 4, Disp: 32}, reg.Y1)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.RAX, Scale: 1}, reg.R9)
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RCX, reg.R13)
	a.Label("drow")
	a.VCVTPH2PS(mem(reg.R9, 0), reg.Y5)
	a.VBROADCASTSS(mem(reg.R11, 0), reg.Y4)
	a.VMULPS(reg.Y4, reg.Y5, reg.Y5)
	a.VCVTPS2PD(reg.X5, reg.Y6)
	a.VEXTRACTF128(operand.U8(1), reg.Y5, reg.X7)
	a.VCVTPS2PD(reg.X7, reg.Y7)
	a.VADDPD(reg.Y6, reg.Y0, reg.Y0)
	a.VADDPD(reg.Y7, reg.Y1, reg.Y1)
	a.ADDQ(operand.U8(4), reg.R11)
	a.ADDQ(reg.RBX, reg.R9)
	a.DECQ(reg.R13)
	a.JNZ(label("drow"))
	a.VMOVUPD(reg.Y0, operand.Mem{Base: reg.RDI, Index: reg.RAX, Scale: 4})
	a.VMOVUPD(reg.Y1, operand.Mem{Base: reg.RDI, Index: reg.RAX, Scale: 4, Disp: 32})
	a.ADDQ(operand.U8(16), reg.RAX)
	a.CMPQ(reg.RAX, reg.R10)
	a.JB(label("dchunk"))

	a.Label("ddone")
	a.VZEROUPPER()
	a.RET()
}
