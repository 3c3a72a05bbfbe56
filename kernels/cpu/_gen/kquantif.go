package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// kquantif generates kquantif_amd64.s: Inferflow's Q4_B64T1 and Q3H_B64T1
// weights times Q8_0 activations, AVX-512 with VNNI and VBMI.
//
// The 4-row kernels (gemv4Q4_B64VNNI, gemv4Q3HVNNI) compute exactly what
// kernels/quant's DotQ4_B64T1Q8_0 and DotQ3H_B64T1Q8_0 compute: per
// 32-value activation block with scale dy, the exact integer sums S = Σq·qy
// and Y = Σqy, then sum += (scale·dy)·S + base·(Y·dy), each operation
// rounded to float32, one chain per row over the blocks (the four rows ride
// in the four lanes of X0).
//
// A 64-value weight block meets two activation blocks A and B. The
// activations are loaded once per block for the four rows, their even
// values in bytes 0..31 and odd ones in 32..63, so that the weights' values
// can stay in their stored order: low nibbles (even values) then high
// nibbles (odd values). VPDPBUSD then leaves block A's products in dwords
// 0-3 and 8-11, block B's in 4-7 and 12-15.
//
// The strip kernels (ifpack.go) hold 16 rows of a strip in the 16 dword
// lanes, activations in layout I broadcast a dword at a time; the 4-token
// ones unpack each group of weights once for the 4 tokens' activations.
func kquantif(a *asm) {
	g := &ifqGen{
		a: a,
		deint: a.global("ifdeint",
			0x0e0c0a0806040200, 0x1e1c1a1816141210, 0x2e2c2a2826242220, 0x3e3c3a3836343230,
			0x0f0d0b0907050301, 0x1f1d1b1917151311, 0x2f2d2b2927252321, 0x3f3d3b3937353331),
		shr: a.global("ifshr", 0, 0, 0, 0,
			0x0004000400040004, 0x0004000400040004, 0x0004000400040004, 0x0004000400040004),
		mod0: a.global("q3hmod0",
			0x0706050403020100, 0x04030201000a0908, 0x01000a0908070605, 0x0908070605040302,
			0x060504030201000a, 0x030201000a090807, 0x000a090807060504, 0x0807060504030201),
		mod1: a.global("q3hmod1",
			0x0504030201000a09, 0x0201000a09080706, 0x0a09080706050403, 0x0706050403020100,
			0x04030201000a0908, 0x01000a0908070605, 0x0908070605040302, 0x060504030201000a),
		div0: a.global("q3hdiv0",
			0x0000000000000000, 0x0101010101000000, 0x0202010101010101, 0x0202020202020202,
			0x0303030303030302, 0x0404040403030303, 0x0504040404040404, 0x0505050505050505),
		div1: a.global("q3hdiv1",
			0x0606060606060505, 0x0707070606060606, 0x0707070707070707, 0x0808080808080808,
			0x0909090909080808, 0x0a0a090909090909, 0x0a0a0a0a0a0a0a0a, 0x0b0b0b0b0b0b0b0a),
		cnib: a.global("q3hcnib",
			0x1c1814100c080400, 0x3c3834302c282420, 0x1c1814100c080400, 0x3c3834302c282420,
			0, 0, 0, 0),
		cqm: a.global("q3hcqm",
			0x0a08060402003e3c, 0x1a18161412100e0c, 0x2a28262422201e1c, 0x3a38363432302e2c,
			0, 0, 0, 0),
		cqh: a.global("q3hcqh",
			0x01003f3e3d3c3b3a, 0x0908070605040302, 0x11100f0e0d0c0b0a, 0x1918171615141312,
			0, 0, 0, 0),
	}
	g.gemv4("Q4_B64", "q4", 36, g.constsQ4, g.rowQ4)
	g.gemv4("Q3H", "q3", 32, g.constsQ3H, g.rowQ3H)
	// ifp7idx spreads 8 groups of 7 bytes to 8 qwords, ifp7ctl pulls the
	// eight 7-bit fields of each (bit 7 is left over: VPERMI2B reads 7
	// index bits). ifdeint8 puts the even bytes of each 8 before the odd
	// ones.
	g.p7idx = a.global("ifp7idx",
		0x0606050403020100, 0x0d0d0c0b0a090807, 0x1414131211100f0e, 0x1b1b1a1918171615,
		0x222221201f1e1d1c, 0x2929282726252423, 0x30302f2e2d2c2b2a, 0x3737363534333231)
	g.p7ctl = a.global("ifp7ctl", 0x312a231c150e0700)
	g.deint8 = a.global("ifdeint8", 0x0705030106040200, 0x0f0d0b090e0c0a08)
	g.strips(false)
	g.strips(true)
	g.strips4(false)
	g.strips4(true)
	g.actQ8I()
}

