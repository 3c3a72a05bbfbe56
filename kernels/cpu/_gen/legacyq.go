package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// legacyq generates legacyq_amd64.s: matrix-vector products of Q5_0, Q4_1
// and Q5_1 weights with activations in layout A (q8pack.go), AVX-512 with
// VNNI and VBMI, on the four-stream frame of gemv4Q4_0VNNI (q8vnni.go).
// Each output is the chain of kernels/quant's dot product over the row's
// blocks, in order, bit for bit:
//
//	Q5_0:       acc += (dw_b*dx_b) * float32(isum_b)
//	Q4_1, Q5_1: acc += (dw_b*dx_b)*float32(isum_b) + m_b*(float32(Σq_x)*dx_b)
//
// each operation rounded to float32 (no fused multiply-add). The integer
// sums are exact, so their order is free: VPDPBUSD takes the unsigned 4-
// or 5-bit quants times the signed activations; for Q5_0 the activations'
// corrections (-8·Σq) doubled remove 16·Σq, and for Q4_1 and Q5_1 the
// corrections give Σq_x (-c/8), the same for every row.
//
// A group is 4 blocks of B bytes (B = 20, 22, 24), read as two 64-byte
// loads, bytes [0,64) and [4B-64, 4B), from which VPERMT2B gathers the 64
// quant bytes, the bytes holding the fifth bits (tested against each lane's
// bit with VPTESTMB into K1 and K3) and the f16 scales and minimums.
//
// Registers: as in gemv4Q4_0VNNI (R8..R11 the streams, AX the offset in
// the rows, BX the row stride, DI the activations, R12 the activation
// group, CX the bytes of the rows' whole groups, DX and SI the outputs, R14
// the rows left); Z16-Z19 the activation group, Z15 the initial sums (the
// Q5_0 corrections or zero), Z1 the activation sums times dx (Q4_1, Q5_1),
// Z3 each byte lane's bit, Z8 16 in each byte, Z24 and Z25 a stream's two
// loads, Z26 and Z27 the fifth-bit gathers, Z28 the high-nibble affine
// matrix, Z29 the scale gather, Z30 the quant gather, Z31 0x0f. K4, K5 and
// K6 select the f16 words of rows 1, 2 and 3 (word 4j+r, and 16+4j+r for
// the minimums); K2 and K7 the bytes of a partial group.
func legacyq(a *asm) {
	for _, f := range legacyFormats {
		a.gemv4Legacy(f)
	}
	for _, f := range legacyFormats {
		a.gemv4x2Legacy(f)
	}
}

// A legacyFormat is the block layout of one legacy weight type.
type legacyFormat struct {
	name string // ggml's name of the type
	bs   int    // bytes per block
	qh   int    // offset of the fifth bits (uint32), or -1
	qs   int    // offset of the 16 quant bytes
	min  bool   // an f16 minimum at offset 2
}

var legacyFormats = []legacyFormat{
	{"Q5_0", 22, 2, 6, false},
	{"Q4_1", 20, -1, 4, true},
	{"Q5_1", 24, 4, 8, true},
}

// gidx is the VPERMT2B index of byte p of a group whose second load starts
// at byte off.
func gidx(p, off int) byte {
	if p < 64 {
		return byte(p)
	}
	return byte(64 + p - off)
}

// table packs 64 bytes into the uint64s of a global.
func table(b [64]byte) []uint64 {
	v := make([]uint64, 8)
	for i, x := range b {
		v[i/8] |= uint64(x) << (8 * (i % 8))
	}
	return v
}

// legacyTables holds the gathers of each format (quants, scales, fifth
// bits low and high, bit lanes), made by gemv4Legacy for gemv4x2Legacy.
var legacyTables = map[string][5]operand.Mem{}

