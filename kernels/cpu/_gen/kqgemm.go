package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// kqgemm generates kqgemm_amd64.s: K-quant weights times Q8_K activations
// for several tokens at a time (prefill), AVX-512 with VNNI and VBMI. Each
// kernel unpacks a super-block of 2 rows once (quants in natural order, 64
// to a zmm; scales gathered per word for VPMADDWD) and takes it through 8
// (or 4) tokens, whose quants it reads straight from their Q8_K blocks;
// Q3_K's also has a kernel of one row and 16 tokens (kernel16).
//
// The integer sums are exact, so their grouping is free; the float
// operations per (row, token) are those of kernels/quant's K-quant dot
// products (ggml's x86 order): per super-block, dword lane m of a 64-value
// chunk holds values 4m..4m+3, lanes m and m+8 fold to ggml's lane m
// (values v with (v mod 32)/4 = m), and the (row, token)'s float
// accumulator gains d·dx·lane in one fused multiply-add per lane. The
// mins: Q4_K's four min lanes (−dmin·dx·(m_2k·Σx_2k + m_2k+1·Σx_2k+1))
// ride in lanes 8, 10, 12, 14 of a 16-lane accumulator, Q5_K's one min sum
// in lane 8 (the other upper lanes gather junk that is never read), each
// added after hsum_float_8 as ggml does; Q2_K's min products take their
// own fused multiply-add per lane before the lane sums'. Q6_K and Q3_K,
// whose values are signed, multiply x+128 (x XOR 0x80, unsigned) by q−32
// or q−4, less 128·Σ sc·q by lane, computed once per row-block (negated,
// so that each token's integer sums start there).
//
// Registers: R8, R9 the rows of the current pair (ldw = BX apart), R12 the
// tokens' blocks (ldx = R13 apart), R11 the current token's, AX the
// offset in the rows, CX nb times the block size, DX y, DI the current
// token's outputs, R14 the pairs left. Accumulators Z0..Z7 (row a, tokens
// 0..7) and Z8..Z15 (row b; their ymm halves for the kinds without min
// lanes); the unpacked super-block of the current row in Z16..Z26;
// scratch Z27..Z30; Z31 0x0f bytes; K1 lanes 0..7; K2 bit 0 when adding
// to y.
func kqgemm(a *asm) {
	g := &kqGlobals{
		// Q4_K (and Q5_K): the 6-bit scale and min unpack, the scale
		// gathers per 64-value chunk (words 0..15 sub-block 2c, 16..31
		// sub-block 2c+1), the min gather (each min twice, for the block
		// sums by 16), d and dmin picked from the block's first words,
		// the sign of the min lanes and the word shifts that bring the
		// high nibbles of the upper half down.
		sh4: a.global("kq4sh", 0, 0x0000000400000000),
		m1:  a.global("kq4m1", 0x0f0f0f0f3f3f3f3f, 0x0f0f0f0f3f3f3f3f),
		m2:  a.global("kq4m2", 0x0303030300000000, 0x0303030300000000),
		idx4: [4]operand.Mem{
			a.global("kq4idx0", kqWords(0, 0, 1, 1)...),
			a.global("kq4idx1", kqWords(2, 2, 3, 3)...),
			a.global("kq4idx2", kqWords(4, 4, 5, 5)...),
			a.global("kq4idx3", kqWords(6, 6, 7, 7)...),
		},
		idxm: a.global("kq4idxm", 0x0009000900080008, 0x000b000b000a000a, 0x000d000d000c000c,
			0x000f000f000e000e),
		dm:  a.global("kq4dm", 0, 0, 0x0001000100010001, 0x0001000100010001),
		sgn: a.global("kq4sgn", 0, 0, 0, 0, 0x8000000080000000, 0x8000000080000000, 0x8000000080000000, 0x8000000080000000),
		shr: a.global("kq4shr", kqWords(0, 0, 4, 4)...),
		// Q6_K: the word shifts that bring the 2 high bits of a value (in
		// qh) to bits 4-5 of its byte (left by 4 and 2 for the first 64
		// values of a half, right by 0 and 2 for the last 64), the scale
		// gathers per 64-value chunk (words 8k..8k+7 sub-block 4c+k),
		// 0x20 and 0x30 bytes.
		shl6: a.global("kq6shl", kqWords(4, 4, 2, 2)...),
		shr6: a.global("kq6shr", kqWords(0, 0, 2, 2)...),
		idx6: [4]operand.Mem{
			a.global("kq6idx0", kqWords(0, 1, 2, 3)...),
			a.global("kq6idx1", kqWords(4, 5, 6, 7)...),
			a.global("kq6idx2", kqWords(8, 9, 10, 11)...),
			a.global("kq6idx3", kqWords(12, 13, 14, 15)...),
		},
		c20: a.global("kq620", kqBytes(0x20)...),
		c30: a.global32("kq630", 0x30303030),
		// Q5_K: per 64-value chunk c, the word shifts that bring bit 2c
		// (values of the lower half) and 2c+1 (upper half) of each qh byte
		// to bit 4: left for chunks 0 and 1, right for 2 and 3; and 0x10
		// bytes.
		sh5: [4]operand.Mem{
			a.global("kq5sh0", kqWords(4, 4, 3, 3)...),
			a.global("kq5sh1", kqWords(2, 2, 1, 1)...),
			a.global("kq5sh2", kqWords(0, 0, 1, 1)...),
			a.global("kq5sh3", kqWords(2, 2, 3, 3)...),
		},
		c10: a.global32("kq510", 0x10101010),
		// Q3_K and Q2_K: per 64-value chunk, the word shifts that bring
		// bit pair 2s of each quant byte down (planes 0, 1 for even
		// chunks, 2, 3 for odd ones); Q3_K's hmask shifts that bring bit
		// 4c+s to bit 2 (left for chunk 0, right for the others); the
		// dword shifts of its scales' high bits, and 0x03, 0x04 bytes and
		// 0x20 words.
		qs3: [2]operand.Mem{
			a.global("kq3qs0", kqWords(0, 0, 2, 2)...),
			a.global("kq3qs1", kqWords(4, 4, 6, 6)...),
		},
		hs3: [4]operand.Mem{
			a.global("kq3hs0", kqWords(2, 2, 1, 1)...),
			a.global("kq3hs1", kqWords(0, 0, 1, 1)...),
			a.global("kq3hs2", kqWords(2, 2, 3, 3)...),
			a.global("kq3hs3", kqWords(4, 4, 5, 5)...),
		},
		hsh:  a.global("kq3hsh", 0x0000000200000000, 0x0000000600000004),
		c03:  a.global32("kq303", 0x03030303),
		c04:  a.global32("kq304", 0x04040404),
		c04b: a.global("kq304b", kqBytes(0x04)...),
		w32:  a.global("kq3w32", 0x0020002000200020, 0x0020002000200020, 0x0020002000200020, 0x0020002000200020),
	}
	for _, k := range []kqKind{
		{"Q4_K", 'q', 144, false, g.unpackQ4, g.tokQ4, g.outQ4, g.outQ41},
		{"Q6_K", 's', 210, true, g.unpackQ6, g.tokQ6, g.out8, g.out81},
		{"Q5_K", 'f', 176, false, g.unpackQ5, g.tokQ5, g.outQ5, g.outQ51},
		{"Q3_K", 't', 110, true, g.unpackQ3, g.tokQ6, g.out8, g.out81},
		{"Q2_K", 'u', 84, false, g.unpackQ2, g.tokQ2, g.out8, g.out81},
	} {
		for _, n := range []int{8, 4} {
			g.kernel(a, k, n)
		}
		if k.name == "Q3_K" {
			g.kernel16(a, k)
		}
	}
}

