package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ifgemm generates ifgemm_amd64.s: Inferflow's Q6_B64T1, Q5_B64T1,
// Q4_B32T1, Q3_B32T1 and Q2_B32T1 weights times eight (or four, or two)
// tokens' Q8_0 activations, AVX-512 with VNNI and VBMI: the blocks of four
// rows are unpacked once, as ifmore_amd64.s's kernels unpack them, and kept
// in Z15, Z20, Z25 and Z29 for all the tokens. Tokens go in pairs, whose
// activations ifgPrep prepared once per call, per 64 values: P1 (the first
// token's first 32 quants and the second's last 32), P2 (the first's last
// 32 and the second's first 32), both tokens' dy, both tokens' fl(Y·dy),
// 256 bytes, so that two VPDPBUSD (the second with the weights' halves
// swapped) give a row's sums already folded to four 128-bit lanes (block A
// of the first token, B of the first, A of the second, B of the second);
// the four rows' sums transpose into one zmm. Each (row, token) is one
// chain over the blocks, in lanes 0-3 (first token) or 8-11 (second) of one
// accumulator per pair (Z0, Z5, Z6, Z22), with exactly ifmore's (and
// kernels/quant's) arithmetic: per 32-value activation block with scale
// dy, the exact integer sums S = Σq·qy and Y = Σqy, then
// sum += (scale·dy)·S + base·(Y·dy), each operation rounded to float32,
// block A of a pair before block B.
//
// Registers: Z1, Z2, Z7, Z23 the unpacked blocks with their halves swapped
// (and unpacking temporaries); Z4 and Z16 a pair's activations; Z3 and Z14
// the four rows' scales and bases (lanes 0-3 and 8-11 block A's, 4-7 and
// 12-15 B's); Z8..Z11 the rows' sums; Z12, Z13 temporaries; Z17..Z19, Z21,
// Z24, Z26..Z28, Z30, Z31, K1 and K2 constants as in ifmore_amd64.s, K3 the
// lanes 0-3 and 8-11.
func ifgemm(a *asm) {
	g := &ifgGlobals{a: a}
	g.shr64 = a.global("ifgshr64", 0, 0, 0, 0,
		0x0004000400040004, 0x0004000400040004, 0x0004000400040004, 0x0004000400040004)
	g.q6h = a.global("ifgq6h", 0x1814100c0804003c, 0x3834302c2824201c, 0x1814100c0804003c, 0x3834302c2824201c,
		0x1a16120e0a06023e, 0x3a36322e2a26221e, 0x1a16120e0a06023e, 0x3a36322e2a26221e)
	g.q5h = a.global("ifgq5h", 0x0a08060402003e3c, 0x1a18161412100e0c, 0x2a28262422201e1c, 0x3a38363432302e2c,
		0x0b09070503013f3d, 0x1b19171513110f0d, 0x2b29272523211f1d, 0x3b39373533312f2d)
	g.p2 = a.global("ifgp2", 0x1c1814100c080400, 0x3c3834302c282420, 0x1c1814100c080400, 0x3c3834302c282420,
		0x1e1a16120e0a0602, 0x3e3a36322e2a2622, 0x1e1a16120e0a0602, 0x3e3a36322e2a2622)
	g.p3 = a.global("ifgp3", 0x0c0a08060402003e, 0x1c1a18161412100e, 0x0c0a08060402003e, 0x1c1a18161412100e,
		0x0d0b09070503013f, 0x1d1b19171513110f, 0x0d0b09070503013f, 0x1d1b19171513110f)
	g.idx = a.global("ifgidx", 0x0e0c0a0806040200, 0x0e0c0a0806040200, 0x0f0d0b0907050301, 0x0f0d0b0907050301)
	g.hk = a.global("ifghk", 0x000000000b030800, 0x000000000c040800, 0x000000000d050800, 0x0b0a030209080100)
	g.deint = a.global("ifgdeint64", 0x0e0c0a0806040200, 0x1e1c1a1816141210, 0x2e2c2a2826242220, 0x3e3c3a3836343230,
		0x0f0d0b0907050301, 0x1f1d1b1917151311, 0x2f2d2b2927252321, 0x3f3d3b3937353331)
	g.act = a.global("ifgact", 0x0101010100000000)

	kinds := []ifgKind{
		{name: "Q6_B64", short: "q6", what: "Q6_B64T1", bb: 52, setup: g.setupQ65(0x30303030, g.q6h), unpack: g.q6w, hdr: g.hdr64},
		{name: "Q5_B64", short: "q5", what: "Q5_B64T1 weights (44-byte 64-value blocks)", bb: 44, setup: g.setupQ65(0x10101010, g.q5h), unpack: g.q5w, hdr: g.hdr64},
		{name: "Q4S", short: "q4", what: "Q4_B32T1 weights (20-byte blocks, taken two at a time)", bb: 40, pairs: true, setup: g.setupQ4, unpack: g.q4sw, hdr: g.hdr2y},
		{name: "Q3S", short: "q3", what: "Q3_B32T1 weights (16-byte blocks, taken two at a time)", bb: 32, pairs: true, setup: g.setupQ3, unpack: g.q3w, hdr: g.hdr2y},
		{name: "Q2S", short: "q2", what: "Q2_B32T1 weights (12-byte blocks, taken two at a time)", bb: 24, pairs: true, setup: g.setupQ2, unpack: g.q2w, hdr: g.hdr2x},
	}
	for _, n := range []int{8, 4, 2} {
		for _, k := range kinds {
			g.kernel(k, n)
		}
	}
	g.prep()
}

