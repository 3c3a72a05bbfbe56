package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// kquanty generates kquanty_amd64.s: K-quant weights (Q2_K..Q6_K) times
// Q8_K activations (d float32 at 0, 256 int8 quants at 4, 16 int16 sums
// of 16 at 260), AVX2 + FMA + F16C, one row at a time.
//
// They sum in the order of kernels/quant's K-quant dot products (ggml's
// AVX2 ggml_vec_dot_q*_K_q8_K): per block, VPMADDUBSW multiplies the
// unsigned quants (before any offset: Q3_K's -4 and Q6_K's -32 are
// subtracted as the products of the offset with the activations) by the
// signed activations into int16 pairs, VPMADDWD multiplies those by the
// int16 sub-block scales into int32 lane (e mod 32)/4, and the lanes are
// added up exactly over the block; the row's eight float32 accumulators
// (Y14) gain d·lane in one VFMADD231PS. No int16 step can saturate: the
// largest pair is Q6_K's 2·63·128 = 16128. The quants of Q8_K reach -128,
// so no sign trick (VPSIGNB) is used on them.
//
// Registers: SI the row, DI the activations, CX nb, DX y, R14 the rows
// left, R11 and R12 the current weight and activation blocks, R13 the
// blocks left, AX BX R8 R9 R10 scratch; Y14 the accumulators, Y12 the
// block's integer lanes.
func kquanty(a *asm) {
	g := &kyGlobals{
		k4: a.global("ky4shuf", kyShuf(8, 2)...),
		q3: a.global("ky3shuf", kyShuf(4, 1)...),
		c30: a.global("ky30", 0x3030303030303030, 0x3030303030303030, 0x3030303030303030,
			0x3030303030303030),
		w32: a.global("ky32w", 0x0020002000200020, 0x0020002000200020, 0x0020002000200020,
			0x0020002000200020),
		sh3: a.global("ky3sh", 0x0000000200000000, 0x0000000600000004),
	}
	for _, k := range []kyKind{
		{"Q6_K", 210, map[int]byte{15: 0x0f, 13: 0x30, 11: 0x20}, a.kyQ6},
		{"Q5_K", 176, map[int]byte{15: 0x0f, 7: 0x10}, a.kyQ5},
		{"Q4_K", 144, map[int]byte{15: 0x0f}, a.kyQ4},
		{"Q3_K", 110, map[int]byte{15: 0x03, 13: 0x04}, a.kyQ3},
		{"Q2_K", 84, map[int]byte{15: 0x03, 13: 0x0f}, a.kyQ2},
	} {
		a.kyGemv(k, g)
	}
	iq4 := a.global("kyiq4", 0xf6eaddcfbfad9881, 0x7159453526190d01)
	iq4sh := a.global("kyiq4sh", 0, 0, 0x0000000400000004, 0x0000000400000004)
	a.iq4Gemv(iq4, iq4sh, false)
	a.iq4Gemv(iq4, iq4sh, true)
}

// kyShuf returns n VPSHUFB masks of 32 bytes as uint64s. With step 2
// (Q4_K, Q5_K: a scale per 32 values) mask i repeats int16 word i across
// both 128-bit halves; with step 1 (Q6_K, Q3_K, Q2_K: a scale per 16
// values) it repeats word 2i in the low half and word 2i+1 in the high.
func kyShuf(n, step int) []uint64 {
	var v []uint64
	for i := range n {
		for q := range 4 {
			w := i
			if step == 1 {
				w = 2*i + q/2
			}
			lo, hi := uint64(2*w), uint64(2*w+1)
			var x uint64
			for b := range 4 {
				x |= (lo | hi<<8) << (16 * b)
			}
			v = append(v, x)
		}
	}
	return v
}