// gemv4Legacy generates gemv4<name>VNNI.
func (a *asm) gemv4Legacy(f legacyFormat) {
	g := 4 * f.bs // bytes per group
	off := g - 64 // start of the second load
	var qidx, hlo, hhi, sidx, bits [64]byte
	for j := 0; j < 4; j++ {
		for i := 0; i < 16; i++ {
			qidx[16*j+i] = gidx(f.bs*j+f.qs+i, off)
			if f.qh >= 0 {
				hlo[16*j+i] = gidx(f.bs*j+f.qh+i/8, off)
				hhi[16*j+i] = gidx(f.bs*j+f.qh+2+i/8, off)
			}
		}
		for r := 0; r < 4; r++ {
			w := 4*j + r
			sidx[2*w], sidx[2*w+1] = gidx(f.bs*j, off), gidx(f.bs*j+1, off)
			m := 16 + w
			sidx[2*m], sidx[2*m+1] = gidx(f.bs*j+2, off), gidx(f.bs*j+3, off)
		}
	}
	for i := range bits {
		bits[i] = 1 << (i % 8)
	}
	lower := "q" + f.name[1:2] + "_" + f.name[3:]
	mq := a.global(lower+"qidx", table(qidx)...)
	ms := a.global(lower+"sidx", table(sidx)...)
	var mlo, mhi, mbits operand.Mem
	if f.qh >= 0 {
		mlo = a.global(lower+"hlo", table(hlo)...)
		mhi = a.global(lower+"hhi", table(hhi)...)
		mbits = a.global(lower+"bits", table(bits)...)
	}
	legacyTables[f.name] = [5]operand.Mem{mq, ms, mlo, mhi, mbits}

	a.text("gemv4"+f.name+"VNNI", 0, "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)",
		fmt.Sprintf("As gemv4Q4_0VNNI for %s weights (%d-byte blocks), activations in", f.name, f.bs),
		"layout A. The frame holds a partial last group of a row, copied and",
		"zero-padded (128 bytes per stream).")
	a.AllocLocal(512)
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.VMOVDQU64(mq, reg.Z30)
	a.VMOVDQU64(ms, reg.Z29)
	a.MOVQ(operand.U64(0x1020408000000000), reg.RAX)
	a.VPBROADCASTQ(reg.RAX, reg.Z28)
	if f.qh >= 0 {
		a.VMOVDQU64(mlo, reg.Z26)
		a.VMOVDQU64(mhi, reg.Z27)
		a.VMOVDQU64(mbits, reg.Z3)
		a.MOVL(operand.U32(0x10101010), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z8)
	}
	for i, m := range []uint32{0x22222222, 0x44444444, 0x88888888} {
		a.MOVL(operand.U32(m), reg.EAX)
		a.KMOVD(reg.EAX, []reg.Register{reg.K4, reg.K5, reg.K6}[i])
	}
	// K2 and K7: the bytes of a partial group in its first and second 64.
	a.load("nb", reg.RAX)
	a.ANDQ(operand.U8(3), reg.RAX)
	a.IMUL3Q(operand.U8(f.bs), reg.RAX, reg.RAX)
	a.MOVQ(operand.I32(-1), reg.R13)
	a.BZHIQ(reg.RAX, reg.R13, reg.R12)
	a.KMOVQ(reg.R12, reg.K2)
	a.XORQ(reg.R12, reg.R12)
	a.SUBQ(operand.U8(64), reg.RAX)
	a.CMOVQLT(reg.R12, reg.RAX)
	a.BZHIQ(reg.RAX, reg.R13, reg.R12)
	a.KMOVQ(reg.R12, reg.K7)
	a.gemv4Setup(g)
	a.gemv4Head()
	for _, p := range streams {
		a.PREFETCHT0(rowAt(p, vnniPF))
		a.PREFETCHT0(rowAt(p, vnniPF+64))
	}
	a.legacyGroup(f, streams, [4]int{}, off)
	a.ADDQ(operand.U8(g), reg.RAX)
	a.ADDQ(operand.U32(256), reg.R12)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label("grp"))

	a.Label("part")
	a.load("nb", reg.R13)
	a.ANDQ(operand.U8(3), reg.R13)
	a.JZ(label("fin"))
	for i, p := range streams {
		a.VMOVDQU8_Z(rowAt(p, 0), reg.K2, reg.Z9)
		a.VMOVDQU8_Z(rowAt(p, 64), reg.K7, reg.Z10)
		a.VMOVDQU64(reg.Z9, sp(128*i))
		a.VMOVDQU64(reg.Z10, sp(128*i+64))
	}
	a.LEAQ(sp(0), reg.R13)
	a.XORQ(reg.RAX, reg.RAX)
	r13 := [4]reg.Register{reg.R13, reg.R13, reg.R13, reg.R13}
	a.legacyGroup(f, r13, [4]int{0, 128, 256, 384}, off)

	a.Label("fin")
	a.gemv4Fin()

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// legacyGroup runs one group of the 4 rows at o[i](p[i])(AX*1) with the
// activation group at R12 and adds its blocks, in order, to the chains in
// X0.
func (a *asm) legacyGroup(f legacyFormat, p [4]reg.Register, o [4]int, off int) {
	a.xload4()
	if f.min {
		a.VPXORD(reg.Z15, reg.Z15, reg.Z15)
		// Z1 lane 4j+r: float32(Σq_j)·dx_j, from the corrections -8·Σ.
		a.VPSUBD(reg.Z18, reg.Z15, reg.Z1)
		a.VPSRAD(operand.U8(3), reg.Z1, reg.Z1)
		a.VPSHUFD(operand.U8(0x4e), reg.Z1, reg.Z2)
		a.VPADDD(reg.Z2, reg.Z1, reg.Z1)
		a.VPSHUFD(operand.U8(0xb1), reg.Z1, reg.Z2)
		a.VPADDD(reg.Z2, reg.Z1, reg.Z1)
		a.VCVTDQ2PS(reg.Z1, reg.Z1)
		a.VMULPS(reg.Z19, reg.Z1, reg.Z1)
	} else {
		a.VPADDD(reg.Z18, reg.Z18, reg.Z15)
	}
	for i := range p {
		a.legacyUnpack(f, p[i], o[i], off, i)
		a.VMOVDQA64(reg.Z15, zr[4+i])
		a.VPDPBUSD(reg.Z16, reg.Z9, zr[4+i])
		a.VPDPBUSD(reg.Z17, reg.Z10, zr[4+i])
	}
	a.reduce4i()
	// Z12 lane 4j+r: (dw·dx)·isum of block j of row r, plus m·(Σq·dx).
	a.VCVTDQ2PS(reg.Z11, reg.Z11)
	a.VCVTPH2PS(reg.Y20, reg.Z12)
	a.VMULPS(reg.Z19, reg.Z12, reg.Z12)
	a.VMULPS(reg.Z11, reg.Z12, reg.Z12)
	if f.min {
		a.VEXTRACTI64X4(operand.U8(1), reg.Z20, reg.Y13)
		a.VCVTPH2PS(reg.Y13, reg.Z13)
		a.VMULPS(reg.Z1, reg.Z13, reg.Z13)
		a.VADDPS(reg.Z13, reg.Z12, reg.Z12)
	}
	a.VADDPS(reg.X12, reg.X0, reg.X0)
	for j := 1; j < 4; j++ {
		a.VEXTRACTF32X4(operand.U8(j), reg.Z12, reg.X13)
		a.VADDPS(reg.X13, reg.X0, reg.X0)
	}
}

