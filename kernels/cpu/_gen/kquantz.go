package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// kquantz generates kquantz_amd64.s: K-quant weights times Q8_K
// activations (ggml layout: d float32, 256 int8 quants, 16 int16 sums of
// 16), one token against 4 streams of rows, AVX-512 with VNNI, VBMI and
// GFNI.
//
// They sum in the order of ggml's x86 kernels (kernels/quant's K-quant dot
// products): per block, exact integer sums in 16 dword lanes, lane m
// holding values 4m..4m+3 of each 64-value chunk, folded to 8 lanes (m and
// m+8: lane l holds the values v with (v mod 32)/4 = l); each row's float
// accumulator gains d·lane in one fused multiply-add per lane; Q4_K's four
// min lanes (dmin·m·Σx by pairs of sub-blocks) ride in lanes 8..11 of the
// same accumulator; at the end ksum8 (and ksumm) reduce as ggml's
// hsum_float_8 does. Q2_K and Q3_K instead run two rows per vector, each
// 256-bit half holding one row's 8 lanes, so nothing is folded.
//
// Registers: R8..R11 the current row of the 4 streams (q·ldw bytes
// apart), BX ldw, AX the offset in the rows, DI the activations (for Q3_K
// and Q2_K the regrouped copy at xr), R12 the current activation block,
// R13 the blocks left, CX nb, DX the output of stream 0, SI 4q (the
// distance between the streams' outputs), R14 the rows left; Z0..Z3 the
// accumulators.
func kquantz(a *asm) {
	g := &kzGen{
		a:       a,
		q6shl:   a.global("q6shl", kqWords(4, 4, 2, 2)...),
		q6shr:   a.global("q6shr", kqWords(0, 0, 2, 2)...),
		q6idx0:  a.global("q6idx0", kqWords(0, 1, 2, 3)...),
		q6idx1:  a.global("q6idx1", kqWords(4, 5, 6, 7)...),
		q6idx2:  a.global("q6idx2", kqWords(8, 9, 10, 11)...),
		q6idx3:  a.global("q6idx3", kqWords(12, 13, 14, 15)...),
		q6k32:   a.global32("q6k32", 0x20202020),
		q4kshr:  a.global("q4kshr", kqWords(0, 0, 4, 4)...),
		q4kidx0: a.global("q4kidx0", kqWords(0, 0, 1, 1)...),
		q4kidx1: a.global("q4kidx1", kqWords(2, 2, 3, 3)...),
		q4kidx2: a.global("q4kidx2", kqWords(4, 4, 5, 5)...),
		q4kidx3: a.global("q4kidx3", kqWords(6, 6, 7, 7)...),
		q4kidxm: a.global("q4kidxm",
			0x0009000900080008, 0x000b000b000a000a, 0x000d000d000c000c, 0x000f000f000e000e,
			0, 0, 0, 0),
		q4ksh: a.global("q4ksh",
			0, 0x0000000400000000),
		q4km1: a.global("q4km1",
			0x0f0f0f0f3f3f3f3f, 0x0f0f0f0f3f3f3f3f),
		q4km2: a.global("q4km2",
			0x0303030300000000, 0x0303030300000000),
		q4kidxa0: a.global("q4kidxa0", kqWords(0, 0, 2, 2)...),
		q4kidxb0: a.global("q4kidxb0", kqWords(1, 1, 3, 3)...),
		q4kidxa1: a.global("q4kidxa1", kqWords(4, 4, 6, 6)...),
		q4kidxb1: a.global("q4kidxb1", kqWords(5, 5, 7, 7)...),
		q4kdm: a.global("q4kdm",
			0, 0, 0x0001000100010001, 0x0001000100010001),
		q4ksgn: a.global("q4ksgn",
			0, 0, 0, 0,
			0x8000000080000000, 0x8000000080000000, 0, 0),
		q5krot0:   a.global("q5krot0", kzDwords(4, 3)...),
		q5krot1:   a.global("q5krot1", kzDwords(2, 1)...),
		q5krot2:   a.global("q5krot2", kzDwords(0, 31)...),
		q5krot3:   a.global("q5krot3", kzDwords(30, 29)...),
		q3kpidx00: a.global("q3kpidx00", kqWords(0, 1, 16, 17)...),
		q3kpidx01: a.global("q3kpidx01", kqWords(2, 3, 18, 19)...),
		q3kpidx02: a.global("q3kpidx02", kqWords(4, 5, 20, 21)...),
		q3kpidx03: a.global("q3kpidx03", kqWords(6, 7, 22, 23)...),
		q3kpidx10: a.global("q3kpidx10", kqWords(8, 9, 24, 25)...),
		q3kpidx11: a.global("q3kpidx11", kqWords(10, 11, 26, 27)...),
		q3kpidx12: a.global("q3kpidx12", kqWords(12, 13, 28, 29)...),
		q3kpidx13: a.global("q3kpidx13", kqWords(14, 15, 30, 31)...),
		q3kmat: a.global("q3kmat",
			0x0102100000000000, 0x0408200000000000, 0x1020010000000000, 0x4080020000000000),
		q3kctl: a.global("q3kctl",
			0x3830282018100800, 0x3c342c241c140c04, 0x3830282018100800, 0x3c342c241c140c04),
		q3kcth: a.global("q3kcth",
			0x2a221a1228201810, 0x2e261e162c241c14, 0x2a221a1228201810, 0x2e261e162c241c14),
		q3kmh: a.global("q3kmh",
			0x0000000001020202, 0x0000000001020202, 0x0000000001020202, 0x0000000001020202),
		q2kmat: a.global("q2kmat",
			0x0102000000000000, 0x0408000000000000, 0x1020000000000000, 0x4080000000000000),
		q2kperm0: a.global("q2kperm0",
			0x0202020200000000, 0x0606060604040404, 0x0303030301010101, 0x0707070705050505,
			0x1212121210101010, 0x1616161614141414, 0x1313131311111111, 0x1717171715151515),
		q2kperm1: a.global("q2kperm1",
			0x0a0a0a0a08080808, 0x0e0e0e0e0c0c0c0c, 0x0b0b0b0b09090909, 0x0f0f0f0f0d0d0d0d,
			0x1a1a1a1a18181818, 0x1e1e1e1e1c1c1c1c, 0x1b1b1b1b19191919, 0x1f1f1f1f1d1d1d1d),
		q2kdidx: a.global("q2kdidx", kzDwords(0, 2)...),
		q2kmidx: a.global("q2kmidx", kzDwords(1, 3)...),
		q2ksgn: a.global("q2ksgn",
			0x8000000000000000, 0x8000000000000000),
	}
	for _, k := range []kzKind{
		{"Q6_K", "", 210, 292, 4, g.constsQ6, nil, g.blkQ6, g.finQ6},
		{"Q4_K", "", 144, 292, 4, g.constsQ4, nil, g.blkQ4, g.finQ4},
		{"Q5_K", "q5", 176, 292, 4, g.constsQ5, nil, g.blkQ5, g.finQ5},
		{"Q3_K", "q3", 110, 1088, 2, g.constsQ3, g.buildQ3, g.blkQ3, g.finQ2},
		{"Q2_K", "q2", 84, 640, 2, g.constsQ2, g.buildQ2, g.blkQ2, g.finQ2},
	} {
		g.kernel(k)
	}
}