// ifgGlobals are the kernels' read-only tables.
type ifgGlobals struct {
	a                                            *asm
	shr64, q6h, q5h, p2, p3, idx, hk, deint, act operand.Mem
}

// An ifgKind is one weight format of the kernels.
type ifgKind struct {
	name, short string                                  // in the kernel's name and its labels
	what        string                                  // the format, for the doc comment
	bb          int                                     // weight bytes per step (64 values)
	pairs       bool                                    // 32-value blocks taken two at a time (nb halved)
	setup       func()                                  // loads the format's constants
	unpack      func(p reg.Register, w reg.VecPhysical) // unpacks row p's block into w
	hdr         func()                                  // loads the rows' scales and bases
}

// ifgAccs are the accumulators of the token pairs.
var ifgAccs = []int{0, 5, 6, 22}

// idxm is disp(base)(index*scale).
func idxm(base, index reg.Register, scale uint8, disp int) operand.Mem {
	return operand.Mem{Base: base, Index: index, Scale: scale, Disp: disp}
}

// bcast sets z to the dword v in every lane (through AX).
func (g *ifgGlobals) bcast(v uint32, z reg.VecPhysical) {
	g.a.MOVL(operand.U32(v), reg.EAX)
	g.a.VPBROADCASTD(reg.EAX, z)
}

// common loads the constants every kernel has: Z21 and Z24 the scale and
// base picks, K3 the lanes 0-3 and 8-11, Z31 the dword z31 in every lane.
func (g *ifgGlobals) common(z31 uint32) {
	a := g.a
	a.VPMOVZXBD(g.idx, reg.Z21)
	a.VPMOVZXBD(g.idx.Offset(16), reg.Z24)
	a.MOVL(operand.U32(0x0f0f), reg.EAX)
	a.KMOVW(reg.EAX, reg.K3)
	g.bcast(z31, reg.Z31)
}

// setupQ65 is the setup of Q6_B64T1 and Q5_B64T1: Z17 the bytes of the
// high bits (z17), Z30 the word shifts, Z28 the multishift controls ctl.
func (g *ifgGlobals) setupQ65(z17 uint32, ctl operand.Mem) func() {
	return func() {
		g.common(0x0f0f0f0f)
		g.bcast(z17, reg.Z17)
		g.a.VMOVDQU64(g.shr64, reg.Z30)
		g.a.VMOVDQU64(ctl, reg.Z28)
	}
}