// legacyConsts loads the constants of both kernels of f.
// legacyUnpack loads row i's group (at o and o+off from p, gathered by
// Z30) and leaves its low- and high-nibble quants in Z9 and Z10 (with the
// fifth bit added where the format has one), and its scale bytes (Z29's
// gather) in Z20 under row i's mask (K4..K6; row 0 writes all of Z20).
func (a *asm) legacyUnpack(f legacyFormat, p reg.Register, o, off, i int) {
	masks := []reg.Register{nil, reg.K4, reg.K5, reg.K6}
	a.VMOVDQU8(rowAt(p, o), reg.Z24)
	a.VMOVDQU8(rowAt(p, o+off), reg.Z25)
	a.VMOVDQA64(reg.Z24, reg.Z9)
	a.VPERMT2B(reg.Z25, reg.Z30, reg.Z9)
	if f.qh >= 0 {
		a.VMOVDQA64(reg.Z24, reg.Z10)
		a.VPERMT2B(reg.Z25, reg.Z26, reg.Z10)
		a.VPTESTMB(reg.Z3, reg.Z10, reg.K1)
		a.VMOVDQA64(reg.Z24, reg.Z11)
		a.VPERMT2B(reg.Z25, reg.Z27, reg.Z11)
		a.VPTESTMB(reg.Z3, reg.Z11, reg.K3)
	}
	if i == 0 {
		a.VMOVDQA64(reg.Z24, reg.Z20)
		a.VPERMT2B(reg.Z25, reg.Z29, reg.Z20)
	} else {
		a.VMOVDQA64(reg.Z24, reg.Z21)
		a.VPERMT2B(reg.Z25, reg.Z29, reg.Z21)
		a.VMOVDQU16(reg.Z21, masks[i], reg.Z20)
	}
	a.VGF2P8AFFINEQB(operand.U8(0), reg.Z28, reg.Z9, reg.Z10)
	a.VPANDD(reg.Z31, reg.Z9, reg.Z9)
	if f.qh >= 0 {
		a.VPADDB(reg.Z8, reg.Z9, reg.K1, reg.Z9)
		a.VPADDB(reg.Z8, reg.Z10, reg.K3, reg.Z10)
	}
}