// kqWords returns 64 bytes of int16 words as uint64s: 8 words w0, then 8
// w1, 8 w2 and 8 w3.
func kqWords(w0, w1, w2, w3 uint64) []uint64 {
	var v []uint64
	for _, w := range []uint64{w0, w1, w2, w3} {
		x := w | w<<16 | w<<32 | w<<48
		v = append(v, x, x)
	}
	return v
}

// kqBytes returns 64 bytes b as uint64s.
func kqBytes(b uint64) []uint64 {
	x := b * 0x0101010101010101
	return []uint64{x, x, x, x, x, x, x, x}
}

// global32 starts the static read-only global name<> holding the uint32 v.
func (a *asm) global32(name string, v uint32) operand.Mem {
	m := a.StaticGlobal(name)
	a.DataAttributes(attr.RODATA | attr.NOPTR)
	a.AddDatum(0, operand.U32(v))
	return m
}

// VPDPWSSD emits VPDPWSSD src, z, acc (AVX512_VNNI): acc += the dword sums
// of the products of the int16 pairs of src and z.
func (a *asm) VPDPWSSD(src, z, acc operand.Op) {
	a.raw("VPDPWSSD", nil, src, z, acc)
}

// kqGlobals are the kernels' read-only tables.
type kqGlobals struct {
	a                          *asm
	sh4, m1, m2, idxm, dm, sgn operand.Mem
	shr, shl6, shr6, c20, c30  operand.Mem
	c10, hsh, c03, c04, c04b   operand.Mem
	w32                        operand.Mem
	idx4, idx6, sh5, hs3       [4]operand.Mem
	qs3                        [2]operand.Mem
}