// setupQ4 is the setup of Q4_B32T1: Z30 the word shifts, Y18 and Y19
// the header gather indices.
func (g *ifgGlobals) setupQ4() {
	g.common(0x0f0f0f0f)
	g.a.VMOVDQU64(g.shr64, reg.Z30)
	g.a.VPMOVZXBD(g.hk.Offset(16), reg.Y18)
	g.a.VPMOVZXBD(g.hk.Offset(24), reg.Y19)
}

// setupQ3 is the setup of Q3_B32T1: Z17 0x03 bytes, K1 and K2 block B's
// qwords and dwords, Z26 and Z27 the multishift controls, Y18 and Y19 the
// header gather indices.
func (g *ifgGlobals) setupQ3() {
	a := g.a
	g.common(0x07070707)
	g.bcast(0x03030303, reg.Z17)
	a.MOVL(operand.U32(0xcc), reg.EAX)
	a.KMOVB(reg.EAX, reg.K1)
	a.MOVL(operand.U32(0xf0f0), reg.EAX)
	a.KMOVW(reg.EAX, reg.K2)
	a.VMOVDQU64(g.p2, reg.Z26)
	a.VMOVDQU64(g.p3, reg.Z27)
	a.VPMOVZXBD(g.hk.Offset(8), reg.Y18)
	a.VPMOVZXBD(g.hk.Offset(24), reg.Y19)
}

// setupQ2 is the setup of Q2_B32T1: K1 block B's qwords, Z26 the
// multishift controls, Y18 and Y19 the header gather indices.
func (g *ifgGlobals) setupQ2() {
	a := g.a
	g.common(0x03030303)
	a.MOVL(operand.U32(0xcc), reg.EAX)
	a.KMOVB(reg.EAX, reg.K1)
	a.VMOVDQU64(g.p2, reg.Z26)
	a.VPMOVZXBD(g.hk, reg.Y18)
	a.VPMOVZXBD(g.hk.Offset(24), reg.Y19)
}

// q6w unpacks the Q6_B64T1 block at offset AX of the row at p into w, in
// stored order: the low nibbles (Z30 the word shifts, Z31 0x0f bytes) and
// bits 4-5 by a multishift of qh (Z28 the controls) selected by Z17 (0x30
// bytes).
func (g *ifgGlobals) q6w(p reg.Register, w reg.VecPhysical) {
	a := g.a
	a.VBROADCASTI64X4(at(p, 20), reg.Z7)
	a.VPSRLVW(reg.Z30, reg.Z7, reg.Z7)
	a.VPANDD(reg.Z31, reg.Z7, reg.Z7)
	a.VBROADCASTI32X4(at(p, 4), w)
	a.VPERMQ(operand.U8(0x50), w, w)
	a.VPMULTISHIFTQB(w, reg.Z28, w)
	a.VPTERNLOGD(operand.U8(0xe2), reg.Z7, reg.Z17, w)
}

// q5w is q6w for Q5_B64T1: bit 4 from the qh qword (Z28 the controls, Z17
// 0x10 bytes).
func (g *ifgGlobals) q5w(p reg.Register, w reg.VecPhysical) {
	a := g.a
	a.VBROADCASTI64X4(at(p, 12), reg.Z7)
	a.VPSRLVW(reg.Z30, reg.Z7, reg.Z7)
	a.VPANDD(reg.Z31, reg.Z7, reg.Z7)
	a.VPBROADCASTQ(at(p, 4), w)
	a.VPMULTISHIFTQB(w, reg.Z28, w)
	a.VPTERNLOGD(operand.U8(0xe2), reg.Z7, reg.Z17, w)
}

// q4sw unpacks the two Q4_B32T1 blocks at offset AX of the row at p into w
// against de-interleaved activations: block A's values meet dwords 0-3 and
// 8-11, B's 4-7 and 12-15 (Z30 the word shifts, Z31 0x0f bytes).
func (g *ifgGlobals) q4sw(p reg.Register, w reg.VecPhysical) {
	a := g.a
	a.VBROADCASTI32X4(at(p, 4), w)
	a.VINSERTI32X4(operand.U8(1), at(p, 24), w, w)
	a.VINSERTI32X4(operand.U8(3), at(p, 24), w, w)
	a.VPSRLVW(reg.Z30, w, w)
	a.VPANDD(reg.Z31, w, w)
}

