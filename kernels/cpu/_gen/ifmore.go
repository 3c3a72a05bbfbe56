package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ifmore generates ifmore_amd64.s: Inferflow's Q6_B64T1, Q5_B64T1,
// Q4_B32T1, Q3_B32T1 and Q2_B32T1 weights times Q8_0 activations, AVX-512
// with VNNI and VBMI, four rows at a time sharing the activation loads.
// They compute exactly what kernels/quant's DotQ6_B64T1Q8_0 etc. compute:
// per 32-value activation block with scale dy, the exact integer sums
// S = Σq·qy and Y = Σqy, then sum += (scale·dy)·S + base·(Y·dy), each
// operation rounded to float32, one chain per row over the blocks (the
// four rows ride in the four lanes of X0).
//
// The 64-value formats keep their 4-bit parts in stored order (low
// nibbles, the even values, then high nibbles) against activations
// de-interleaved the same way, and take the top bits by multishifts of
// qh; a weight block meets two activation blocks A and B, whose products
// VPDPBUSD leaves in dwords 0-3 and 8-11 (A) and 4-7 and 12-15 (B). The
// 32-value formats take two blocks at a time the same way (Q3_B32T1 and
// Q2_B32T1 pick each value's bits by multishifts of broadcast qwords, in
// the de-interleaved order) and a last odd block alone in a YMM register.
//
// ifmPrep prepares the activations once per call for all the rows: per
// 64 values the de-interleaved quants, then dy and fl(Y·dy) of blocks A
// and B spread over four lanes each, so that a block's two products for
// the four rows are formed in one YMM register (A's in the low lanes) and
// added to the chains A first.
func ifmore(a *asm) {
	g := &ifmGlobals{
		deint: a.global("ifmdeint", 0x0e0c0a0806040200, 0x1e1c1a1816141210,
			0x0f0d0b0907050301, 0x1f1d1b1917151311),
		shr: a.global("ifmshr", 0, 0, 0x0004000400040004, 0x0004000400040004),
		deint64: a.global("ifmdeint64", 0x0e0c0a0806040200, 0x1e1c1a1816141210,
			0x2e2c2a2826242220, 0x3e3c3a3836343230, 0x0f0d0b0907050301,
			0x1f1d1b1917151311, 0x2f2d2b2927252321, 0x3f3d3b3937353331),
		shr64: a.global("ifmshr64", 0, 0, 0, 0, 0x0004000400040004,
			0x0004000400040004, 0x0004000400040004, 0x0004000400040004),
		q6h: a.global("ifmq6h", 0x1814100c0804003c, 0x3834302c2824201c,
			0x1814100c0804003c, 0x3834302c2824201c, 0x1a16120e0a06023e,
			0x3a36322e2a26221e, 0x1a16120e0a06023e, 0x3a36322e2a26221e),
		q5h: a.global("ifmq5h", 0x0a08060402003e3c, 0x1a18161412100e0c,
			0x2a28262422201e1c, 0x3a38363432302e2c, 0x0b09070503013f3d,
			0x1b19171513110f0d, 0x2b29272523211f1d, 0x3b39373533312f2d),
		c2: a.global("ifmc2", 0x0e0c0a0806040200, 0x1e1c1a1816141210,
			0x2e2c2a2826242220, 0x3e3c3a3836343230),
		c3: a.global("ifmc3", 0x0504030201003f3e, 0x0d0c0b0a09080706,
			0x1514131211100f0e, 0x1d1c1b1a19181716),
		p2: a.global("ifmp2", 0x1c1814100c080400, 0x3c3834302c282420,
			0x1c1814100c080400, 0x3c3834302c282420, 0x1e1a16120e0a0602,
			0x3e3a36322e2a2622, 0x1e1a16120e0a0602, 0x3e3a36322e2a2622),
		p3: a.global("ifmp3", 0x0c0a08060402003e, 0x1c1a18161412100e,
			0x0c0a08060402003e, 0x1c1a18161412100e, 0x0d0b09070503013f,
			0x1d1b19171513110f, 0x0d0b09070503013f, 0x1d1b19171513110f),
		idx: a.global("ifmidx", 0x0101010100000000, 0, 0x0e0c0a0806040200,
			0x0e0c0a0806040200, 0x0f0d0b0907050301, 0x0f0d0b0907050301),
		hk: a.global("ifmhk", 0x000000000b030800, 0x000000000c040800,
			0x000000000d050800, 0x0b0a030209080100),
	}
	g.prep(a)
	for _, k := range g.kinds() {
		g.kernel(a, k)
	}
}

