package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// amx generates amx_amd64.s: the prefill GEMM for F16 and BF16 weights on
// AMX (AMX-BF16 tiles), as exact as float32 arithmetic. Every weight is
// split into bfloat16 parts w = w1 + w2 (an F16 value has 11 significant
// bits: w1 takes the top 8, rounded to nearest, w2 the rest; a BF16
// weight is its own w1) and every activation into x = x1 + x2 + x3 (8
// significant bits each, rounded to nearest). The parts are exact, so each
// product wi·xj is exact in float32, and TDPBF16PS accumulates them in
// float32 (round to nearest even; magnitudes below 2^-126 count as zero).
// Five tile products per block of 32 elements for F16 weights (w2·x3,
// below 2^-24 of w·x, is left out), three for BF16.
//
// Tile registers: TMM0-3 the 2×2 accumulator tiles (16 weight rows × 16
// tokens each), TMM4-5 two weight tiles, TMM6-7 two activation tiles, all
// 16 rows of 64 bytes (amxCfg).
//
// Layouts (bfloat16 words): a weight tile holds 16 rows' 32 elements of
// one block of k, in the order π below; an activation tile holds, in row
// kk, the pairs (2kk, 2kk+1) (in order π) of 16 tokens. Within a block of
// 32 elements the order π is VPACKUSDW's on two vectors of 16: word j is
// element 4(j/8) + j%8 for j%8 < 4, else 16 + 4(j/8) + j%8 - 4. The same
// order on both sides leaves the sums unchanged.
//
// Neither avo's x86 database nor the Go assembler knows the AMX
// instructions: the methods in amxenc.go write their VEX bytes, each
// instruction under a comment with its mnemonic (operands in Go order),
// and TestAMXEncodings (amx_encoding_test.go) encodes every such mnemonic
// again, from the SDM's definitions, and compares.
func amx(a *asm) {
	// Palette 1, tiles 0-7 of 16 rows × 64 bytes.
	cfg := a.global("amxCfg", 1, 0, 0x0040004000400040, 0x0040004000400040, 0, 0, 0x1010101010101010, 0)
	amxTile(a, cfg)
	amxPackW(a, true)
	amxPackW(a, false)
	amxPackX(a)
}