// kzDwords returns 64 bytes of uint32 dwords as uint64s: 8 dwords d0,
// then 8 d1.
func kzDwords(d0, d1 uint64) []uint64 {
	var v []uint64
	for _, d := range []uint64{d0, d1} {
		x := d | d<<32
		v = append(v, x, x, x, x)
	}
	return v
}

// kzPFD is how far ahead of the current block the rows are prefetched.
const kzPFD = 2048

// kzGen holds the kernels' read-only tables. Q6_K: the word shifts that
// move the 2 high bits of a value (in qh) to bits 4-5 of its byte (left by
// 4 and 2 for the first 64 values of a half, right by 0 and 2 for the last
// 64), the scale gathers per 64 values and 0x20 bytes. Q4_K: the shifts
// that put the high nibbles of a 32-byte group in the upper half, the
// scale gathers per 64 values, the min gather, the constants that unpack
// the 6-bit scales and mins, and (the Q4_K kernel taking 64 bytes of
// quants, sub-blocks 2c and 2c+2 in the low nibbles, 2c+1 and 2c+3 in the
// high, against activations regrouped once per block) the scale gathers
// of those four groups, the picks of d (8 lanes) and dmin (4 lanes) and
// the sign of dx in the min lanes. Q5_K: the dword rotations that bring
// bit 2j (values of the low half) or 2j+1 (high half) of each qh byte to
// bit 4, for the 64-value chunk j. Q3_K: the scale gathers of its eight
// planes, the pick matrices, and the VPMULTISHIFTQB controls and the
// GF2P8AFFINEQB matrix of its scale unpack. Q2_K: the plane-pick
// matrices, the scale-byte gathers of its two tables, the d and dmin
// spreads and the sign that puts −dx beside dx.
type kzGen struct {
	a                                                   *asm
	q6shl, q6shr, q6idx0, q6idx1, q6idx2, q6idx3, q6k32 operand.Mem

	q4kshr, q4kidx0, q4kidx1, q4kidx2, q4kidx3, q4kidxm, q4ksh, q4km1, q4km2 operand.Mem
	q4kidxa0, q4kidxb0, q4kidxa1, q4kidxb1, q4kdm, q4ksgn                    operand.Mem

	q5krot0, q5krot1, q5krot2, q5krot3 operand.Mem

	q3kpidx00, q3kpidx01, q3kpidx02, q3kpidx03 operand.Mem
	q3kpidx10, q3kpidx11, q3kpidx12, q3kpidx13 operand.Mem
	q3kmat, q3kctl, q3kcth, q3kmh              operand.Mem

	q2kmat, q2kperm0, q2kperm1, q2kdidx, q2kmidx, q2ksgn operand.Mem
}

// A kzKind is one K-quant type's kernel.
type kzKind struct {
	name   string
	prefix string // of the labels
	size   int    // bytes per weight block
	xsize  int    // bytes per activation block (as regrouped)
	accs   int    // accumulators: 4 (a row each) or 2 (a pair each)
	consts func() // loads the kernel's constants
	build  func() // regroups the activations at xr, or nil
	blk    func() // adds the block at AX of the 4 rows
	fin    func() // reduces the accumulators to the low lanes of X4..X7
}

// kernel emits gemv4<kind>VNNI.
func (g *kzGen) kernel(k kzKind) {
	a := g.a
	sig := "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)"
	doc := []string{"As gemv4Q6_KVNNI for " + k.name + " weights."}
	if k.build != nil {
		sig = "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int, xr unsafe.Pointer)"
	}
	if k.name == "Q6_K" {
		doc = []string{
			"For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q6_K blocks,",
			"ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is not 0; x is",
			"a row of Q8_K blocks.",
		}
	}
	a.text("gemv4"+k.name+"VNNI", attr.NOSPLIT, sig, doc...)
	l := func(s string) string { return k.prefix + s }
	k.consts()
	if k.build != nil {
		// Regroup the activations at xr once per call.
		a.load("x", reg.R12)
		a.load("xr", reg.RDI)
		a.MOVQ(reg.RDI, reg.RSI)
		a.load("nb", reg.RCX)
		a.MOVQ(reg.RCX, reg.R13)
		a.TESTQ(reg.R13, reg.R13)
		a.JZ(label(l("built")))
		a.Label(l("build"))
		k.build()
		a.ADDQ(operand.U32(292), reg.R12)
		a.ADDQ(operand.U32(uint32(k.xsize)), reg.RSI)
		a.DECQ(reg.R13)
		a.JNZ(label(l("build")))
		a.Label(l("built"))
		a.load("w", reg.R8)
		a.load("ldw", reg.RBX)
	} else {
		a.load("w", reg.R8)
		a.load("ldw", reg.RBX)
		a.load("x", reg.RDI)
		a.load("nb", reg.RCX)
	}
	a.load("y", reg.RDX)
	a.load("q", reg.R14)
	a.rows4()
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label(l("done")))

	a.Label(l("row"))
	for i := range k.accs {
		a.VPXORD(zr[i], zr[i], zr[i])
	}
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)
	a.TESTQ(reg.R13, reg.R13)
	a.JZ(label(l("fin")))

	a.Label(l("blk"))
	rows := []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}
	for _, p := range rows {
		a.PREFETCHT0(at(p, kzPFD))
	}
	if k.accs == 4 {
		for _, p := range rows {
			a.PREFETCHT0(at(p, kzPFD+128))
		}
	}
	k.blk()
	a.ADDQ(operand.U8(uint8(k.size)), reg.RAX)
	a.ADDQ(operand.U32(uint32(k.xsize)), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label(l("blk")))

	a.Label(l("fin"))
	k.fin()
	g.gather4(xr[4], xr[5], xr[6], xr[7], xr[0])
	a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 2}, reg.R13)
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label(l("store")))
	a.VMOVSS(mem(reg.RDX, 0), xr[4])
	a.VINSERTPS(operand.U8(0x10), operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 1}, xr[4], xr[4])
	a.VINSERTPS(operand.U8(0x20), mem(reg.R13, 0), xr[4], xr[4])
	a.VINSERTPS(operand.U8(0x30), operand.Mem{Base: reg.R13, Index: reg.RSI, Scale: 1}, xr[4], xr[4])
	a.VADDPS(xr[4], xr[0], xr[0])

	a.Label(l("store"))
	a.VMOVSS(xr[0], mem(reg.RDX, 0))
	a.VEXTRACTPS(operand.U8(1), xr[0], operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 1})
	a.VEXTRACTPS(operand.U8(2), xr[0], mem(reg.R13, 0))
	a.VEXTRACTPS(operand.U8(3), xr[0], operand.Mem{Base: reg.R13, Index: reg.RSI, Scale: 1})
	a.ADDQ(operand.U8(4), reg.RDX)
	for _, p := range rows {
		a.ADDQ(reg.RBX, p)
	}
	a.DECQ(reg.R14)
	a.JNZ(label(l("row")))

	a.Label(l("done"))
	a.VZEROUPPER()
	a.RET()
}

