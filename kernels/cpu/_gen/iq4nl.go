package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// iq4nl generates iq4nl_amd64.s: IQ4_NL weights (blocks of 32: f16 d, 16
// bytes of 4-bit indices into ggml's kvalues_iq4nl) times Q8_0
// activations, AVX-512 with VNNI.
//
// ggml's x86 kernel takes blocks in pairs: each block's products summed
// exactly in 8 dword lanes (lane m: values 4m..4m+3), the first block of
// the pair fused into accumulator 1 and the second into accumulator 2 with
// d = dy·dx, then hsum8(accum1 + accum2). In the one-token kernels a zmm
// holds a pair: lanes 0..7 the first block, 8..15 the second, so one
// 16-lane fused multiply-add does both. The table lookup gives the levels
// plus 128 (unsigned, for VPDPBUSD); the accumulator starts at −128·Σ4 x,
// computed once per pair of activation blocks for the 4 rows, so each
// dword lane ends exactly at Σ level·x.
//
// The multi-token kernels are iq4tile's.
//
// Constants in all kernels: Z31 0x0f bytes, Z30 the nibble shifts, Z29 the
// table in every 128-bit lane, Z27 0x80 bytes.
func iq4nl(a *asm) {
	// The levels + 128, and word indices that pick the two blocks' f16
	// scales out of a pair of weight blocks (words 0 and 9) and of
	// activation blocks (words 0 and 17), 8 lanes each; nibble shifts 0
	// (values 0..15) and 4 (16..31) per 128-bit lane.
	g := iq4Globals{
		lut: a.global("iq4lut", 0x766a5d4f3f2d1801, 0xf1d9c5b5a6998d81),
		wd:  a.global("iq4wd", 0, 0, 0x0009000900090009, 0x0009000900090009),
		xd:  a.global("iq4xd", 0, 0, 0x0011001100110011, 0x0011001100110011, 0, 0, 0, 0),
		shr: a.global("iq4shr", 0, 0, 0x0004000400040004, 0x0004000400040004,
			0, 0, 0x0004000400040004, 0x0004000400040004),
	}
	g.gemv(a, false)
	g.gemv(a, true)
}

// iq4PFD is the prefetch distance in bytes of the weight rows.
const iq4PFD = 2048

// iq4Globals are the kernels' read-only tables.
type iq4Globals struct {
	lut, wd, xd, shr operand.Mem
}

// consts loads Z31 (0x0f bytes), Z27 (0x80 bytes), Z30 (the shifts) and
// Z29 (the table in each 128-bit lane).
func (g *iq4Globals) consts(a *asm) {
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.MOVL(operand.U32(0x80808080), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z27)
	a.VMOVDQU64(g.shr, reg.Z30)
	a.VBROADCASTI32X4(g.lut, reg.Z29)
}

// iq4Prefetch prefetches the 4 rows R8..R11 iq4PFD bytes ahead of AX.
func iq4Prefetch(a *asm) {
	for _, p := range []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11} {
		a.PREFETCHT0(at(p, iq4PFD))
	}
}

// iq4Next moves R8..R11 to the next row (BX bytes on).
func iq4Next(a *asm) {
	for _, p := range []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11} {
		a.ADDQ(reg.RBX, p)
	}
}