// ifqGen holds the kernels' tables: the even/odd activation split, the
// word shifts of the high nibbles, Q3H's mod-11 and div-11 code tables and
// multishift controls (nibbles, qm, qh), the strip kernels' 7-bit code
// spread and pick, and layout I's byte order.
type ifqGen struct {
	a                                      *asm
	deint, shr                             operand.Mem
	mod0, mod1, div0, div1, cnib, cqm, cqh operand.Mem
	p7idx, p7ctl, deint8                   operand.Mem
}

// ifqm is disp(base)(index*1).
func ifqm(base, index reg.Register, disp int) operand.Mem {
	return operand.Mem{Base: base, Index: index, Scale: 1, Disp: disp}
}

// bcast32 broadcasts the dword c into z via AX.
func (g *ifqGen) bcast32(c uint32, z reg.VecPhysical) {
	g.a.MOVL(operand.U32(c), reg.EAX)
	g.a.VPBROADCASTD(reg.EAX, z)
}

// constsQ4 loads gemv4Q4_B64VNNI's constants: 0x0f bytes in Z31, 0x01
// bytes in Z15, the nibble shifts in Z30, the activation split in Z29.
func (g *ifqGen) constsQ4() {
	a := g.a
	g.bcast32(0x0f0f0f0f, zr[31])
	g.bcast32(0x01010101, zr[15])
	a.VMOVDQU64(g.shr, zr[30])
	a.VMOVDQU64(g.deint, zr[29])
}

// constsQ3H loads gemv4Q3HVNNI's constants (see rowQ3H), 0x01 bytes in
// Z15 and the activation split in Z29.
func (g *ifqGen) constsQ3H() {
	a := g.a
	g.bcast32(0x01010101, zr[15])
	g.bcast32(0x30303030, zr[17])
	g.bcast32(0x3f3f3f3f, zr[30])
	a.VMOVDQU64(g.deint, zr[29])
	a.VMOVDQU64(g.cqh, zr[28])
	a.VMOVDQU64(g.cqm, zr[27])
	a.VMOVDQU64(g.cnib, zr[26])
	a.VMOVDQU64(g.div1, zr[25])
	a.VMOVDQU64(g.div0, zr[24])
	a.VMOVDQU64(g.mod1, zr[23])
	a.VMOVDQU64(g.mod0, zr[22])
}

