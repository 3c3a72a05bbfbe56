package main

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// kquantz generates kquantz_amd64.s: K-quant weights times Q8_K
// activations (ggml layout: d float32, 256 int8 quants, 16 int16 sums of
// 16), AVX-512 with VNNI, VBMI and GFNI. Four rows (one per memory stream,
// q rows apart) side by side, one block at a time; the registers are those
// of the Q4_0/Q8_0 gemv4 kernels (q8vnni).
func kquantz(a *asm) {
	rep := func(lo, hi uint64) []uint64 { return []uint64{lo, lo, lo, lo, hi, hi, hi, hi} }
	// Word shift counts that move the 2 high bits of a Q6_K value (in qh)
	// to bits 4-5 of the byte: left by 4 and 2 for the first 64 values of
	// a half, right by 0 and 2 for the last 64.
	q6shl := a.global("q6shl", rep(0x0004000400040004, 0x0002000200020002)...)
	q6shr := a.global("q6shr", rep(0, 0x0002000200020002)...)
	var q6idx [4]operand.Mem
	for i := range q6idx {
		w := func(j int) uint64 { return 0x0001000100010001 * uint64(j) }
		q6idx[i] = a.global("q6idx"+string(rune('0'+i)),
			w(4*i), w(4*i), w(4*i+1), w(4*i+1), w(4*i+2), w(4*i+2), w(4*i+3), w(4*i+3))
	}
	a.gemv4Q6K(q6shl, q6shr, q6idx)

	// Q4_K: shifts that put the high nibbles of a 32-byte group in the
	// upper half, the scale gathers per 64 values, the min gather, and the
	// constants that unpack the 6-bit scales and mins.
	q4kshr := a.global("q4kshr", rep(0, 0x0004000400040004)...)
	var q4kidx [4]operand.Mem
	for i := range q4kidx {
		w := func(j int) uint64 { return 0x0001000100010001 * uint64(j) }
		q4kidx[i] = a.global("q4kidx"+string(rune('0'+i)), rep(w(2*i), w(2*i+1))...)
	}
	q4kidxm := a.global("q4kidxm", 0x0009000900080008, 0x000b000b000a000a, 0x000d000d000c000c, 0x000f000f000e000e, 0, 0, 0, 0)
	q4ksh := a.global("q4ksh", 0, 0x0000000400000000)
	q4km1 := a.global("q4km1", 0x0f0f0f0f3f3f3f3f, 0x0f0f0f0f3f3f3f3f)
	q4km2 := a.global("q4km2", 0x0303030300000000, 0x0303030300000000)
	a.gemv4Q4K(q4kshr, q4kidx, q4kidxm, q4ksh, q4km1, q4km2)
}

// VPDPWSSD emits VPDPWSSD src, z, acc (AVX512_VNNI; not in avo v0.5.0's
// database).
func (a *asm) VPDPWSSD(src, z, acc operand.Op) {
	a.raw("VPDPWSSD", nil, src, z, acc)
}

// kqBlockLoop is the start of the K-quant kernels' row and block loops, up
// to and including the activation loads; ld21 loads the activation scale
// into X21.
func (a *asm) kqBlockLoop(ld21 func()) {
	a.TESTQ(reg.R14, reg.R14)
	a.JZ(label("done"))

	a.Label("row")
	a.zero(zr[0:4]...)
	a.XORQ(reg.RAX, reg.RAX)
	a.MOVQ(reg.RDI, reg.R12)
	a.MOVQ(reg.RCX, reg.R13)
	a.TESTQ(reg.R13, reg.R13)
	a.JZ(label("fin"))

	a.Label("blk")
	for _, d := range []int{0, 128} {
		for _, p := range streams {
			a.PREFETCHT0(rowAt(p, vnniPF+d))
		}
	}
	for i := 0; i < 4; i++ {
		a.VMOVDQU64(mem(reg.R12, 4+64*i), zr[16+i])
	}
	a.VMOVDQU16(mem(reg.R12, 260), reg.Y20)
	ld21()
}