// ifmGlobals are the kernels' read-only tables: de-interleave byte
// indices (of 32 and 64 values), nibble word shifts (per 32 and 64
// values), multishift controls, and the bytes of dword indices idx
// (0,0,0,0,1,1,1,1 at 0; 0,2,..,14 at 16; 1,3,..,15 at 32) and hk (the
// header gathers of IFMSUM2 and their merge at 24).
type ifmGlobals struct {
	deint, shr, deint64, shr64, q6h, q5h, c2, c3, p2, p3, idx, hk operand.Mem
}

// ifmKind is one gemv kernel: its name and label prefix, its doc, its
// constants, its block size in bytes, and how it multiplies a row's block
// (or pair of blocks) and, for the 32-value formats, a last odd block.
type ifmKind struct {
	name, p string
	doc     []string
	consts  func(a *asm)
	size    int
	pair    bool                                // 32-value blocks, taken two at a time
	hx      []reg.VecPhysical                   // pair's header registers (X or Y) 12, 13, 3, 14
	row     func(a *asm, p reg.Register, r int) // block (pair) of row p into Z<r>
	tail    func(a *asm, p reg.Register, r int) // last odd block of row p into Y<r>
	deintY  bool                                // the odd block's quants are de-interleaved
}

// kinds are the five gemv kernels, in the order of the file.
func (g *ifmGlobals) kinds() []ifmKind {
	common := func(a *asm, mask uint32) {
		a.MOVL(operand.U32(0x01010101), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z15)
		a.VPMOVZXBD(g.idx.Offset(16), reg.Z21)
		a.VPMOVZXBD(g.idx.Offset(32), reg.Z24)
		a.MOVL(operand.U32(mask), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z31)
	}
	bcast := func(a *asm, v uint32, z reg.VecPhysical) {
		a.MOVL(operand.U32(v), reg.EAX)
		a.VPBROADCASTD(reg.EAX, z)
	}
	as := func(f string) []string { return []string{"As gemv4Q4SVNNI for " + f + "."} }
	yh := []reg.VecPhysical{reg.Y12, reg.Y13, reg.Y3, reg.Y14}
	return []ifmKind{
		{
			name: "gemv4Q6_B64VNNI", p: "q6", size: 52,
			doc: as("Q6_B64T1 weights (52-byte 64-value blocks)"),
			consts: func(a *asm) {
				common(a, 0x0f0f0f0f)
				bcast(a, 0x30303030, reg.Z17)
				a.VMOVDQU64(g.shr64, reg.Z30)
				a.VMOVDQU64(g.q6h, reg.Z28)
			},
			row: ifmQ6Row,
		},
		{
			name: "gemv4Q5_B64VNNI", p: "q5", size: 44,
			doc: as("Q5_B64T1 weights (44-byte 64-value blocks)"),
			consts: func(a *asm) {
				common(a, 0x0f0f0f0f)
				bcast(a, 0x10101010, reg.Z17)
				a.VMOVDQU64(g.shr64, reg.Z30)
				a.VMOVDQU64(g.q5h, reg.Z28)
			},
			row: ifmQ5Row,
		},
		{
			name: "gemv4Q4SVNNI", p: "q4s", size: 40, pair: true, hx: yh, deintY: true,
			doc: []string{
				"For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q4_B32T1",
				"blocks, ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is not",
				"0; x is a row of Q8_0 blocks, given as its pairs of blocks prepared by",
				"ifmPrep (xp) and, for an odd nb, its last block (xt). Blocks go two at",
				"a time, as one 64-value block would, and a last odd one alone.",
			},
			consts: func(a *asm) {
				common(a, 0x0f0f0f0f)
				a.VMOVDQU64(g.shr64, reg.Z30)
				a.VMOVDQU64(g.shr, reg.Y23)
				a.VMOVDQU64(g.deint, reg.Y22)
				a.VPMOVZXBD(g.hk.Offset(16), reg.Y18)
				a.VPMOVZXBD(g.hk.Offset(24), reg.Y19)
			},
			row: ifmQ4SPair, tail: ifmQ4SRow,
		},
		{
			name: "gemv4Q3SVNNI", p: "q3s", size: 32, pair: true, hx: yh,
			doc: as("Q3_B32T1 weights (16-byte blocks)"),
			consts: func(a *asm) {
				common(a, 0x07070707)
				bcast(a, 0x03030303, reg.Z17)
				a.MOVL(operand.U32(0xcc), reg.EAX)
				a.KMOVB(reg.EAX, reg.K1)
				a.MOVL(operand.U32(0xf0f0), reg.EAX)
				a.KMOVW(reg.EAX, reg.K2)
				a.VMOVDQU64(g.p2, reg.Z26)
				a.VMOVDQU64(g.p3, reg.Z27)
				a.VMOVDQU64(g.c2, reg.Y22)
				a.VMOVDQU64(g.c3, reg.Y23)
				a.VPMOVZXBD(g.hk.Offset(8), reg.Y18)
				a.VPMOVZXBD(g.hk.Offset(24), reg.Y19)
			},
			row: ifmQ3Pair, tail: ifmQ3Row,
		},
		{
			name: "gemv4Q2SVNNI", p: "q2s", size: 24, pair: true,
			hx:  []reg.VecPhysical{reg.X12, reg.X13, reg.X3, reg.X14},
			doc: as("Q2_B32T1 weights (12-byte blocks)"),
			consts: func(a *asm) {
				common(a, 0x03030303)
				a.MOVL(operand.U32(0xcc), reg.EAX)
				a.KMOVB(reg.EAX, reg.K1)
				a.VMOVDQU64(g.p2, reg.Z26)
				a.VMOVDQU64(g.c2, reg.Y22)
				a.VPMOVZXBD(g.hk.Offset(0), reg.Y18)
				a.VPMOVZXBD(g.hk.Offset(24), reg.Y19)
			},
			row: ifmQ2Pair, tail: ifmQ2Row,
		},
	}
}

