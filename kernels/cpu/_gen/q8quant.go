package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// q8quantz generates q8quantz_amd64.s and q8quanty generates its AVX2
// twin q8quanty_amd64.s: quantization of float32 activations to 8 bits per
// block of 32, bit-exact with quant.QuantizeActivationQ8_0, which is how
// ggml's x86 CPU backend quantizes activations (d = amax/127 stored
// rounded to f16, q = x·(127/amax) rounded half to even; zero quants where
// 127/amax is not finite). Output forms: ggml Q8_0 blocks, layouts A/B and
// P (q8pack.go) and, AVX-512 only, layout C records.
//
// Registers: DI the output, SI the input block, CX nb, DX the block index
// (layouts A, B and P), R9 the block's group (or pair) and R8 its offset
// in it.
func q8quantz(a *asm) {
	perm := a.global("q8perm", 4<<32, 8|12<<32, 16|20<<32, 24|28<<32)
	g := q8qGen{a: a, tab: perm}

	a.text("quantQ8_0Z", attr.NOSPLIT, q8qSig, "Writes nb ggml Q8_0 blocks (34 bytes each).")
	g.start(false, g.constsZ)
	g.blockZ()
	a.VMOVD(reg.X6, reg.EAX)
	a.MOVW(reg.AX, mem(reg.RDI, 0))
	a.VMOVDQU(reg.X11, mem(reg.RDI, 2))
	a.VMOVDQU(reg.X12, mem(reg.RDI, 18))
	g.next(34)

	a.text("packQ8AZ", attr.NOSPLIT, q8qSigShift,
		"Writes nb blocks in layout A (shift 3) or B (shift 7); the caller zeroes",
		"a partial last group.")
	g.start(true, g.constsZ, reg.X9)
	g.blockZ()
	g.group(2, 4, 8)
	g.store(reg.X11, 0)
	g.store(reg.X12, 64)
	a.Comment("-2^shift·(Σ q[4i:4i+4] + Σ q[16+4i:20+4i]) for i = 0..3")
	a.VPADDD(reg.Z1, reg.Z0, reg.Z13)
	g.hadd4Z(reg.Z13, reg.Z13)
	a.VPERMD(reg.Z13, reg.Z25, reg.Z13)
	a.VPSLLD(reg.X9, reg.X13, reg.X13)
	a.VPXOR(reg.X14, reg.X14, reg.X14)
	a.VPSUBD(reg.X13, reg.X14, reg.X13)
	g.store(reg.X13, 128)
	a.VBROADCASTSS(reg.X7, reg.X15)
	g.storeF(reg.X15, 192)
	g.nextIdx()

	a.text("packQ8PZ", attr.NOSPLIT, q8qSig,
		"Writes nb blocks in layout P; the caller zeroes a partial last pair.")
	g.start(true, g.constsZ)
	g.blockZ()
	g.group(1, 5, 0)
	g.store(reg.X11, 0)
	g.store(reg.X12, 16)
	a.Comment("-128·Σ q[4l:4l+4] for l = 0..7")
	g.hadd4Z(reg.Z0, reg.Z13)
	g.hadd4Z(reg.Z1, reg.Z15)
	a.VPERMT2D(reg.Z15, reg.Z25, reg.Z13)
	a.VPSLLD(operand.U8(7), reg.Y13, reg.Y13)
	a.VPXOR(reg.Y14, reg.Y14, reg.Y14)
	a.VPSUBD(reg.Y13, reg.Y14, reg.Y13)
	g.store(reg.Y13, 64)
	a.VBROADCASTSS(reg.X7, reg.Y15)
	g.storeF(reg.Y15, 128)
	g.nextIdx()

	a.text("packQ8CZ", attr.NOSPLIT, q8qSig,
		"Writes nb blocks of one token as layout C records, 768 bytes apart: the",
		"32 quants, -8·Σq, d, -128·Σq, d.")
	g.start(false, g.constsZ)
	g.blockZ()
	a.VMOVDQU(reg.X11, mem(reg.RDI, 0))
	a.VMOVDQU(reg.X12, mem(reg.RDI, 16))
	a.VPADDD(reg.Z1, reg.Z0, reg.Z13)
	a.VEXTRACTI64X4(operand.U8(1), reg.Z13, reg.Y14)
	a.VPADDD(reg.Y14, reg.Y13, reg.Y13)
	a.VEXTRACTI128(operand.U8(1), reg.Y13, reg.X14)
	a.VPADDD(reg.X14, reg.X13, reg.X13)
	for _, imm := range []uint8{0x4e, 0xb1} {
		a.VPSHUFD(operand.U8(imm), reg.X13, reg.X14)
		a.VPADDD(reg.X14, reg.X13, reg.X13)
	}
	a.VMOVD(reg.X13, reg.EAX)
	a.MOVL(reg.EAX, reg.R8L)
	a.SHLL(operand.U8(3), reg.R8L)
	a.NEGL(reg.R8L)
	a.MOVL(reg.R8L, mem(reg.RDI, 32))
	a.VMOVSS(reg.X7, mem(reg.RDI, 36))
	a.SHLL(operand.U8(7), reg.EAX)
	a.NEGL(reg.EAX)
	a.MOVL(reg.EAX, mem(reg.RDI, 40))
	a.VMOVSS(reg.X7, mem(reg.RDI, 44))
	g.next(768)
}