// A kqKind is one K-quant type's kernels.
type kqKind struct {
	name   string
	prefix byte // of the labels
	size   int  // bytes per block
	signed bool // unpacked as q−offset: x+128 times q, Z26 0x80 bytes
	unpack func(p reg.Register)
	tok    func(t int)      // adds token t's product into accumulator t
	out    func(ta, tb int) // stores accumulators ta (row a) and tb (row b)
	out1   func(t int)      // stores accumulator t (one row)
}

// at is disp(p)(AX*1), in the current block of row p.
func at(p reg.Register, disp int) operand.Mem {
	return operand.Mem{Base: p, Index: reg.RAX, Scale: 1, Disp: disp}
}

// kernel emits gemm2x<n><kind>VNNI.
func (g *kqGlobals) kernel(a *asm, k kqKind, n int) {
	g.a = a
	name := fmt.Sprintf("gemm2x%d%sVNNI", n, k.name)
	doc := []string{
		fmt.Sprintf("For q pairs of rows (rows 2i and 2i+1 of nb %s blocks, ldw bytes", k.name),
		fmt.Sprintf("apart) and %d tokens t (rows of Q8_K blocks at x, ldx bytes apart),", n),
		"y[t·ldy/4 + r] = w_r·x_t, or += when acc is not 0.",
	}
	a.text(name, attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)",
		doc...)
	l := func(s string) string { return fmt.Sprintf("%c%d%s", k.prefix, n, s) }

	// Z31 0x0f bytes, K1 lanes 0..7, K2 bit 0 when acc is not 0.
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.MOVL(operand.U32(0xff), reg.EAX)
	a.KMOVW(reg.EAX, reg.K1)
	a.load("acc", reg.RAX)
	a.ANDQ(operand.U8(1), reg.RAX)
	a.KMOVW(reg.EAX, reg.K2)
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.RBX, Scale: 1}, reg.R9)
	a.load("ldx", reg.R13)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("q", reg.R14)
	if k.signed {
		a.MOVL(operand.U32(0x80808080), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z26)
	}
	a.IMUL3Q(operand.U32(k.size), reg.RCX, reg.RCX)
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label(l("done")))
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label(l("done")))

	a.Label(l("pair"))
	for _, r := range []int{0, 8} {
		for t := range n {
			a.VPXORD(zr[r+t], zr[r+t], zr[r+t])
		}
	}
	a.load("x", reg.R12)
	a.XORQ(reg.RAX, reg.RAX)

	a.Label(l("blk"))
	for r, p := range []reg.Register{reg.R8, reg.R9} {
		k.unpack(p)
		a.MOVQ(reg.R12, reg.R11)
		for t := range n {
			k.tok(8*r + t)
		}
	}
	a.ADDQ(operand.U32(k.size), reg.RAX)
	a.ADDQ(operand.U32(292), reg.R12)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label(l("blk")))

	a.MOVQ(reg.RDX, reg.RDI)
	for t := range n {
		k.out(t, 8+t)
	}
	a.ADDQ(operand.U8(8), reg.RDX)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.RBX, Scale: 2}, reg.R8)
	a.LEAQ(operand.Mem{Base: reg.R9, Index: reg.RBX, Scale: 2}, reg.R9)
	a.DECQ(reg.R14)
	a.JNZ(label(l("pair")))

	a.Label(l("done"))
	a.VZEROUPPER()
	a.RET()
}