// act loads the two Q8_0 activation blocks at R12 (68 bytes): Z16 gets
// their 64 quants de-interleaved (even values, then odd), X18/X19 dy of A
// and B broadcast, X20/X21 fl(Y·dy) of A and B broadcast. Z15 must hold
// 0x01 bytes.
func (g *ifqGen) act() {
	a := g.a
	a.VMOVDQU64(mem(reg.R12, 2), yr[16])
	a.VINSERTI64X4(operand.U8(1), mem(reg.R12, 36), zr[16], zr[16])
	a.VPXORD(zr[5], zr[5], zr[5])
	a.VPDPBUSD(zr[16], zr[15], zr[5])
	a.VEXTRACTI64X4(operand.U8(1), zr[5], yr[6])
	a.VPHADDD(yr[6], yr[5], yr[5])
	a.VPHADDD(yr[5], yr[5], yr[5])
	a.VEXTRACTI128(operand.U8(1), yr[5], xr[6])
	a.VPADDD(xr[6], xr[5], xr[5])
	a.VCVTDQ2PS(xr[5], xr[5])
	a.VPBROADCASTW(mem(reg.R12, 0), xr[7])
	a.VPINSRW(operand.U8(1), mem(reg.R12, 34), xr[7], xr[7])
	a.VCVTPH2PS(xr[7], xr[7])
	a.VMULPS(xr[7], xr[5], xr[5])
	a.VBROADCASTSS(xr[7], xr[18])
	a.VMOVSHDUP(xr[7], xr[7])
	a.VBROADCASTSS(xr[7], xr[19])
	a.VBROADCASTSS(xr[5], xr[20])
	a.VMOVSHDUP(xr[5], xr[5])
	a.VBROADCASTSS(xr[5], xr[21])
	a.VPERMB(zr[16], zr[29], zr[16])
}

// sum adds the four rows' blocks to X0: the folded sums in Y8..Y11, the
// headers (base, scale f16) of the rows at offset AX of R8..R11.
func (g *ifqGen) sum() {
	a := g.a
	a.VPHADDD(yr[9], yr[8], yr[8])
	a.VPHADDD(yr[11], yr[10], yr[10])
	a.VPHADDD(yr[10], yr[8], yr[8])
	a.VCVTDQ2PS(yr[8], yr[8])
	a.VMOVD(ifqm(reg.R8, reg.RAX, 0), xr[12])
	a.VPINSRD(operand.U8(1), ifqm(reg.R9, reg.RAX, 0), xr[12], xr[12])
	a.VPINSRD(operand.U8(2), ifqm(reg.R10, reg.RAX, 0), xr[12], xr[12])
	a.VPINSRD(operand.U8(3), ifqm(reg.R11, reg.RAX, 0), xr[12], xr[12])
	a.VCVTPH2PS(xr[12], yr[12])
	a.VEXTRACTF128(operand.U8(1), yr[12], xr[13])
	a.VSHUFPS(operand.U8(0x88), xr[13], xr[12], xr[14])
	a.VSHUFPS(operand.U8(0xdd), xr[13], xr[12], xr[3])
	for h, r := range [2][2]int{{18, 20}, {19, 21}} {
		if h == 1 {
			a.VEXTRACTF128(operand.U8(1), yr[8], xr[8])
		}
		a.VMULPS(xr[r[0]], xr[3], xr[9])
		a.VMULPS(xr[8], xr[9], xr[9])
		a.VMULPS(xr[r[1]], xr[14], xr[10])
		a.VADDPS(xr[10], xr[9], xr[9])
		a.VADDPS(xr[9], xr[0], xr[0])
	}
}

// rowQ4 puts the 16 dword sums of the Q4_B64T1 block at offset AX of the
// row at p times the activations into Z<z>.
func (g *ifqGen) rowQ4(p reg.Register, z int) {
	a := g.a
	a.VBROADCASTI64X4(ifqm(p, reg.RAX, 4), zr[7])
	a.VPSRLVW(zr[30], zr[7], zr[7])
	a.VPANDD(zr[31], zr[7], zr[7])
	a.VPXORD(zr[z], zr[z], zr[z])
	a.VPDPBUSD(zr[16], zr[7], zr[z])
}