// q3w is q4sw for two Q3_B32T1 blocks: bits 0-1 by a multishift of qs (Z26
// the controls), bit 2 by one of qh (Z27), K1 (qwords 2, 3, 6, 7) and K2
// (their dwords) bringing block B's bytes, joined by the 0x03 bytes of Z17
// and cut by the 0x07 bytes of Z31.
func (g *ifgGlobals) q3w(p reg.Register, w reg.VecPhysical) {
	a := g.a
	a.VPBROADCASTQ(at(p, 8), w)
	a.VPBROADCASTQ(at(p, 24), reg.K1, w)
	a.VPMULTISHIFTQB(w, reg.Z26, w)
	a.VPBROADCASTD(at(p, 4), reg.Z2)
	a.VPBROADCASTD(at(p, 20), reg.K2, reg.Z2)
	a.VPMULTISHIFTQB(reg.Z2, reg.Z27, reg.Z2)
	a.VPTERNLOGD(operand.U8(0xe2), reg.Z2, reg.Z17, w)
	a.VPANDD(reg.Z31, w, w)
}

// q2w is q3w for two Q2_B32T1 blocks (Z31 0x03 bytes).
func (g *ifgGlobals) q2w(p reg.Register, w reg.VecPhysical) {
	a := g.a
	a.VPBROADCASTQ(at(p, 4), w)
	a.VPBROADCASTQ(at(p, 16), reg.K1, w)
	a.VPMULTISHIFTQB(w, reg.Z26, w)
	a.VPANDD(reg.Z31, w, w)
}

// hdr64 leaves the bases of the four rows' 64-value blocks at offset AX of
// R8..R11 in Z14, their scales in Z3, each four times (blocks A and B of
// two tokens).
func (g *ifgGlobals) hdr64() {
	a := g.a
	a.VMOVD(at(reg.R8, 0), reg.X12)
	a.VPINSRD(operand.U8(1), at(reg.R9, 0), reg.X12, reg.X12)
	a.VPINSRD(operand.U8(2), at(reg.R10, 0), reg.X12, reg.X12)
	a.VPINSRD(operand.U8(3), at(reg.R11, 0), reg.X12, reg.X12)
	a.VINSERTI128(operand.U8(1), reg.X12, reg.Y12, reg.Y12)
	g.hdrTail()
}

// hdr2 is hdr64 for the four rows' pairs of 32-value blocks: each row's
// headers of blocks A and B come from one load (into t[i], X or Y, at its
// dwords 0 and k) and are gathered by VPERMT2D, Y18 holding the indices 0,
// 8, k, 8+k and Y19 0, 1, 8, 9, 2, 3, 10, 11.
func (g *ifgGlobals) hdr2(t [4]reg.VecPhysical) {
	a := g.a
	for i, p := range []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11} {
		a.VMOVDQU(at(p, 0), t[i])
	}
	a.VPERMT2D(reg.Y13, reg.Y18, reg.Y12)
	a.VPERMT2D(reg.Y14, reg.Y18, reg.Y3)
	a.VPERMT2D(reg.Y3, reg.Y19, reg.Y12)
	g.hdrTail()
}

// hdr2y is hdr2 with 32-byte loads (Q4_B32T1, Q3_B32T1), hdr2x with
// 16-byte ones (Q2_B32T1).
func (g *ifgGlobals) hdr2y() { g.hdr2([4]reg.VecPhysical{reg.Y12, reg.Y13, reg.Y3, reg.Y14}) }
func (g *ifgGlobals) hdr2x() { g.hdr2([4]reg.VecPhysical{reg.X12, reg.X13, reg.X3, reg.X14}) }

// hdrTail widens the f16 headers in Y12 and picks the bases into Z14, the
// scales into Z3.
func (g *ifgGlobals) hdrTail() {
	a := g.a
	a.VCVTPH2PS(reg.Y12, reg.Z12)
	a.VPERMPS(reg.Z12, reg.Z21, reg.Z14)
	a.VPERMPS(reg.Z12, reg.Z24, reg.Z3)
}