// amxTile generates amxTileZ.
func amxTile(a *asm, cfg operand.Mem) {
	a.text("amxTileZ", attr.NOSPLIT,
		"func(w *uint16, wstride uintptr, x *uint16, xstride uintptr, nkb, wparts int, buf *float32, load int, pf *byte, pfoff, pfstride, pfseg uintptr, npf int)",
		"Multiplies 2 weight tiles (rows 0-15 at w, rows 16-31 wstride bytes on;",
		"wparts parts per block, 1 KiB each) by 2 activation tiles (tokens 0-15",
		"at x, 16-31 xstride bytes on; 3 parts per block) over nkb blocks of 32",
		"elements: buf[32r + t] (r < 32 rows, t < 32 tokens) receives the sums,",
		"added to what it holds when load ≠ 0. Meanwhile it prefetches npf lines",
		"into L2, as gemm12x32Z does.")
	a.LEAQ(cfg, reg.RCX)
	a.LDTILECFG(reg.RCX)
	a.load("w", reg.RSI)
	a.load("wstride", reg.RDI)
	a.ADDQ(reg.RSI, reg.RDI)
	a.load("x", reg.RDX)
	a.load("xstride", reg.RAX)
	a.ADDQ(reg.RDX, reg.RAX)
	a.load("pf", reg.R12)
	a.load("pfoff", reg.R14)
	a.load("npf", reg.R13)
	a.load("load", reg.R9)
	a.TESTQ(reg.R9, reg.R9)
	a.JEQ(label("zero"))
	// The accumulators: rows 0-15 and 16-31 (2 KiB apart in buf), tokens
	// 0-15 and 16-31 (64 bytes apart), rows 128 bytes apart.
	acc := []int{0, 64, 2048, 2112}
	a.load("buf", reg.R11)
	a.MOVQ(operand.U32(128), reg.R9)
	for t, d := range acc {
		a.TILELOADD(tmem(d, reg.R11, reg.R9), tmm(t))
	}
	a.JMP(label("start"))

	a.Label("zero")
	for t := range acc {
		a.TILEZERO(tmm(t))
	}

	a.Label("start")
	a.load("nkb", reg.RCX)
	a.MOVQ(operand.U32(64), reg.RBX)
	a.load("wparts", reg.R8)
	a.CMPQ(reg.R8, imm(1))
	a.JEQ(label("loop1"))

	// Tiles of 16 rows, 64 bytes (BX) apart; block parts 1 KiB apart.
	loadW := func(part int) {
		a.TILELOADD(tmem(1024*part, reg.RSI, reg.RBX), 4)
		a.TILELOADD(tmem(1024*part, reg.RDI, reg.RBX), 5)
	}
	loadX := func(part int) {
		a.TILELOADD(tmem(1024*part, reg.RDX, reg.RBX), 6)
		a.TILELOADD(tmem(1024*part, reg.RAX, reg.RBX), 7)
	}
	// products multiplies the weight tiles by the activation tiles into
	// the accumulators, prefetching one line after each pair, and pf more.
	products := func(pf int) {
		a.TDPBF16PS(6, 4, 0)
		a.TDPBF16PS(7, 4, 1)
		a.amxPrefetch()
		a.TDPBF16PS(6, 5, 2)
		a.TDPBF16PS(7, 5, 3)
		for i := 0; i < 1+pf; i++ {
			a.amxPrefetch()
		}
	}

	a.Label("loop2")
	a.Comment("Two weight parts (F16): w1·x3, w1·x2, w2·x2, w2·x1, w1·x1. w2·x3 is",
		"left out: it is below 2^-24 of w·x (|w2| ≤ 2^-8|w|, |x3| ≤ 2^-16|x|).")
	loadW(0)
	loadX(2)
	products(0)
	loadX(1)
	products(0)
	loadW(1)
	products(0)
	loadX(0)
	products(0)
	loadW(0)
	products(0)
	a.ADDQ(imm(2048), reg.RSI)
	a.ADDQ(imm(2048), reg.RDI)
	a.ADDQ(imm(3072), reg.RDX)
	a.ADDQ(imm(3072), reg.RAX)
	a.DECQ(reg.RCX)
	a.JNZ(label("loop2"))
	a.JMP(label("done"))

	a.Label("loop1")
	a.Comment("One weight part (BF16): w1·x1, w1·x2, w1·x3.")
	loadW(0)
	for p := 0; p < 3; p++ {
		loadX(p)
		products(1)
	}
	a.ADDQ(imm(1024), reg.RSI)
	a.ADDQ(imm(1024), reg.RDI)
	a.ADDQ(imm(3072), reg.RDX)
	a.ADDQ(imm(3072), reg.RAX)
	a.DECQ(reg.RCX)
	a.JNZ(label("loop1"))

	a.Label("done")
	a.load("buf", reg.R11)
	a.MOVQ(operand.U32(128), reg.R9)
	for t, d := range acc {
		a.TILESTORED(tmm(t), tmem(d, reg.R11, reg.R9))
	}
	a.TILERELEASE()
	a.RET()
}

// amxPrefetch prefetches the next line of the region described at
// amxTileZ into L2, if any is left: R12 the segment, R14 the offset in it,
// R13 the lines left.
func (a *asm) amxPrefetch() {
	a.nlabel++
	skip := fmt.Sprintf("pf%d", a.nlabel)
	a.TESTQ(reg.R13, reg.R13)
	a.JEQ(label(skip))
	a.PREFETCHT1(operand.Mem{Base: reg.R12, Index: reg.R14, Scale: 1})
	a.DECQ(reg.R13)
	a.ADDQ(imm(64), reg.R14)
	a.CMPQ(reg.R14, a.arg("pfseg"))
	a.JB(label(skip))
	a.XORQ(reg.R14, reg.R14)
	a.ADDQ(a.arg("pfstride"), reg.R12)
	a.Label(skip)
}