// gemv emits gemv4IQ4_NLVNNI, or with batch gemv4IQ4_NLBVNNI.
//
// Registers: R8..R11 the 4 streams' current rows (BX ldw), AX the offset
// in them, R12 the activations' current pair of blocks, R13 the pairs
// left, CX nb/2, DX y, SI 4q, R14 the rows left per stream; Z26 the
// activations' scale pick, Y28 the weights'; per pair of activation
// blocks quants in Z16, −128·Σ4 in Z17, [dy1 ×8, dy2 ×8] in Z18;
// accumulators Z0..Z3.
func (g *iq4Globals) gemv(a *asm, batch bool) {
	name, p := "gemv4IQ4_NLVNNI", ""
	doc := []string{
		"For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb IQ4_NL blocks,",
		"nb even, ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is",
		"not 0; x is a row of Q8_0 blocks.",
	}
	if batch {
		name, p = "gemv4IQ4_NLBVNNI", "b"
		doc = []string{
			"As gemv4IQ4_NLVNNI in the order of ggml's batched matmul, for a matmul",
			"of two or more tokens.",
		}
	}
	a.text(name, attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)",
		doc...)
	g.consts(a)
	a.VMOVDQU64(g.wd, reg.Y28)
	a.VMOVDQU64(g.xd, reg.Z26)
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)
	a.SHRQ(operand.U8(1), reg.RCX)
	a.load("y", reg.RDX)
	a.load("q", reg.R14)
	a.rows4()
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label(p + "done"))

	a.Label(p + "row")
	for r := range 4 {
		a.VPXORD(zr[r], zr[r], zr[r])
	}
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)
	a.TESTQ(reg.R13, reg.R13)
	a.JZ(label(p + "fin"))

	a.Label(p + "blk")
	iq4Prefetch(a)
	a.VMOVDQU64(mem(reg.R12, 2), reg.Y16)
	a.VINSERTI64X4(operand.U8(1), mem(reg.R12, 36), reg.Z16, reg.Z16)
	a.VPXORD(reg.Z17, reg.Z17, reg.Z17)
	a.VPDPBUSD(reg.Z16, reg.Z27, reg.Z17)
	a.VPXORD(reg.Z18, reg.Z18, reg.Z18)
	a.VPSUBD(reg.Z17, reg.Z18, reg.Z17)
	a.VPERMW(mem(reg.R12, 0), reg.Z26, reg.Z18)
	a.VCVTPH2PS(reg.Y18, reg.Z18)
	for r, row := range []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11} {
		iq4Sums(a, row)
		if !batch {
			a.VFMADD231PS(reg.Z8, reg.Z6, zr[r])
			continue
		}
		// ggml's batched matmul (llamafile's tinyBLAS): the pair's
		// first block, then its second, fused into the same 8 lanes.
		a.VFMADD231PS(reg.Y8, reg.Y6, yr[r])
		a.VEXTRACTF64X4(operand.U8(1), reg.Z8, reg.Y8)
		a.VEXTRACTF64X4(operand.U8(1), reg.Z6, reg.Y6)
		a.VFMADD231PS(reg.Y8, reg.Y6, yr[r])
	}
	a.ADDQ(operand.U8(36), reg.RAX)
	a.ADDQ(operand.U8(68), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label(p + "blk"))

	a.Label(p + "fin")
	for r := range 4 {
		if !batch {
			// ggml's hsum8 of lanes 0..7 plus lanes 8..15.
			a.VEXTRACTF64X4(operand.U8(1), zr[r], yr[4+r])
			a.VADDPS(yr[r], yr[4+r], yr[r])
		}
		iq4Hsum8(a, r, 4+r)
	}
	a.VINSERTPS(operand.U8(0x10), reg.X5, reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x20), reg.X6, reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x30), reg.X7, reg.X4, reg.X4)
	a.VMOVAPS(reg.X4, reg.X0)
	a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 2}, reg.R13)
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label(p + "store"))
	a.VMOVSS(mem(reg.RDX, 0), reg.X4)
	a.VINSERTPS(operand.U8(0x10), operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 1}, reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x20), mem(reg.R13, 0), reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x30), operand.Mem{Base: reg.R13, Index: reg.RSI, Scale: 1}, reg.X4, reg.X4)
	a.VADDPS(reg.X4, reg.X0, reg.X0)

	a.Label(p + "store")
	a.VMOVSS(reg.X0, mem(reg.RDX, 0))
	a.VEXTRACTPS(operand.U8(1), reg.X0, operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 1})
	a.VEXTRACTPS(operand.U8(2), reg.X0, mem(reg.R13, 0))
	a.VEXTRACTPS(operand.U8(3), reg.X0, operand.Mem{Base: reg.R13, Index: reg.RSI, Scale: 1})
	a.ADDQ(operand.U8(4), reg.RDX)
	iq4Next(a)
	a.DECQ(reg.R14)
	a.JNZ(label(p + "row"))

	a.Label(p + "done")
	a.VZEROUPPER()
	a.RET()
}

// iq4Sums leaves in Z6 the exact lane sums of the pair of blocks at offset
// AX of the row at p times the activations, as float32, and in Z8 their
// scales dy·dx.
func iq4Sums(a *asm, p reg.Register) {
	a.VMOVDQU(at(p, 2), reg.X7)
	a.VINSERTI128(operand.U8(1), at(p, 20), reg.Y7, reg.Y7)
	a.VSHUFI64X2(operand.U8(0x50), reg.Z7, reg.Z7, reg.Z7)
	a.VPSRLVW(reg.Z30, reg.Z7, reg.Z7)
	a.VPANDD(reg.Z31, reg.Z7, reg.Z7)
	a.VPSHUFB(reg.Z7, reg.Z29, reg.Z7)
	a.VMOVDQA32(reg.Z17, reg.Z6)
	a.VPDPBUSD(reg.Z16, reg.Z7, reg.Z6)
	a.VCVTDQ2PS(reg.Z6, reg.Z6)
	a.VPERMW(at(p, 0), reg.Y28, reg.Y8)
	a.VCVTPH2PS(reg.Y8, reg.Z8)
	a.VMULPS(reg.Z18, reg.Z8, reg.Z8)
}

// iq4Hsum8 reduces the 8 lanes of Y<y> into the low lane of X<t> as ggml's
// hsum_float_8, X8 the scratch.
func iq4Hsum8(a *asm, y, t int) {
	a.VEXTRACTF128(operand.U8(1), yr[y], xr[t])
	a.VADDPS(xr[y], xr[t], xr[t])
	a.VMOVHLPS(xr[t], xr[t], reg.X8)
	a.VADDPS(reg.X8, xr[t], xr[t])
	a.VMOVSHDUP(xr[t], reg.X8)
	a.VADDSS(reg.X8, xr[t], xr[t])
}