// rowQ3H puts the 16 dword sums of the Q3H_B64T1 block at offset AX of
// the row at p times the activations into Z<z>: each pair's 7-bit code
// built by multishifts of qs (bits 0-3), qm (4-5) and qh (6) and two bit
// selects (bit 7 is left over; VPERMI2B reads 7 index bits), then split
// into its two values by the mod-11 and div-11 tables (the even value is
// the code mod 11). Constants: Z17 0x30 bytes, Z30 0x3f bytes, Z22..Z25
// the tables, Z26..Z28 the multishift controls.
func (g *ifqGen) rowQ3H(p reg.Register, z int) {
	a := g.a
	a.VMOVDQU(ifqm(p, reg.RAX, 16), xr[1])
	a.VPERMQ(operand.U8(0x50), yr[1], yr[1])
	a.VPMULTISHIFTQB(yr[1], yr[26], yr[1])
	a.VPBROADCASTQ(ifqm(p, reg.RAX, 8), yr[2])
	a.VPMULTISHIFTQB(yr[2], yr[27], yr[2])
	a.VPBROADCASTQ(ifqm(p, reg.RAX, 4), yr[3])
	a.VPMULTISHIFTQB(yr[3], yr[28], yr[3])
	a.VPTERNLOGD(operand.U8(0xe2), yr[1], yr[17], yr[2])
	a.VPTERNLOGD(operand.U8(0xe2), yr[3], yr[30], yr[2])
	a.VMOVDQA64(zr[2], zr[7])
	a.VPERMI2B(zr[23], zr[22], zr[2])
	a.VPERMI2B(zr[25], zr[24], zr[7])
	a.VINSERTI64X4(operand.U8(1), yr[7], zr[2], zr[2])
	a.VPXORD(zr[z], zr[z], zr[z])
	a.VPDPBUSD(zr[16], zr[2], zr[z])
}

// gemv4 emits gemv4<name>VNNI, size bytes per weight block.
func (g *ifqGen) gemv4(name, p string, size int, consts func(), row func(reg.Register, int)) {
	a := g.a
	doc := []string{"As gemv4Q4_B64VNNI for Q3H_B64T1 weights."}
	if name == "Q4_B64" {
		doc = []string{
			"For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q4_B64T1",
			"blocks, ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is not",
			"0; x is a row of Q8_0 blocks.",
		}
	}
	a.text("gemv4"+name+"VNNI", attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)", doc...)
	l := func(s string) operand.LabelRef { return label(p + s) }
	consts()
	a.gemv4Args("x")
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(l("done"))

	a.Label(p + "row")
	a.VPXORD(xr[0], xr[0], xr[0])
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)
	a.TESTQ(reg.R13, reg.R13)
	a.JZ(l("fin"))

	a.Label(p + "blk")
	g.act()
	rows := []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}
	for i, r := range rows {
		row(r, 8+i)
	}
	for i := range rows {
		a.VEXTRACTI64X4(operand.U8(1), zr[8+i], yr[4])
		a.VPADDD(yr[4], yr[8+i], yr[8+i])
	}
	g.sum()
	a.ADDQ(operand.U8(uint8(size)), reg.RAX)
	a.ADDQ(operand.U8(68), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(l("blk"))

	a.Label(p + "fin")
	a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.RSI, Scale: 2}, reg.R13)
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(l("store"))
	a.VMOVSS(mem(reg.RDX, 0), xr[4])
	a.VINSERTPS(operand.U8(0x10), ifqm(reg.RDX, reg.RSI, 0), xr[4], xr[4])
	a.VINSERTPS(operand.U8(0x20), mem(reg.R13, 0), xr[4], xr[4])
	a.VINSERTPS(operand.U8(0x30), ifqm(reg.R13, reg.RSI, 0), xr[4], xr[4])
	a.VADDPS(xr[4], xr[0], xr[0])

	a.Label(p + "store")
	a.VMOVSS(xr[0], mem(reg.RDX, 0))
	a.VEXTRACTPS(operand.U8(1), xr[0], ifqm(reg.RDX, reg.RSI, 0))
	a.VEXTRACTPS(operand.U8(2), xr[0], mem(reg.R13, 0))
	a.VEXTRACTPS(operand.U8(3), xr[0], ifqm(reg.R13, reg.RSI, 0))
	a.ADDQ(operand.U8(4), reg.RDX)
	for _, r := range rows {
		a.ADDQ(reg.RBX, r)
	}
	a.DECQ(reg.R14)
	a.JNZ(l("row"))

	a.Label(p + "done")
	a.VZEROUPPER()
	a.RET()
}