func (a *asm) legacyConsts(f legacyFormat) {
	t := legacyTables[f.name]
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.VMOVDQU64(t[0], reg.Z30)
	a.VMOVDQU64(t[1], reg.Z29)
	a.MOVQ(operand.U64(0x1020408000000000), reg.RAX)
	a.VPBROADCASTQ(reg.RAX, reg.Z28)
	if f.qh >= 0 {
		a.VMOVDQU64(t[2], reg.Z26)
		a.VMOVDQU64(t[3], reg.Z27)
		a.VMOVDQU64(t[4], reg.Z3)
		a.MOVL(operand.U32(0x10101010), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z8)
	}
	for i, m := range []uint32{0x22222222, 0x44444444, 0x88888888} {
		a.MOVL(operand.U32(m), reg.EAX)
		a.KMOVD(reg.EAX, []reg.Register{reg.K4, reg.K5, reg.K6}[i])
	}
	// K2 and K7: the bytes of a partial group in its first and second 64.
	a.load("nb", reg.RAX)
	a.ANDQ(operand.U8(3), reg.RAX)
	a.IMUL3Q(operand.U8(f.bs), reg.RAX, reg.RAX)
	a.MOVQ(operand.I32(-1), reg.R13)
	a.BZHIQ(reg.RAX, reg.R13, reg.R12)
	a.KMOVQ(reg.R12, reg.K2)
	a.XORQ(reg.R12, reg.R12)
	a.SUBQ(operand.U8(64), reg.RAX)
	a.CMOVQLT(reg.R12, reg.RAX)
	a.BZHIQ(reg.RAX, reg.R13, reg.R12)
	a.KMOVQ(reg.R12, reg.K7)
}

// x2Frame is where gemv4x2 kernels keep dy: after the partial groups'
// copies.
const x2Frame = 512