// amxRNE rounds the float32s in Z<v> to bfloat16, to nearest even, as
// float32s in Z<dst> (Z<t>: scratch, may be dst): v + 0x7fff + bit 16 of
// v, truncated. Z27 = 0x7fff, Z28 = 1, Z30 = 0xffff0000 in every lane
// (amxConsts). Not for NaNs, and it overflows to infinity within 2^-9 of
// the largest float32.
func (a *asm) amxRNE(v, t, dst int) {
	a.VPSRLD(operand.U8(16), zr[v], zr[t])
	a.VPANDD(reg.Z28, zr[t], zr[t])
	a.VPADDD(reg.Z27, zr[t], zr[t])
	a.VPADDD(zr[v], zr[t], zr[t])
	a.VPANDD(reg.Z30, zr[t], zr[dst])
}

// amxConsts loads the constants of amxRNE, and in Z29 a quiet NaN; R9 the
// scratch.
func (a *asm) amxConsts() {
	for _, c := range []struct {
		v uint32
		z reg.VecPhysical
	}{{0xffff0000, reg.Z30}, {0x7fc00000, reg.Z29}, {1, reg.Z28}, {0x7fff, reg.Z27}} {
		a.MOVL(operand.U32(c.v), reg.R9L)
		a.VPBROADCASTD(reg.R9L, c.z)
	}
}

// amxMasks sets K1, K2 to the valid elements among 0-15 and 16-31 of a
// block whose first R12 elements are valid (R12 > 0); clobbers R11, R13.
func (a *asm) amxMasks() {
	// min16 clamps R13 to at most 16.
	min16 := func() {
		a.nlabel++
		skip := fmt.Sprintf("m%d", a.nlabel)
		a.CMPQ(reg.R13, imm(16))
		a.JLE(label(skip))
		a.MOVQ(operand.U32(16), reg.R13)
		a.Label(skip)
	}
	a.MOVQ(reg.R12, reg.R13)
	min16()
	a.MOVL(operand.I32(-1), reg.R11L)
	a.BZHIQ(reg.R13, reg.R11, reg.R13)
	a.KMOVW(reg.R13L, reg.K1)
	a.MOVQ(reg.R12, reg.R13)
	a.SUBQ(imm(16), reg.R13)
	a.nlabel++
	nonneg := fmt.Sprintf("m%d", a.nlabel)
	a.JGE(label(nonneg))
	a.XORQ(reg.R13, reg.R13)
	a.Label(nonneg)
	min16()
	a.BZHIQ(reg.R13, reg.R11, reg.R13)
	a.KMOVW(reg.R13L, reg.K2)
}