// gather permutes the words of Z24 by the four tables idx into the
// VPMADDWD scales Z20..Z23.
func (g *kqGlobals) gather(idx [4]operand.Mem) {
	a := g.a
	for c := range 4 {
		t := zr[27+c%2]
		a.VMOVDQU64(idx[c], t)
		a.VPERMW(reg.Z24, t, zr[20+c])
	}
}

// scalesQ4 unpacks the 6-bit scales and mins of the Q4_K or Q5_K block at
// offset AX of row p: the scales for VPMADDWD of chunk c in Z20+c, the
// mins (each twice) in Y25, [d ×8, −dmin ×8] in Z26.
func (g *kqGlobals) scalesQ4(p reg.Register) {
	a := g.a
	a.VMOVDQU32(at(p, 4), reg.X24)
	a.VPSHUFD(operand.U8(0x98), reg.X24, reg.X29)
	a.VPSHUFD(operand.U8(0x50), reg.X24, reg.X30)
	a.VPSRLVD(g.sh4, reg.X29, reg.X29)
	a.VPANDD(g.m1, reg.X29, reg.X29)
	a.VPSRLD(operand.U8(6), reg.X30, reg.X30)
	a.VPANDD(g.m2, reg.X30, reg.X30)
	a.VPSLLD(operand.U8(4), reg.X30, reg.X30)
	a.VPORD(reg.X30, reg.X29, reg.X29)
	a.VPMOVZXBW(reg.X29, reg.Y24)
	g.gather(g.idx4)
	a.VMOVDQU64(g.idxm, reg.Y27)
	a.VPERMW(reg.Y24, reg.Y27, reg.Y25)
	a.VMOVDQU64(g.dm, reg.Y28)
	a.VPERMW(at(p, 0), reg.Y28, reg.Y30)
	a.VCVTPH2PS(reg.Y30, reg.Z26)
	a.VXORPS(g.sgn, reg.Z26, reg.Z26)
}

// unpackQ4 unpacks the Q4_K block at offset AX of row p: quants of chunk
// c (values 64c..64c+63) in Z16+c, the scales as scalesQ4 leaves them.
func (g *kqGlobals) unpackQ4(p reg.Register) {
	a := g.a
	g.scalesQ4(p)
	for c := range 4 {
		z := zr[16+c]
		a.VBROADCASTI64X4(at(p, 16+32*c), z)
		a.VPSRLVW(g.shr, z, z)
		a.VPANDD(reg.Z31, z, z)
	}
}

// unpackQ5 unpacks the Q5_K block at offset AX of row p as unpackQ4 does a
// Q4_K block, bit 4 of chunk c from the qh bytes (in Z28) shifted by sh5[c].
func (g *kqGlobals) unpackQ5(p reg.Register) {
	a := g.a
	g.scalesQ4(p)
	a.VBROADCASTI64X4(at(p, 16), reg.Z28)
	for c := range 4 {
		z := zr[16+c]
		a.VBROADCASTI64X4(at(p, 48+32*c), z)
		a.VPSRLVW(g.shr, z, z)
		a.VPANDD(reg.Z31, z, z)
		if c < 2 {
			a.VPSLLVW(g.sh5[c], reg.Z28, reg.Z29)
		} else {
			a.VPSRLVW(g.sh5[c], reg.Z28, reg.Z29)
		}
		a.VPTERNLOGD_BCST(operand.U8(0xf8), g.c10, reg.Z29, z)
	}
}

// dot leaves in Z27 the dword lane sums of the unpacked quants Z16..Z19
// times the quants of the Q8_K block at R11, weighted by the scales
// Z20..Z23.
func (g *kqGlobals) dot() {
	a := g.a
	a.VPMADDUBSW(mem(reg.R11, 4), reg.Z16, reg.Z27)
	a.VPMADDWD(reg.Z20, reg.Z27, reg.Z27)
	for c := 1; c < 4; c++ {
		a.VPMADDUBSW(mem(reg.R11, 4+64*c), zr[16+c], reg.Z28)
		a.VPDPWSSD(zr[20+c], reg.Z28, reg.Z27)
	}
}

// tokQ4 adds into Z<t> the unpacked Q4_K block times the Q8_K block at
// R11, and moves R11 to the next token.
func (g *kqGlobals) tokQ4(t int) { g.tokQ45(t, false) }