// ksum8 reduces the 8 float32 lanes of y (xmm name x) into the low lane of
// t1 as ggml's hsum_float_8: (l4+l0 + l6+l2) + (l5+l1 + l7+l3).
func (g *kzGen) ksum8(y, x, t1, t2 operand.Op) {
	a := g.a
	a.VEXTRACTF128(operand.U8(1), y, t1)
	a.VADDPS(x, t1, t1)
	a.VMOVHLPS(t1, t1, t2)
	a.VADDPS(t2, t1, t1)
	a.VMOVSHDUP(t1, t2)
	a.VADDSS(t2, t1, t1)
}

// ksumm adds to the low lane of t1 lanes 8..11 of z reduced as ggml
// reduces its Q4_K min lanes: (l8+l10) + (l9+l11).
func (g *kzGen) ksumm(z, t1, t2, t3 operand.Op) {
	a := g.a
	a.VEXTRACTF32X4(operand.U8(2), z, t2)
	a.VMOVHLPS(t2, t2, t3)
	a.VADDPS(t3, t2, t2)
	a.VMOVSHDUP(t2, t3)
	a.VADDSS(t3, t2, t2)
	a.VADDSS(t2, t1, t1)
}

// ksuml8 adds lane 8 of z to the low lane of t1.
func (g *kzGen) ksuml8(z, t1, t2 operand.Op) {
	a := g.a
	a.VEXTRACTF32X4(operand.U8(2), z, t2)
	a.VADDSS(t2, t1, t1)
}

// gather4 puts the low lanes of x4..x7 into the 4 lanes of x0.
func (g *kzGen) gather4(x4, x5, x6, x7, x0 operand.Op) {
	a := g.a
	a.VINSERTPS(operand.U8(0x10), x5, x4, x4)
	a.VINSERTPS(operand.U8(0x20), x6, x4, x4)
	a.VINSERTPS(operand.U8(0x30), x7, x4, x4)
	a.VMOVAPS(x4, x0)
}

// constsQ6 loads Z31 0x0f bytes, Z30 0x30 bytes, Z29 and Z28 the qh shifts, Z27
// the nibble shift (GF2P8AFFINEQB), Z23..Z26 the scale gathers.
func (g *kzGen) constsQ6() {
	a := g.a
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[31])
	a.MOVL(operand.U32(0x30303030), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[30])
	a.VMOVDQU64(g.q6shl, zr[29])
	a.VMOVDQU64(g.q6shr, zr[28])
	a.MOVQ(operand.U64(0x1020408000000000), reg.RAX)
	a.VPBROADCASTQ(reg.RAX, zr[27])
	a.VMOVDQU64(g.q6idx3, zr[26])
	a.VMOVDQU64(g.q6idx2, zr[25])
	a.VMOVDQU64(g.q6idx1, zr[24])
	a.VMOVDQU64(g.q6idx0, zr[23])
}

// blkQ6 loads the activations of the block (quants Z16..Z19, 32·quants
// summed by pairs in Z13, Z14, Z15, Z22, dx in X21) and adds the 4 rows'
// blocks.
func (g *kzGen) blkQ6() {
	a := g.a
	a.VMOVDQU64(mem(reg.R12, 4), zr[16])
	a.VMOVDQU64(mem(reg.R12, 68), zr[17])
	a.VMOVDQU64(mem(reg.R12, 132), zr[18])
	a.VMOVDQU64(mem(reg.R12, 196), zr[19])
	a.VMOVSS(mem(reg.R12, 0), xr[21])
	a.VPBROADCASTD(g.q6k32, zr[12])
	a.VPMADDUBSW(zr[16], zr[12], zr[13])
	a.VPMADDUBSW(zr[17], zr[12], zr[14])
	a.VPMADDUBSW(zr[18], zr[12], zr[15])
	a.VPMADDUBSW(zr[19], zr[12], zr[22])
	g.q6row(reg.R8, yr[0])
	g.q6row(reg.R9, yr[1])
	g.q6row(reg.R10, yr[2])
	g.q6row(reg.R11, yr[3])
}

// finQ6 reduces the 4 accumulators.
func (g *kzGen) finQ6() {
	for i := range 4 {
		g.ksum8(yr[i], xr[i], xr[4+i], xr[8])
	}
}

// q6chunk adds into the dword lanes of Z6 the products of 64 6-bit quants
// (unsigned, in Z9) with the activations x, less 32·x (xs, precomputed),
// times the sub-block scales gathered by idx from Z4.
func (g *kzGen) q6chunk(x, xs, idx operand.Op) {
	a := g.a
	a.VPMADDUBSW(x, zr[9], zr[9])
	a.VPSUBW(xs, zr[9], zr[9])
	a.VPERMW(zr[4], idx, zr[11])
	a.VPDPWSSD(zr[11], zr[9], zr[6])
}