// constsStrip loads the constants of a strip kernel: Q3H's code tables,
// spread and pick in Z22..Z27, or Q4's 0x0f bytes in Z31.
func (g *ifqGen) constsStrip(q4 bool) {
	a := g.a
	if q4 {
		g.bcast32(0x0f0f0f0f, zr[31])
		return
	}
	a.VMOVDQU64(g.mod0, zr[22])
	a.VMOVDQU64(g.mod1, zr[23])
	a.VMOVDQU64(g.div0, zr[24])
	a.VMOVDQU64(g.div1, zr[25])
	a.VMOVDQU64(g.p7idx, zr[26])
	a.VPBROADCASTQ(g.p7ctl, zr[27])
}

// unpack puts group k of a strip block at SI into Z5 (even values) and Z6
// (odd values): Q4_B64T1's 64 bytes at 64k split into low and high
// nibbles, or Q3H's 56 bytes at 56k spread to 64 7-bit pair codes (4 per
// row) and split by the mod-11 and div-11 tables.
func (g *ifqGen) unpack(q4 bool, k int) {
	a := g.a
	if q4 {
		w := mem(reg.RSI, 64*k)
		a.VPSRLW(operand.U8(4), w, zr[6])
		a.VPANDD(w, zr[31], zr[5])
		a.VPANDD(zr[31], zr[6], zr[6])
		return
	}
	a.VPERMB(mem(reg.RSI, 56*k), zr[26], zr[5])
	a.VPMULTISHIFTQB(zr[5], zr[27], zr[5])
	a.VMOVDQA64(zr[5], zr[6])
	a.VPERMI2B(zr[23], zr[22], zr[5])
	a.VPERMI2B(zr[25], zr[24], zr[6])
}

// ifqBlock returns the strip block's layout: its bytes, and the offsets
// of its f16 scales and bases.
func ifqBlock(q4 bool) (size, sc, ba int) {
	if q4 {
		return 576, 512, 544
	}
	return 512, 448, 480
}

// ifqAct returns the offsets in a layout I activation pair of the dwords
// group k multiplies: even values, odd values.
func ifqAct(k int) (ae, ao int) {
	ae = 8 * k
	if k >= 4 {
		ae += 8
	}
	return ae, ae + 4
}

// strips emits ifStrips<Q3H|Q4>VNNI.
func (g *ifqGen) strips(q4 bool) {
	a := g.a
	name, p, doc := "ifStripsQ3HVNNI", "s3", []string{
		"y[16s+r] (+)= row r of strip s times a, for strips ≥ 1 Q3H_B64T1 strips",
		"of nb ≥ 1 blocks at w; a in layout I.",
	}
	if q4 {
		name, p, doc = "ifStripsQ4VNNI", "s4", []string{"As ifStripsQ3HVNNI for Q4_B64T1 strips."}
	}
	a.text(name, attr.NOSPLIT, "func(w, a unsafe.Pointer, nb int, y *float32, strips int, acc int)", doc...)
	a.load("w", reg.RSI)
	a.load("a", reg.RDI)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("strips", reg.R8)
	a.load("acc", reg.R9)
	g.constsStrip(q4)

	a.Label(p + "strip")
	a.VPXORD(zr[0], zr[0], zr[0])
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)

	a.Label(p + "blk")
	// Z1, Z2 block A's integer sums (even, odd values), Z3, Z4 block B's.
	for z := 1; z <= 4; z++ {
		a.VPXORD(zr[z], zr[z], zr[z])
	}
	for k := range 8 {
		g.unpack(q4, k)
		ae, ao := ifqAct(k)
		ze, zo := 1, 2
		if k >= 4 {
			ze, zo = 3, 4
		}
		a.VPDPBUSD_BCST(mem(reg.R12, ae), zr[5], zr[ze])
		a.VPDPBUSD_BCST(mem(reg.R12, ao), zr[6], zr[zo])
	}
	// Per activation block, fl(fl(fl(scale·dy)·S) + fl(base·fl(Y·dy))),
	// A then B; dy and fl(Y·dy) of A at 32(R12), of B at 72(R12).
	size, sc, ba := ifqBlock(q4)
	a.VPADDD(zr[2], zr[1], zr[1])
	a.VPADDD(zr[4], zr[3], zr[3])
	a.VCVTDQ2PS(zr[1], zr[1])
	a.VCVTDQ2PS(zr[3], zr[3])
	a.VCVTPH2PS(mem(reg.RSI, sc), zr[7])
	a.VCVTPH2PS(mem(reg.RSI, ba), zr[8])
	for h, z := range []int{1, 3} {
		a.VMULPS_BCST(mem(reg.R12, 32+40*h), zr[7], zr[9])
		a.VMULPS(zr[z], zr[9], zr[9])
		a.VMULPS_BCST(mem(reg.R12, 36+40*h), zr[8], zr[10])
		a.VADDPS(zr[10], zr[9], zr[9])
		a.VADDPS(zr[9], zr[0], zr[0])
	}
	a.ADDQ(operand.U32(uint32(size)), reg.RSI)
	a.ADDQ(operand.U8(80), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label(p + "blk"))
	a.TESTQ(reg.R9, reg.R9)
	a.JZ(label(p + "st"))
	a.VADDPS(mem(reg.RDX, 0), zr[0], zr[0])
	a.Label(p + "st")
	a.VMOVUPS(zr[0], mem(reg.RDX, 0))
	a.ADDQ(operand.U8(64), reg.RDX)
	a.DECQ(reg.R8)
	a.JNZ(label(p + "strip"))
	a.VZEROUPPER()
	a.RET()
}