// ifmRows are the four streams' current rows.
var ifmRows = [4]reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}

// prep emits ifmPrep.
func (g *ifmGlobals) prep(a *asm) {
	a.text("ifmPrep", attr.NOSPLIT, "func(x unsafe.Pointer, n int, xp unsafe.Pointer)",
		"Prepares n pairs of Q8_0 activation blocks at x for the gemv kernels,",
		"128 bytes a pair at xp: the 64 quants de-interleaved (ifmAct64's Z16),",
		"then dy (Y18) and fl(Y·dy) (Y20), A's in four lanes and B's in four.")
	a.MOVL(operand.U32(0x01010101), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z15)
	a.VPMOVZXBD(g.idx, reg.Z19)
	a.VMOVDQU64(g.deint64, reg.Z29)
	a.load("x", reg.R12)
	a.load("n", reg.RCX)
	a.load("xp", reg.RDI)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("prepdone"))

	a.Label("prepblk")
	ifmAct64(a)
	a.VMOVDQU64(reg.Z16, mem(reg.RDI, 0))
	a.VMOVUPS(reg.Y18, mem(reg.RDI, 64))
	a.VMOVUPS(reg.Y20, mem(reg.RDI, 96))
	a.ADDQ(operand.U8(68), reg.R12)
	a.ADDQ(operand.U32(128), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("prepblk"))

	a.Label("prepdone")
	a.VZEROUPPER()
	a.RET()
}