// q6row accumulates into the 8 float32 lanes of f (a ymm register) the
// product of the Q6_K block at offset AX of the row at p with the
// activations: quants in Z16..Z19 (64 each), 32·quants summed by pairs in
// Z13, Z14, Z15, Z22, scale d in X21 (low lane). Constants: Z23..Z26 the
// scale gathers, Z27 the nibble shift, Z28 and Z29 the qh shifts, Z30 0x30
// bytes, Z31 0x0f bytes.
func (g *kzGen) q6row(p reg.Register, f operand.Op) {
	a := g.a
	a.VPMOVSXBW(at(p, 192), yr[4])
	a.VPXORD(zr[6], zr[6], zr[6])
	a.VMOVDQU64(at(p, 0), zr[7])
	a.VBROADCASTI64X4(at(p, 128), zr[8])
	a.VPANDD(zr[31], zr[7], zr[9])
	a.VPSLLVW(zr[29], zr[8], zr[10])
	a.VPTERNLOGD(operand.U8(0xf8), zr[30], zr[10], zr[9])
	g.q6chunk(zr[16], zr[13], zr[23])
	a.VGF2P8AFFINEQB(operand.U8(0), zr[27], zr[7], zr[9])
	a.VPSRLVW(zr[28], zr[8], zr[10])
	a.VPTERNLOGD(operand.U8(0xf8), zr[30], zr[10], zr[9])
	g.q6chunk(zr[17], zr[14], zr[24])
	a.VMOVDQU64(at(p, 64), zr[7])
	a.VBROADCASTI64X4(at(p, 160), zr[8])
	a.VPANDD(zr[31], zr[7], zr[9])
	a.VPSLLVW(zr[29], zr[8], zr[10])
	a.VPTERNLOGD(operand.U8(0xf8), zr[30], zr[10], zr[9])
	g.q6chunk(zr[18], zr[15], zr[25])
	a.VGF2P8AFFINEQB(operand.U8(0), zr[27], zr[7], zr[9])
	a.VPSRLVW(zr[28], zr[8], zr[10])
	a.VPTERNLOGD(operand.U8(0xf8), zr[30], zr[10], zr[9])
	g.q6chunk(zr[19], zr[22], zr[26])
	a.VEXTRACTI64X4(operand.U8(1), zr[6], yr[7])
	a.VPADDD(yr[7], yr[6], yr[6])
	a.VCVTDQ2PS(yr[6], yr[6])
	a.VPBROADCASTW(at(p, 208), xr[12])
	a.VCVTPH2PS(xr[12], xr[12])
	a.VMULSS(xr[21], xr[12], xr[12])
	a.VBROADCASTSS(xr[12], yr[12])
	a.VFMADD231PS(yr[12], yr[6], f)
}

// constsQ4 loads Z31 0x0f bytes, K1 lanes 0..7, Z26..Z29 the scale gathers of
// the regrouped sub-blocks, Y25 the d and dmin picks, X22..X24 the scale
// and min unpack, Z20 the sign of the min lanes.
func (g *kzGen) constsQ4() {
	a := g.a
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[31])
	a.MOVL(operand.U32(0xff), reg.EAX)
	a.KMOVW(reg.EAX, reg.K1)
	a.VMOVDQU64(g.q4kidxb1, zr[29])
	a.VMOVDQU64(g.q4kidxa1, zr[28])
	a.VMOVDQU64(g.q4kidxb0, zr[27])
	a.VMOVDQU64(g.q4kidxa0, zr[26])
	a.VMOVDQU64(g.q4kdm, yr[25])
	a.VMOVDQU32(g.q4ksh, xr[24])
	a.VMOVDQU32(g.q4km1, xr[23])
	a.VMOVDQU32(g.q4km2, xr[22])
	a.VMOVDQU64(g.q4ksgn, zr[20])
}

// blkQ4 regroups the activations of the block into [x sub-block 0 | x
// sub-block 2], [1 | 3], [4 | 6], [5 | 7] (Z16..Z19), puts its sub-block
// sums as words in the high 128 bits of Y13 and [dx ×8, −dx ×4] in Z21,
// and adds the 4 rows' blocks.
func (g *kzGen) blkQ4() {
	a := g.a
	a.VMOVDQU64(mem(reg.R12, 4), zr[12])
	a.VMOVDQU64(mem(reg.R12, 68), zr[14])
	a.VSHUFI64X2(operand.U8(0x44), zr[14], zr[12], zr[16])
	a.VSHUFI64X2(operand.U8(0xee), zr[14], zr[12], zr[17])
	a.VMOVDQU64(mem(reg.R12, 132), zr[12])
	a.VMOVDQU64(mem(reg.R12, 196), zr[14])
	a.VSHUFI64X2(operand.U8(0x44), zr[14], zr[12], zr[18])
	a.VSHUFI64X2(operand.U8(0xee), zr[14], zr[12], zr[19])
	a.VMOVDQU(mem(reg.R12, 260), yr[14])
	a.VEXTRACTI128(operand.U8(1), yr[14], xr[13])
	a.VPHADDW(xr[13], xr[14], xr[13])
	a.VPERMQ(operand.U8(0x4e), yr[13], yr[13])
	a.VBROADCASTSS(mem(reg.R12, 0), zr[21])
	a.VXORPS(zr[20], zr[21], zr[21])
	g.q4row(reg.R8, zr[0])
	g.q4row(reg.R9, zr[1])
	g.q4row(reg.R10, zr[2])
	g.q4row(reg.R11, zr[3])
}

// finQ4 reduces the 4 accumulators and adds their min lanes.
func (g *kzGen) finQ4() {
	for i := range 4 {
		g.ksum8(yr[i], xr[i], xr[4+i], xr[8])
		g.ksumm(zr[i], xr[4+i], xr[9], xr[10])
	}
}