// ifqTok returns the address disp bytes into token t's activations (at
// R12, R12+BX, R14 = R12+2·BX and R14+BX).
func ifqTok(t, disp int) operand.Mem {
	m := operand.Mem{Base: reg.R12, Disp: disp}
	if t >= 2 {
		m.Base = reg.R14
	}
	if t%2 == 1 {
		m.Index, m.Scale = reg.RBX, 1
	}
	return m
}

// strips4 emits ifStrips4<Q3H|Q4>VNNI: block A's sums of token t go to
// Z11+t, block B's to Z15+t, the rows' sums to Z0+t.
func (g *ifqGen) strips4(q4 bool) {
	a := g.a
	name, p, doc := "ifStrips4Q3HVNNI", "t3", []string{
		"As ifStripsQ3HVNNI for 4 tokens: activations lda bytes apart, results",
		"ldy floats apart.",
	}
	if q4 {
		name, p, doc = "ifStrips4Q4VNNI", "t4", []string{"As ifStrips4Q3HVNNI for Q4_B64T1 strips."}
	}
	a.text(name, attr.NOSPLIT, "func(w, a unsafe.Pointer, lda, nb int, y *float32, ldy, strips, acc int)", doc...)
	a.load("w", reg.RSI)
	a.load("a", reg.RDI)
	a.load("lda", reg.RBX)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("ldy", reg.R10)
	a.SHLQ(operand.U8(2), reg.R10)
	a.load("strips", reg.R8)
	a.load("acc", reg.R9)
	g.constsStrip(q4)

	a.Label(p + "strip")
	for z := range 4 {
		a.VPXORD(zr[z], zr[z], zr[z])
	}
	a.MOVQ(reg.RDI, reg.R12)
	a.LEAQ(operand.Mem{Base: reg.RDI, Index: reg.RBX, Scale: 2}, reg.R14)
	a.MOVQ(reg.RCX, reg.R13)

	a.Label(p + "blk")
	for z := 11; z <= 18; z++ {
		a.VPXORD(zr[z], zr[z], zr[z])
	}
	for k := range 8 {
		g.unpack(q4, k)
		ae, ao := ifqAct(k)
		z := 11
		if k >= 4 {
			z = 15
		}
		for t := range 4 {
			a.VPDPBUSD_BCST(ifqTok(t, ae), zr[5], zr[z+t])
			a.VPDPBUSD_BCST(ifqTok(t, ao), zr[6], zr[z+t])
		}
	}
	size, sc, ba := ifqBlock(q4)
	a.VCVTPH2PS(mem(reg.RSI, sc), zr[7])
	a.VCVTPH2PS(mem(reg.RSI, ba), zr[8])
	for t := range 4 {
		za, zb := zr[11+t], zr[15+t]
		a.VCVTDQ2PS(za, za)
		a.VCVTDQ2PS(zb, zb)
		for h, z := range []reg.VecPhysical{za, zb} {
			a.VMULPS_BCST(ifqTok(t, 32+40*h), zr[7], zr[9])
			a.VMULPS(z, zr[9], zr[9])
			a.VMULPS_BCST(ifqTok(t, 36+40*h), zr[8], zr[10])
			a.VADDPS(zr[10], zr[9], zr[9])
			a.VADDPS(zr[9], zr[t], zr[t])
		}
	}
	a.ADDQ(operand.U32(uint32(size)), reg.RSI)
	a.ADDQ(operand.U8(80), reg.R12)
	a.ADDQ(operand.U8(80), reg.R14)
	a.DECQ(reg.R13)
	a.JNZ(label(p + "blk"))
	// Store (or add) the 4 tokens' sums at DX, DX+R10, R11, R11+R10 (R11 =
	// DX+2·R10).
	out := []operand.Mem{
		mem(reg.RDX, 0), ifqm(reg.RDX, reg.R10, 0),
		mem(reg.R11, 0), ifqm(reg.R11, reg.R10, 0),
	}
	a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.R10, Scale: 2}, reg.R11)
	a.TESTQ(reg.R9, reg.R9)
	a.JZ(label(p + "st"))
	for t, m := range out {
		a.VADDPS(m, zr[t], zr[t])
	}
	a.Label(p + "st")
	for t, m := range out {
		a.VMOVUPS(zr[t], m)
	}
	a.ADDQ(operand.U8(64), reg.RDX)
	a.DECQ(reg.R8)
	a.JNZ(label(p + "strip"))
	a.VZEROUPPER()
	a.RET()
}