// dot puts the dword sums of a row's block(s) in w (w2 the same with its
// 256-bit halves swapped) times a pair of tokens a and b into z: Z16 holds
// a's activations' first half and b's second (P1), Z4 a's second and b's
// first (P2), so that z's 128-bit lanes sum block A of a, B of a, A of b,
// B of b.
func (g *ifgGlobals) dot(w, w2, z reg.VecPhysical) {
	a := g.a
	a.VPXORD(z, z, z)
	a.VPDPBUSD(reg.Z16, w, z)
	a.VPDPBUSD(reg.Z4, w2, z)
}

// pair adds the four rows' A and B blocks times the pair of tokens whose
// activations (P1 at o(R12), P2 at o+64, both tokens' dy at o+128, their
// fl(Y·dy) at o+192) to their chains in Z<x> (lanes 0-3 the first token's,
// 8-11 the second's; K3 selects them), A first.
func (g *ifgGlobals) pair(o, x int) {
	a := g.a
	a.VMOVDQU64(mem(reg.R12, o), reg.Z16)
	a.VMOVDQU64(mem(reg.R12, o+64), reg.Z4)
	g.dot(reg.Z15, reg.Z1, reg.Z8)
	g.dot(reg.Z20, reg.Z2, reg.Z9)
	g.dot(reg.Z25, reg.Z7, reg.Z10)
	g.dot(reg.Z29, reg.Z23, reg.Z11)
	a.VPUNPCKLDQ(reg.Z9, reg.Z8, reg.Z12)
	a.VPUNPCKHDQ(reg.Z9, reg.Z8, reg.Z8)
	a.VPADDD(reg.Z12, reg.Z8, reg.Z8)
	a.VPUNPCKLDQ(reg.Z11, reg.Z10, reg.Z12)
	a.VPUNPCKHDQ(reg.Z11, reg.Z10, reg.Z10)
	a.VPADDD(reg.Z12, reg.Z10, reg.Z10)
	a.VPUNPCKLQDQ(reg.Z10, reg.Z8, reg.Z12)
	a.VPUNPCKHQDQ(reg.Z10, reg.Z8, reg.Z8)
	a.VPADDD(reg.Z12, reg.Z8, reg.Z8)
	a.VCVTDQ2PS(reg.Z8, reg.Z8)
	a.VMULPS(mem(reg.R12, o+128), reg.Z3, reg.Z12)
	a.VMULPS(reg.Z8, reg.Z12, reg.Z12)
	a.VMULPS(mem(reg.R12, o+192), reg.Z14, reg.Z13)
	a.VADDPS(reg.Z13, reg.Z12, reg.Z12)
	a.VADDPS(reg.Z12, zr[x], reg.K3, zr[x])
	a.VSHUFF32X4(operand.U8(0xb1), reg.Z12, reg.Z12, reg.Z12)
	a.VADDPS(reg.Z12, zr[x], reg.K3, zr[x])
}

// add adds the four outputs of the token at R12 (R12 + j·SI for stream j)
// to X<x> and steps R12 to the next token (AX bytes on).
func (g *ifgGlobals) add(x int) {
	a := g.a
	a.LEAQ(idxm(reg.R12, reg.RSI, 2, 0), reg.R13)
	a.VMOVSS(mem(reg.R12, 0), reg.X4)
	a.VINSERTPS(operand.U8(0x10), idxm(reg.R12, reg.RSI, 1, 0), reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x20), mem(reg.R13, 0), reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x30), idxm(reg.R13, reg.RSI, 1, 0), reg.X4, reg.X4)
	a.VADDPS(reg.X4, xr[x], xr[x])
	a.ADDQ(reg.RAX, reg.R12)
}