// amxPackW generates amxPackWF16Z (f16) or amxPackWBF16Z.
func amxPackW(a *asm, f16 bool) {
	name, typ, parts := "amxPackWBF16Z", "BF16", 1
	if f16 {
		name, typ, parts = "amxPackWF16Z", "F16", 2
	}
	a.text(name, attr.NOSPLIT, "func(dst *uint16, src *byte, rb uintptr, nrow, n int)",
		fmt.Sprintf("Writes rows r < nrow (≤ 16) of n %s weights (rows rb bytes apart at src)", typ),
		fmt.Sprintf("as %d bfloat16 part(s) in weight-tile layout: block b (32 elements)", parts),
		fmt.Sprintf("at dst[%db:], part p at +512p, row r at +32r, in order π; zero", 512*parts),
		"past row nrow and element n. w1 is w rounded to nearest even (a NaN",
		"gives a quiet NaN), w2 = w - w1 (exact for an F16 weight, |w2| ≤",
		"2^-8|w|; zero where w is not finite).")
	a.load("dst", reg.RDI)
	a.load("src", reg.RSI)
	a.load("rb", reg.RBX)
	a.load("nrow", reg.R8)
	a.load("n", reg.RCX)
	a.amxConsts()
	a.XORQ(reg.R10, reg.R10) // the row

	a.Label("wrow")
	a.MOVQ(reg.RDI, reg.RDX)
	a.MOVQ(reg.RSI, reg.RAX)
	a.MOVQ(reg.RCX, reg.R12) // the elements left in the row

	a.Label("wblock")
	a.amxMasks()
	a.VPXORD(reg.Z0, reg.Z0, reg.Z0)
	a.VPXORD(reg.Z1, reg.Z1, reg.Z1)
	a.CMPQ(reg.R10, reg.R8)
	a.JGE(label("wsplit"))
	for i, k := range []reg.OpmaskPhysical{reg.K1, reg.K2} {
		a.VMOVDQU16_Z(mem(reg.RAX, 32*i), k, yr[i])
		if f16 {
			a.VCVTPH2PS(yr[i], zr[i])
		} else {
			a.VPMOVZXWD(yr[i], zr[i])
			a.VPSLLD(operand.U8(16), zr[i], zr[i])
		}
	}

	a.Label("wsplit")
	a.amxRNE(0, 2, 2)
	a.amxRNE(1, 3, 3)
	a.VCMPPS(operand.U8(3), reg.Z0, reg.Z0, reg.K3)
	a.VMOVDQA32(reg.Z29, reg.K3, reg.Z2)
	a.VCMPPS(operand.U8(3), reg.Z1, reg.Z1, reg.K4)
	a.VMOVDQA32(reg.Z29, reg.K4, reg.Z3)
	if f16 {
		a.VSUBPS(reg.Z2, reg.Z0, reg.Z4)
		a.VSUBPS(reg.Z3, reg.Z1, reg.Z5)
		a.VCMPPS(operand.U8(7), reg.Z4, reg.Z4, reg.K3)
		a.VMOVAPS_Z(reg.Z4, reg.K3, reg.Z4)
		a.VCMPPS(operand.U8(7), reg.Z5, reg.Z5, reg.K4)
		a.VMOVAPS_Z(reg.Z5, reg.K4, reg.Z5)
		a.VPSRLD(operand.U8(16), reg.Z4, reg.Z4)
		a.VPSRLD(operand.U8(16), reg.Z5, reg.Z5)
		a.VPACKUSDW(reg.Z5, reg.Z4, reg.Z7)
		a.VMOVDQU32(reg.Z7, mem(reg.RDX, 1024))
	}
	a.VPSRLD(operand.U8(16), reg.Z2, reg.Z2)
	a.VPSRLD(operand.U8(16), reg.Z3, reg.Z3)
	a.VPACKUSDW(reg.Z3, reg.Z2, reg.Z6)
	a.VMOVDQU32(reg.Z6, mem(reg.RDX, 0))
	a.ADDQ(imm(1024*parts), reg.RDX)
	a.ADDQ(imm(64), reg.RAX)
	a.SUBQ(imm(32), reg.R12)
	a.JGT(label("wblock"))

	a.ADDQ(imm(64), reg.RDI)
	a.ADDQ(reg.RBX, reg.RSI)
	a.INCQ(reg.R10)
	a.CMPQ(reg.R10, imm(16))
	a.JLT(label("wrow"))
	a.VZEROUPPER()
	a.RET()
}