// kernel emits the gemv kernel k.
//
// Registers: R8..R11 the 4 streams' current rows (BX ldw), AX the offset
// in them, DI the prepared activations, R12 the current ones, R13 the
// blocks (pairs) left, CX nb, DX y, SI 4q, R14 the rows left per stream;
// Z16 the activations' quants, Z8..Z11 the rows' sums, X0 the four rows'
// chains.
func (g *ifmGlobals) kernel(a *asm, k ifmKind) {
	a.text(k.name, attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, xt, xp unsafe.Pointer, nb int, y *float32, q int, acc int)",
		k.doc...)
	p := k.p
	k.consts(a)
	a.gemv4Args("xp")
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label(p + "done"))

	a.Label(p + "row")
	a.VPXORD(reg.X0, reg.X0, reg.X0)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)
	if k.pair {
		a.SHRQ(operand.U8(1), reg.R13)
		a.JZ(label(p + "tail"))
	} else {
		a.TESTQ(reg.R13, reg.R13)
		a.JZ(label(p + "fin"))
	}

	a.Label(p + "blk")
	a.VMOVDQU64(mem(reg.R12, 0), reg.Z16)
	for r, row := range ifmRows {
		k.row(a, row, 8+r)
	}
	for r := 8; r < 12; r++ {
		// Fold the 16 dword sums of a row to 8: dwords 0-3 block A,
		// 4-7 block B.
		a.VEXTRACTI64X4(operand.U8(1), zr[r], reg.Y4)
		a.VPADDD(reg.Y4, yr[r], yr[r])
	}
	ifmHadd(a)
	a.VCVTDQ2PS(reg.Y8, reg.Y8)
	if k.pair {
		// Each row's headers of blocks A and B come from one load (at
		// dwords 0 and k), gathered by VPERMT2D: Y18 holds the indices
		// 0, 8, k, 8+k and Y19 0, 1, 8, 9, 2, 3, 10, 11.
		for i, row := range ifmRows {
			a.VMOVDQU(at(row, 0), k.hx[i])
		}
		a.VPERMT2D(reg.Y13, reg.Y18, reg.Y12)
		a.VPERMT2D(reg.Y14, reg.Y18, reg.Y3)
		a.VPERMT2D(reg.Y3, reg.Y19, reg.Y12)
		a.VCVTPH2PS(reg.Y12, reg.Z12)
		a.VPERMPS(reg.Z12, reg.Z21, reg.Z14)
		a.VPERMPS(reg.Z12, reg.Z24, reg.Z3)
	} else {
		ifmLdh(a, reg.X12)
		a.VMOVDQA(reg.X12, reg.X13)
		a.VINSERTI128(operand.U8(1), reg.X13, reg.Y12, reg.Y12)
		a.VCVTPH2PS(reg.Y12, reg.Z12)
		a.VPERMPS(reg.Z12, reg.Z21, reg.Z14)
		a.VPERMPS(reg.Z12, reg.Z24, reg.Z3)
	}
	ifmAdd2(a)
	a.ADDQ(operand.U8(k.size), reg.RAX)
	a.ADDQ(operand.U32(128), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label(p + "blk"))

	if k.pair {
		a.Label(p + "tail")
		a.TESTQ(operand.U32(1), reg.RCX)
		a.JZ(label(p + "fin"))
		a.load("xt", reg.R12)
		ifmAct32(a)
		if k.deintY {
			a.VPERMB(reg.Y16, reg.Y22, reg.Y16)
		}
		for r, row := range ifmRows {
			k.tail(a, row, 8+r)
		}
		ifmSum32(a)
	}

	a.Label(p + "fin")
	dx2 := operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 2}
	dx1 := operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 1}
	r13 := operand.Mem{Base: reg.R13, Index: reg.RSI, Scale: 1}
	a.LEAQ(dx2, reg.R13)
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label(p + "store"))
	a.VMOVSS(mem(reg.RDX, 0), reg.X4)
	a.VINSERTPS(operand.U8(0x10), dx1, reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x20), mem(reg.R13, 0), reg.X4, reg.X4)
	a.VINSERTPS(operand.U8(0x30), r13, reg.X4, reg.X4)
	a.VADDPS(reg.X4, reg.X0, reg.X0)

	a.Label(p + "store")
	a.VMOVSS(reg.X0, mem(reg.RDX, 0))
	a.VEXTRACTPS(operand.U8(1), reg.X0, dx1)
	a.VEXTRACTPS(operand.U8(2), reg.X0, mem(reg.R13, 0))
	a.VEXTRACTPS(operand.U8(3), reg.X0, r13)
	a.ADDQ(operand.U8(4), reg.RDX)
	for _, row := range ifmRows {
		a.ADDQ(reg.RBX, row)
	}
	a.DECQ(reg.R14)
	a.JNZ(label(p + "row"))

	a.Label(p + "done")
	a.VZEROUPPER()
	a.RET()
}