// put stores X<x>'s four lanes as add reads them.
func (g *ifgGlobals) put(x int) {
	a := g.a
	a.LEAQ(idxm(reg.R12, reg.RSI, 2, 0), reg.R13)
	a.VMOVSS(xr[x], mem(reg.R12, 0))
	a.VEXTRACTPS(operand.U8(1), xr[x], idxm(reg.R12, reg.RSI, 1, 0))
	a.VEXTRACTPS(operand.U8(2), xr[x], mem(reg.R13, 0))
	a.VEXTRACTPS(operand.U8(3), xr[x], idxm(reg.R13, reg.RSI, 1, 0))
	a.ADDQ(reg.RAX, reg.R12)
}

// kernel emits gemm4x<n><k.name>VNNI.
func (g *ifgGlobals) kernel(k ifgKind, n int) {
	a := g.a
	name := fmt.Sprintf("gemm4x%d%sVNNI", n, k.name)
	var doc []string
	switch {
	case n == 8 && k.name == "Q6_B64":
		doc = []string{
			"For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q6_B64T1",
			"blocks, ldw bytes apart) and 8 tokens t, y[t·ldy/4 + j·q+r] = w·x_t,",
			"or += when acc is not 0; the tokens' Q8_0 activations prepared by",
			"ifmPrep at xp, 1024 bytes per 64 values (token t's 128 at 128·t).",
		}
	case n == 8:
		doc = []string{fmt.Sprintf("As gemm4x8Q6_B64VNNI for %s.", k.what)}
	default:
		doc = []string{fmt.Sprintf("As gemm4x8%sVNNI for %d tokens (%d bytes per 64 values).", k.name, n, 128*n)}
	}
	a.text(name, attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, xp unsafe.Pointer, nb int, y *float32, ldy uintptr, q int, acc int)",
		doc...)
	l := fmt.Sprintf("%sg%d", k.short, n)
	k.setup()
	a.gemv4Args("xp")
	if k.pairs {
		a.SHRQ(operand.U8(1), reg.RCX)
	}
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label(l + "done"))

	accs := ifgAccs[:n/2]
	a.Label(l + "row")
	for _, x := range accs {
		a.VPXORD(zr[x], zr[x], zr[x])
	}
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)
	a.TESTQ(reg.R13, reg.R13)
	a.JZ(label(l + "fin"))

	a.Label(l + "blk")
	for i, p := range []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11} {
		k.unpack(p, []reg.VecPhysical{reg.Z15, reg.Z20, reg.Z25, reg.Z29}[i])
	}
	a.VSHUFI64X2(operand.U8(0x4e), reg.Z15, reg.Z15, reg.Z1)
	a.VSHUFI64X2(operand.U8(0x4e), reg.Z20, reg.Z20, reg.Z2)
	a.VSHUFI64X2(operand.U8(0x4e), reg.Z25, reg.Z25, reg.Z7)
	a.VSHUFI64X2(operand.U8(0x4e), reg.Z29, reg.Z29, reg.Z23)
	k.hdr()
	for i, x := range accs {
		g.pair(256*i, x)
	}
	a.ADDQ(operand.U8(k.bb), reg.RAX)
	a.ADDQ(operand.U32(uint32(128*n)), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label(l + "blk"))

	a.Label(l + "fin")
	a.MOVQ(a.arg("ldy"), reg.RAX)
	a.MOVQ(reg.RDX, reg.R12)
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label(l + "put"))
	for _, x := range accs {
		a.VEXTRACTF32X4(operand.U8(2), zr[x], reg.X1)
		g.add(x)
		g.add(1)
		a.VINSERTF32X4(operand.U8(2), reg.X1, zr[x], zr[x])
	}

	a.Label(l + "put")
	a.MOVQ(reg.RDX, reg.R12)
	for _, x := range accs {
		g.put(x)
		a.VEXTRACTF32X4(operand.U8(2), zr[x], reg.X1)
		g.put(1)
	}
	a.ADDQ(operand.U8(4), reg.RDX)
	for _, p := range []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11} {
		a.ADDQ(reg.RBX, p)
	}
	a.DECQ(reg.R14)
	a.JNZ(label(l + "row"))

	a.Label(l + "done")
	a.VZEROUPPER()
	a.RET()
}