// amxPackX generates amxPackXZ.
func amxPackX(a *asm) {
	a.text("amxPackXZ", attr.NOSPLIT, "func(dst *uint16, x *float32, ldx uintptr, ntok, n int)",
		"Writes tokens t < ntok (≤ 16) of n float32 activations (tokens ldx",
		"bytes apart at x) as 3 bfloat16 parts x = x1 + x2 + x3 in activation-tile",
		"layout: block b at dst[1536b:], part p at +512p, pair kk (elements π(2kk),",
		"π(2kk+1)) of token t at +32kk + 2t; zero past token ntok and element n.",
		"The parts are rounded to nearest even: |x2| ≤ 2^-8|x|, |x3| ≤ 2^-16|x|.",
		"A NaN gives a NaN x1; an infinite x is all x1.")
	a.load("dst", reg.RDI)
	a.load("x", reg.RSI)
	a.load("ldx", reg.RBX)
	a.load("ntok", reg.R8)
	a.load("n", reg.RCX)
	a.MOVQ(reg.RCX, reg.R12) // the elements left

	a.Label("xblock")
	a.amxMasks()
	a.amxConsts()
	a.MOVL(operand.U32(0x7fffffff), reg.R9L)
	a.VPBROADCASTD(reg.R9L, reg.Z26)
	a.MOVL(operand.U32(0x7f7f0000), reg.R9L) // below it, amxRNE cannot overflow
	a.VPBROADCASTD(reg.R9L, reg.Z25)
	a.MOVQ(reg.RSI, reg.RAX)
	a.MOVQ(reg.RDI, reg.RDX)
	a.XORQ(reg.R10, reg.R10) // the token

	a.Label("xtok")
	a.VPXORD(reg.Z0, reg.Z0, reg.Z0)
	a.VPXORD(reg.Z1, reg.Z1, reg.Z1)
	a.CMPQ(reg.R10, reg.R8)
	a.JGE(label("xsplit"))
	a.VMOVUPS_Z(mem(reg.RAX, 0), reg.K1, reg.Z0)
	a.VMOVUPS_Z(mem(reg.RAX, 64), reg.K2, reg.Z1)

	a.Label("xsplit")
	a.Comment("x1: x rounded to bfloat16, truncated where that could overflow (and",
		"for infinities), a quiet NaN for a NaN.")
	a.VPANDD(reg.Z26, reg.Z0, reg.Z4)
	a.VCMPPS(operand.U8(1), reg.Z25, reg.Z4, reg.K5)
	a.VPANDD(reg.Z26, reg.Z1, reg.Z5)
	a.VCMPPS(operand.U8(1), reg.Z25, reg.Z5, reg.K6)
	a.VPANDD(reg.Z30, reg.Z0, reg.Z2)
	a.VPANDD(reg.Z30, reg.Z1, reg.Z3)
	a.amxRNE(0, 4, 4)
	a.amxRNE(1, 5, 5)
	a.VMOVDQA32(reg.Z4, reg.K5, reg.Z2)
	a.VMOVDQA32(reg.Z5, reg.K6, reg.Z3)
	a.VCMPPS(operand.U8(3), reg.Z0, reg.Z0, reg.K3)
	a.VMOVDQA32(reg.Z29, reg.K3, reg.Z2)
	a.VCMPPS(operand.U8(3), reg.Z1, reg.Z1, reg.K4)
	a.VMOVDQA32(reg.Z29, reg.K4, reg.Z3)
	a.Comment("r = x - x1 (exact; zero where x is not finite), x2 = r rounded,",
		"x3 = r - x2 (exact, 8 bits at most).")
	a.VSUBPS(reg.Z2, reg.Z0, reg.Z4)
	a.VSUBPS(reg.Z3, reg.Z1, reg.Z5)
	a.VCMPPS(operand.U8(7), reg.Z4, reg.Z4, reg.K3)
	a.VMOVAPS_Z(reg.Z4, reg.K3, reg.Z4)
	a.VCMPPS(operand.U8(7), reg.Z5, reg.Z5, reg.K4)
	a.VMOVAPS_Z(reg.Z5, reg.K4, reg.Z5)
	a.amxRNE(4, 6, 6)
	a.amxRNE(5, 7, 7)
	a.VSUBPS(reg.Z6, reg.Z4, reg.Z8)
	a.VSUBPS(reg.Z7, reg.Z5, reg.Z9)
	// The parts x1, x2, x3 of elements 0-15 in Z2, Z6, Z8, of 16-31 in the
	// next register: as bfloat16, packed in order π.
	parts := []int{2, 6, 8}
	for _, z := range parts {
		a.VPSRLD(operand.U8(16), zr[z], zr[z])
		a.VPSRLD(operand.U8(16), zr[z+1], zr[z+1])
	}
	for p, z := range parts {
		a.VPACKUSDW(zr[z+1], zr[z], zr[10+p])
	}
	for p := range parts {
		a.VMOVDQU32(zr[10+p], mem(reg.RDX, 1024*p))
	}
	a.ADDQ(reg.RBX, reg.RAX)
	a.ADDQ(imm(64), reg.RDX)
	a.INCQ(reg.R10)
	a.CMPQ(reg.R10, imm(16))
	a.JLT(label("xtok"))

	a.Comment("Each part now holds token t's 16 pairs in row t: transpose the",
		"16×16 pairs in place.")
	a.MOVQ(reg.RDI, reg.R10)
	for p := 0; p < 3; p++ {
		if p > 0 {
			a.ADDQ(imm(1024), reg.R10)
		}
		a.transpose16(reg.R10)
	}
	a.ADDQ(imm(3072), reg.RDI)
	a.ADDQ(imm(128), reg.RSI)
	a.SUBQ(imm(32), reg.R12)
	a.JGT(label("xblock"))
	a.VZEROUPPER()
	a.RET()
}