// q8quanty generates q8quanty_amd64.s (see q8quantz).
func q8quanty(a *asm) {
	pack := a.global("q8ypack", 4<<32, 1|5<<32, 2|6<<32, 3|7<<32)
	g := q8qGen{a: a, tab: pack}

	a.text("quantQ8_0Y", attr.NOSPLIT, q8qSig)
	g.start(false, g.constsY)
	g.blockY()
	g.packY()
	a.VCVTPS2PH(operand.U8(0), reg.X4, reg.X6)
	a.VMOVD(reg.X6, reg.EAX)
	a.MOVW(reg.AX, mem(reg.RDI, 0))
	a.VMOVDQU(reg.Y9, mem(reg.RDI, 2))
	g.next(34)

	a.text("quantQ8_1Y", attr.NOSPLIT, q8qSig,
		"Writes nb Q8_1 blocks: quantQ8_0Y's d and quants, and s = d·Σq with the",
		"float32 d, rounded once to f16 (quantize_row_q8_1's AVX2 path).")
	g.start(false, g.constsY)
	g.blockY()
	a.VPADDD(reg.Y1, reg.Y0, reg.Y10)
	a.VPADDD(reg.Y3, reg.Y2, reg.Y6)
	a.VPADDD(reg.Y6, reg.Y10, reg.Y10)
	a.VEXTRACTI128(operand.U8(1), reg.Y10, reg.X6)
	a.VPADDD(reg.X6, reg.X10, reg.X10)
	a.VPSHUFD(operand.U8(0x4e), reg.X10, reg.X6)
	a.VPADDD(reg.X6, reg.X10, reg.X10)
	a.VPSHUFD(operand.U8(0xb1), reg.X10, reg.X6)
	a.VPADDD(reg.X6, reg.X10, reg.X10)
	a.VCVTDQ2PS(reg.X10, reg.X10)
	a.VMULSS(reg.X4, reg.X10, reg.X10)
	a.VINSERTPS(operand.U8(0x10), reg.X10, reg.X4, reg.X6)
	a.VCVTPS2PH(operand.U8(0), reg.X6, reg.X6)
	a.VMOVD(reg.X6, reg.EAX)
	a.MOVL(reg.EAX, mem(reg.RDI, 0))
	g.packY()
	a.VMOVDQU(reg.Y9, mem(reg.RDI, 4))
	g.next(36)

	a.text("packQ8AY", attr.NOSPLIT, q8qSigShift,
		"Writes nb blocks in layout A (shift 3) or B (shift 7); the caller zeroes",
		"a partial last group.")
	g.start(true, g.constsY, reg.X12)
	g.blockY()
	a.Comment("-2^shift·(Σ q[4l:4l+4] + Σ q[16+4l:20+4l]), l = 0..3")
	a.VPADDD(reg.Y2, reg.Y0, reg.Y10)
	a.VPADDD(reg.Y3, reg.Y1, reg.Y6)
	a.VPHADDD(reg.Y6, reg.Y10, reg.Y10)
	a.VPHADDD(reg.Y10, reg.Y10, reg.Y10)
	a.VMOVDQU(g.tab, reg.Y6)
	a.VPERMD(reg.Y10, reg.Y6, reg.Y10)
	a.VPSLLD(reg.X12, reg.X10, reg.X10)
	a.VPXOR(reg.X6, reg.X6, reg.X6)
	a.VPSUBD(reg.X10, reg.X6, reg.X10)
	g.packY()
	g.droundY()
	g.group(2, 4, 8)
	g.store(reg.X9, 0)
	a.VEXTRACTI128(operand.U8(1), reg.Y9, reg.X6)
	g.store(reg.X6, 64)
	g.store(reg.X10, 128)
	a.VBROADCASTSS(reg.X7, reg.X6)
	g.storeF(reg.X6, 192)
	g.nextIdx()

	a.text("packQ8PY", attr.NOSPLIT, q8qSig,
		"Writes nb blocks in layout P; the caller zeroes a partial last pair.")
	g.start(true, g.constsY)
	g.blockY()
	a.Comment("-128·Σ q[4l:4l+4], l = 0..7")
	a.VPHADDD(reg.Y1, reg.Y0, reg.Y10)
	a.VPHADDD(reg.Y3, reg.Y2, reg.Y6)
	a.VPHADDD(reg.Y6, reg.Y10, reg.Y10)
	a.VMOVDQU(g.tab, reg.Y6)
	a.VPERMD(reg.Y10, reg.Y6, reg.Y10)
	a.VPSLLD(operand.U8(7), reg.Y10, reg.Y10)
	a.VPXOR(reg.Y6, reg.Y6, reg.Y6)
	a.VPSUBD(reg.Y10, reg.Y6, reg.Y10)
	g.packY()
	g.droundY()
	g.group(1, 5, 0)
	g.store(reg.Y9, 0)
	g.store(reg.Y10, 64)
	a.VBROADCASTSS(reg.X7, reg.Y6)
	g.storeF(reg.Y6, 128)
	g.nextIdx()
}