// act64 loads the two Q8_0 activation blocks at p (68 bytes): Z16 gets
// their 64 quants de-interleaved (even values, then odd), Y18 dy of A in
// its low four lanes and of B in its high four, Y20 fl(Y·dy) the same way,
// as ifmore_amd64.s's IFMACT64. Z15 must hold 0x01 bytes, Z29 the
// de-interleave table, Y19 the dword indices 0,0,0,0,1,1,1,1.
func (g *ifgGlobals) act64(p reg.Register) {
	a := g.a
	a.VMOVDQU64(mem(p, 2), reg.Y16)
	a.VINSERTI64X4(operand.U8(1), mem(p, 36), reg.Z16, reg.Z16)
	a.VPXORD(reg.Z5, reg.Z5, reg.Z5)
	a.VPDPBUSD(reg.Z16, reg.Z15, reg.Z5)
	a.VEXTRACTI64X4(operand.U8(1), reg.Z5, reg.Y6)
	a.VPHADDD(reg.Y6, reg.Y5, reg.Y5)
	a.VPHADDD(reg.Y5, reg.Y5, reg.Y5)
	a.VEXTRACTI128(operand.U8(1), reg.Y5, reg.X6)
	a.VPADDD(reg.X6, reg.X5, reg.X5)
	a.VCVTDQ2PS(reg.X5, reg.X5)
	a.VPBROADCASTW(mem(p, 0), reg.X7)
	a.VPINSRW(operand.U8(1), mem(p, 34), reg.X7, reg.X7)
	a.VCVTPH2PS(reg.X7, reg.X7)
	a.VMULPS(reg.X7, reg.X5, reg.X5)
	a.VPERMPS(reg.Y7, reg.Y19, reg.Y18)
	a.VPERMPS(reg.Y5, reg.Y19, reg.Y20)
	a.VPERMB(reg.Z16, reg.Z29, reg.Z16)
}

// prep emits ifgPrep.
func (g *ifgGlobals) prep() {
	a := g.a
	a.text("ifgPrep", attr.NOSPLIT,
		"func(x unsafe.Pointer, lda uintptr, np int, xp unsafe.Pointer, rec uintptr)",
		"Prepares the first np pairs of Q8_0 activation blocks of two tokens (at",
		"x and x+lda) for the kernels below, 256 bytes per 64 values, rec bytes",
		"apart, at xp: P1 (the first token's first 32 de-interleaved quants and",
		"the second's last 32), P2 (the first's last 32 and the second's first",
		"32), the two tokens' dy (act64's Y18), then their fl(Y·dy) (Y20).")
	g.bcast(0x01010101, reg.Z15)
	a.VPMOVZXBD(g.act, reg.Z19)
	a.VMOVDQU64(g.deint, reg.Z29)
	a.load("x", reg.R12)
	a.load("lda", reg.R13)
	a.ADDQ(reg.R12, reg.R13)
	a.load("np", reg.RCX)
	a.load("xp", reg.RDI)
	a.load("rec", reg.RDX)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("ifgprepdone"))

	a.Label("ifgprepblk")
	g.act64(reg.R12)
	a.VMOVDQU64(reg.Y16, mem(reg.RDI, 0))
	a.VEXTRACTI64X4(operand.U8(1), reg.Z16, mem(reg.RDI, 64))
	a.VMOVUPS(reg.Y18, mem(reg.RDI, 128))
	a.VMOVUPS(reg.Y20, mem(reg.RDI, 192))
	g.act64(reg.R13)
	a.VMOVDQU64(reg.Y16, mem(reg.RDI, 96))
	a.VEXTRACTI64X4(operand.U8(1), reg.Z16, mem(reg.RDI, 32))
	a.VMOVUPS(reg.Y18, mem(reg.RDI, 160))
	a.VMOVUPS(reg.Y20, mem(reg.RDI, 224))
	a.ADDQ(operand.U8(68), reg.R12)
	a.ADDQ(operand.U8(68), reg.R13)
	a.ADDQ(reg.RDX, reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("ifgprepblk"))

	a.Label("ifgprepdone")
	a.VZEROUPPER()
	a.RET()
}