// q4row accumulates into f the product of the Q4_K block at offset AX of
// the row at p with the activations (regrouped quants Z16..Z19; the 8
// sub-block sums of the block as words in the high 128 bits of Y13, the
// low ones zero; [dx ×8, −dx ×4] in Z21): lanes 0..7 gain d·dx·Σ
// sc_j·(q·x)_j by lane, lanes 8..11 −dmin·dx·(m_2k·Σx_2k + m_2k+1·Σx_2k+1),
// one fused multiply-add per lane as ggml does. K1 selects lanes 0..7.
func (g *kzGen) q4row(p reg.Register, f operand.Op) {
	a := g.a
	a.VMOVDQU(at(p, 4), xr[4])
	a.VPSHUFD(operand.U8(0x98), xr[4], xr[5])
	a.VPSHUFD(operand.U8(0x50), xr[4], xr[6])
	a.VPSRLVD(xr[24], xr[5], xr[5])
	a.VPANDD(xr[23], xr[5], xr[5])
	a.VPSRLD(operand.U8(6), xr[6], xr[6])
	a.VPANDD(xr[22], xr[6], xr[6])
	a.VPSLLD(operand.U8(4), xr[6], xr[6])
	a.VPORD(xr[6], xr[5], xr[5])
	a.VPMOVZXBW(xr[5], yr[4])
	a.VMOVDQU64(at(p, 16), zr[7])
	a.VPSRLW(operand.U8(4), zr[7], zr[8])
	a.VPANDD(zr[31], zr[7], zr[7])
	a.VPANDD(zr[31], zr[8], zr[8])
	a.VPMADDUBSW(zr[16], zr[7], zr[7])
	a.VPMADDUBSW(zr[17], zr[8], zr[8])
	a.VPERMW(zr[4], zr[26], zr[9])
	a.VPERMW(zr[4], zr[27], zr[10])
	a.VPMADDWD(zr[9], zr[7], zr[6])
	a.VPDPWSSD(zr[10], zr[8], zr[6])
	a.VMOVDQU64(at(p, 80), zr[7])
	a.VPSRLW(operand.U8(4), zr[7], zr[8])
	a.VPANDD(zr[31], zr[7], zr[7])
	a.VPANDD(zr[31], zr[8], zr[8])
	a.VPMADDUBSW(zr[18], zr[7], zr[7])
	a.VPMADDUBSW(zr[19], zr[8], zr[8])
	a.VPERMW(zr[4], zr[28], zr[9])
	a.VPERMW(zr[4], zr[29], zr[10])
	a.VPDPWSSD(zr[9], zr[7], zr[6])
	a.VPDPWSSD(zr[10], zr[8], zr[6])
	a.VPMADDWD(yr[13], yr[4], yr[9])
	a.VSHUFI64X2(operand.U8(0x1e), zr[9], zr[6], zr[10])
	a.VPADDD(zr[6], zr[10], reg.K1, zr[10])
	a.VCVTDQ2PS(zr[10], zr[10])
	a.VPERMW(at(p, 0), yr[25], yr[11])
	a.VCVTPH2PS(yr[11], zr[11])
	a.VMULPS(zr[21], zr[11], zr[11])
	a.VFMADD231PS(zr[11], zr[10], f)
}

// constsQ5 loads Z31 0x0f bytes, Z20 0x10 bytes, Z30 the high-nibble shifts,
// Z26..Z29 the scale gathers, X22..X24 and Y25 as for Q4_K, K1 lanes 0..7.
func (g *kzGen) constsQ5() {
	a := g.a
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[31])
	a.MOVL(operand.U32(0x10101010), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[20])
	a.VMOVDQU64(g.q4kshr, zr[30])
	a.VMOVDQU64(g.q4kidx3, zr[29])
	a.VMOVDQU64(g.q4kidx2, zr[28])
	a.VMOVDQU64(g.q4kidx1, zr[27])
	a.VMOVDQU64(g.q4kidx0, zr[26])
	a.VMOVDQU32(g.q4ksh, xr[24])
	a.VMOVDQU32(g.q4km1, xr[23])
	a.VMOVDQU32(g.q4km2, xr[22])
	a.VMOVDQU64(g.q4kdm, yr[25])
	a.MOVL(operand.U32(0xff), reg.EAX)
	a.KMOVW(reg.EAX, reg.K1)
}

// blkQ5 loads the activations of the block (quants Z16..Z19, sub-block
// sums in Y13, [dx ×8, −dx ×8] in Z21) and adds the 4 rows' blocks.
func (g *kzGen) blkQ5() {
	a := g.a
	a.VMOVDQU64(mem(reg.R12, 4), zr[16])
	a.VMOVDQU64(mem(reg.R12, 68), zr[17])
	a.VMOVDQU64(mem(reg.R12, 132), zr[18])
	a.VMOVDQU64(mem(reg.R12, 196), zr[19])
	a.VMOVDQU(mem(reg.R12, 260), yr[14])
	a.VEXTRACTI128(operand.U8(1), yr[14], xr[13])
	a.VPHADDW(xr[13], xr[14], xr[13])
	a.VPERMQ(operand.U8(0x4e), yr[13], yr[13])
	a.VBROADCASTSS(mem(reg.R12, 0), zr[21])
	a.VXORPS(g.q4ksgn, zr[21], zr[21])
	g.q5row(reg.R8, zr[0])
	g.q5row(reg.R9, zr[1])
	g.q5row(reg.R10, zr[2])
	g.q5row(reg.R11, zr[3])
}

// finQ5 reduces the 4 accumulators and adds their min sums.
func (g *kzGen) finQ5() {
	for i := range 4 {
		g.ksum8(yr[i], xr[i], xr[4+i], xr[8])
		g.ksuml8(zr[i], xr[4+i], xr[9])
	}
}

// q5chunk accumulates into Z6 the 64 values of a chunk of the Q5_K block
// at offset AX of the row at p: q4row's nibbles (quants at byte off) with
// bit 4 from the qh bytes in Z15 rotated by rot; Z20 holds 0x10 bytes.
func (g *kzGen) q5chunk(p reg.Register, off int, x, idx operand.Op, rot operand.Mem) {
	a := g.a
	a.VBROADCASTI64X4(at(p, off), zr[7])
	a.VPSRLVW(zr[30], zr[7], zr[7])
	a.VPANDD(zr[31], zr[7], zr[7])
	a.VPROLVD(rot, zr[15], zr[8])
	a.VPTERNLOGD(operand.U8(0xf8), zr[20], zr[8], zr[7])
	a.VPMADDUBSW(x, zr[7], zr[7])
	a.VPERMW(zr[4], idx, zr[8])
	a.VPDPWSSD(zr[8], zr[7], zr[6])
}