// gemv4x2Legacy generates gemv4x2<name>VNNI: gemv4<name>VNNI for two
// tokens, each weight group unpacked once for both. Token 0's activation
// group is at R12, token 1's at R12+R13 (R13 = dx); token 1's outputs are
// dy bytes after token 0's. The chains are X0 (token 0) and X2 (token 1),
// the stream sums Z4-Z7 and Z16-Z19, the activations' quants and
// corrections memory operands; Z23 and Z15 hold the rows' scales and
// minimums as float32, Z1 and Z22 the activation sums times dx.
func (a *asm) gemv4x2Legacy(f legacyFormat) {
	g := 4 * f.bs
	off := g - 64
	a.text("gemv4x2"+f.name+"VNNI", 0, "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, dx uintptr, nb int, y *float32, dy uintptr, q int, acc int)",
		fmt.Sprintf("As gemv4%sVNNI for two tokens: activations at x and x+dx (bytes),", f.name),
		"outputs at y and dy bytes after y. Each weight group is unpacked once",
		"for both tokens.")
	a.AllocLocal(x2Frame + 8)
	a.legacyConsts(f)
	a.load("dx", reg.R13)
	a.load("dy", reg.RAX)
	a.MOVQ(reg.RAX, sp(x2Frame))
	a.gemv4Setup(g)

	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))
	a.Label("row")
	a.VXORPS(reg.X0, reg.X0, reg.X0)
	a.VXORPS(reg.X2, reg.X2, reg.X2)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("part"))
	a.Label("grp")
	for _, p := range streams {
		a.PREFETCHT0(rowAt(p, vnniPF))
		a.PREFETCHT0(rowAt(p, vnniPF+64))
	}
	a.legacyGroup2(f, streams, [4]int{}, off)
	a.ADDQ(operand.U8(g), reg.RAX)
	a.ADDQ(operand.U32(256), reg.R12)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label("grp"))

	a.Label("part")
	a.TESTQ(operand.U32(3), a.arg("nb"))
	a.JZ(label("fin"))
	for i, p := range streams {
		a.VMOVDQU8_Z(rowAt(p, 0), reg.K2, reg.Z9)
		a.VMOVDQU8_Z(rowAt(p, 64), reg.K7, reg.Z10)
		a.VMOVDQU64(reg.Z9, sp(128*i))
		a.VMOVDQU64(reg.Z10, sp(128*i+64))
	}
	a.XORQ(reg.RAX, reg.RAX)
	rsp := [4]reg.Register{reg.RSP, reg.RSP, reg.RSP, reg.RSP}
	a.legacyGroup2(f, rsp, [4]int{0, 128, 256, 384}, off)

	a.Label("fin")
	a.gemv4x2Fin()

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// gemv4x2Fin stores (or adds) the chains X0 and X2 to token 0's and token
// 1's outputs, advances DX and the rows, and loops to row. It uses R12.
func (a *asm) gemv4x2Fin() {
	at := func(b reg.Register, idx bool) operand.Mem {
		m := operand.Mem{Base: b}
		if idx {
			m.Index, m.Scale = reg.RSI, 1
		}
		return m
	}
	for t, x := range []reg.VecPhysical{reg.X0, reg.X2} {
		if t == 1 {
			a.ADDQ(sp(x2Frame), reg.RDX)
		}
		a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 2}, reg.R12)
		a.CMPQ(a.arg("acc"), operand.U8(0))
		store := label(fmt.Sprintf("store%d", t))
		a.JEQ(store)
		a.VMOVSS(at(reg.RDX, false), reg.X4)
		a.VINSERTPS(operand.U8(0x10), at(reg.RDX, true), reg.X4, reg.X4)
		a.VINSERTPS(operand.U8(0x20), at(reg.R12, false), reg.X4, reg.X4)
		a.VINSERTPS(operand.U8(0x30), at(reg.R12, true), reg.X4, reg.X4)
		a.VADDPS(reg.X4, x, x)
		a.Label(string(store))
		a.VMOVSS(x, at(reg.RDX, false))
		a.VEXTRACTPS(operand.U8(1), x, at(reg.RDX, true))
		a.VEXTRACTPS(operand.U8(2), x, at(reg.R12, false))
		a.VEXTRACTPS(operand.U8(3), x, at(reg.R12, true))
	}
	a.SUBQ(sp(x2Frame), reg.RDX)
	a.ADDQ(operand.U8(4), reg.RDX)
	for _, r := range streams {
		a.ADDQ(reg.RBX, r)
	}
	a.DECQ(reg.R14)
	a.JNZ(label("row"))
}