const (
	q8qSig      = "func(dst *byte, src *float32, nb int)"
	q8qSigShift = "func(dst *byte, src *float32, nb int, shift int)"
)

// q8qGen emits the quantizers of one file; tab is its lane table:
// q8perm<> (AVX-512: the dwords 0, 4, ..., 28, gathering lane 0 of each
// 128-bit group) or q8ypack<> (AVX2: the dword order that undoes the
// in-lane packing of VPACKSSDW and VPACKSSWB).
type q8qGen struct {
	a   *asm
	tab operand.Mem
}

// start loads dst, src and nb (and the shift argument into the low
// quadword of shift, if given), sets up the constants, zeroes DX when idx
// (the block index), returns at once when nb is 0, and opens the loop.
func (g q8qGen) start(idx bool, consts func(), shift ...reg.VecPhysical) {
	a := g.a
	a.load("dst", reg.RDI)
	a.load("src", reg.RSI)
	a.load("nb", reg.RCX)
	for _, x := range shift {
		a.load("shift", reg.RAX)
		a.VMOVQ(reg.RAX, x)
	}
	consts()
	if idx {
		a.XORQ(reg.RDX, reg.RDX)
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("done"))
	a.Label("loop")
}

// next closes a loop whose output advances by n bytes a block.
func (g q8qGen) next(n int) {
	a := g.a
	a.ADDQ(operand.U8(128), reg.RSI)
	if n < 128 {
		a.ADDQ(operand.U8(n), reg.RDI)
	} else {
		a.ADDQ(operand.U32(n), reg.RDI)
	}
	a.DECQ(reg.RCX)
	a.JNZ(label("loop"))
	g.end()
}

// nextIdx closes a loop counting blocks in DX.
func (g q8qGen) nextIdx() {
	a := g.a
	a.ADDQ(operand.U8(128), reg.RSI)
	a.INCQ(reg.RDX)
	a.CMPQ(reg.RDX, reg.RCX)
	a.JB(label("loop"))
	g.end()
}