// q5row accumulates into f the product of the Q5_K block at offset AX of
// the row at p with the activations (quants Z16..Z19 in stored order; the
// sub-block sums, scale signs and K1 as q4row has them): lanes 0..7 gain
// d·dx·lane sums, lane 8 −dmin·dx·Σ m_j·Σx_j as one integer (ggml's summs;
// lanes 9..11 get the same, unread), the 16→8 lane fold and the min sum
// joined by one shuffle and a masked add, as in q4row.
func (g *kzGen) q5row(p reg.Register, f operand.Op) {
	a := g.a
	a.VMOVDQU(at(p, 4), xr[4])
	a.VPSHUFD(operand.U8(0x98), xr[4], xr[5])
	a.VPSHUFD(operand.U8(0x50), xr[4], xr[6])
	a.VPSRLVD(xr[24], xr[5], xr[5])
	a.VPANDD(xr[23], xr[5], xr[5])
	a.VPSRLD(operand.U8(6), xr[6], xr[6])
	a.VPANDD(xr[22], xr[6], xr[6])
	a.VPSLLD(operand.U8(4), xr[6], xr[6])
	a.VPORD(xr[6], xr[5], xr[5])
	a.VPMOVZXBW(xr[5], yr[4])
	a.VBROADCASTI64X4(at(p, 16), zr[15])
	a.VPXORD(zr[6], zr[6], zr[6])
	g.q5chunk(p, 48, zr[16], zr[26], g.q5krot0)
	g.q5chunk(p, 80, zr[17], zr[27], g.q5krot1)
	g.q5chunk(p, 112, zr[18], zr[28], g.q5krot2)
	g.q5chunk(p, 144, zr[19], zr[29], g.q5krot3)
	a.VPMADDWD(yr[13], yr[4], yr[9])
	a.VPHADDD(yr[9], yr[9], yr[9])
	a.VPHADDD(yr[9], yr[9], yr[9])
	a.VSHUFI64X2(operand.U8(0x1e), zr[9], zr[6], zr[10])
	a.VPADDD(zr[6], zr[10], reg.K1, zr[10])
	a.VCVTDQ2PS(zr[10], zr[10])
	a.VPERMW(at(p, 0), yr[25], yr[11])
	a.VCVTPH2PS(yr[11], zr[11])
	a.VMULPS(zr[21], zr[11], zr[11])
	a.VFMADD231PS(zr[11], zr[10], f)
}

// Q3_K runs two rows per vector, as Q2_K does (see q2pair): the pair's 32
// quant bytes of half c side by side, [p | p'], against the values of
// plane s of half c broadcast to both halves. Two bytes per quant byte
// carry two planes each: R0 holds planes 0 and 1 (bits 0-3) with their
// hmask bits (4, 5), R1 planes 2 and 3 (bits 4-7) with theirs (0, 1); one
// GF2P8AFFINEQB per plane makes u = q2 + 4·h (0..7), and VPMADDUBSW(u, x)
// less 4·(x pair sums, once per call) is q3·x by pairs. The scale gathers
// of the eight planes: lane k of plane s of half c is sub-block 8c + 2s +
// k mod 2 of row p for k < 2, of row p' (words 16..31) otherwise.
//
// constsQ3 loads K1 (the upper 8 words), K2 (the upper two qwords of a
// ymm), Z31 0x04 bytes, Z20 0x0f bytes, Z23..Z26 and Z12..Z14, Z16 the
// plane scale gathers and Z27..Z30 the pick matrices.
func (g *kzGen) constsQ3() {
	a := g.a
	a.MOVL(operand.U32(0xff00), reg.EAX)
	a.KMOVW(reg.EAX, reg.K1)
	a.MOVL(operand.U32(0x0c), reg.EAX)
	a.KMOVW(reg.EAX, reg.K2)
	a.MOVL(operand.U32(0x04040404), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[31])
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[20])
	a.VMOVDQU64(g.q3kpidx00, zr[23])
	a.VMOVDQU64(g.q3kpidx01, zr[24])
	a.VMOVDQU64(g.q3kpidx02, zr[25])
	a.VMOVDQU64(g.q3kpidx03, zr[26])
	a.VMOVDQU64(g.q3kpidx10, zr[12])
	a.VMOVDQU64(g.q3kpidx11, zr[13])
	a.VMOVDQU64(g.q3kpidx12, zr[14])
	a.VMOVDQU64(g.q3kpidx13, zr[16])
	a.VPBROADCASTQ(g.q3kmat, zr[27])
	a.VPBROADCASTQ(g.q3kmat.Offset(8), zr[28])
	a.VPBROADCASTQ(g.q3kmat.Offset(16), zr[29])
	a.VPBROADCASTQ(g.q3kmat.Offset(24), zr[30])
}

// buildQ3 regroups a block of activations at SI: plane s of half c (its
// 32 values broadcast to both halves) at 64·(4c+s), their 4·pair sums at
// 512 + 64·(4c+s), dx ×16 at 1024.
func (g *kzGen) buildQ3() {
	a := g.a
	for i := range 8 {
		a.VBROADCASTI64X4(mem(reg.R12, 4+32*i), zr[17])
		a.VMOVDQU64(zr[17], mem(reg.RSI, 64*i))
		a.VPMADDUBSW(zr[17], zr[31], zr[17])
		a.VMOVDQU64(zr[17], mem(reg.RSI, 512+64*i))
	}
	a.VBROADCASTSS(mem(reg.R12, 0), zr[21])
	a.VMOVUPS(zr[21], mem(reg.RSI, 1024))
}

// blkQ3 adds the blocks of the two row pairs.
func (g *kzGen) blkQ3() {
	g.q3sc2(reg.R8, reg.R9)
	g.q3pair(reg.R8, reg.R9, zr[0])
	g.q3sc2(reg.R10, reg.R11)
	g.q3pair(reg.R10, reg.R11, zr[1])
}

// finQ2 reduces the pair accumulators of Q3_K and Q2_K.
func (g *kzGen) finQ2() {
	a := g.a
	a.VEXTRACTF64X4(operand.U8(1), zr[0], yr[2])
	a.VEXTRACTF64X4(operand.U8(1), zr[1], yr[3])
	g.ksum8(yr[0], xr[0], xr[4], xr[8])
	g.ksum8(yr[2], xr[2], xr[5], xr[8])
	g.ksum8(yr[1], xr[1], xr[6], xr[8])
	g.ksum8(yr[3], xr[3], xr[7], xr[8])
}

// q3plane adds into acc the 64 values of plane s: u picked from r by the
// matrix mat, times the activations x less xs (4·pair sums), times the
// scales gathered by idx from sc.
func (g *kzGen) q3plane(r, mat, x, xs, idx, sc, acc operand.Op) {
	a := g.a
	a.VGF2P8AFFINEQB(operand.U8(0), mat, r, zr[8])
	a.VPMADDUBSW(x, zr[8], zr[8])
	a.VPSUBW(xs, zr[8], zr[8])
	a.VPERMW(sc, idx, zr[9])
	a.VPDPWSSD(zr[9], zr[8], acc)
}