// transpose16 transposes the 16×16 dwords at (r) (rows of 64 bytes) in
// place, through Z0-Z31.
func (a *asm) transpose16(r reg.Register) {
	for i := 0; i < 16; i++ {
		a.VMOVDQU32(mem(r, 64*i), zr[i])
	}
	// Dwords, then qwords, of row pairs interleaved.
	for i := 0; i < 8; i++ {
		a.VUNPCKLPS(zr[2*i+1], zr[2*i], zr[16+2*i])
		a.VUNPCKHPS(zr[2*i+1], zr[2*i], zr[17+2*i])
	}
	for g := 0; g < 4; g++ {
		for h := 0; h < 2; h++ {
			a.VUNPCKLPD(zr[18+4*g+h], zr[16+4*g+h], zr[4*g+2*h])
			a.VUNPCKHPD(zr[18+4*g+h], zr[16+4*g+h], zr[4*g+2*h+1])
		}
	}
	// Then the 128-bit lanes, in two rounds.
	for j := 0; j < 4; j++ {
		a.VSHUFF32X4(operand.U8(0x44), zr[4+j], zr[j], zr[16+4*j])
		a.VSHUFF32X4(operand.U8(0x44), zr[12+j], zr[8+j], zr[17+4*j])
		a.VSHUFF32X4(operand.U8(0xee), zr[4+j], zr[j], zr[18+4*j])
		a.VSHUFF32X4(operand.U8(0xee), zr[12+j], zr[8+j], zr[19+4*j])
	}
	for j := 0; j < 4; j++ {
		for h := 0; h < 2; h++ {
			for s, imm := range []uint8{0x88, 0xdd} {
				d := j + 4*(2*h+s)
				a.VSHUFF32X4(operand.U8(imm), zr[17+4*j+2*h], zr[16+4*j+2*h], zr[d])
				a.VMOVDQU32(zr[d], mem(r, 64*d))
			}
		}
	}
}

// imm is the immediate v ≥ 0, typed for avo's operand checks as a byte
// when it fits in a signed one.
func imm(v int) operand.Op {
	if v < 128 {
		return operand.U8(v)
	}
	return operand.U32(v)
}