func (g q8qGen) end() {
	g.a.Label("done")
	g.a.VZEROUPPER()
	g.a.RET()
}

// group sets R8 to (DX mod 2^lg)·2^sh, the block's offset in its group,
// and R9 to the group's address: DI + (DX>>lg)·2^gsh, or DI +
// (DX>>lg)·192 when gsh is 0.
func (g q8qGen) group(lg, sh, gsh int) {
	a := g.a
	a.MOVQ(reg.RDX, reg.R8)
	a.ANDQ(operand.U8(1<<lg-1), reg.R8)
	a.SHLQ(operand.U8(sh), reg.R8)
	a.MOVQ(reg.RDX, reg.R9)
	a.SHRQ(operand.U8(lg), reg.R9)
	if gsh > 0 {
		a.SHLQ(operand.U8(gsh), reg.R9)
	} else {
		a.IMUL3Q(operand.U32(192), reg.R9, reg.R9)
	}
	a.ADDQ(reg.RDI, reg.R9)
}

// blkMem is disp(R9)(R8*1).
func blkMem(disp int) operand.Mem {
	return operand.Mem{Base: reg.R9, Index: reg.R8, Scale: 1, Disp: disp}
}

// store stores the integers of v at disp(R9)(R8*1).
func (g q8qGen) store(v reg.VecPhysical, disp int) { g.a.VMOVDQU(v, blkMem(disp)) }

// storeF stores the floats of v at disp(R9)(R8*1).
func (g q8qGen) storeF(v reg.VecPhysical, disp int) { g.a.VMOVUPS(v, blkMem(disp)) }

// constsZ sets up the AVX-512 constants: Z31 |x| mask, Z29 +Inf, Z20
// 127.0, Y25 the lane gather indices.
func (g q8qGen) constsZ() {
	a := g.a
	for _, c := range []struct {
		v uint32
		z reg.VecPhysical
	}{{0x7fffffff, reg.Z31}, {0x7f800000, reg.Z29}, {0x42fe0000, reg.Z20}} {
		a.MOVL(operand.U32(c.v), reg.EAX)
		a.VPBROADCASTD(reg.EAX, c.z)
	}
	a.VMOVDQU32(g.tab, reg.Y25)
}

// blockZ quantizes the 32 floats at (SI): Z0 and Z1 get the int32 quants
// of elements 0-15 and 16-31, X11 and X12 the same as bytes, X6 the f16
// bits of d (low word) and X7 d rounded to f16, as float32 (low lane).
func (g q8qGen) blockZ() {
	a := g.a
	a.VMOVUPS(mem(reg.RSI, 0), reg.Z0)
	a.VMOVUPS(mem(reg.RSI, 64), reg.Z1)
	a.VANDPS(reg.Z31, reg.Z0, reg.Z2)
	a.VANDPS(reg.Z31, reg.Z1, reg.Z3)
	a.VMAXPS(reg.Z3, reg.Z2, reg.Z2)
	a.VEXTRACTF64X4(operand.U8(1), reg.Z2, reg.Y3)
	a.VMAXPS(reg.Y3, reg.Y2, reg.Y2)
	a.VEXTRACTF128(operand.U8(1), reg.Y2, reg.X3)
	g.amax4(reg.X2, reg.X3)
	a.VDIVSS(reg.X2, reg.X20, reg.X5)
	a.VDIVSS(reg.X20, reg.X2, reg.X4)
	a.VMOVAPS(reg.X29, reg.X8)
	a.VCMPSS(operand.U8(1), reg.X8, reg.X5, reg.X8)
	a.VANDPS(reg.X8, reg.X5, reg.X5)
	a.VBROADCASTSS(reg.X5, reg.Z5)
	a.VMULPS(reg.Z5, reg.Z0, reg.Z0)
	a.VMULPS(reg.Z5, reg.Z1, reg.Z1)
	for _, z := range []reg.VecPhysical{reg.Z0, reg.Z1} {
		a.VRNDSCALEPS(operand.U8(0x08), z, z) // half to even
		a.VCVTTPS2DQ(z, z)
	}
	a.VPMOVDB(reg.Z0, reg.X11)
	a.VPMOVDB(reg.Z1, reg.X12)
	a.VCVTPS2PH(operand.U8(0), reg.X4, reg.X6)
	a.VCVTPH2PS(reg.X6, reg.X7)
}