// kqFin ends the block loop (bb bytes a weight block) and the kernel.
func (a *asm) kqFin(bb int) {
	a.ADDQ(operand.U32(uint32(bb)), reg.RAX)
	a.ADDQ(operand.U32(292), reg.R12)
	a.DECQ(reg.R13)
	a.JNZ(label("blk"))

	a.Label("fin")
	a.fold8([4]int{0, 1, 2, 3}, 13)
	a.reduce4x([4]int{0, 1, 2, 3})
	a.gemv4Fin()

	a.Label("done")
	a.VZEROUPPER()
	a.RET()
}

// q6Row accumulates into the float32 lanes of f the product of the Q6_K
// block at offset AX of the row at p with the activations: quants in
// Z16..Z19 (64 each), sums in Y20, scale d in X21 (low lane). Constants:
// Z22 zero, Z23..Z26 the scale gathers, Z27 the nibble shift, Z28 and Z29
// the qh shifts, Z30 0x30 bytes, Z31 0x0f bytes.
func (a *asm) q6Row(p reg.Register, f reg.VecPhysical) {
	a.VPMOVSXBW(rowAt(p, 192), reg.Y4)
	a.VPMADDWD(reg.Y20, reg.Y4, reg.Y5)
	a.VPSLLD(operand.U8(5), reg.Y5, reg.Y5)
	a.VPSUBD(reg.Z5, reg.Z22, reg.Z6)
	for h := 0; h < 2; h++ {
		a.VMOVDQU64(rowAt(p, 64*h), reg.Z7)
		a.VBROADCASTI64X4(rowAt(p, 128+32*h), reg.Z8)
		a.VPANDD(reg.Z31, reg.Z7, reg.Z9)
		a.VPSLLVW(reg.Z29, reg.Z8, reg.Z10)
		a.VPTERNLOGD(operand.U8(0xf8), reg.Z30, reg.Z10, reg.Z9)
		a.VPMADDUBSW(zr[16+2*h], reg.Z9, reg.Z9)
		a.VPERMW(reg.Z4, zr[23+2*h], reg.Z11)
		a.VPDPWSSD(reg.Z11, reg.Z9, reg.Z6)
		a.VGF2P8AFFINEQB(operand.U8(0), reg.Z27, reg.Z7, reg.Z9)
		a.VPSRLVW(reg.Z28, reg.Z8, reg.Z10)
		a.VPTERNLOGD(operand.U8(0xf8), reg.Z30, reg.Z10, reg.Z9)
		a.VPMADDUBSW(zr[17+2*h], reg.Z9, reg.Z9)
		a.VPERMW(reg.Z4, zr[24+2*h], reg.Z11)
		a.VPDPWSSD(reg.Z11, reg.Z9, reg.Z6)
	}
	a.VCVTDQ2PS(reg.Z6, reg.Z6)
	a.VPBROADCASTW(rowAt(p, 208), reg.X12)
	a.VCVTPH2PS(reg.X12, reg.X12)
	a.VMULSS(reg.X21, reg.X12, reg.X12)
	a.VBROADCASTSS(reg.X12, reg.Z12)
	a.VFMADD231PS(reg.Z12, reg.Z6, f)
}

// gemv4Q6K generates gemv4Q6_KVNNI.
func (a *asm) gemv4Q6K(shl, shr operand.Mem, idx [4]operand.Mem) {
	a.text("gemv4Q6_KVNNI", attr.NOSPLIT, "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)",
		"For 4 streams j of q rows each (rows j·q .. j·q+q-1 of nb Q6_K blocks,",
		"ldw bytes apart), y[j·q+r] = w_{j·q+r}·x, or += when acc is not 0; x is",
		"a row of Q8_K blocks.")
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.MOVL(operand.U32(0x30303030), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z30)
	a.VMOVDQU64(shl, reg.Z29)
	a.VMOVDQU64(shr, reg.Z28)
	a.MOVQ(operand.U64(0x1020408000000000), reg.RAX)
	a.VPBROADCASTQ(reg.RAX, reg.Z27)
	for i := 3; i >= 0; i-- {
		a.VMOVDQU64(idx[i], zr[23+i])
	}
	a.VPXORD(reg.Z22, reg.Z22, reg.Z22)
	a.gemv4Setup(0)
	a.kqBlockLoop(func() { a.VMOVSS(mem(reg.R12, 0), reg.X21) })
	for i, p := range streams {
		a.q6Row(p, zr[i])
	}
	a.kqFin(210)
}