// legacyGroup2 is legacyGroup for two tokens (gemv4x2Legacy).
func (a *asm) legacyGroup2(f legacyFormat, p [4]reg.Register, o [4]int, off int) {
	xa := func(d int) operand.Mem { return mem(reg.R12, d) }
	xb := func(d int) operand.Mem {
		return operand.Mem{Base: reg.R12, Index: reg.R13, Scale: 1, Disp: d}
	}
	xs := [2]func(int) operand.Mem{xa, xb}
	if f.min {
		// Z1 (token 0) and Z22 (token 1), lane 4j+r: float32(Σq_j)·dx_j.
		for t, b := range []reg.VecPhysical{reg.Z1, reg.Z22} {
			a.VPXORD(reg.Z14, reg.Z14, reg.Z14)
			a.VPSUBD(xs[t](128), reg.Z14, b)
			a.VPSRAD(operand.U8(3), b, b)
			a.VPSHUFD(operand.U8(0x4e), b, reg.Z14)
			a.VPADDD(reg.Z14, b, b)
			a.VPSHUFD(operand.U8(0xb1), b, reg.Z14)
			a.VPADDD(reg.Z14, b, b)
			a.VCVTDQ2PS(b, b)
			a.VMULPS(xs[t](192), b, b)
		}
	}
	accs := [2][4]reg.VecPhysical{{reg.Z4, reg.Z5, reg.Z6, reg.Z7}, {reg.Z16, reg.Z17, reg.Z18, reg.Z19}}
	for i := range p {
		a.legacyUnpack(f, p[i], o[i], off, i)
		for t := range xs {
			acc := accs[t][i]
			if f.min {
				a.VPXORD(acc, acc, acc)
			} else {
				a.VPSLLD(operand.U8(1), xs[t](128), acc)
			}
			a.VPDPBUSD(xs[t](0), reg.Z9, acc)
			a.VPDPBUSD(xs[t](64), reg.Z10, acc)
		}
	}
	a.VCVTPH2PS(reg.Y20, reg.Z23)
	if f.min {
		a.VEXTRACTI64X4(operand.U8(1), reg.Z20, reg.Y15)
		a.VCVTPH2PS(reg.Y15, reg.Z15)
	}
	for t, chain := range []reg.VecPhysical{reg.X0, reg.X2} {
		a.reduce4(accs[t])
		a.VCVTDQ2PS(reg.Z11, reg.Z11)
		a.VMULPS(xs[t](192), reg.Z23, reg.Z12)
		a.VMULPS(reg.Z11, reg.Z12, reg.Z12)
		if f.min {
			a.VMULPS([]reg.VecPhysical{reg.Z1, reg.Z22}[t], reg.Z15, reg.Z13)
			a.VADDPS(reg.Z13, reg.Z12, reg.Z12)
		}
		a.VADDPS(reg.X12, chain, chain)
		for j := 1; j < 4; j++ {
			a.VEXTRACTF32X4(operand.U8(j), reg.Z12, reg.X13)
			a.VADDPS(reg.X13, chain, chain)
		}
	}
}

// reduce4 is reduce4i for the partial sums in z: Z11 lane 4j+r is row r's
// sum of block j. It uses Z12-Z14.
func (a *asm) reduce4(z [4]reg.VecPhysical) {
	a.VPUNPCKLDQ(z[1], z[0], reg.Z11)
	a.VPUNPCKHDQ(z[1], z[0], reg.Z12)
	a.VPADDD(reg.Z12, reg.Z11, reg.Z11)
	a.VPUNPCKLDQ(z[3], z[2], reg.Z12)
	a.VPUNPCKHDQ(z[3], z[2], reg.Z13)
	a.VPADDD(reg.Z13, reg.Z12, reg.Z12)
	a.VPUNPCKLQDQ(reg.Z12, reg.Z11, reg.Z13)
	a.VPUNPCKHQDQ(reg.Z12, reg.Z11, reg.Z14)
	a.VPADDD(reg.Z14, reg.Z13, reg.Z11)
}