// q3sc2 unpacks the 6-bit scales (less 32) of the Q3_K blocks at offset AX
// of the rows at pa and pb into the words of Z4: pa's 16, then pb's. K2
// selects the upper two qwords of a ymm. VPMULTISHIFTQB takes the low 4
// bits of scale j from byte j mod 8 (bits 4·(j/8)..) and the high 2 from
// byte 8 + j mod 4 (bits 2·(j/4)..), those 4 bytes read as bytes 2-5 of
// the qword at scale byte 6, which ends with the block (a qword at byte 8
// would read 2 bytes past it); one GF2P8AFFINEQB puts the high 2 in
// bits 4-5 and, with 0xe0 or-ed in, sets bits 5-7 to the inverse of the
// top bit: that is v − 32 for v = lo | hi<<4 in two's complement, the
// signed scale.
func (g *kzGen) q3sc2(pa, pb reg.Register) {
	a := g.a
	a.VPBROADCASTQ(at(pa, 96), yr[6])
	a.VPBROADCASTQ(at(pb, 96), reg.K2, yr[6])
	a.VPBROADCASTQ(at(pa, 102), yr[7])
	a.VPBROADCASTQ(at(pb, 102), reg.K2, yr[7])
	a.VMOVDQU(g.q3kctl, yr[8])
	a.VPMULTISHIFTQB(yr[6], yr[8], yr[6])
	a.VMOVDQU(g.q3kcth, yr[9])
	a.VPMULTISHIFTQB(yr[7], yr[9], yr[7])
	a.VGF2P8AFFINEQB(operand.U8(0xe0), g.q3kmh, yr[7], yr[7])
	a.VPTERNLOGD(operand.U8(0xea), yr[7], yr[20], yr[6])
	a.VPMOVSXBW(yr[6], zr[4])
}

// q3pair adds into f (zmm: lanes 0..7 row p, 8..15 row pb) d·dx times the
// lanes of the Q3_K blocks at offset AX of the rows at p and pb (their
// scales as words in Z4, from q3sc2), one fused multiply-add per lane as
// ggml does. The pair's hmask bytes are side by side in Z15, [p | pb], as
// are its quant bytes of each half c (values 128c..128c+127); the
// activations of the block are regrouped at R12 (buildQ3). So dwords 0..7
// of the integer sums are ggml's lanes of row p and 8..15 those of row pb,
// with no folding. Z20 holds 0x0f bytes, Z23..Z26 and Z12..Z14, Z16 the
// scale gathers of the planes of halves 0 and 1, Z27..Z30 the pick
// matrices, K1 the upper 8 words (d of both rows spread by one masked
// broadcast).
func (g *kzGen) q3pair(p, pb reg.Register, f operand.Op) {
	a := g.a
	a.VMOVDQU(at(p, 0), yr[15])
	a.VINSERTI64X4(operand.U8(1), at(pb, 0), zr[15], zr[15])
	a.VMOVDQU(at(p, 32), yr[7])
	a.VINSERTI64X4(operand.U8(1), at(pb, 32), zr[7], zr[7])
	a.VMOVDQU(at(p, 64), yr[6])
	a.VINSERTI64X4(operand.U8(1), at(pb, 64), zr[6], zr[6])
	a.VPSLLW(operand.U8(4), zr[15], zr[10])
	a.VPTERNLOGD(operand.U8(0xd8), zr[20], zr[7], zr[10])
	a.VPSRLW(operand.U8(2), zr[15], zr[11])
	a.VPTERNLOGD(operand.U8(0xe4), zr[20], zr[7], zr[11])
	a.VPXORD(zr[2], zr[2], zr[2])
	a.VPXORD(zr[3], zr[3], zr[3])
	g.q3plane(zr[10], zr[27], mem(reg.R12, 0), mem(reg.R12, 512), zr[23], zr[4], zr[2])
	g.q3plane(zr[10], zr[28], mem(reg.R12, 64), mem(reg.R12, 576), zr[24], zr[4], zr[2])
	g.q3plane(zr[11], zr[29], mem(reg.R12, 128), mem(reg.R12, 640), zr[25], zr[4], zr[2])
	g.q3plane(zr[11], zr[30], mem(reg.R12, 192), mem(reg.R12, 704), zr[26], zr[4], zr[2])
	a.VPSRLW(operand.U8(6), zr[15], zr[11])
	a.VPTERNLOGD(operand.U8(0xe4), zr[20], zr[6], zr[11])
	a.VPTERNLOGD(operand.U8(0xe4), zr[20], zr[15], zr[6])
	g.q3plane(zr[6], zr[27], mem(reg.R12, 256), mem(reg.R12, 768), zr[12], zr[4], zr[3])
	g.q3plane(zr[6], zr[28], mem(reg.R12, 320), mem(reg.R12, 832), zr[13], zr[4], zr[3])
	g.q3plane(zr[11], zr[29], mem(reg.R12, 384), mem(reg.R12, 896), zr[14], zr[4], zr[3])
	g.q3plane(zr[11], zr[30], mem(reg.R12, 448), mem(reg.R12, 960), zr[16], zr[4], zr[3])
	a.VPADDD(zr[3], zr[2], zr[2])
	a.VCVTDQ2PS(zr[2], zr[2])
	a.VPBROADCASTW(at(p, 108), yr[10])
	a.VPBROADCASTW(at(pb, 108), reg.K1, yr[10])
	a.VCVTPH2PS(yr[10], zr[10])
	a.VMULPS(mem(reg.R12, 1024), zr[10], zr[10])
	a.VFMADD231PS(zr[10], zr[2], f)
}