// actQ8I emits ifActQ8I.
func (g *ifqGen) actQ8I() {
	a := g.a
	a.text("ifActQ8I", attr.NOSPLIT, "func(dst, src unsafe.Pointer, nb int)",
		"Rewrites nb Q8_0 blocks at src in layout I at dst.")
	a.load("dst", reg.RDI)
	a.load("src", reg.RSI)
	a.load("nb", reg.RCX)
	a.VBROADCASTI128(g.deint8, yr[14])
	g.bcast32(0x01010101, yr[15])
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label("actdone"))

	a.Label("actblk")
	a.VMOVDQU(mem(reg.RSI, 2), yr[1])
	a.VPSHUFB(yr[14], yr[1], yr[2])
	a.VMOVDQU(yr[2], mem(reg.RDI, 0))
	a.VPXORD(yr[3], yr[3], yr[3])
	a.VPDPBUSD(yr[1], yr[15], yr[3])
	a.VEXTRACTI128(operand.U8(1), yr[3], xr[4])
	a.VPADDD(xr[4], xr[3], xr[3])
	a.VPSHUFD(operand.U8(0x4e), xr[3], xr[4])
	a.VPADDD(xr[4], xr[3], xr[3])
	a.VPSHUFD(operand.U8(0xb1), xr[3], xr[4])
	a.VPADDD(xr[4], xr[3], xr[3])
	a.VCVTDQ2PS(xr[3], xr[3])
	a.MOVWLZX(mem(reg.RSI, 0), reg.EAX)
	a.VMOVD(reg.EAX, xr[5])
	a.VCVTPH2PS(xr[5], xr[5])
	a.VMULSS(xr[5], xr[3], xr[3])
	a.VMOVSS(xr[5], mem(reg.RDI, 32))
	a.VMOVSS(xr[3], mem(reg.RDI, 36))
	a.ADDQ(operand.U8(34), reg.RSI)
	a.ADDQ(operand.U8(40), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(label("actblk"))

	a.Label("actdone")
	a.VZEROUPPER()
	a.RET()
}