// ifmAct64 loads the two Q8_0 activation blocks at R12 (68 bytes): Z16
// gets their 64 quants de-interleaved (even values, then odd), Y18 dy of
// A in its low four lanes and of B in its high four, Y20 fl(Y·dy) the
// same way. Z15 must hold 0x01 bytes, Z29 the de-interleave table, Y19
// the dword indices 0,0,0,0,1,1,1,1.
func ifmAct64(a *asm) {
	a.VMOVDQU64(mem(reg.R12, 2), reg.Y16)
	a.VINSERTI64X4(operand.U8(1), mem(reg.R12, 36), reg.Z16, reg.Z16)
	a.VPXORD(reg.Z5, reg.Z5, reg.Z5)
	a.VPDPBUSD(reg.Z16, reg.Z15, reg.Z5)
	a.VEXTRACTI64X4(operand.U8(1), reg.Z5, reg.Y6)
	a.VPHADDD(reg.Y6, reg.Y5, reg.Y5)
	a.VPHADDD(reg.Y5, reg.Y5, reg.Y5)
	a.VEXTRACTI128(operand.U8(1), reg.Y5, reg.X6)
	a.VPADDD(reg.X6, reg.X5, reg.X5)
	a.VCVTDQ2PS(reg.X5, reg.X5)
	a.VPBROADCASTW(mem(reg.R12, 0), reg.X7)
	a.VPINSRW(operand.U8(1), mem(reg.R12, 34), reg.X7, reg.X7)
	a.VCVTPH2PS(reg.X7, reg.X7)
	a.VMULPS(reg.X7, reg.X5, reg.X5)
	a.VPERMPS(reg.Y7, reg.Y19, reg.Y18)
	a.VPERMPS(reg.Y5, reg.Y19, reg.Y20)
	a.VPERMB(reg.Z16, reg.Z29, reg.Z16)
}

// ifmAct32 loads the Q8_0 activation block at R12 (34 bytes): Y16 gets
// its 32 quants, X20 dy broadcast, X25 fl(Y·dy) broadcast. Z15 must hold
// 0x01 bytes.
func ifmAct32(a *asm) {
	a.VMOVDQU64(mem(reg.R12, 2), reg.Y16)
	a.VPXORD(reg.Y5, reg.Y5, reg.Y5)
	a.VPDPBUSD(reg.Y16, reg.Y15, reg.Y5)
	a.VEXTRACTI128(operand.U8(1), reg.Y5, reg.X6)
	a.VPADDD(reg.X6, reg.X5, reg.X5)
	a.VPHADDD(reg.X5, reg.X5, reg.X5)
	a.VPHADDD(reg.X5, reg.X5, reg.X5)
	a.VCVTDQ2PS(reg.X5, reg.X5)
	a.VPBROADCASTW(mem(reg.R12, 0), reg.X20)
	a.VCVTPH2PS(reg.X20, reg.X20)
	a.VMULPS(reg.X20, reg.X5, reg.X25)
}

// ifmHadd sums the four rows' dword sums in Y8..Y11 pairwise into Y8.
func ifmHadd(a *asm) {
	a.VPHADDD(reg.Y9, reg.Y8, reg.Y8)
	a.VPHADDD(reg.Y11, reg.Y10, reg.Y10)
	a.VPHADDD(reg.Y10, reg.Y8, reg.Y8)
}

// ifmLdh loads the headers (base, scale f16) of the four rows' blocks at
// offset AX of R8..R11 into x.
func ifmLdh(a *asm, x reg.VecPhysical) {
	a.VMOVD(at(reg.R8, 0), x)
	for i, row := range ifmRows[1:] {
		a.VPINSRD(operand.U8(i+1), at(row, 0), x, x)
	}
}

// ifmAdd2 adds the four rows' A and B blocks to X0, A first: their sums
// (as float32) in Y8, A's in the low four lanes and B's in the high four,
// bases in Y14 and scales in Y3 the same way, the activations' dy and
// fl(Y·dy) at 64(R12) and 96(R12) (see ifmPrep).
func ifmAdd2(a *asm) {
	a.VMULPS(mem(reg.R12, 64), reg.Y3, reg.Y9)
	a.VMULPS(reg.Y8, reg.Y9, reg.Y9)
	a.VMULPS(mem(reg.R12, 96), reg.Y14, reg.Y10)
	a.VADDPS(reg.Y10, reg.Y9, reg.Y9)
	a.VADDPS(reg.X9, reg.X0, reg.X0)
	a.VEXTRACTF128(operand.U8(1), reg.Y9, reg.X9)
	a.VADDPS(reg.X9, reg.X0, reg.X0)
}