// tokQ5 is tokQ4 for Q5_K: its min sum, Σ m_j·Σx_j as one integer (ggml's
// summs), goes to lane 8; lanes 9..11 get junk that is never read.
func (g *kqGlobals) tokQ5(t int) { g.tokQ45(t, true) }

func (g *kqGlobals) tokQ45(t int, q5 bool) {
	a := g.a
	g.dot()
	a.VPMADDWD(mem(reg.R11, 260), reg.Y25, reg.Y29)
	a.VPSRLQ(operand.U8(32), reg.Y29, reg.Y30)
	a.VPADDD(reg.Y30, reg.Y29, reg.Y29)
	if q5 {
		a.VEXTRACTI32X4(operand.U8(1), reg.Y29, reg.X30)
		a.VPADDD(reg.X30, reg.X29, reg.X29)
		a.VPSHUFD(operand.U8(0xee), reg.X29, reg.X30)
		a.VPADDD(reg.X30, reg.X29, reg.X29)
	}
	a.VSHUFI64X2(operand.U8(0x4e), reg.Z29, reg.Z27, reg.Z30)
	a.VPADDD(reg.Z27, reg.Z30, reg.K1, reg.Z30)
	a.VCVTDQ2PS(reg.Z30, reg.Z30)
	a.VMULPS_BCST(mem(reg.R11, 0), reg.Z26, reg.Z28)
	a.VFMADD231PS(reg.Z28, reg.Z30, zr[t])
	a.ADDQ(reg.R13, reg.R11)
}

// halfQ6 unpacks the 128 values of a half of the Q6_K block at offset AX
// of row p (ql at lo, qh at hi) as q−32 into za (values 0..63 of the
// half) and zb (64..127).
func (g *kqGlobals) halfQ6(p reg.Register, lo, hi int, za, zb reg.VecPhysical) {
	a := g.a
	a.VMOVDQU64(at(p, lo), reg.Z27)
	a.VBROADCASTI64X4(at(p, hi), reg.Z28)
	a.VPANDD(reg.Z31, reg.Z27, za)
	a.VPSLLVW(g.shl6, reg.Z28, reg.Z29)
	a.VPTERNLOGD_BCST(operand.U8(0xf8), g.c30, reg.Z29, za)
	a.VPSUBB(g.c20, za, za)
	a.VPSRLW(operand.U8(4), reg.Z27, reg.Z27)
	a.VPANDD(reg.Z31, reg.Z27, zb)
	a.VPSRLVW(g.shr6, reg.Z28, reg.Z29)
	a.VPTERNLOGD_BCST(operand.U8(0xf8), g.c30, reg.Z29, zb)
	a.VPSUBB(g.c20, zb, zb)
}

// signedTail gathers the scales (words in Y24) into Z20..Z23, loads d ×8
// into Y25 from the half float at off(p)(AX*1), and leaves −128·Σ sc·q by
// dword lane in Z24.
func (g *kqGlobals) signedTail(p reg.Register, off int) {
	a := g.a
	g.gather(g.idx6)
	a.VPBROADCASTW(at(p, off), reg.X25)
	a.VCVTPH2PS(reg.X25, reg.Y25)
	a.VPMADDUBSW(reg.Z16, reg.Z26, reg.Z27)
	a.VPMADDWD(reg.Z20, reg.Z27, reg.Z24)
	for c := 1; c < 4; c++ {
		a.VPMADDUBSW(zr[16+c], reg.Z26, reg.Z27)
		a.VPDPWSSD(zr[20+c], reg.Z27, reg.Z24)
	}
	a.VPXORD(reg.Z27, reg.Z27, reg.Z27)
	a.VPSUBD(reg.Z24, reg.Z27, reg.Z24)
}

// unpackQ6 unpacks the Q6_K block at offset AX of row p: q−32 of chunk c
// in Z16+c, the scales for VPMADDWD of chunk c in Z20+c, −128·Σ sc·(q−32)
// by dword lane in Z24, d ×8 in Y25.
func (g *kqGlobals) unpackQ6(p reg.Register) {
	a := g.a
	g.halfQ6(p, 0, 128, reg.Z16, reg.Z17)
	g.halfQ6(p, 64, 160, reg.Z18, reg.Z19)
	a.VPMOVSXBW(at(p, 192), reg.Y24)
	g.signedTail(p, 208)
}