// kyGlobals are the kernels' read-only tables.
type kyGlobals struct {
	k4  operand.Mem // 8 masks broadcasting int16 word i (Q4_K, Q5_K scales)
	q3  operand.Mem // 4 masks: word 2i in the low half, 2i+1 in the high
	c30 operand.Mem // 0x30 bytes
	w32 operand.Mem // int16 32s
	sh3 operand.Mem // dword shift counts 0, 2, 4, 6 (Q3_K scales)
}

// kyKind is one K-quant: its name, block size, byte constants and block
// body, which adds one block at R11 (weights) and R12 (activations) into
// Y14.
type kyKind struct {
	name   string
	bb     int
	consts map[int]byte // Y<r> holds 32 bytes of consts[r]
	body   func(g *kyGlobals)
}

const kyGemvSig = "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, nrows int, acc int)"

// kyGemv generates gemv<k>AVX2.
func (a *asm) kyGemv(k kyKind, g *kyGlobals) {
	a.text("gemv"+k.name+"AVX2", attr.NOSPLIT, kyGemvSig,
		"For each of nrows rows of nb "+k.name+" blocks (ldw bytes apart), y[r] = w_r·x",
		"(or += when acc is not 0, one addition after the row's sum); x holds",
		"nb Q8_K blocks, nb > 0.")
	a.load("w", reg.RSI)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("nrows", reg.R14)
	for _, r := range []int{15, 13, 11, 7} {
		if b, ok := k.consts[r]; ok {
			a.bconst(b, r)
		}
	}
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	a.Label("row")
	a.VXORPS(reg.Y14, reg.Y14, reg.Y14)
	if _, ok := k.consts[13]; !ok {
		a.VXORPS(reg.X13, reg.X13, reg.X13) // Q4_K's min lanes, Q5_K's min sum
	}
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)

	a.Label("blk")
	k.body(g)
	a.ADDQ(operand.U32(k.bb), reg.R11)
	a.ADDQ(operand.U32(292), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	a.Comment("hsum_float_8 of the accumulators, then the min terms.")
	a.hsum8y(14, 0, false)
	switch k.name {
	case "Q4_K":
		// (m0+m2) + (m1+m3), as the last steps of hsum_float_8.
		a.VMOVHLPS(reg.X13, reg.X13, reg.X1)
		a.VADDPS(reg.X1, reg.X13, reg.X13)
		a.VMOVSHDUP(reg.X13, reg.X1)
		a.VADDSS(reg.X1, reg.X13, reg.X13)
		a.VADDSS(reg.X13, reg.X14, reg.X14)
	case "Q5_K":
		a.VADDSS(reg.X13, reg.X14, reg.X14)
	}
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("store"))
	a.VADDSS(mem(reg.RDX, 0), reg.X14, reg.X14)
	a.Label("store")
	a.VMOVSS(reg.X14, mem(reg.RDX, 0))
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(a.arg("ldw"), reg.RSI)
	a.DECQ(reg.R14)
	a.JNZ(label("row"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// kyD sets Y<d> to the broadcast block scale yd·f16(w at off(R11)) and,
// when m >= 0, Y<m> to yd·f16(w at off+2), the min scale before its
// negation (which the callers fold into VFNMADD); X<t> is scratch.
func (a *asm) kyD(off, d, m, t int) {
	if m >= 0 {
		a.MOVL(mem(reg.R11, off), reg.EAX)
	} else {
		a.MOVWLZX(mem(reg.R11, off), reg.EAX)
	}
	a.VMOVD(reg.EAX, xr[d])
	a.VCVTPH2PS(xr[d], xr[d])
	a.VBROADCASTSS(mem(reg.R12, 0), xr[t])
	a.VMULPS(xr[t], xr[d], xr[d])
	if m >= 0 {
		a.VMOVSHDUP(xr[d], xr[m])
		a.VBROADCASTSS(xr[m], yr[m])
	}
	a.VBROADCASTSS(xr[d], yr[d])
}

// kyLanes multiplies the 32 unsigned quants in Y<q> by the activations at
// off(R12) and the int16 scales that mask m picks from Y<s>, and adds the
// int32 lanes to Y12. With sub >= 0 the products of the 32 offset bytes in
// Y<sub> with the same activations are subtracted first (Y<t> scratch).
func (a *asm) kyLanes(q int, off int, sub int, m operand.Mem, s, t int) {
	if sub >= 0 {
		a.VMOVDQU(mem(reg.R12, off), yr[t])
		a.VPMADDUBSW(yr[t], yr[q], yr[q])
		a.VPMADDUBSW(yr[t], yr[sub], yr[t])
		a.VPSUBW(yr[t], yr[q], yr[q])
	} else {
		a.VPMADDUBSW(mem(reg.R12, off), yr[q], yr[q])
	}
	a.VPSHUFB(m, yr[s], yr[t])
	a.VPMADDWD(yr[t], yr[q], yr[q])
	a.VPADDD(yr[q], yr[12], yr[12])
}

// kyFMA adds d·lanes (Y12 times Y<d>) into the accumulators Y14.
func (a *asm) kyFMA(d int) {
	a.VCVTDQ2PS(reg.Y12, reg.Y12)
	a.VFMADD231PS(reg.Y12, yr[d], reg.Y14)
}

// bconst sets Y<y> to 32 bytes of b (AX scratch).
func (a *asm) bconst(b byte, y int) {
	a.MOVL(operand.U32(uint32(b)*0x01010101), reg.EAX)
	a.VMOVD(reg.EAX, xr[y])
	a.VPBROADCASTD(xr[y], yr[y])
}

// k4ScaleBytes unpacks the 12 packed 6-bit scales and mins of the Q4_K or
// Q5_K block at R11 as ggml's utmp shuffle does: the 8 scales as bytes in
// RAX, the 8 mins in R9 (BX, R8 and R10 scratch).
func (a *asm) k4ScaleBytes() {
	a.MOVL(mem(reg.R11, 4), reg.EAX)   // u0
	a.MOVL(mem(reg.R11, 8), reg.R8L)   // u1
	a.MOVL(mem(reg.R11, 12), reg.R10L) // u2
	// mins 0-3: u1 & 0x3f
	a.MOVL(reg.R8L, reg.R9L)
	a.ANDL(operand.U32(0x3f3f3f3f), reg.R9L)
	// mins 4-7: (u2>>4)&0x0f | ((u1>>6)&3)<<4
	a.MOVL(reg.R10L, reg.EBX)
	a.SHRL(operand.U8(4), reg.EBX)
	a.ANDL(operand.U32(0x0f0f0f0f), reg.EBX)
	a.SHRL(operand.U8(2), reg.R8L)
	a.ANDL(operand.U32(0x30303030), reg.R8L)
	a.ORL(reg.R8L, reg.EBX)
	// scales 4-7: u2&0x0f | ((u0>>6)&3)<<4
	a.ANDL(operand.U32(0x0f0f0f0f), reg.R10L)
	a.MOVL(reg.EAX, reg.R8L)
	a.SHRL(operand.U8(2), reg.R8L)
	a.ANDL(operand.U32(0x30303030), reg.R8L)
	a.ORL(reg.R8L, reg.R10L)
	// scales 0-3: u0 & 0x3f
	a.ANDL(operand.U32(0x3f3f3f3f), reg.EAX)
	a.SHLQ(operand.U8(32), reg.R10)
	a.ORQ(reg.R10, reg.RAX)
	a.SHLQ(operand.U8(32), reg.RBX)
	a.ORQ(reg.RBX, reg.R9)
}

// kyScalesK4 decodes the 12 packed 6-bit scales and mins of a Q4_K or Q5_K
// block (at 4(R11)) into Y11 (the 8 scales as int16, in both halves) and
// X5 (the 8 mins as int16), as ggml's utmp shuffle does.
func (a *asm) kyScalesK4() {
	a.k4ScaleBytes()
	a.VMOVQ(reg.RAX, reg.X4)
	a.VPINSRQ(operand.U8(1), reg.R9, reg.X4, reg.X4)
	a.VPMOVZXBW(reg.X4, reg.Y4)
	a.VEXTRACTI128(operand.U8(1), reg.Y4, reg.X5)
	a.VPERMQ(operand.U8(0x44), reg.Y4, reg.Y11)
}

// kyMinsK4 sets X6 to ggml's four Q4_K/Q5_K min products (int32): the
// mins in X5 times the sums of pairs of adjacent bsums (X1 scratch).
func (a *asm) kyMinsK4() {
	a.VMOVDQU(mem(reg.R12, 260), reg.Y6)
	a.VEXTRACTI128(operand.U8(1), reg.Y6, reg.X1)
	a.VPHADDW(reg.X1, reg.X6, reg.X6)
	a.VPMADDWD(reg.X5, reg.X6, reg.X6)
}

// kyQ4 is a Q4_K block: d, dmin at 0, scales at 4, 128 bytes of nibbles at
// 16. Y15 holds 0x0f bytes; X13 the four min accumulators.
func (a *asm) kyQ4(g *kyGlobals) {
	a.kyBlkK4(g, false)
}

// kyQ5 is a Q5_K block: as Q4_K with the fifth bits at 16 (32 bytes) and
// the nibbles at 48; X13 (lane 0) the min sum.
func (a *asm) kyQ5(g *kyGlobals) {
	a.kyBlkK4(g, true)
}

// kyBlkK4 is the shared body of kyQ4 and kyQ5.
func (a *asm) kyBlkK4(g *kyGlobals, q5 bool) {
	a.kyScalesK4()
	a.kyMinsK4()
	a.kyD(0, 10, 9, 0)
	if q5 {
		a.VPHADDD(reg.X6, reg.X6, reg.X6)
		a.VPHADDD(reg.X6, reg.X6, reg.X6)
		a.VCVTDQ2PS(reg.X6, reg.X6)
		a.VFNMADD231SS(reg.X6, reg.X9, reg.X13)
	} else {
		a.VCVTDQ2PS(reg.X6, reg.X6)
		a.VFNMADD231PS(reg.X6, reg.X9, reg.X13)
	}
	qs := 16
	if q5 {
		qs = 48
		a.VMOVDQU(mem(reg.R11, 16), reg.Y8)
	}
	a.VPXOR(reg.Y12, reg.Y12, reg.Y12)
	for j := range 4 {
		a.VMOVDQU(mem(reg.R11, qs+32*j), reg.Y0)
		a.VPSRLW(operand.U8(4), reg.Y0, reg.Y1)
		a.VPAND(reg.Y15, reg.Y0, reg.Y0)
		a.VPAND(reg.Y15, reg.Y1, reg.Y1)
		if q5 {
			a.kyBit5(2*j, 2)
			a.VPOR(reg.Y2, reg.Y0, reg.Y0)
			a.kyBit5(2*j+1, 3)
			a.VPOR(reg.Y3, reg.Y1, reg.Y1)
		}
		a.kyLanes(0, 4+64*j, -1, g.k4.Offset(64*j), 11, 2)
		a.kyLanes(1, 36+64*j, -1, g.k4.Offset(64*j+32), 11, 3)
	}
	a.kyFMA(10)
}

// kyBit5 sets Y<y> to 16 where bit b of the qh bytes in Y8 is set, 0
// elsewhere (Y7 holds 0x10 bytes). Word shifts keep the bit in its byte:
// left by at most 4 to bit 4, or right by at most 3.
func (a *asm) kyBit5(b, y int) {
	switch {
	case b < 4:
		a.VPSLLW(operand.U8(4-b), reg.Y8, yr[y])
		a.VPAND(reg.Y7, yr[y], yr[y])
	case b == 4:
		a.VPAND(reg.Y7, reg.Y8, yr[y])
	default:
		a.VPSRLW(operand.U8(b-4), reg.Y8, yr[y])
		a.VPAND(reg.Y7, yr[y], yr[y])
	}
}

// kyScales16 sets Y10 and Y9 to the int16 scales 0-7 and 8-15 (each in
// both halves) from 16 scales in X<x>, sign-extended if signed.
func (a *asm) kyScales16(x int, signed bool) {
	if signed {
		a.VPMOVSXBW(xr[x], yr[x])
	} else {
		a.VPMOVZXBW(xr[x], yr[x])
	}
	a.VPERMQ(operand.U8(0x44), yr[x], reg.Y10)
	a.VPERMQ(operand.U8(0xee), yr[x], reg.Y9)
}

// kyQ6 is a Q6_K block: 128 bytes of low nibbles at 0, 64 bytes of high
// bit pairs at 128, 16 int8 scales at 192, d at 208. Y15 holds 0x0f
// bytes, Y13 0x30, Y11 0x20 (the offset).
func (a *asm) kyQ6(g *kyGlobals) {
	a.VMOVDQU(mem(reg.R11, 192), reg.X0)
	a.kyScales16(0, true)
	a.VPXOR(reg.Y12, reg.Y12, reg.Y12)
	for h := range 2 {
		a.VMOVDQU(mem(reg.R11, 64*h), reg.Y0)
		a.VMOVDQU(mem(reg.R11, 64*h+32), reg.Y1)
		a.VMOVDQU(mem(reg.R11, 128+32*h), reg.Y2)
		s := []int{10, 9}[h]
		for k := range 4 {
			// High bits: qh bit pair k to bits 4-5.
			switch k {
			case 0:
				a.VPSLLW(operand.U8(4), reg.Y2, reg.Y3)
				a.VPAND(reg.Y13, reg.Y3, reg.Y3)
			case 1:
				a.VPSLLW(operand.U8(2), reg.Y2, reg.Y3)
				a.VPAND(reg.Y13, reg.Y3, reg.Y3)
			case 2:
				a.VPAND(reg.Y13, reg.Y2, reg.Y3)
			case 3:
				a.VPSRLW(operand.U8(2), reg.Y2, reg.Y3)
				a.VPAND(reg.Y13, reg.Y3, reg.Y3)
			}
			lo := []int{0, 1, 0, 1}[k]
			if k < 2 {
				a.VPAND(reg.Y15, yr[lo], reg.Y4)
			} else {
				a.VPSRLW(operand.U8(4), yr[lo], reg.Y4)
				a.VPAND(reg.Y15, reg.Y4, reg.Y4)
			}
			a.VPOR(reg.Y3, reg.Y4, reg.Y4)
			a.kyLanes(4, 4+128*h+32*k, 11, g.q3.Offset(32*k), s, 5)
		}
	}
	a.kyD(208, 8, -1, 0)
	a.kyFMA(8)
}

// kyQ3 is a Q3_K block: 32 bytes of high bits at 0, 64 bytes of bit pairs
// at 32, 12 bytes of packed 6-bit scales at 96, d at 108. Y15 holds 0x03
// bytes, Y13 0x04 (the offset where a high bit is clear).
func (a *asm) kyQ3(g *kyGlobals) {
	// Scales: low 4 bits from the first 8 bytes (then their high
	// nibbles), bits 4-5 from bit pair j/4 of byte 8 + j%4.
	a.VMOVQ(mem(reg.R11, 96), reg.X0)
	a.VPSRLW(operand.U8(4), reg.X0, reg.X1)
	a.VPUNPCKLQDQ(reg.X1, reg.X0, reg.X0)
	a.VPBROADCASTD(mem(reg.R11, 104), reg.X1)
	a.VPSRLVD(g.sh3, reg.X1, reg.X1)
	a.VPSLLD(operand.U8(4), reg.X1, reg.X1)
	a.VPAND(g.c30, reg.X1, reg.X1)
	a.bconst(0x0f, 2)
	a.VPAND(reg.X2, reg.X0, reg.X0)
	a.VPOR(reg.X1, reg.X0, reg.X0)
	a.VPMOVZXBW(reg.X0, reg.Y0)
	a.VPSUBW(g.w32, reg.Y0, reg.Y0)
	a.VPERMQ(operand.U8(0x44), reg.Y0, reg.Y10)
	a.VPERMQ(operand.U8(0xee), reg.Y0, reg.Y9)
	a.VMOVDQU(mem(reg.R11, 0), reg.Y11)
	a.VPXOR(reg.Y12, reg.Y12, reg.Y12)
	for c := range 2 {
		a.VMOVDQU(mem(reg.R11, 32+32*c), reg.Y0)
		s := []int{10, 9}[c]
		for k := range 4 {
			if k == 0 {
				a.VPAND(reg.Y15, reg.Y0, reg.Y1)
			} else {
				a.VPSRLW(operand.U8(2*k), reg.Y0, reg.Y1)
				a.VPAND(reg.Y15, reg.Y1, reg.Y1)
			}
			// 4 where bit 4c+k of hmask is clear: move it to bit 2.
			b := 4*c + k
			switch {
			case b < 2:
				a.VPSLLW(operand.U8(2-b), reg.Y11, reg.Y2)
				a.VPANDN(reg.Y13, reg.Y2, reg.Y2)
			case b == 2:
				a.VPANDN(reg.Y13, reg.Y11, reg.Y2)
			default:
				a.VPSRLW(operand.U8(b-2), reg.Y11, reg.Y2)
				a.VPANDN(reg.Y13, reg.Y2, reg.Y2)
			}
			a.kyLanes(1, 4+128*c+32*k, 2, g.q3.Offset(32*k), s, 3)
		}
	}
	a.kyD(108, 8, -1, 0)
	a.kyFMA(8)
}

// kyQ2 is a Q2_K block: 16 bytes of scale (low) and min (high) nibbles at
// 0, 64 bytes of bit pairs at 16, d at 80, dmin at 82. Y15 holds 0x03
// bytes, Y13 0x0f. The min products go into the accumulators before the
// block's lanes, as in ggml.
func (a *asm) kyQ2(g *kyGlobals) {
	a.VMOVDQU(mem(reg.R11, 0), reg.X0)
	a.VPSRLW(operand.U8(4), reg.X0, reg.X1)
	a.VPAND(reg.X13, reg.X1, reg.X1)
	a.VPMOVZXBW(reg.X1, reg.Y1)
	a.VPMADDWD(mem(reg.R12, 260), reg.Y1, reg.Y1)
	a.VCVTDQ2PS(reg.Y1, reg.Y1)
	a.kyD(80, 8, 7, 2)
	a.VFNMADD231PS(reg.Y1, reg.Y7, reg.Y14)
	a.VPAND(reg.X13, reg.X0, reg.X0)
	a.kyScales16(0, false)
	a.VPXOR(reg.Y12, reg.Y12, reg.Y12)
	for c := range 2 {
		a.VMOVDQU(mem(reg.R11, 16+32*c), reg.Y0)
		s := []int{10, 9}[c]
		for k := range 4 {
			if k == 0 {
				a.VPAND(reg.Y15, reg.Y0, reg.Y1)
			} else {
				a.VPSRLW(operand.U8(2*k), reg.Y0, reg.Y1)
				a.VPAND(reg.Y15, reg.Y1, reg.Y1)
			}
			a.kyLanes(1, 4+128*c+32*k, -1, g.q3.Offset(32*k), s, 3)
		}
	}
	a.kyFMA(8)
}

// iq4Gemv generates gemvIQ4_NLAVX2 or, with batch, gemvIQ4_NLBAVX2:
// IQ4_NL weights (blocks of 32: f16 d, 16 bytes of indices into ggml's
// kvalues_iq4nl, at vals) times Q8_0 activations (f16 d, 32 int8), in the
// order of kernels/quant's DotIQ4_NLQ8_0 (ggml's AVX2 dot product: pairs
// of blocks into two sets of 8 accumulators, Y14 and Y13, added before
// hsum_float_8, an odd last block fused into the sum as one exact integer
// sum) or DotIQ4_NLQ8_0Batch (every block in turn into Y14). The values
// times the activations go through VPABSB and VPSIGNB, as in ggml: exact
// for activation quants in [-127, 127], which is all Q8_0 quantizing
// writes. Y15 holds 0x0f bytes, Y11 the 16 values in both halves, Y10
// int16 ones, Y9 the dword shift counts 0 (low half) and 4 (high half)
// that take the indices of elements 0-15 and 16-31 from one broadcast
// 16-byte load. The vector units are the bottleneck, so a pair's scales
// are put together in general registers.
func (a *asm) iq4Gemv(vals, shifts operand.Mem, batch bool) {
	name := "gemvIQ4_NLAVX2"
	if batch {
		name = "gemvIQ4_NLBAVX2"
	}
	a.text(name, attr.NOSPLIT, kyGemvSig,
		"For each of nrows rows of nb IQ4_NL blocks (ldw bytes apart), y[r] = w_r·x",
		"(or += when acc is not 0, one addition after the row's sum); x holds",
		"nb Q8_0 blocks, nb > 0.")
	a.load("w", reg.RSI)
	a.load("x", reg.RDI)
	a.load("nb", reg.RCX)
	a.load("y", reg.RDX)
	a.load("nrows", reg.R14)
	a.bconst(0x0f, 15)
	a.VBROADCASTI128(vals, reg.Y11)
	a.MOVL(operand.U32(0x00010001), reg.EAX)
	a.VMOVD(reg.EAX, reg.X10)
	a.VPBROADCASTD(reg.X10, reg.Y10)
	a.VMOVDQU(shifts, reg.Y9)
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	a.Label("row")
	a.VXORPS(reg.Y14, reg.Y14, reg.Y14)
	a.VXORPS(reg.Y13, reg.Y13, reg.Y13)
	a.MOVQ(reg.RSI, reg.R11)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)
	a.SHRQ(operand.U8(1), reg.R13)
	a.JZ(label("sum"))
	a.Label("pair")
	a.iq4Ints(0, 0)
	a.iq4Ints(1, 4)
	a.iq4D2()
	a.VCVTDQ2PS(reg.Y0, reg.Y0)
	a.VFMADD231PS(reg.Y0, reg.Y2, reg.Y14)
	a.VCVTDQ2PS(reg.Y4, reg.Y4)
	if batch {
		a.VFMADD231PS(reg.Y4, reg.Y3, reg.Y14)
	} else {
		a.VFMADD231PS(reg.Y4, reg.Y3, reg.Y13)
	}
	a.ADDQ(operand.U8(36), reg.R11)
	a.ADDQ(operand.U8(68), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("pair"))

	a.Label("sum")
	if batch {
		a.TESTQ(operand.U32(1), reg.RCX)
		a.JZ(label("hsum"))
		a.iq4Ints(0, 0)
		a.iq4D1()
		a.VCVTDQ2PS(reg.Y0, reg.Y0)
		a.VFMADD231PS(reg.Y0, reg.Y2, reg.Y14)
		a.Label("hsum")
		a.hsum8y(14, 0, false)
	} else {
		a.VADDPS(reg.Y13, reg.Y14, reg.Y14)
		a.hsum8y(14, 0, false)
		a.TESTQ(operand.U32(1), reg.RCX)
		a.JZ(label("fin"))
		a.Comment("The odd last block: one exact integer sum, one scalar FMA.")
		a.iq4Ints(0, 0)
		a.iq4D1()
		a.VEXTRACTI128(operand.U8(1), reg.Y0, reg.X1)
		a.VPADDD(reg.X1, reg.X0, reg.X0)
		a.VPHADDD(reg.X0, reg.X0, reg.X0)
		a.VPHADDD(reg.X0, reg.X0, reg.X0)
		a.VCVTDQ2PS(reg.X0, reg.X0)
		a.VFMADD231SS(reg.X0, reg.X2, reg.X14)
		a.Label("fin")
	}
	a.CMPQ(a.arg("acc"), operand.U8(0))
	a.JEQ(label("store"))
	a.VADDSS(mem(reg.RDX, 0), reg.X14, reg.X14)
	a.Label("store")
	a.VMOVSS(reg.X14, mem(reg.RDX, 0))
	a.ADDQ(operand.U8(4), reg.RDX)
	a.ADDQ(a.arg("ldw"), reg.RSI)
	a.DECQ(reg.R14)
	a.JNZ(label("row"))

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// iq4Ints sets Y<out> to the 8 int32 lanes (lane e/4 for element e) of
// IQ4_NL block i at R11 times Q8_0 block i at R12 (Y1 scratch).
func (a *asm) iq4Ints(i, out int) {
	y := yr[out]
	a.VBROADCASTI128(mem(reg.R11, 18*i+2), y)
	a.VPSRLVD(reg.Y9, y, y)
	a.VPAND(reg.Y15, y, y)
	a.VPSHUFB(y, reg.Y11, y)
	a.VMOVDQU(mem(reg.R12, 34*i+2), reg.Y1)
	a.VPSIGNB(y, reg.Y1, reg.Y1)
	a.VPABSB(y, y)
	a.VPMADDUBSW(reg.Y1, y, y)
	a.VPMADDWD(reg.Y10, y, y)
}

// iq4D2 sets Y2 and Y3 to the broadcast products of the scales of blocks
// 0 and 1 at R11 and R12, f16(w)·f16(x) (AX, BX, X1 scratch).
func (a *asm) iq4D2() {
	a.MOVWLZX(mem(reg.R11, 0), reg.EAX)
	a.MOVWLZX(mem(reg.R11, 18), reg.EBX)
	a.SHLL(operand.U8(16), reg.EBX)
	a.ORL(reg.EBX, reg.EAX)
	a.VMOVD(reg.EAX, reg.X2)
	a.VCVTPH2PS(reg.X2, reg.X2)
	a.MOVWLZX(mem(reg.R12, 0), reg.EAX)
	a.MOVWLZX(mem(reg.R12, 34), reg.EBX)
	a.SHLL(operand.U8(16), reg.EBX)
	a.ORL(reg.EBX, reg.EAX)
	a.VMOVD(reg.EAX, reg.X1)
	a.VCVTPH2PS(reg.X1, reg.X1)
	a.VMULPS(reg.X1, reg.X2, reg.X2)
	a.VMOVSHDUP(reg.X2, reg.X3)
	a.VBROADCASTSS(reg.X3, reg.Y3)
	a.VBROADCASTSS(reg.X2, reg.Y2)
}

// iq4D1 sets Y2 to the broadcast product of the scales of block 0 at R11
// and R12 (AX, X1 scratch).
func (a *asm) iq4D1() {
	a.MOVWLZX(mem(reg.R11, 0), reg.EAX)
	a.VMOVD(reg.EAX, reg.X2)
	a.VCVTPH2PS(reg.X2, reg.X2)
	a.MOVWLZX(mem(reg.R12, 0), reg.EAX)
	a.VMOVD(reg.EAX, reg.X1)
	a.VCVTPH2PS(reg.X1, reg.X1)
	a.VMULSS(reg.X1, reg.X2, reg.X2)
	a.VBROADCASTSS(reg.X2, reg.Y2)
}