// ifmSum32 adds the four rows' 32-value blocks to X0: their 8 dword sums
// in Y8..Y11, the activation's dy in X20 and fl(Y·dy) in X25.
func ifmSum32(a *asm) {
	ifmHadd(a)
	a.VEXTRACTI128(operand.U8(1), reg.Y8, reg.X9)
	a.VPADDD(reg.X9, reg.X8, reg.X8)
	a.VCVTDQ2PS(reg.X8, reg.X8)
	ifmLdh(a, reg.X12)
	a.VCVTPH2PS(reg.X12, reg.Y12)
	a.VEXTRACTF128(operand.U8(1), reg.Y12, reg.X13)
	a.VSHUFPS(operand.U8(0x88), reg.X13, reg.X12, reg.X14)
	a.VSHUFPS(operand.U8(0xdd), reg.X13, reg.X12, reg.X3)
	a.VMULPS(reg.X20, reg.X3, reg.X9)
	a.VMULPS(reg.X8, reg.X9, reg.X9)
	a.VMULPS(reg.X25, reg.X14, reg.X10)
	a.VADDPS(reg.X10, reg.X9, reg.X9)
	a.VADDPS(reg.X9, reg.X0, reg.X0)
}

// ifmDot zeroes v and adds the dword sums of the products of the unsigned
// bytes of the activations act with the weight bytes w.
func ifmDot(a *asm, w, v, act reg.VecPhysical) {
	a.VPXORD(v, v, v)
	a.VPDPBUSD(act, w, v)
}

// ifmNibbles leaves in v the nibbles of the bytes there that the word
// shifts s pick, cut by mask (0x0f bytes).
func ifmNibbles(a *asm, s, mask, v reg.VecPhysical) {
	a.VPSRLVW(s, v, v)
	a.VPANDD(mask, v, v)
}

// ifmQ6Row puts the 16 dword sums of the Q6_B64T1 block at offset AX of
// the row at p times the activations into Z<r>: the low nibbles as
// Q4_B64T1's (Z30 the word shifts, Z31 0x0f bytes), bits 4-5 by a
// multishift of qh (Z28 the controls) selected by Z17 (0x30 bytes).
func ifmQ6Row(a *asm, p reg.Register, r int) {
	a.VBROADCASTI64X4(at(p, 20), reg.Z7)
	ifmNibbles(a, reg.Z30, reg.Z31, reg.Z7)
	a.VBROADCASTI32X4(at(p, 4), reg.Z1)
	a.VPERMQ(operand.U8(0x50), reg.Z1, reg.Z1)
	a.VPMULTISHIFTQB(reg.Z1, reg.Z28, reg.Z1)
	a.VPTERNLOGD(operand.U8(0xe2), reg.Z7, reg.Z17, reg.Z1)
	ifmDot(a, reg.Z1, zr[r], reg.Z16)
}

// ifmQ5Row is ifmQ6Row for Q5_B64T1: bit 4 from the qh qword (Z28 the
// controls, Z17 0x10 bytes).
func ifmQ5Row(a *asm, p reg.Register, r int) {
	a.VBROADCASTI64X4(at(p, 12), reg.Z7)
	ifmNibbles(a, reg.Z30, reg.Z31, reg.Z7)
	a.VPBROADCASTQ(at(p, 4), reg.Z1)
	a.VPMULTISHIFTQB(reg.Z1, reg.Z28, reg.Z1)
	a.VPTERNLOGD(operand.U8(0xe2), reg.Z7, reg.Z17, reg.Z1)
	ifmDot(a, reg.Z1, zr[r], reg.Z16)
}

// ifmQ4SRow puts the 8 dword sums of the Q4_B32T1 block at offset AX of
// the row at p times the de-interleaved activations into Y<r> (Y23 the
// word shifts, Y31 0x0f bytes).
func ifmQ4SRow(a *asm, p reg.Register, r int) {
	a.VBROADCASTI32X4(at(p, 4), reg.Y7)
	ifmNibbles(a, reg.Y23, reg.Y31, reg.Y7)
	ifmDot(a, reg.Y7, yr[r], reg.Y16)
}