// amax4 folds the maximum of x and t (a's upper half) into lane 0 of x.
func (g q8qGen) amax4(x, t reg.VecPhysical) {
	a := g.a
	a.VMAXPS(t, x, x)
	for _, imm := range []uint8{0x4e, 0xb1} {
		a.VPERMILPS(operand.U8(imm), x, t)
		a.VMAXPS(t, x, x)
	}
}

// hadd4Z sets dst to the sums of each 4 dwords of z, in every dword of
// the 4 (Z14 scratch).
func (g q8qGen) hadd4Z(z, dst reg.VecPhysical) {
	a := g.a
	a.VPSHUFD(operand.U8(0x4e), z, reg.Z14)
	a.VPADDD(reg.Z14, z, dst)
	a.VPSHUFD(operand.U8(0xb1), dst, reg.Z14)
	a.VPADDD(reg.Z14, dst, dst)
}

// constsY loads the AVX2 constants: Y15 |x| mask, X13 +Inf, X11 127.
func (g q8qGen) constsY() {
	a := g.a
	a.MOVL(operand.U32(0x7fffffff), reg.EAX)
	a.MOVD(reg.EAX, reg.X15)
	a.VPBROADCASTD(reg.X15, reg.Y15)
	a.MOVL(operand.U32(0x7f800000), reg.EAX)
	a.MOVD(reg.EAX, reg.X13)
	a.MOVL(operand.U32(0x42fe0000), reg.EAX)
	a.MOVD(reg.EAX, reg.X11)
}

// blockY quantizes the 32 floats at (SI): Y0..Y3 get the int32 quants of
// elements 0-7, 8-15, 16-23, 24-31 (before packing), X4 d (low lane).
func (g q8qGen) blockY() {
	a := g.a
	for i := range 4 {
		a.VMOVUPS(mem(reg.RSI, 32*i), yr[i])
	}
	for i := range 4 {
		a.VANDPS(reg.Y15, yr[i], yr[4+i])
	}
	a.VMAXPS(reg.Y5, reg.Y4, reg.Y4)
	a.VMAXPS(reg.Y7, reg.Y6, reg.Y6)
	a.VMAXPS(reg.Y6, reg.Y4, reg.Y4)
	a.VEXTRACTF128(operand.U8(1), reg.Y4, reg.X5)
	g.amax4(reg.X4, reg.X5)
	a.VDIVSS(reg.X4, reg.X11, reg.X5)
	a.VDIVSS(reg.X11, reg.X4, reg.X4)
	a.VCMPSS(operand.U8(1), reg.X13, reg.X5, reg.X8)
	a.VANDPS(reg.X8, reg.X5, reg.X5)
	a.VBROADCASTSS(reg.X5, reg.Y5)
	for i := range 4 {
		a.VMULPS(reg.Y5, yr[i], yr[i])
	}
	for i := range 4 {
		a.VROUNDPS(operand.U8(0), yr[i], yr[i]) // half to even
		a.VCVTTPS2DQ(yr[i], yr[i])
	}
}

// packY packs the int32 quants in Y0..Y3 into the 32 bytes of Y9 (Y5
// scratch).
func (g q8qGen) packY() {
	a := g.a
	a.VPACKSSDW(reg.Y1, reg.Y0, reg.Y9)
	a.VPACKSSDW(reg.Y3, reg.Y2, reg.Y5)
	a.VPACKSSWB(reg.Y5, reg.Y9, reg.Y9)
	a.VMOVDQU(g.tab, reg.Y5)
	a.VPERMD(reg.Y9, reg.Y5, reg.Y9)
}

// droundY sets X7 to d (X4) rounded to f16 and back.
func (g q8qGen) droundY() {
	g.a.VCVTPS2PH(operand.U8(0), reg.X4, reg.X6)
	g.a.VCVTPH2PS(reg.X6, reg.X7)
}