// q4kRow accumulates into f the product of the Q4_K block at offset AX of
// the row at p with the activations (quants Z16..Z19, sums Y20, scale
// broadcast in X21): d·dx·Σ sc_j·(q·x)_j − dmin·dx·Σ m_j·Σx_j.
func (a *asm) q4kRow(p reg.Register, f reg.VecPhysical) {
	a.VMOVDQU(rowAt(p, 4), reg.X4)
	a.VPSHUFD(operand.U8(0x98), reg.X4, reg.X5)
	a.VPSHUFD(operand.U8(0x50), reg.X4, reg.X6)
	a.VPSRLVD(reg.X24, reg.X5, reg.X5)
	a.VPANDD(reg.X23, reg.X5, reg.X5)
	a.VPSRLD(operand.U8(6), reg.X6, reg.X6)
	a.VPANDD(reg.X22, reg.X6, reg.X6)
	a.VPSLLD(operand.U8(4), reg.X6, reg.X6)
	a.VPORD(reg.X6, reg.X5, reg.X5)
	a.VPMOVZXBW(reg.X5, reg.Y4)
	a.VPXORD(reg.Z6, reg.Z6, reg.Z6)
	// Chunk j: its 64 values (quants at 16+32j) with the activations,
	// scaled by the sub-block scales gathered by Z<26+j> from Z4.
	for j := 0; j < 4; j++ {
		a.VBROADCASTI64X4(rowAt(p, 16+32*j), reg.Z7)
		a.VPSRLVW(reg.Z30, reg.Z7, reg.Z7)
		a.VPANDD(reg.Z31, reg.Z7, reg.Z7)
		a.VPMADDUBSW(zr[16+j], reg.Z7, reg.Z7)
		a.VPERMW(reg.Z4, zr[26+j], reg.Z8)
		a.VPDPWSSD(reg.Z8, reg.Z7, reg.Z6)
	}
	a.VPERMW(reg.Z4, reg.Z25, reg.Z9)
	a.VPMADDWD(reg.Y20, reg.Y9, reg.Y9)
	a.VCVTDQ2PS(reg.Z9, reg.Z9)
	a.VCVTDQ2PS(reg.Z6, reg.Z6)
	a.VPBROADCASTD(rowAt(p, 0), reg.X10)
	a.VCVTPH2PS(reg.X10, reg.X10)
	a.VMULPS(reg.X21, reg.X10, reg.X10)
	a.VBROADCASTSS(reg.X10, reg.Z11)
	a.VFMADD231PS(reg.Z11, reg.Z6, f)
	a.VMOVSHDUP(reg.X10, reg.X12)
	a.VBROADCASTSS(reg.X12, reg.Z12)
	a.VFNMADD231PS(reg.Z12, reg.Z9, f)
}

// gemv4Q4K generates gemv4Q4_KVNNI.
func (a *asm) gemv4Q4K(shr operand.Mem, idx [4]operand.Mem, idxm, sh, m1, m2 operand.Mem) {
	a.text("gemv4Q4_KVNNI", attr.NOSPLIT, "func(w unsafe.Pointer, ldw uintptr, x unsafe.Pointer, nb int, y *float32, q int, acc int)",
		"As gemv4Q6_KVNNI for Q4_K weights.")
	a.MOVL(operand.U32(0x0f0f0f0f), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z31)
	a.VMOVDQU64(shr, reg.Z30)
	for i := 3; i >= 0; i-- {
		a.VMOVDQU64(idx[i], zr[26+i])
	}
	a.VMOVDQU64(idxm, reg.Z25)
	a.VMOVDQU32(sh, reg.X24)
	a.VMOVDQU32(m1, reg.X23)
	a.VMOVDQU32(m2, reg.X22)
	a.gemv4Setup(0)
	a.kqBlockLoop(func() { a.VBROADCASTSS(mem(reg.R12, 0), reg.X21) })
	for i, p := range streams {
		a.q4kRow(p, zr[i])
	}
	a.kqFin(144)
}