// ifmQ3Row puts the 8 dword sums of the Q3_B32T1 block at offset AX of
// the row at p times the activations into Y<r>: bits 0-1 by a multishift
// of qs (Y22 the controls), bit 2 by one of qh (Y23), joined by the 0x03
// bytes of Y17 and cut by the 0x07 bytes of Y31.
func ifmQ3Row(a *asm, p reg.Register, r int) {
	a.VPBROADCASTQ(at(p, 8), reg.Y1)
	a.VPMULTISHIFTQB(reg.Y1, reg.Y22, reg.Y1)
	a.VPBROADCASTD(at(p, 4), reg.Y2)
	a.VPMULTISHIFTQB(reg.Y2, reg.Y23, reg.Y2)
	a.VPTERNLOGD(operand.U8(0xe2), reg.Y2, reg.Y17, reg.Y1)
	a.VPANDD(reg.Y31, reg.Y1, reg.Y1)
	ifmDot(a, reg.Y1, yr[r], reg.Y16)
}

// ifmQ2Row puts the 8 dword sums of the Q2_B32T1 block at offset AX of
// the row at p times the activations into Y<r> (Y22 the controls, Y31
// 0x03 bytes).
func ifmQ2Row(a *asm, p reg.Register, r int) {
	a.VPBROADCASTQ(at(p, 4), reg.Y1)
	a.VPMULTISHIFTQB(reg.Y1, reg.Y22, reg.Y1)
	a.VPANDD(reg.Y31, reg.Y1, reg.Y1)
	ifmDot(a, reg.Y1, yr[r], reg.Y16)
}

// ifmQ4SPair puts the 16 dword sums of the two Q4_B32T1 blocks at offset
// AX of the row at p times the de-interleaved activations of two blocks
// into Z<r>, block A's in dwords 0-3 and 8-11, B's in 4-7 and 12-15 (Z30
// the word shifts, Z31 0x0f bytes).
func ifmQ4SPair(a *asm, p reg.Register, r int) {
	a.VBROADCASTI32X4(at(p, 4), reg.Z7)
	a.VINSERTI32X4(operand.U8(1), at(p, 24), reg.Z7, reg.Z7)
	a.VINSERTI32X4(operand.U8(3), at(p, 24), reg.Z7, reg.Z7)
	ifmNibbles(a, reg.Z30, reg.Z31, reg.Z7)
	ifmDot(a, reg.Z7, zr[r], reg.Z16)
}

// ifmQ3Pair is ifmQ4SPair for two Q3_B32T1 blocks: K1 (qwords 2, 3, 6, 7)
// and K2 (their dwords) merge block B's qs and qh into the qwords that
// meet its activations, Z26 and Z27 the multishift controls.
func ifmQ3Pair(a *asm, p reg.Register, r int) {
	a.VPBROADCASTQ(at(p, 8), reg.Z1)
	a.VPBROADCASTQ(at(p, 24), reg.K1, reg.Z1)
	a.VPMULTISHIFTQB(reg.Z1, reg.Z26, reg.Z1)
	a.VPBROADCASTD(at(p, 4), reg.Z2)
	a.VPBROADCASTD(at(p, 20), reg.K2, reg.Z2)
	a.VPMULTISHIFTQB(reg.Z2, reg.Z27, reg.Z2)
	a.VPTERNLOGD(operand.U8(0xe2), reg.Z2, reg.Z17, reg.Z1)
	a.VPANDD(reg.Z31, reg.Z1, reg.Z1)
	ifmDot(a, reg.Z1, zr[r], reg.Z16)
}

// ifmQ2Pair is ifmQ3Pair for two Q2_B32T1 blocks.
func ifmQ2Pair(a *asm, p reg.Register, r int) {
	a.VPBROADCASTQ(at(p, 4), reg.Z1)
	a.VPBROADCASTQ(at(p, 16), reg.K1, reg.Z1)
	a.VPMULTISHIFTQB(reg.Z1, reg.Z26, reg.Z1)
	a.VPANDD(reg.Z31, reg.Z1, reg.Z1)
	ifmDot(a, reg.Z1, zr[r], reg.Z16)
}