// unpackQ3 unpacks the Q3_K block at offset AX of row p as unpackQ6 does a
// Q6_K block, with q−4.
func (g *kqGlobals) unpackQ3(p reg.Register) {
	a := g.a
	a.VMOVQ(at(p, 96), reg.X24)
	a.VPSRLW(operand.U8(4), reg.X24, reg.X29)
	a.VPUNPCKLQDQ(reg.X29, reg.X24, reg.X24)
	a.VPANDD(reg.Z31, reg.Z24, reg.Z24)
	a.VPBROADCASTD(at(p, 104), reg.X29)
	a.VPSRLVD(g.hsh, reg.X29, reg.X29)
	a.VPANDD_BCST(g.c03, reg.X29, reg.X29)
	a.VPSLLD(operand.U8(4), reg.X29, reg.X29)
	a.VPORD(reg.X29, reg.X24, reg.X24)
	a.VPMOVZXBW(reg.X24, reg.Y24)
	a.VPSUBW(g.w32, reg.Y24, reg.Y24)
	a.VBROADCASTI64X4(at(p, 0), reg.Z30)
	for c := range 4 {
		z := zr[16+c]
		a.VBROADCASTI64X4(at(p, 32+32*(c/2)), z)
		a.VPSRLVW(g.qs3[c%2], z, z)
		a.VPANDD_BCST(g.c03, z, z)
		if c == 0 {
			a.VPSLLVW(g.hs3[c], reg.Z30, reg.Z29)
		} else {
			a.VPSRLVW(g.hs3[c], reg.Z30, reg.Z29)
		}
		a.VPTERNLOGD_BCST(operand.U8(0xf8), g.c04, reg.Z29, z)
		a.VPSUBB(g.c04b, z, z)
	}
	g.signedTail(p, 108)
}

// tokQ6 adds into Y<t> the unpacked Q6_K or Q3_K block times the Q8_K
// block at R11, and moves R11 to the next token.
func (g *kqGlobals) tokQ6(t int) {
	a := g.a
	a.VMOVDQA64(reg.Z24, reg.Z29)
	for c := range 4 {
		s := zr[27+c%2]
		a.VPXORD(mem(reg.R11, 4+64*c), reg.Z26, s)
		a.VPMADDUBSW(zr[16+c], s, s)
		a.VPDPWSSD(zr[20+c], s, reg.Z29)
	}
	a.VEXTRACTI64X4(operand.U8(1), reg.Z29, reg.Y30)
	a.VPADDD(reg.Y30, reg.Y29, reg.Y29)
	a.VCVTDQ2PS(reg.Y29, reg.Y29)
	a.VMULPS_BCST(mem(reg.R11, 0), reg.Y25, reg.Y30)
	a.VFMADD231PS(reg.Y30, reg.Y29, yr[t])
	a.ADDQ(reg.R13, reg.R11)
}

// unpackQ2 unpacks the Q2_K block at offset AX of row p: quants of chunk c
// in Z16+c, the scales for VPMADDWD of chunk c in Z20+c, the 16 mins as
// words in Y25, [d ×8, −dmin ×8] in Z26.
func (g *kqGlobals) unpackQ2(p reg.Register) {
	a := g.a
	a.VPMOVZXBW(at(p, 0), reg.Y24)
	a.VPSRLW(operand.U8(4), reg.Y24, reg.Y25)
	a.VPANDD(reg.Y31, reg.Y24, reg.Y24)
	for c := range 4 {
		z := zr[16+c]
		a.VBROADCASTI64X4(at(p, 16+32*(c/2)), z)
		a.VPSRLVW(g.qs3[c%2], z, z)
		a.VPANDD_BCST(g.c03, z, z)
	}
	g.gather(g.idx6)
	a.VPBROADCASTW(at(p, 80), reg.X27)
	a.VPBROADCASTW(at(p, 82), reg.X28)
	a.VINSERTI32X4(operand.U8(1), reg.X28, reg.Y27, reg.Y27)
	a.VCVTPH2PS(reg.Y27, reg.Z26)
	a.VXORPS(g.sgn, reg.Z26, reg.Z26)
}