// constsQ2 loads Z30 the words 0x000f, Z31 the bytes 0..3, Z28, Z29 the table
// gathers, Z12, Z13 the d and dmin spreads, Z24..Z27 the plane-pick
// matrices.
func (g *kzGen) constsQ2() {
	a := g.a
	a.MOVL(operand.U32(0x000f000f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[30])
	a.MOVL(operand.U32(0x03020100), reg.EAX)
	a.VPBROADCASTD(reg.EAX, zr[31])
	a.VMOVDQU64(g.q2kperm0, zr[28])
	a.VMOVDQU64(g.q2kperm1, zr[29])
	a.VMOVDQU64(g.q2kdidx, zr[12])
	a.VMOVDQU64(g.q2kmidx, zr[13])
	a.VPBROADCASTQ(g.q2kmat.Offset(24), zr[27])
	a.VPBROADCASTQ(g.q2kmat.Offset(16), zr[26])
	a.VPBROADCASTQ(g.q2kmat.Offset(8), zr[25])
	a.VPBROADCASTQ(g.q2kmat, zr[24])
}

// buildQ2 regroups a block of activations at SI: the 8 planes' 32 values
// broadcast to both halves, the block sums twice, [dx, −dx] ×2.
func (g *kzGen) buildQ2() {
	a := g.a
	for i := range 8 {
		a.VBROADCASTI64X4(mem(reg.R12, 4+32*i), zr[16+i])
	}
	a.VBROADCASTI64X4(mem(reg.R12, 260), zr[15])
	a.VBROADCASTSS(mem(reg.R12, 0), xr[14])
	a.VXORPS(g.q2ksgn, xr[14], xr[14])
	for i := range 8 {
		a.VMOVDQU64(zr[16+i], mem(reg.RSI, 64*i))
	}
	a.VMOVDQU64(zr[15], mem(reg.RSI, 512))
	a.VMOVUPS(xr[14], mem(reg.RSI, 576))
}

// blkQ2 adds the blocks of the two row pairs.
func (g *kzGen) blkQ2() {
	g.q2pair(reg.R8, reg.R9, zr[0])
	g.q2pair(reg.R10, reg.R11, zr[1])
}

// q2plane adds into acc plane s of the quants q (pick matrix mat, or-ed
// constant 4s in imm), looked up in table tab, times the activations x.
func (g *kzGen) q2plane(imm, mat, q, tab, x, t, acc operand.Op) {
	a := g.a
	a.VGF2P8AFFINEQB(imm, mat, q, t)
	a.VPSHUFB(t, tab, t)
	a.VPDPBUSD(x, t, acc)
}

// q2pair accumulates into f (zmm: lanes 0..7 row p, 8..15 row pb) the
// products of the Q2_K blocks at offset AX of the rows at p and pb with
// the activations of the block regrouped at R12 (buildQ2): first
// −dmin·dx·(m·Σx) by pairs of sub-blocks, then d·dx·lane sums, as ggml
// does.
//
// Q2_K runs two rows per vector: a pair of rows p, p' has its 32 quant
// bytes of half c (values 128c..128c+127) side by side in one zmm, [p |
// p'], and plane s (bits 2s, 2s+1) of byte l in a half is value 128c +
// 32s + l, so the activations of plane s of half c are those 32 values
// broadcast to both halves. Each 128-bit lane of a plane is one
// sub-block: 8c+2s (lanes 0, 2) or 8c+2s+1 (lanes 1, 3). One
// GF2P8AFFINEQB per plane picks its 2 bits and ors in 4s, one VPSHUFB
// looks up q·sc in the pair's table of half c (lane k, bytes 4s..4s+3: 0,
// sc, 2sc, 3sc of the lane's sub-block; sc ≤ 15 so q·sc ≤ 45 fits a byte)
// and one VPDPBUSD adds q·sc·x by 4 values: dword lane m of each 256-bit
// half holds values 4m..4m+3 of a 32-value group, so dwords 0..7 are
// ggml's 8 lanes of row p and 8..15 those of row p', with no folding. The
// mins (VPMOVZXBW, shift, VPMADDWD with the block sums twice) come out in
// the same two halves. Z24..Z27 hold the plane-pick matrices, Z28, Z29
// the table gathers, Z30 the words 0x000f, Z31 the words 0x0100, 0x0302,
// Z12, Z13 the d and dmin spreads.
func (g *kzGen) q2pair(p, pb reg.Register, f operand.Op) {
	a := g.a
	a.VMOVDQU(at(p, 0), xr[2])
	a.VINSERTI128(operand.U8(1), at(pb, 0), yr[2], yr[2])
	a.VPMOVZXBW(yr[2], zr[5])
	a.VPSRLW(operand.U8(4), zr[5], zr[5])
	a.VPMADDWD(mem(reg.R12, 512), zr[5], zr[5])
	a.VCVTDQ2PS(zr[5], zr[5])
	a.VMOVD(at(p, 80), xr[6])
	a.VPINSRD(operand.U8(1), at(pb, 80), xr[6], xr[6])
	a.VCVTPH2PS(xr[6], xr[6])
	a.VMULPS(mem(reg.R12, 576), xr[6], xr[6])
	a.VPERMPS(zr[6], zr[13], zr[7])
	a.VFMADD231PS(zr[7], zr[5], f)
	a.VPERMPS(zr[6], zr[12], zr[6])
	a.VPERMB(zr[2], zr[28], zr[3])
	a.VPANDD(zr[30], zr[3], zr[3])
	a.VPMULLW(zr[31], zr[3], zr[3])
	a.VPERMB(zr[2], zr[29], zr[4])
	a.VPANDD(zr[30], zr[4], zr[4])
	a.VPMULLW(zr[31], zr[4], zr[4])
	a.VMOVDQU(at(p, 16), yr[8])
	a.VINSERTI64X4(operand.U8(1), at(pb, 16), zr[8], zr[8])
	a.VMOVDQU(at(p, 48), yr[9])
	a.VINSERTI64X4(operand.U8(1), at(pb, 48), zr[9], zr[9])
	a.VPXORD(zr[10], zr[10], zr[10])
	a.VPXORD(zr[5], zr[5], zr[5])
	g.q2plane(operand.U8(0), zr[24], zr[8], zr[3], mem(reg.R12, 0), zr[11], zr[10])
	g.q2plane(operand.U8(4), zr[25], zr[8], zr[3], mem(reg.R12, 64), zr[7], zr[10])
	g.q2plane(operand.U8(8), zr[26], zr[8], zr[3], mem(reg.R12, 128), zr[11], zr[10])
	g.q2plane(operand.U8(12), zr[27], zr[8], zr[3], mem(reg.R12, 192), zr[7], zr[10])
	g.q2plane(operand.U8(0), zr[24], zr[9], zr[4], mem(reg.R12, 256), zr[11], zr[5])
	g.q2plane(operand.U8(4), zr[25], zr[9], zr[4], mem(reg.R12, 320), zr[7], zr[5])
	g.q2plane(operand.U8(8), zr[26], zr[9], zr[4], mem(reg.R12, 384), zr[11], zr[5])
	g.q2plane(operand.U8(12), zr[27], zr[9], zr[4], mem(reg.R12, 448), zr[7], zr[5])
	a.VPADDD(zr[5], zr[10], zr[10])
	a.VCVTDQ2PS(zr[10], zr[10])
	a.VFMADD231PS(zr[6], zr[10], f)
}