// tokQ2 adds into Y<t> the mins' products of the unpacked Q2_K block and
// the Q8_K block at R11, then its lane sums', and moves R11 to the next
// token.
func (g *kqGlobals) tokQ2(t int) {
	a := g.a
	g.dot()
	a.VEXTRACTI64X4(operand.U8(1), reg.Z27, reg.Y28)
	a.VPADDD(reg.Y28, reg.Y27, reg.Y27)
	a.VCVTDQ2PS(reg.Y27, reg.Y27)
	a.VPMADDWD(mem(reg.R11, 260), reg.Y25, reg.Y29)
	a.VCVTDQ2PS(reg.Y29, reg.Y29)
	a.VMULPS_BCST(mem(reg.R11, 0), reg.Z26, reg.Z28)
	a.VEXTRACTF64X4(operand.U8(1), reg.Z28, reg.Y30)
	a.VFMADD231PS(reg.Y30, reg.Y29, yr[t])
	a.VFMADD231PS(reg.Y28, reg.Y27, yr[t])
	a.ADDQ(reg.R13, reg.R11)
}

// red8 reduces the 8 lanes of Y<t> as hsum_float_8 into the low lane of
// dst.
func (g *kqGlobals) red8(t int, dst reg.VecPhysical) {
	a := g.a
	a.VEXTRACTF32X4(operand.U8(1), yr[t], reg.X29)
	a.VADDPS(xr[t], reg.X29, reg.X29)
	a.VMOVHLPS(reg.X29, reg.X29, reg.X30)
	a.VADDPS(reg.X30, reg.X29, reg.X29)
	a.VMOVSHDUP(reg.X29, reg.X30)
	a.VADDSS(reg.X30, reg.X29, dst)
}

// store stores (or, under K2, adds) X<ta> and X<tb> at DI and 4(DI); DI
// moves to the next token.
func (g *kqGlobals) store(ta, tb int) {
	a := g.a
	a.VADDSS(mem(reg.RDI, 0), xr[ta], reg.K2, xr[ta])
	a.VADDSS(mem(reg.RDI, 4), xr[tb], reg.K2, xr[tb])
	a.VMOVSS(xr[ta], mem(reg.RDI, 0))
	a.VMOVSS(xr[tb], mem(reg.RDI, 4))
	a.ADDQ(a.arg("ldy"), reg.RDI)
}

// out8 reduces Y<ta> and Y<tb> as hsum_float_8 and stores them.
func (g *kqGlobals) out8(ta, tb int) {
	g.red8(ta, xr[ta])
	g.red8(tb, xr[tb])
	g.store(ta, tb)
}

// outQ4 reduces Z<ta> and Z<tb>, each as hsum_float_8 of lanes 0..7 plus
// (l8+l12) + (l10+l14), and stores them.
func (g *kqGlobals) outQ4(ta, tb int) {
	a := g.a
	for _, t := range []int{ta, tb} {
		a.VEXTRACTF32X4(operand.U8(2), zr[t], reg.X28)
		a.VEXTRACTF32X4(operand.U8(3), zr[t], reg.X29)
		a.VADDPS(reg.X29, reg.X28, reg.X28)
		a.VMOVHLPS(reg.X28, reg.X28, reg.X29)
		a.VADDSS(reg.X29, reg.X28, reg.X28)
		g.red8(t, reg.X29)
		a.VADDSS(reg.X28, reg.X29, xr[t])
	}
	g.store(ta, tb)
}

// outQ5 reduces Z<ta> and Z<tb>, each as hsum_float_8 of lanes 0..7 plus
// lane 8, and stores them.
func (g *kqGlobals) outQ5(ta, tb int) {
	a := g.a
	for _, t := range []int{ta, tb} {
		a.VEXTRACTF32X4(operand.U8(2), zr[t], reg.X28)
		g.red8(t, xr[t])
		a.VADDSS(reg.X28, xr[t], xr[t])
	}
	g.store(ta, tb)
}

// kernel16 emits gemm1x16<kind>VNNI: as gemm2x8, one row at a time for 16
// tokens, each unpacked super-block taken through twice the tokens.
// Accumulators Z0..Z15 (tokens 0..15), the rest as in kernel. It pays for
// Q3_K, whose unpack is the longest (BenchmarkKQuantGemm 240–247 →
// 284–288 cpu-GFLOP/s); the others lost (Q2_K, Q4_K, Q5_K 10–18%, reading
// each token's Q8_K block for one row instead of two) or stayed level
// (Q6_K), so only Q3_K's is generated.
func (g *kqGlobals) kernel16(a *asm, k kqKind) {
	g.a = a
	name := fmt.Sprintf("gemm1x16%sVNNI", k.name)
	a.text(name, attr.NOSPLIT,
		"func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, ldx uintptr, nb int, y *float32, ldy uintptr, q int, acc int)",
		fmt.Sprintf("For q rows of nb %s blocks (ldw bytes apart) and 16 tokens t (rows of", k.name),
		"Q8_K blocks at x, ldx bytes apart), y[t·ldy/4 + r] = w_r·x_t, or += when acc",
		"is not 0.")
	l := func(s string) string { return fmt.Sprintf("%c16%s", k.prefix, s) }
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.MOVL(operand.U32(0xff), reg.EAX)
	a.KMOVW(reg.EAX, reg.K1)
	a.load("acc", reg.RAX)
	a.ANDQ(operand.U8(1), reg.RAX)
	a.KMOVW(reg.EAX, reg.K2)
	a.load("w", reg.R8)
	a.load("ldw", reg.RBX)
	a.load("ldx", reg.R13)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("q", reg.R14)
	if k.signed {
		a.MOVL(operand.U32(0x80808080), reg.EAX)
		a.VPBROADCASTD(reg.EAX, reg.Z26)
	}
	a.IMUL3Q(operand.U32(k.size), reg.RCX, reg.RCX)
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label(l("done")))
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(label(l("done")))

	a.Label(l("row"))
	for t := range 16 {
		a.VPXORD(zr[t], zr[t], zr[t])
	}
	a.load("x", reg.R12)
	a.XORQ(reg.RAX, reg.RAX)

	a.Label(l("blk"))
	k.unpack(reg.R8)
	a.MOVQ(reg.R12, reg.R11)
	for t := range 16 {
		k.tok(t)
	}
	a.ADDQ(operand.U32(k.size), reg.RAX)
	a.ADDQ(operand.U32(292), reg.R12)
	a.CMPQ(reg.RAX, reg.RCX)
	a.JB(label(l("blk")))

	a.MOVQ(reg.RDX, reg.RDI)
	for t := range 16 {
		k.out1(t)
	}
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(reg.RBX, reg.R8)
	a.DECQ(reg.R14)
	a.JNZ(label(l("row")))

	a.Label(l("done"))
	a.VZEROUPPER()
	a.RET()
}

// store1 stores (or, under K2, adds) X<t> at DI; DI moves to the next
// token.
func (g *kqGlobals) store1(t int) {
	a := g.a
	a.VADDSS(mem(reg.RDI, 0), xr[t], reg.K2, xr[t])
	a.VMOVSS(xr[t], mem(reg.RDI, 0))
	a.ADDQ(a.arg("ldy"), reg.RDI)
}

// out81 reduces Y<t> as hsum_float_8 and stores it.
func (g *kqGlobals) out81(t int) {
	g.red8(t, xr[t])
	g.store1(t)
}

// outQ41 reduces Z<t> as outQ4 does and stores it.
func (g *kqGlobals) outQ41(t int) {
	a := g.a
	a.VEXTRACTF32X4(operand.U8(2), zr[t], reg.X28)
	a.VEXTRACTF32X4(operand.U8(3), zr[t], reg.X29)
	a.VADDPS(reg.X29, reg.X28, reg.X28)
	a.VMOVHLPS(reg.X28, reg.X28, reg.X29)
	a.VADDSS(reg.X29, reg.X28, reg.X28)
	g.red8(t, reg.X29)
	a.VADDSS(reg.X28, reg.X29, xr[t])
	g.store1(t)
}

// outQ51 reduces Z<t> as outQ5 does and stores it.
func (g *kqGlobals) outQ51(t int) {
	a := g.a
	a.VEXTRACTF32X4(operand.U8(2), zr[t], reg.X28)
	g.red8(t, xr[t])
	a.VADDSS(reg.X28, xr[t], xr[t])
	g.store1(t)
}
